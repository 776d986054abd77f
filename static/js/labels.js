// Keyboard for preference labelling, and the learning loop's pages' refusals. Every key clicks
// or focuses a visible control, so the controls (real forms with hx-post) stay the one way to act.
(function () {
  "use strict";
  if (window.traj2envLabels) return; // once per document, even across history restores
  window.traj2envLabels = true;

  const CHOICES = { a: "a", 1: "a", b: "b", 2: "b", t: "t", x: "x" };

  function desk() {
    return document.querySelector(".pairdesk[data-pair]");
  }

  const keys = window.traj2envKeys; // static/js/keys.js
  const wired = keys.wired;
  const typing = keys.typing;
  const press = keys.press;
  const keysDialog = () => document.getElementById("label-keys");
  const toggleKeys = () => keys.toggleDialog("label-keys");

  function click(button) {
    if (!button || button.disabled) return false;
    if (button.form) wired(button.form);
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

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
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
    const here = desk();
    if (!here) {
      const next = document.querySelector('button[data-key="n"]');
      if (key === "n" && next && !next.disabled) press(event, () => next.click());
      return;
    }
    if (key === "?") return press(event, toggleKeys);
    if (key in CHOICES) {
      const button = here.querySelector('#label-form button[data-key="' + CHOICES[key] + '"]');
      if (button) press(event, () => click(button));
    } else if (key === "s") {
      const skip = here.querySelector('button[data-key="s"]');
      if (skip) press(event, () => click(skip));
    } else if (key === "j" || key === "k") {
      press(event, () => move(here, key === "j" ? 1 : -1));
    }
  });

  document.addEventListener("click", function (event) {
    const button = event.target instanceof Element && event.target.closest('button[data-key="?"]');
    if (button) toggleKeys();
  });

  // A refusal (409 held or already labelled, 422 a bad choice or a missing rationale) comes back
  // as the region with the message in it: show it rather than drop it as an error.
  document.addEventListener("htmx:beforeSwap", function (event) {
    const status = event.detail.xhr.status;
    if ((status === 409 || status === 422) && event.detail.target.hasAttribute("data-swap-errors")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  // A new pair starts at the top of the page; a re-rendered one (a refusal) stays put.
  let shown = null;
  function remember() {
    const here = desk();
    const id = here ? here.dataset.pair : null;
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
