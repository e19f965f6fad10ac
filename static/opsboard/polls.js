// The live sections poll ("every 2s"); a hidden tab sends no poll. A poll is the one
// request htmx issues with no triggering event. Done here rather than in a trigger filter
// ("every 2s [document.visibilityState === 'visible']"): htmx evaluates a filter as a
// string of JavaScript, which the Content-Security-Policy forbids.
document.addEventListener("htmx:confirm", (event) => {
  if (document.visibilityState !== "visible" && !event.detail.triggeringEvent) {
    event.preventDefault();
  }
});
