// What the one-item-at-a-time desks share (the review desk, preference labelling): the keys every
// desk reads alike (Escape leaves a field, ? opens and closes the keys dialog, n takes the next
// item when none is open), a refusal (409, 422) shown in place rather than dropped as an error, a
// new item starting at the top of the page, and the dialog closed on a history restore.
// Each desk's script passes what differs and maps its own keys to its controls.
(function () {
  "use strict";
  if (window.traj2envDesk) return; // once per document, even across history restores

  // options: desk (the selector of the open item), item (its data- attribute naming it), dialog
  // (the keys dialog's id), next (the selector of the "next" button shown without an item),
  // refusals (the selector of the swap targets a 409 or 422 replaces), page (optional: a selector
  // the page must have for the keys to apply) and onKey(event, key, desk) for the desk's own keys.
  window.traj2envDesk = function (options) {
    const keys = window.traj2envKeys; // static/js/keys.js
    const desk = () => document.querySelector(options.desk);
    const keysDialog = () => document.getElementById(options.dialog);
    const toggleKeys = () => keys.toggleDialog(options.dialog);

    document.addEventListener("keydown", function (event) {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      if (options.page && !document.querySelector(options.page)) return;
      const key = event.key;
      if (keys.typing(event.target)) {
        if (key === "Escape") event.target.blur();
        return;
      }
      const dialog = keysDialog();
      if (dialog && dialog.open) {
        if (key === "?") keys.press(event, () => dialog.close());
        return; // Escape closes the dialog natively
      }
      if (key === "?" && dialog) return keys.press(event, toggleKeys);
      const here = desk();
      if (!here) {
        const next = document.querySelector(options.next);
        if (key === "n" && next && !next.disabled) keys.press(event, () => next.click());
        return;
      }
      options.onKey(event, key, here);
    });

    document.addEventListener("click", function (event) {
      const button = event.target instanceof Element && event.target.closest('button[data-key="?"]');
      if (button) toggleKeys();
    });

    // A refused action comes back as the region with the message in it.
    document.addEventListener("htmx:beforeSwap", function (event) {
      const status = event.detail.xhr.status;
      if ((status === 409 || status === 422) && event.detail.target.matches(options.refusals)) {
        event.detail.shouldSwap = true;
        event.detail.isError = false;
      }
    });

    // A new item starts at the top of the page; a re-rendered one (a refusal) stays put.
    let shown = null;
    function remember() {
      const here = desk();
      const id = here ? here.dataset[options.item] : null;
      if (shown !== null && id !== shown) window.scrollTo({ top: 0 });
      shown = id;
    }
    document.addEventListener("DOMContentLoaded", remember);
    document.addEventListener("htmx:afterSettle", remember);

    document.addEventListener("htmx:historyRestore", function () {
      const dialog = keysDialog();
      if (dialog && dialog.open) dialog.close();
    });
  };
})();
