// A live section is swapped when what it shows changes (the CR page's, every 2 s at most):
// a <details> a person opened there (by its id) is open again in the new content.
let opened = new Set();
document.addEventListener("htmx:beforeSwap", (event) => {
  const open = event.detail.target.querySelectorAll("details[open][id]");
  opened = new Set([...open].map((details) => details.id));
});
document.addEventListener("htmx:load", (event) => {
  for (const details of event.detail.elt.querySelectorAll("details[id]")) {
    if (opened.has(details.id)) details.open = true;
  }
});
