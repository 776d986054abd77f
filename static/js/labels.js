// Keyboard for preference labelling: a/1 and b/2 choose a side, t a tie, s skips, j/k walk the
// aligned rows; the rest is the desks' (static/js/desk.js). Every key clicks or focuses a visible
// control, so the controls (real forms with hx-post) stay the one way to act.
(function () {
  "use strict";
  if (window.traj2envLabels) return; // once per document, even across history restores
  window.traj2envLabels = true;

  const CHOICES = { a: "a", 1: "a", b: "b", 2: "b", t: "t", x: "x" };
  const keys = window.traj2envKeys; // static/js/keys.js

  function click(button) {
    if (!button || button.disabled) return false;
    if (button.form) keys.wired(button.form);
    button.click();
    return true;
  }

  // j / k walk the aligned rows after the shared prefix, marking the one in view.
  function move(here, step) {
    const rows = Array.from(here.querySelectorAll(".arow[data-row]"));
    if (!rows.length) return;
    const current = here.querySelector(".arow.current");
    let index = current ? rows.indexOf(current) + step : step > 0 ? 0 : rows.length - 1;
    index = Math.max(0, Math.min(rows.length - 1, index));
    if (current) current.classList.remove("current");
    rows[index].classList.add("current");
    rows[index].focus({ preventScroll: true });
    rows[index].scrollIntoView({ block: "center" });
  }

  window.traj2envDesk({
    desk: ".pairdesk[data-pair]",
    item: "pair",
    dialog: "label-keys",
    next: 'button[data-key="n"]',
    // 409 held or already labelled, 422 a bad choice or a missing rationale
    refusals: "[data-swap-errors]",
    onKey: function (event, key, here) {
      if (key in CHOICES) {
        const button = here.querySelector('#label-form button[data-key="' + CHOICES[key] + '"]');
        if (button) keys.press(event, () => click(button));
      } else if (key === "s") {
        const skip = here.querySelector('button[data-key="s"]');
        if (skip) keys.press(event, () => click(skip));
      } else if (key === "j" || key === "k") {
        keys.press(event, () => move(here, key === "j" ? 1 : -1));
      }
    },
  });
})();
