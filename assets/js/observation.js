// afhttp observation snapshot (observation.json): interactive elements with role, name, state,
// geometry and a scoped selector hint. Mechanical only: no ranking and no intent labels.
// One scan budget covers the document, open shadow roots and same-origin iframe documents;
// native controls and explicit markers come first, pointer-cursor elements are appended after.
// Per-element work is wrapped so one odd element costs that element, never the snapshot.
(function () {
  'use strict';
  var MAX_SCANNED = 2000; // elements visited, across every frame and shadow root
  var MAX_NODES = 100; // nodes emitted, across every frame and shadow root
  var MAX_TEXT = 200; // characters kept of `name` and `text`
  var MAX_OPTIONS = 20; // selected options listed for one <select multiple>
  var MAX_ATTR = 100; // longest attribute value a selector hint may quote
  var MAX_HOPS = 32; // nesting followed when resolving focus through shadow roots and frames

  // Subtrees that are never rendered: not scanned, not counted.
  var SKIP = { script: 1, style: 1, head: 1, template: 1, noscript: 1, meta: 1, link: 1, title: 1 };
  // ARIA widget roles: a `role` attribute is an interaction marker only when it names one of
  // these, so landmark and structure roles (main, list, navigation ...) do not use up the cap.
  var WIDGET = {
    button: 1, link: 1, checkbox: 1, radio: 1, 'switch': 1, tab: 1, menuitem: 1,
    menuitemcheckbox: 1, menuitemradio: 1, option: 1, textbox: 1, searchbox: 1, combobox: 1,
    listbox: 1, slider: 1, spinbutton: 1, scrollbar: 1, treeitem: 1, gridcell: 1
  };
  var TOGGLE_ROLES = { checkbox: 1, radio: 1, 'switch': 1, menuitemcheckbox: 1, menuitemradio: 1 };
  var BUTTON_TYPES = { submit: 1, reset: 1, button: 1, image: 1 };
  // Input types whose value is not typed text; everything else takes `type` and is redacted.
  var NOT_TEXT = { checkbox: 1, radio: 1, submit: 1, reset: 1, button: 1, image: 1, file: 1, range: 1, color: 1, hidden: 1 };
  var INPUT_ROLE = {
    checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox',
    submit: 'button', reset: 'button', button: 'button', image: 'button', file: 'button', color: 'button'
  };

  var scanned = 0;
  var errors = 0;
  var stopped = null; // the cap that stopped the walk
  var primary = []; // {el, frame}
  var pointer = []; // {el, frame}
  var frames = [];
  var frameEls = []; // iframe elements, parallel to frames[1..]
  var formEls = []; // form elements, parallel to forms[]
  var forms = [];

  function clean(s, max) {
    s = String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
    return s.length > (max || MAX_TEXT) ? s.slice(0, max || MAX_TEXT) : s;
  }
  // Plain loops instead of Array.prototype helpers, which a page may have replaced.
  function indexIn(list, x) {
    for (var i = 0; i < list.length; i++) { if (list[i] === x) { return i; } }
    return -1;
  }
  function attr(el, name) { var v = el.getAttribute(name); return v == null ? '' : String(v); }
  function abs(url, el) {
    try { return new URL(url, el.ownerDocument.baseURI).href; } catch (e) { return url; }
  }
  function isEditable(el) {
    var ce = el.getAttribute('contenteditable');
    return ce === '' || ce === 'true' || ce === 'plaintext-only';
  }
  function widgetRole(el) {
    var r = attr(el, 'role').trim().toLowerCase().split(/\s+/)[0];
    return WIDGET[r] ? r : '';
  }
  function tabbable(el) {
    var t = parseInt(attr(el, 'tabindex'), 10);
    return !isNaN(t) && t >= 0;
  }

  // Native interactive elements and explicit interaction markers.
  function isPrimary(el, tag) {
    if (tag === 'a' || tag === 'area') { return el.hasAttribute('href'); }
    if (tag === 'button' || tag === 'select' || tag === 'textarea' || tag === 'summary' || tag === 'iframe') { return true; }
    if (tag === 'input') { return String(el.type).toLowerCase() !== 'hidden'; }
    return !!widgetRole(el) || tabbable(el) || isEditable(el);
  }
  // A non-semantic element with a pointer cursor that it does not merely inherit.
  function isPointer(el) {
    var view = el.ownerDocument.defaultView;
    if (view.getComputedStyle(el).cursor !== 'pointer') { return false; }
    var p = el.parentElement || (el.parentNode && el.parentNode.host) || null;
    return !p || view.getComputedStyle(p).cursor !== 'pointer';
  }

  // Text of a subtree without the values of form controls or editable regions inside it.
  function textOf(el) {
    var tag = el.localName;
    if (tag === 'input' || tag === 'textarea' || tag === 'select' || isEditable(el)) { return ''; }
    if (!el.querySelector('input,textarea,select,[contenteditable]')) {
      return clean(typeof el.innerText === 'string' ? el.innerText : el.textContent);
    }
    var out = [];
    (function walk(n) {
      for (var c = n.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 3) { out.push(c.nodeValue); continue; }
        if (c.nodeType !== 1) { continue; }
        var t = c.localName;
        if (SKIP[t] || t === 'input' || t === 'textarea' || t === 'select' || isEditable(c)) { continue; }
        walk(c);
      }
    })(el);
    return clean(out.join(' '));
  }

  // The accessible name, mechanically: aria-labelledby, aria-label, labels, alt, title,
  // placeholder, then content (a button's value, the element's text, an image's alt).
  function accName(el, tag, type, valueBearing) {
    var ids = attr(el, 'aria-labelledby').trim();
    if (ids) {
      var root = el.getRootNode();
      var parts = [];
      var list = ids.split(/\s+/);
      for (var i = 0; i < list.length; i++) {
        var t = root.getElementById ? root.getElementById(list[i]) : null;
        var part = t ? textOf(t) || clean(attr(t, 'aria-label')) : '';
        if (part) { parts.push(part); }
      }
      if (parts.length) { return clean(parts.join(' ')); }
    }
    var s = clean(attr(el, 'aria-label'));
    if (s) { return s; }
    if (el.labels && el.labels.length) {
      var texts = [];
      for (var j = 0; j < el.labels.length; j++) { texts.push(textOf(el.labels[j])); }
      s = clean(texts.join(' '));
      if (s) { return s; }
    }
    if (tag === 'img' || tag === 'area' || type === 'image') {
      s = clean(attr(el, 'alt'));
      if (s) { return s; }
    }
    s = clean(attr(el, 'title')) || clean(attr(el, 'placeholder'));
    if (s) { return s; }
    if (type && BUTTON_TYPES[type] && type !== 'image') {
      return clean(el.value) || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : '');
    }
    // An editable region nothing labels is named by its own text (a textbox without a
    // name says nothing about what it holds).
    if (isEditable(el)) { return clean(typeof el.innerText === 'string' ? el.innerText : el.textContent); }
    if (valueBearing || tag === 'iframe') { return ''; }
    s = textOf(el);
    if (s) { return s; }
    var img = el.querySelector('img[alt]');
    return img ? clean(attr(img, 'alt')) : '';
  }

  function implicitRole(el, tag, type) {
    if (type) { return INPUT_ROLE[type] || 'textbox'; }
    if (tag === 'a' || tag === 'area') { return 'link'; }
    if (tag === 'button' || tag === 'summary') { return 'button'; }
    if (tag === 'select') { return el.multiple || el.size > 1 ? 'listbox' : 'combobox'; }
    if (tag === 'textarea' || isEditable(el)) { return 'textbox'; }
    if (tag === 'iframe') { return 'iframe'; }
    return 'generic';
  }

  // What can be done to it, from its kind alone (a disabled control keeps its kind's actions).
  function actionsFor(el, tag, type, role, editable, viaPointer) {
    if (viaPointer) { return ['click']; }
    if (tag === 'iframe') { return []; }
    if (tag === 'select') { return ['select']; }
    if (type === 'file') { return ['click', 'upload']; }
    if (type === 'checkbox' || type === 'radio' || TOGGLE_ROLES[role]) { return ['click', 'toggle']; }
    if (editable) { return ['click', 'type']; }
    if (el.form && ((tag === 'button' && el.type === 'submit') || type === 'submit' || type === 'image')) {
      return ['click', 'submit'];
    }
    if (tag !== 'a' && tag !== 'area' && tag !== 'button' && tag !== 'summary' && !type &&
        !widgetRole(el) && tabbable(el)) {
      return ['focus'];
    }
    return ['click'];
  }

  // Selector hints. CSS.escape is not used: a page may replace window.CSS.
  function ident(s) {
    return String(s).replace(/[^a-zA-Z0-9_\u00A0-\uFFFF-]/g, function (c) {
      return '\\' + c.charCodeAt(0).toString(16) + ' ';
    }).replace(/^(-?)([0-9])/, function (m, d, n) { return d + '\\3' + n + ' '; });
  }
  function quoted(s) {
    return '"' + String(s).replace(/["\\]/g, '\\$&').replace(/[\n\r\f]/g, ' ') + '"';
  }
  function uniqueIn(scope, sel, el) {
    try {
      var m = scope.querySelectorAll(sel);
      return m.length === 1 && m[0] === el;
    } catch (e) { return false; }
  }
  // A hint within the element's own scope (its document or shadow root).
  function localHint(el) {
    var scope = el.getRootNode();
    var tag = ident(el.localName);
    var id = attr(el, 'id');
    if (id && uniqueIn(scope, '#' + ident(id), el)) { return { selector: '#' + ident(id), unique: true }; }
    var names = ['data-testid', 'name', 'aria-label', 'placeholder', 'title', 'href'];
    for (var i = 0; i < names.length; i++) {
      var v = attr(el, names[i]);
      if (v && v.length <= MAX_ATTR) {
        var s = tag + '[' + names[i] + '=' + quoted(v) + ']';
        if (uniqueIn(scope, s, el)) { return { selector: s, unique: true }; }
      }
    }
    var parts = [];
    for (var cur = el; cur && cur.nodeType === 1; cur = cur.parentElement) {
      var cid = attr(cur, 'id');
      if (cur !== el && cid && uniqueIn(scope, '#' + ident(cid), cur)) { parts.unshift('#' + ident(cid)); break; }
      var part = ident(cur.localName);
      var p = cur.parentElement || cur.parentNode;
      if (p) {
        var same = 0, index = 0;
        for (var sib = p.firstElementChild; sib; sib = sib.nextElementSibling) {
          if (sib.localName === cur.localName) { same++; }
          if (sib === cur) { index = same; }
        }
        if (same > 1) { part += ':nth-of-type(' + index + ')'; }
      }
      parts.unshift(part);
    }
    var sel = parts.join(' > ');
    return { selector: sel, unique: uniqueIn(scope, sel, el) };
  }
  // Relative to the node's frame document; open-shadow content as `host >> shadow >> inner`.
  function hint(el) {
    var local = localHint(el);
    var root = el.getRootNode();
    if (root.nodeType === 11 && root.host) {
      var outer = hint(root.host);
      return { selector: outer.selector + ' >> shadow >> ' + local.selector, unique: outer.unique && local.unique };
    }
    return local;
  }

  function isVisible(el, r, frame) {
    if (!frame.visible || !(r.width > 0 && r.height > 0)) { return false; }
    if (typeof el.checkVisibility === 'function') {
      return el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    }
    var cs = el.ownerDocument.defaultView.getComputedStyle(el);
    return cs.display !== 'none' && cs.visibility !== 'hidden';
  }

  function registerForm(form, frame) {
    var at = indexIn(formEls, form);
    var entry = at >= 0 ? forms[at] : null;
    if (!entry) {
      var m = attr(form, 'method').toLowerCase();
      entry = {
        ref: 'form-' + (forms.length + 1),
        frame_id: frame.frame_id,
        id: attr(form, 'id') || null,
        name: attr(form, 'name') || null,
        // Attributes, not properties: a control named "action" or "method" shadows those.
        action: abs(attr(form, 'action') || form.ownerDocument.URL, form),
        method: (m === 'post' || m === 'dialog' ? m : 'get').toUpperCase(),
        field_refs: [],
        selector_hint: null
      };
      try { entry.selector_hint = hint(form); } catch (e) { errors++; }
      formEls.push(form);
      forms.push(entry);
    }
    return entry;
  }

  function describe(el, frame, viaPointer, ref) {
    var tag = el.localName;
    var type = tag === 'input' ? String(el.type || 'text').toLowerCase() : null;
    var eRole = widgetRole(el);
    var role = eRole || attr(el, 'role').trim().toLowerCase().split(/\s+/)[0] || implicitRole(el, tag, type);
    var editable = tag === 'textarea' || (type && !NOT_TEXT[type]) || isEditable(el) ||
      eRole === 'textbox' || eRole === 'searchbox';
    var valueBearing = editable || tag === 'select' || tag === 'input';
    var r = el.getBoundingClientRect();
    var disabled = false;
    try { disabled = el.matches(':disabled'); } catch (e) { disabled = false; }
    var node = {
      ref: ref,
      frame_id: frame.frame_id,
      tag: tag,
      role: role,
      name: accName(el, tag, type, valueBearing),
      text: valueBearing ? '' : textOf(el),
      visible: isVisible(el, r, frame),
      enabled: !disabled && attr(el, 'aria-disabled') !== 'true',
      focused: false,
      bbox: {
        x: Math.round(r.left + frame.dx), y: Math.round(r.top + frame.dy),
        width: Math.round(r.width), height: Math.round(r.height)
      },
      actions: actionsFor(el, tag, type, role, editable, viaPointer)
    };
    if (type) { node.input_type = type; }
    if (type === 'checkbox' || type === 'radio') { node.checked = !!el.checked; } else if (el.hasAttribute('aria-checked')) {
      var ac = attr(el, 'aria-checked');
      node.checked = ac === 'mixed' ? 'mixed' : ac === 'true';
    }
    if (el.hasAttribute('aria-selected')) { node.selected = attr(el, 'aria-selected') === 'true'; }
    if (tag === 'summary' && el.parentElement && el.parentElement.localName === 'details') {
      node.expanded = el.parentElement.hasAttribute('open');
    } else if (el.hasAttribute('aria-expanded')) { node.expanded = attr(el, 'aria-expanded') === 'true'; }
    if (tag === 'select') {
      node.selected_options = [];
      var opts = el.options || [];
      for (var i = 0; i < opts.length && node.selected_options.length < MAX_OPTIONS; i++) {
        if (opts[i].selected) { node.selected_options.push({ index: i, text: clean(opts[i].label || opts[i].text) }); }
      }
    }
    if (tag === 'input' || tag === 'textarea' || tag === 'select') {
      node.required = !!el.required;
      if (tag !== 'select') { node.readonly = !!el.readOnly; }
    }
    // Never the value itself: whether there is one and its length in UTF-16 units.
    if (editable || type === 'file' || type === 'range' || type === 'color') {
      var v = tag === 'input' || tag === 'textarea' ? String(el.value || '') : String(el.textContent || '');
      node.value_redacted = { present: v.length > 0, length: v.length };
    }
    if ((tag === 'a' || tag === 'area') && el.hasAttribute('href')) { node.href = abs(attr(el, 'href'), el); }
    if ((tag === 'iframe' || type === 'image') && el.hasAttribute('src')) { node.src = abs(attr(el, 'src'), el); }
    if (el.hasAttribute('formaction')) { node.action = abs(attr(el, 'formaction'), el); }
    var fi = tag === 'iframe' ? indexIn(frameEls, el) : -1;
    var f = fi >= 0 ? frames[fi + 1] : null;
    if (f) { node.frame_ref = f.frame_id; }
    var form = el.form && el.form.nodeType === 1 ? el.form : null;
    var fe = form ? registerForm(form, frame) : null;
    if (fe) { node.form_ref = fe.ref; }
    node.selector_hint = hint(el);
    // Cross-references last, once nothing above can throw and drop the node.
    if (f) { f.iframe_ref = ref; }
    if (fe) { fe.field_refs.push(ref); }
    return node;
  }

  function enterFrame(iframe, parent) {
    var doc = null;
    try { doc = iframe.contentDocument; } catch (e) { doc = null; }
    var r = iframe.getBoundingClientRect();
    var cs = iframe.ownerDocument.defaultView.getComputedStyle(iframe);
    var entry = {
      frame_id: 'frame-' + frames.length,
      url: doc ? doc.URL : abs(attr(iframe, 'src') || 'about:blank', iframe),
      parent_frame_id: parent.frame_id,
      same_origin: !!doc,
      iframe_ref: null
    };
    frames.push(entry);
    frameEls.push(iframe);
    if (!doc || !doc.documentElement || doc.documentElement.nodeType !== 1) { return null; }
    return {
      frame_id: entry.frame_id,
      // The child viewport starts inside the iframe's border and padding.
      dx: parent.dx + r.left + iframe.clientLeft + (parseFloat(cs.paddingLeft) || 0),
      dy: parent.dy + r.top + iframe.clientTop + (parseFloat(cs.paddingTop) || 0),
      visible: parent.visible && isVisible(iframe, r, parent),
      root: doc.documentElement
    };
  }

  // The walk: depth first in document order, shadow content before light children.
  var main = { frame_id: 'main', dx: 0, dy: 0, visible: true };
  frames.push({ frame_id: 'main', url: location.href, parent_frame_id: null, same_origin: true, iframe_ref: null });
  var stack = document.documentElement ? [{ el: document.documentElement, frame: main }] : [];
  while (stack.length && !stopped) {
    var item = stack.pop();
    var el = item.el;
    var tag = String(el.localName || '');
    if (SKIP[tag]) { continue; }
    if (scanned >= MAX_SCANNED) { stopped = 'max_scanned'; break; }
    scanned++;
    var child = null;
    try {
      if (tag === 'form') { registerForm(el, item.frame); }
      if (isPrimary(el, tag)) {
        if (primary.length >= MAX_NODES) { stopped = 'max_nodes'; break; }
        primary.push(item);
        if (tag === 'iframe') { child = enterFrame(el, item.frame); }
      } else if (isPointer(el)) {
        pointer.push(item);
      }
    } catch (e) { errors++; }
    try {
      // Pushed last-first so they pop in document order, shadow content before light children.
      for (var c = el.lastElementChild; c; c = c.previousElementSibling) { stack.push({ el: c, frame: item.frame }); }
      var sr = el.shadowRoot;
      for (c = sr ? sr.lastElementChild : null; c; c = c.previousElementSibling) { stack.push({ el: c, frame: item.frame }); }
      if (child) { stack.push({ el: child.root, frame: child }); }
    } catch (e) { errors++; }
  }
  var room = MAX_NODES - primary.length;
  if (!stopped && pointer.length > room) { stopped = 'max_nodes'; }
  var chosen = [];
  for (var pi = 0; pi < primary.length; pi++) { chosen.push([primary[pi], false]); }
  for (pi = 0; pi < pointer.length && pi < room; pi++) { chosen.push([pointer[pi], true]); }

  // Focus through open shadow roots and same-origin frames.
  var focused = null;
  try {
    focused = document.activeElement;
    if (!focused || focused.nodeType !== 1) { focused = null; }
    for (var hop = 0; focused && hop < MAX_HOPS; hop++) {
      var next = null;
      if (focused.shadowRoot && focused.shadowRoot.activeElement) { next = focused.shadowRoot.activeElement; }
      else if (focused.localName === 'iframe') {
        var fd = null;
        try { fd = focused.contentDocument; } catch (e) { fd = null; }
        if (fd && fd.activeElement && fd.activeElement !== fd.body) { next = fd.activeElement; }
      }
      if (!next) { break; }
      focused = next;
    }
  } catch (e) { errors++; }

  var nodes = [];
  var focusedRef = null;
  for (var ci = 0; ci < chosen.length; ci++) {
    try {
      var c0 = chosen[ci][0];
      var node = describe(c0.el, c0.frame, chosen[ci][1], 'obs-' + (nodes.length + 1));
      if (c0.el === focused) { node.focused = true; focusedRef = node.ref; }
      nodes.push(node);
    } catch (e) { errors++; }
  }

  // A named element (<img name="title">) shadows document.title; fall back to <title>.
  var title = document.title;
  if (typeof title !== 'string') {
    var te = document.querySelector('title');
    title = te ? te.textContent : '';
  }
  return {
    schema_version: 1,
    url: location.href,
    title: clean(title, 1000),
    viewport: {
      width: window.innerWidth, height: window.innerHeight, device_scale_factor: window.devicePixelRatio,
      scroll_x: Math.round(window.scrollX), scroll_y: Math.round(window.scrollY)
    },
    frames: frames,
    nodes: nodes,
    forms: forms,
    focused_ref: focusedRef,
    truncated: stopped ? {
      reason: stopped, max_nodes: MAX_NODES, max_scanned: MAX_SCANNED, scanned: scanned, emitted: nodes.length
    } : null,
    element_errors: errors
  };
})()
