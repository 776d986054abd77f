// A refused action on a deployment (403 not yours to approve, 409 not in this state, 422 a bad
// percentage) comes back as the deployment with the reason in it: show it rather than drop it.
(function () {
  "use strict";
  if (window.traj2envDeploy) return;
  window.traj2envDeploy = true;

  const REFUSALS = new Set([403, 409, 422]);
  document.addEventListener("htmx:beforeSwap", function (event) {
    const target = event.detail.target;
    const refused = REFUSALS.has(event.detail.xhr.status);
    // Only our own answer: a bare 403 page from a missing permission must not replace the page.
    const ours = target && target.classList.contains("deployment") &&
      event.detail.serverResponse.indexOf('id="' + target.id + '"') !== -1;
    if (refused && ours) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
})();
