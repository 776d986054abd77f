// Keyboard for the review desk: a/r/x decide, 1-9 pick a reason, c comments, j/k move; the rest
// is the desks' (static/js/desk.js). Every key clicks, checks or focuses a visible control, so
// the controls (real hrefs and forms with hx-get / hx-post) stay the one way to act.
(function () {
  "use strict";
  if (window.traj2envReview) return; // once per document, even across history restores
  window.traj2envReview = true;

  const DECIDE_KEYS = new Set(["a", "r", "x"]);
  const NAV_KEYS = new Set(["j", "k"]);
  const keys = window.traj2envKeys; // static/js/keys.js

  window.traj2envDesk({
    page: ".desk, #queue-results",
    desk: ".desk[data-candidate]",
    item: "candidate",
    dialog: "review-keys",
    next: '#queue-results button[data-key="n"]',
    // 409 held by another or already decided, 422 a reason missing
    refusals: ".desk",
    onKey: function (event, key, here) {
      if (DECIDE_KEYS.has(key)) {
        const button = here.querySelector('#decision-form button[data-key="' + key + '"]');
        if (button && !button.disabled) {
          keys.press(event, () => {
            keys.wired(button.form);
            button.click();
          });
        }
      } else if (/^[1-9]$/.test(key)) {
        const radio = here.querySelector('#decision-form input[data-key="' + key + '"]');
        if (radio) {
          keys.press(event, () => {
            radio.checked = true;
            radio.dispatchEvent(new Event("change", { bubbles: true }));
          });
        }
      } else if (key === "c") {
        const comment = here.querySelector('#decision-form textarea[data-key="c"]');
        if (comment) keys.press(event, () => comment.focus());
      } else if (NAV_KEYS.has(key)) {
        const link = here.querySelector('a[data-key="' + key + '"]');
        if (link) keys.press(event, () => keys.wired(link).click());
      }
    },
  });
})();
