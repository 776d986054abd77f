// Keyboard for the replay stepper. Every key clicks or focuses a visible control, so the links
// (real hrefs, hx-get, hx-push-url) stay the one way to navigate and the back button just works.
(function () {
  "use strict";
  if (window.traj2envStepper) return; // loaded once per document, even across history restores
  window.traj2envStepper = true;

  const NAV_KEYS = new Set(["j", "k", "n", "p"]);

  function control(key) {
    return document.querySelector('#step [data-key="' + key + '"]');
  }

  const keys = window.traj2envKeys; // static/js/keys.js
  const keysDialog = () => document.getElementById("stepper-keys");
  const toggleKeys = () => keys.toggleDialog("stepper-keys");

  function focusGoto() {
    const input = document.getElementById("goto-step");
    if (input) {
      input.focus();
      input.select();
    }
  }

  function treeLinks() {
    return Array.from(document.querySelectorAll("#file-tree a[data-path]"));
  }

  // f: from anywhere but the tree, go to the tree (its open file first); from the tree, to the content.
  function toggleFocus() {
    const tree = document.getElementById("file-tree");
    const viewer = document.getElementById("viewer");
    if (!tree || !viewer) return;
    if (tree.contains(document.activeElement)) {
      viewer.focus();
    } else {
      const current = tree.querySelector('a[aria-current="true"]') || treeLinks()[0] || tree;
      current.focus();
    }
  }

  function moveInTree(step) {
    const links = treeLinks();
    const at = links.indexOf(document.activeElement);
    if (at < 0 || !links.length) return false;
    const next = links[Math.min(links.length - 1, Math.max(0, at + step))];
    next.focus();
    next.scrollIntoView({ block: "nearest" });
    return true;
  }

  // The open file is marked in the tree after the viewer alone was swapped.
  function markOpenFile() {
    const viewer = document.getElementById("viewer");
    const path = viewer ? viewer.dataset.path || "" : "";
    for (const link of treeLinks()) {
      if (path && link.dataset.path === path) link.setAttribute("aria-current", "true");
      else link.removeAttribute("aria-current");
    }
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (!document.getElementById("step")) return;
    const target = event.target;
    if (target instanceof Element && target.closest("input, textarea, select, [contenteditable]")) {
      if (event.key === "Escape") target.blur();
      return;
    }
    const dialog = keysDialog();
    if (dialog && dialog.open) {
      if (event.key === "?") {
        event.preventDefault();
        dialog.close();
      }
      return; // Escape closes the dialog natively
    }
    if (NAV_KEYS.has(event.key)) {
      const link = control(event.key);
      if (link && link.tagName === "A") {
        event.preventDefault();
        // A key pressed right after a swap can beat htmx's settle, which wires up new content:
        // wire the link now so the click swaps the step instead of loading the whole page.
        if (window.htmx) window.htmx.process(link);
        link.click();
      }
    } else if (event.key === "g") {
      event.preventDefault();
      focusGoto();
    } else if (event.key === "f") {
      event.preventDefault();
      toggleFocus();
    } else if (event.key === "?") {
      event.preventDefault();
      toggleKeys();
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (moveInTree(event.key === "ArrowDown" ? 1 : -1)) event.preventDefault();
    }
  });

  document.addEventListener("click", function (event) {
    const button = event.target instanceof Element && event.target.closest("button[data-key]");
    if (!button) return;
    if (button.dataset.key === "?") toggleKeys();
    else if (button.dataset.key === "f") toggleFocus();
    else if (button.dataset.key === "g") {
      const input = document.getElementById("goto-step");
      if (input && !input.value.trim()) {
        event.preventDefault(); // an empty box: the button means "let me type"
        focusGoto();
      }
    }
  });

  // Keep the keyboard where it was: after j/k from the tree, focus the new step's tree.
  let zone = null;
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "step") {
      const tree = document.getElementById("file-tree");
      const viewer = document.getElementById("viewer");
      zone = tree && tree.contains(document.activeElement) ? "tree"
        : viewer && viewer.contains(document.activeElement) ? "viewer" : null;
    }
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    markOpenFile();
    if (event.detail.target && event.detail.target.id === "viewer") return;
    // htmx keeps focus on the go-to box it just replaced; the keys should drive the new step.
    const active = document.activeElement;
    if (active && active.id === "goto-step") active.blur();
    if (zone === "viewer") {
      const viewer = document.getElementById("viewer");
      if (viewer) viewer.focus({ preventScroll: true });
    } else if (zone === "tree") {
      toggleFocus();
    }
    zone = null;
  });

  // Back/forward put an older snapshot of the page back: close what was open, re-mark the file.
  document.addEventListener("htmx:historyRestore", function () {
    const dialog = keysDialog();
    if (dialog && dialog.open) dialog.close();
    markOpenFile();
  });
})();
