// afhttp readiness probe: a cheap DOM mutation counter, injected before any page script runs
// (Page.addScriptToEvaluateOnNewDocument) and evaluated again on attached tabs. Idempotent.
(function () {
  'use strict';
  if (window.__afhttpReady) {
    return true;
  }
  var state = { mutations: 0, last: Date.now() };
  function observe() {
    try {
      new MutationObserver(function (list) {
        state.mutations += list.length;
        state.last = Date.now();
      }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    } catch (e) {
      state.error = String(e);
    }
  }
  state.probe = function () {
    var text = document.body ? document.body.innerText || '' : '';
    return {
      mutations: state.mutations,
      quiet_ms: Date.now() - state.last,
      text_bytes: new TextEncoder().encode(text).length,
      ready_state: document.readyState
    };
  };
  Object.defineProperty(window, '__afhttpReady', { value: state, enumerable: false });
  observe();
  return true;
})();
