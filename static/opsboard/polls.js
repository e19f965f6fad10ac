// The live sections poll ("every 2s"); a hidden tab sends no poll. A poll is the one
// request htmx issues with no triggering event. Done here rather than in a trigger filter
// ("every 2s [document.visibilityState === 'visible']"): htmx evaluates a filter as a
// string of JavaScript, which the Content-Security-Policy forbids.
document.addEventListener("htmx:confirm", (event) => {
  if (document.visibilityState !== "visible" && !event.detail.triggeringEvent) {
    event.preventDefault();
  }
});

// A poll that fails leaves the page as it was, still saying "Mirror live": say instead, over
// the page, that it has stopped updating; the next poll that succeeds takes that away.
const CONTACT_LOST = "contact-lost";

function isPoll(event) {
  const elt = event.detail.elt;
  return elt instanceof Element && elt.matches("[hx-trigger^='every']");
}

function contactLost(event, what) {
  if (!isPoll(event)) {
    return;
  }
  let notice = document.getElementById(CONTACT_LOST);
  if (!notice) {
    notice = document.createElement("p");
    notice.id = CONTACT_LOST;
    notice.className = "warn";
    notice.setAttribute("role", "alert");
    document.getElementById("main").prepend(notice);
  }
  const lead = document.createElement("strong");
  lead.textContent = what;
  notice.replaceChildren(lead, " — retrying; what you see may be out of date.");
}

document.addEventListener("htmx:sendError", (event) => {
  contactLost(event, "Lost contact with opsboard");
});
document.addEventListener("htmx:responseError", (event) => {
  contactLost(event, `opsboard answered a refresh with an error (HTTP ${event.detail.xhr.status})`);
});
document.addEventListener("htmx:afterRequest", (event) => {
  if (isPoll(event) && event.detail.successful) {
    document.getElementById(CONTACT_LOST)?.remove();
  }
});

// A followed log stays at its end, as `kubectl logs -f` does, unless the person has
// scrolled up in it to read.
let logAtEnd = true;

function followedLog() {
  return document.querySelector("#pod-log[data-follow] pre.log");
}

document.addEventListener("htmx:beforeSwap", () => {
  const log = followedLog();
  if (log) {
    logAtEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 24;
  }
});
document.addEventListener("htmx:afterSettle", () => {
  const log = followedLog();
  if (log && logAtEnd) {
    log.scrollTop = log.scrollHeight;
  }
});
document.addEventListener("DOMContentLoaded", () => {
  const log = followedLog();
  if (log) {
    log.scrollTop = log.scrollHeight;
  }
});
