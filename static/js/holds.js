// Holds: opening a candidate or a preference pair holds it briefly (TRAJ2ENV_HOLD_SECONDS). A
// held banner ([data-hold-beat]) renews the hold every beat while someone is on the page: the
// tab visible and touched (a key, the pointer, a scroll) in the last few minutes. A hidden,
// idle or closed tab stops renewing, so teammates get the item back within one hold; leaving
// the page gives it back at once with a beacon ([data-hold-release]).
(function () {
  "use strict";
  if (window.traj2envHolds) return; // once per document
  window.traj2envHolds = true;

  const IDLE_MS = 5 * 60 * 1000; // nobody touched the page this long: they have left it
  const TICK_MS = 1000; // a beat is due within a second of its time, not up to a tick late
  let touched = Date.now();
  const renewed = new WeakMap(); // banner -> when its hold was last taken or renewed

  function present() {
    return document.visibilityState === "visible" && Date.now() - touched < IDLE_MS;
  }

  function tick() {
    if (!window.htmx || !present()) return;
    document.querySelectorAll("[data-hold-beat]").forEach(function (banner) {
      // A banner just swapped in came with a fresh hold: its first beat is one beat away.
      if (!renewed.has(banner)) renewed.set(banner, Date.now());
      const beat = Number(banner.dataset.holdBeat) * 1000;
      if (Date.now() - renewed.get(banner) < beat - TICK_MS / 2) return;
      renewed.set(banner, Date.now());
      window.htmx.trigger(banner, "hold-beat");
    });
  }

  function touch() {
    const wasAway = !present();
    touched = Date.now();
    if (wasAway) tick(); // back from idle: renew at once rather than at the next tick
  }

  ["keydown", "pointerdown", "pointermove", "wheel", "scroll", "touchstart"].forEach(
    function (name) {
      document.addEventListener(name, touch, { capture: true, passive: true });
    },
  );
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") touch();
  });
  setInterval(tick, TICK_MS);

  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch (_) {
      return "";
    }
  }

  // A beacon outlives the page; Django reads the token from the form and the cookie it sends.
  window.addEventListener("pagehide", function () {
    if (!navigator.sendBeacon) return;
    document.querySelectorAll("[data-hold-release]").forEach(function (banner) {
      const form = new FormData();
      form.append("csrfmiddlewaretoken", csrfToken());
      navigator.sendBeacon(banner.dataset.holdRelease, form);
    });
  });
})();
