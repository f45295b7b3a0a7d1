// afhttp readiness probe, injected before any page script runs
// (Page.addScriptToEvaluateOnNewDocument) and evaluated again on attached tabs. Idempotent.
//
// It keeps the page-side evidence `--wait auto` needs to decide that a page has settled:
// - DOM changes (a MutationObserver; `style` attribute changes are animation, not content,
//   so a page that animates forever can still settle);
// - pending short timers (setTimeout with a delay of at most SHORT_TIMER_MS; intervals and
//   long timers are the page's background life, not its loading);
// - DOM changes made by requestAnimationFrame callbacks;
// - IndexedDB opens and service-worker registrations in progress (async page work that
//   changes neither the DOM nor the network for a while);
// - while the document is still parsing, the script the parser waits on;
// - a WebSocket message the page sent and has no answer to yet (for at most SHORT_TIMER_MS);
// - idle evidence, armed by each probe for EVIDENCE_MS: animation frames rendered since the
//   last DOM change, and when the main thread last went idle (requestIdleCallback: no task
//   was queued, so no response, message or scheduler slice was waiting to be handled).
// The script is named by its sourceURL (last line) so network.json can drop its wrapper
// frames from request initiator stacks.
// Requests are not wrapped: CDP's Network events see them, and a wrapper would become the
// only frame of every request's initiator stack. Wrappers call the page's own functions and
// change nothing the page can observe beyond `Function.prototype.toString` of the wrapped
// functions.
(function () {
  'use strict';
  if (window.__afhttpReady) {
    return true;
  }
  var SHORT_TIMER_MS = 1000;
  var EVIDENCE_MS = 500;
  var perf = window.performance;
  var now = function () { return perf && perf.now ? perf.now() : Date.now(); };
  var state = {
    mutations: 0,
    last: now(),
    rafLast: -1,
    timers: {},
    timerCount: 0,
    intervals: 0,
    work: 0,
    observer: null,
    armedUntil: -1,
    frames: 0,
    frameBase: -1,
    framing: false,
    idleAt: -1,
    idling: false
  };

  function countRecords(list) {
    var n = 0;
    for (var i = 0; i < list.length; i++) {
      if (list[i].type !== 'attributes' || list[i].attributeName !== 'style') {
        n++;
      }
    }
    if (n > 0) {
      state.mutations += n;
      state.last = now();
    }
    return n;
  }

  function observe() {
    try {
      state.observer = new MutationObserver(countRecords);
      state.observer.observe(document, {
        subtree: true, childList: true, attributes: true, characterData: true
      });
    } catch (e) {
      state.error = String(e);
    }
  }

  function wrapTimers() {
    var origSet = window.setTimeout;
    var origClear = window.clearTimeout;
    var origInterval = window.setInterval;
    var origClearInterval = window.clearInterval;
    if (typeof origSet !== 'function') {
      return;
    }
    window.setTimeout = function (fn, delay) {
      var d = Number(delay) || 0;
      var args = Array.prototype.slice.call(arguments);
      if (d > SHORT_TIMER_MS || typeof fn !== 'function') {
        return origSet.apply(window, args);
      }
      var id;
      args[0] = function () {
        if (state.timers[id]) {
          delete state.timers[id];
          state.timerCount--;
        }
        return fn.apply(this, arguments);
      };
      id = origSet.apply(window, args);
      state.timers[id] = now() + d;
      state.timerCount++;
      return id;
    };
    window.clearTimeout = function (id) {
      if (state.timers[id]) {
        delete state.timers[id];
        state.timerCount--;
      }
      return origClear.apply(window, arguments);
    };
    window.setInterval = function () {
      state.intervals++;
      return origInterval.apply(window, arguments);
    };
    window.clearInterval = function () {
      if (state.intervals > 0) {
        state.intervals--;
      }
      return origClearInterval.apply(window, arguments);
    };
  }

  function wrapAnimationFrames() {
    var orig = window.requestAnimationFrame;
    if (typeof orig !== 'function') {
      return;
    }
    window.requestAnimationFrame = function (fn) {
      if (typeof fn !== 'function') {
        return orig.apply(window, arguments);
      }
      return orig.call(window, function (ts) {
        try {
          return fn.call(this, ts);
        } finally {
          // The callback's own DOM changes are read now, before the observer's microtask.
          if (state.observer && countRecords(state.observer.takeRecords()) > 0) {
            state.rafLast = now();
          }
        }
      });
    };
  }

  // Idle evidence: our own frame and idle-callback chains (the page's originals, so the
  // page's wrappers above never see them), running only while a probe asked within
  // EVIDENCE_MS: a tab nobody waits on spends nothing.
  function armEvidence(raf, ric) {
    state.armedUntil = now() + EVIDENCE_MS;
    if (!state.framing && typeof raf === 'function') {
      state.framing = true;
      raf.call(window, function frame() {
        if (state.frameBase !== state.last) {
          state.frameBase = state.last;
          state.frames = 0;
        } else {
          state.frames++;
        }
        if (now() < state.armedUntil) {
          raf.call(window, frame);
        } else {
          state.framing = false;
        }
      });
    }
    if (!state.idling && typeof ric === 'function') {
      state.idling = true;
      ric.call(window, function idle() {
        state.idleAt = now();
        if (now() < state.armedUntil) {
          ric.call(window, idle);
        } else {
          state.idling = false;
        }
      });
    }
  }

  // A message the page sent on a WebSocket and has no answer to yet is page work, for at
  // most SHORT_TIMER_MS (a socket that only listens is the page's background life).
  function wrapSockets(setTimer) {
    var W = window.WebSocket;
    if (!W || !W.prototype || typeof W.prototype.send !== 'function') {
      return;
    }
    var send = W.prototype.send;
    W.prototype.send = function () {
      var r = send.apply(this, arguments);
      state.work++;
      var done = once(function () { state.work--; });
      this.addEventListener('message', done);
      this.addEventListener('close', done);
      this.addEventListener('error', done);
      setTimer(done, SHORT_TIMER_MS);
      return r;
    };
  }

  function once(fn) {
    var called = false;
    return function () {
      if (!called) {
        called = true;
        fn();
      }
    };
  }

  function wrapWork(setTimer) {
    var F = window.IDBFactory;
    if (F && F.prototype && typeof F.prototype.open === 'function') {
      var open = F.prototype.open;
      F.prototype.open = function () {
        var req = open.apply(this, arguments);
        state.work++;
        var done = once(function () { state.work--; });
        req.addEventListener('success', done);
        req.addEventListener('error', done);
        req.addEventListener('blocked', done);
        return req;
      };
    }
    var C = window.ServiceWorkerContainer;
    if (C && C.prototype && typeof C.prototype.register === 'function') {
      var register = C.prototype.register;
      C.prototype.register = function () {
        var container = this;
        state.work++;
        var done = once(function () { state.work--; });
        var p = register.apply(this, arguments);
        // Pending until the worker is active and controls the page (or a short grace for a
        // worker that never claims it).
        p.then(function () { return container.ready; }).then(function () {
          if (container.controller) {
            done();
            return;
          }
          container.addEventListener('controllerchange', done);
          setTimer(done, SHORT_TIMER_MS);
        }, done);
        return p;
      };
    }
  }

  // The script the parser is stopped at: while the document is still loading, it is the
  // last script element in document order, when it is a classic script with a src and
  // neither async nor defer.
  function blockingScript() {
    if (document.readyState !== 'loading') {
      return null;
    }
    var scripts = document.getElementsByTagName('script');
    var s = scripts[scripts.length - 1];
    if (!s || !s.src || s.async || s.defer || s.type === 'module') {
      return null;
    }
    return s.src;
  }

  var plainRaf = window.requestAnimationFrame;
  var plainRic = window.requestIdleCallback;

  state.probe = function () {
    armEvidence(plainRaf, plainRic);
    var t = now();
    var text = document.body ? document.body.innerText || '' : '';
    var next = null;
    for (var id in state.timers) {
      var due = Math.max(0, state.timers[id] - t);
      if (next === null || due < next) {
        next = due;
      }
    }
    return {
      ready_state: document.readyState,
      mutations: state.mutations,
      quiet_ms: Math.round(t - state.last),
      raf_dom_quiet_ms: state.rafLast < 0 ? null : Math.round(t - state.rafLast),
      short_timers: state.timerCount,
      next_timer_ms: next === null ? null : Math.round(next),
      intervals: state.intervals,
      pending_work: state.work,
      blocking_script: blockingScript(),
      text_bytes: new TextEncoder().encode(text).length,
      frames_quiet: state.frameBase === state.last ? state.frames : 0,
      idle_ms: state.idleAt > state.last ? Math.round(t - state.idleAt) : null
    };
  };
  Object.defineProperty(window, '__afhttpReady', { value: state, enumerable: false });
  var plainSetTimeout = window.setTimeout;
  observe();
  wrapWork(function (fn, ms) { plainSetTimeout.call(window, fn, ms); });
  wrapSockets(function (fn, ms) { plainSetTimeout.call(window, fn, ms); });
  wrapTimers();
  wrapAnimationFrames();
  // Frames and idle periods are counted from the document's start, so that the first probe
  // after the parse already has them.
  armEvidence(plainRaf, plainRic);
  return true;
})();
//# sourceURL=__page_readiness__.js
