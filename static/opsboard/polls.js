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
