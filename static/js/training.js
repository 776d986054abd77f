// Keys for drilling through eval results one by one: each key follows a link the page shows,
// so the links (real hrefs) stay the one way to act.
(function () {
  "use strict";
  if (window.traj2envTraining) return; // once per document
  window.traj2envTraining = true;

  const KEYS = {
    j: ["a[rel=next]"],
    k: ["a[rel=prev]"],
    u: ["a[rel=up]"],
    // the stepper at the first missed expectation, else at the first step shown
    s: [".item-missed a.step-link", "a.step-link"],
  };

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (!document.body.classList.contains("result-page")) return;
    const target = event.target;
    if (target instanceof Element && target.closest("input, textarea, select, [contenteditable]")) return;
    for (const selector of KEYS[event.key] || []) {
      const link = document.querySelector(selector);
      if (link) {
        event.preventDefault();
        link.click();
        return;
      }
    }
  });
})();
