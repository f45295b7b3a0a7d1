// Resolve an `afhttp upload --selector` chain to its element, or to a failure string.
// `parts` is the chain split on `>>`: CSS selectors, `shadow` (enter the open shadow root of
// the element matched so far) and `frame` (enter the document of the same-origin iframe
// matched so far) — the shape of observation.json's selector hints. Mechanical only.
(function (parts) {
  var scope = document;
  var el = null;
  for (var i = 0; i < parts.length; i++) {
    var part = parts[i];
    if (part === 'shadow') {
      if (!el || !el.shadowRoot) { return 'no_shadow:' + i; }
      scope = el.shadowRoot;
      continue;
    }
    if (part === 'frame') {
      var doc = null;
      try { doc = el ? el.contentDocument : null; } catch (e) { doc = null; }
      if (!doc) { return 'no_frame:' + i; }
      scope = doc;
      continue;
    }
    try {
      el = scope.querySelector(part);
    } catch (e) {
      return 'syntax:' + i;
    }
    if (!el) { return 'not_found:' + i; }
  }
  var tag = String(el.localName || '');
  var type = tag === 'input' ? String(el.type || '').toLowerCase() : '';
  if (type !== 'file') { return 'not_file_input:' + tag + (tag === 'input' ? '[type=' + type + ']' : ''); }
  return el;
})
