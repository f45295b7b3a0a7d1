// afhttp observation snapshot: interactive elements with role, name, state and geometry.
// Mechanical only. Walks the document, open shadow roots and same-origin iframes; scans at
// most SCAN_LIMIT elements and emits at most NODE_LIMIT nodes, and says which cap stopped it.
(function () {
  'use strict';
  var SCAN_LIMIT = 2000;
  var NODE_LIMIT = 100;
  var scanned = 0;
  var nodes = [];
  var forms = [];
  var frameList = [{ frame_id: 'main', url: location.href }];
  var truncated = null;
  var focusedRef = null;
  var NATIVE = { A: 1, BUTTON: 1, INPUT: 1, SELECT: 1, TEXTAREA: 1, SUMMARY: 1, IFRAME: 1 };
  var ROLE = { A: 'link', BUTTON: 'button', SELECT: 'combobox', TEXTAREA: 'textbox', SUMMARY: 'button', IFRAME: 'iframe' };
  function clean(s) { return (s || '').replace(/\s+/g, ' ').trim().slice(0, 200); }
  function inputRole(type) {
    if (type === 'checkbox' || type === 'radio') { return type; }
    if (type === 'submit' || type === 'button' || type === 'reset' || type === 'image') { return 'button'; }
    if (type === 'range') { return 'slider'; }
    return 'textbox';
  }
  function candidate(el) {
    var tag = el.tagName;
    if (tag === 'A') { return el.hasAttribute('href'); }
    if (NATIVE[tag]) { return !(tag === 'INPUT' && (el.type || '') === 'hidden'); }
    if (el.hasAttribute('role') || el.hasAttribute('tabindex')) { return true; }
    if (el.getAttribute('contenteditable') === 'true') { return true; }
    try { return el.ownerDocument.defaultView.getComputedStyle(el).cursor === 'pointer' &&
      !(el.parentElement && el.ownerDocument.defaultView.getComputedStyle(el.parentElement).cursor === 'pointer'); }
    catch (e) { return false; }
  }
  function describe(el, frameId, dx, dy) {
    var tag = el.tagName;
    var type = tag === 'INPUT' ? (el.type || 'text').toLowerCase() : null;
    var role = el.getAttribute('role') || (type ? inputRole(type) : ROLE[tag]) || 'generic';
    var label = '';
    if (el.labels && el.labels.length) { label = el.labels[0].innerText; }
    var text = clean(el.innerText || '');
    var name = clean(el.getAttribute('aria-label') || label || el.getAttribute('alt') ||
      el.getAttribute('title') || el.getAttribute('placeholder') ||
      (type === 'submit' || type === 'button' ? el.value : '') || text);
    var r = el.getBoundingClientRect();
    var cs = el.ownerDocument.defaultView.getComputedStyle(el);
    var visible = r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none';
    var actions = ['click'];
    if (role === 'textbox' || el.getAttribute('contenteditable') === 'true') { actions = ['click', 'type']; }
    if (tag === 'SELECT') { actions = ['select']; }
    var node = {
      ref: 'obs-' + (nodes.length + 1),
      frame_id: frameId,
      role: role,
      name: name,
      text: text,
      visible: visible,
      enabled: !el.disabled && el.getAttribute('aria-disabled') !== 'true',
      bbox: { x: Math.round(r.x + dx), y: Math.round(r.y + dy), width: Math.round(r.width), height: Math.round(r.height) },
      actions: actions
    };
    if (tag === 'A') { node.href = el.href; }
    if (tag === 'IFRAME') { node.src = el.src; }
    if (type) { node.input_type = type; }
    if (type === 'checkbox' || type === 'radio') { node.checked = !!el.checked; }
    if ('value' in el && (tag === 'INPUT' || tag === 'TEXTAREA') && type !== 'submit' && type !== 'button') {
      node.value_present = !!el.value;
      node.value_length = (el.value || '').length;
    }
    if (el.form) { node.form_index = Array.prototype.indexOf.call(el.ownerDocument.forms, el.form); }
    if (el === el.ownerDocument.activeElement && el !== el.ownerDocument.body) { focusedRef = node.ref; }
    return node;
  }
  function walk(root, frameId, dx, dy) {
    var stack = [root];
    while (stack.length) {
      var el = stack.pop();
      if (scanned >= SCAN_LIMIT) { truncated = truncated || { reason: 'scan_limit' }; return; }
      scanned++;
      if (candidate(el)) {
        if (nodes.length >= NODE_LIMIT) { truncated = truncated || { reason: 'node_limit' }; return; }
        nodes.push(describe(el, frameId, dx, dy));
      }
      if (el.tagName === 'IFRAME') {
        var doc = null;
        try { doc = el.contentDocument; } catch (e) { doc = null; }
        if (doc && doc.documentElement) {
          var id = 'frame-' + frameList.length;
          var r = el.getBoundingClientRect();
          frameList.push({ frame_id: id, url: doc.location.href });
          walk(doc.documentElement, id, dx + r.x, dy + r.y);
        }
      }
      var children = [];
      if (el.shadowRoot) { children = children.concat(Array.prototype.slice.call(el.shadowRoot.children)); }
      children = children.concat(Array.prototype.slice.call(el.children));
      for (var i = children.length - 1; i >= 0; i--) { stack.push(children[i]); }
    }
  }
  if (document.documentElement) { walk(document.documentElement, 'main', 0, 0); }
  for (var f = 0; f < document.forms.length; f++) {
    var form = document.forms[f];
    forms.push({
      index: f,
      action: form.action,
      method: (form.getAttribute('method') || 'get').toUpperCase(),
      field_refs: nodes.filter(function (n) { return n.form_index === f; }).map(function (n) { return n.ref; })
    });
  }
  if (truncated) {
    truncated.scanned = scanned;
    truncated.emitted = nodes.length;
    truncated.scan_limit = SCAN_LIMIT;
    truncated.node_limit = NODE_LIMIT;
  }
  return {
    schema_version: 1,
    url: location.href,
    title: document.title || null,
    viewport: { width: window.innerWidth, height: window.innerHeight, device_scale_factor: window.devicePixelRatio },
    frames: frameList,
    nodes: nodes,
    forms: forms,
    focused_ref: focusedRef,
    truncated: truncated
  };
})()
