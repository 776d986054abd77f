// What every keyboard-first page shares (the stepper, the review desk, preference labelling):
// a keys dialog, not stealing keys from a field being typed in, and controls htmx has wired.
// Each page's own script maps its keys to the controls it shows.
(function () {
  "use strict";
  if (window.traj2envKeys) return; // once per document, even across history restores

  // htmx wires content on settle; a key pressed right after a swap can come first.
  function wired(element) {
    if (window.htmx) window.htmx.process(element);
    return element;
  }

  window.traj2envKeys = {
    wired: wired,

    // A key typed into a field is text, not a command; radio buttons and checkboxes take keys.
    typing: function (target) {
      if (!(target instanceof Element)) return false;
      const field = target.closest("input, textarea, select, [contenteditable]");
      if (!field) return false;
      return !(field instanceof HTMLInputElement && (field.type === "radio" || field.type === "checkbox"));
    },

    press: function (event, action) {
      event.preventDefault();
      action();
    },

    toggleDialog: function (id) {
      const dialog = document.getElementById(id);
      if (!dialog) return;
      if (dialog.open) dialog.close();
      else dialog.showModal();
    },
  };
})();
