// Keyboard for the review desk. Every key clicks, checks or focuses a visible control, so the
// controls (real hrefs and forms with hx-get / hx-post) stay the one way to act.
(function () {
  "use strict";
  if (window.traj2envReview) return; // once per document, even across history restores
  window.traj2envReview = true;

  const DECIDE_KEYS = new Set(["a", "r", "x"]);
  const NAV_KEYS = new Set(["j", "k"]);

  function desk() {
    return document.querySelector(".desk[data-candidate]");
  }

  const keys = window.traj2envKeys; // static/js/keys.js
  const wired = keys.wired;
  const typing = keys.typing;
  const press = keys.press;
  const keysDialog = () => document.getElementById("review-keys");
  const toggleKeys = () => keys.toggleDialog("review-keys");

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (!document.querySelector(".desk, #queue-results")) return;
    const key = event.key;
    if (typing(event.target)) {
      if (key === "Escape") event.target.blur();
      return;
    }
    const dialog = keysDialog();
    if (dialog && dialog.open) {
      if (key === "?") press(event, () => dialog.close());
      return; // Escape closes the dialog natively
    }
    if (key === "?") return press(event, toggleKeys);

    const here = desk();
    if (!here) {
      const next = document.querySelector('#queue-results button[data-key="n"]');
      if (key === "n" && next && !next.disabled) press(event, () => next.click());
      return;
    }
    if (DECIDE_KEYS.has(key)) {
      const button = here.querySelector('#decision-form button[data-key="' + key + '"]');
      if (button && !button.disabled) {
        press(event, () => {
          wired(button.form);
          button.click();
        });
      }
    } else if (/^[1-9]$/.test(key)) {
      const radio = here.querySelector('#decision-form input[data-key="' + key + '"]');
      if (radio) {
        press(event, () => {
          radio.checked = true;
          radio.dispatchEvent(new Event("change", { bubbles: true }));
        });
      }
    } else if (key === "c") {
      const comment = here.querySelector('#decision-form textarea[data-key="c"]');
      if (comment) press(event, () => comment.focus());
    } else if (NAV_KEYS.has(key)) {
      const link = here.querySelector('a[data-key="' + key + '"]');
      if (link) press(event, () => wired(link).click());
    }
  });

  document.addEventListener("click", function (event) {
    const button = event.target instanceof Element && event.target.closest('button[data-key="?"]');
    if (button) toggleKeys();
  });

  // A refused decision (409 held by another or already decided, 422 a reason missing) comes back as the
  // desk with the message in it: show it rather than drop it as an error.
  document.addEventListener("htmx:beforeSwap", function (event) {
    const status = event.detail.xhr.status;
    if ((status === 409 || status === 422) && event.detail.target.classList.contains("desk")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  // A new candidate starts at the top of the page; a re-rendered one (an error) stays put.
  let shown = null;
  function remember() {
    const here = desk();
    const id = here ? here.dataset.candidate : null;
    if (shown !== null && id !== shown) window.scrollTo({ top: 0 });
    shown = id;
  }
  document.addEventListener("DOMContentLoaded", remember);
  document.addEventListener("htmx:afterSettle", remember);

  document.addEventListener("htmx:historyRestore", function () {
    const dialog = keysDialog();
    if (dialog && dialog.open) dialog.close();
  });
})();
