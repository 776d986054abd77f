// Tree rows (the stepper's files, the review desk's starting tree) carry their depth as
// data-depth, which becomes the --depth their indent reads (stepper.css). A style attribute
// would need 'unsafe-inline' in the Content Security Policy; a script setting a style does not.
(function () {
  "use strict";
  if (window.traj2envTree || !window.htmx) return;
  window.traj2envTree = true;

  function indent(root) {
    const rows = Array.from(root.querySelectorAll("[data-depth]"));
    if (root.matches && root.matches("[data-depth]")) rows.push(root);
    rows.forEach(function (row) {
      row.style.setProperty("--depth", row.dataset.depth);
    });
  }

  // On the first page and on every piece of content htmx swaps in (history restores included).
  window.htmx.onLoad(indent);
})();
