// afhttp composed content view: a mechanical walk of the rendered page (open shadow roots,
// slots, same-origin iframes) into markdown plus a structured summary. No readability
// heuristics: every visible block is kept in document order.
(function () {
  'use strict';
  var MAX_ELEMENTS = 50000;
  var seen = 0;
  var lines = [];
  var headings = [];
  var links = [];
  var actions = [];
  var tables = [];
  var frames = [];
  var SKIP = { SCRIPT: 1, STYLE: 1, NOSCRIPT: 1, TEMPLATE: 1, HEAD: 1, svg: 1, SVG: 1, META: 1, LINK: 1 };
  var BLOCK = {
    ADDRESS: 1, ARTICLE: 1, ASIDE: 1, BLOCKQUOTE: 1, BODY: 1, DD: 1, DETAILS: 1, DIALOG: 1,
    DIV: 1, DL: 1, DT: 1, FIELDSET: 1, FIGCAPTION: 1, FIGURE: 1, FOOTER: 1, FORM: 1,
    H1: 1, H2: 1, H3: 1, H4: 1, H5: 1, H6: 1, HEADER: 1, HR: 1, IFRAME: 1, LI: 1, MAIN: 1,
    NAV: 1, OL: 1, P: 1, PRE: 1, SECTION: 1, SUMMARY: 1, TABLE: 1, UL: 1, BUTTON: 1
  };
  function clean(s) { return (s || '').replace(/\s+/g, ' ').trim(); }
  function hidden(el) {
    try {
      var cs = el.ownerDocument.defaultView.getComputedStyle(el);
      return !cs || cs.display === 'none' || cs.visibility === 'hidden';
    } catch (e) { return false; }
  }
  function abs(href, el) {
    try { return new URL(href, el.ownerDocument.baseURI).href; } catch (e) { return href; }
  }
  function kids(node) {
    if (node.shadowRoot) { return node.shadowRoot.childNodes; }
    if (node.tagName === 'SLOT') {
      var assigned = node.assignedNodes({ flatten: true });
      if (assigned.length) { return assigned; }
    }
    return node.childNodes;
  }
  function isBlock(el) {
    if (BLOCK[el.tagName] || el.shadowRoot) { return true; }
    try {
      var d = el.ownerDocument.defaultView.getComputedStyle(el).display;
      return d === 'block' || d === 'flex' || d === 'grid' || d === 'list-item' || d === 'table';
    } catch (e) { return false; }
  }
  function fieldLabel(el) {
    return clean(el.getAttribute('aria-label') || el.getAttribute('placeholder') ||
      el.getAttribute('name') || el.id || '');
  }
  // Inline text of a subtree, with links as [text](href).
  function inline(node) {
    var out = '';
    var list = kids(node);
    for (var i = 0; i < list.length; i++) {
      var c = list[i];
      if (c.nodeType === 3) { out += c.nodeValue; continue; }
      if (c.nodeType !== 1 || SKIP[c.tagName] || hidden(c)) { continue; }
      if (++seen > MAX_ELEMENTS) { break; }
      if (c.tagName === 'BR') { out += ' '; continue; }
      if (c.tagName === 'A' && c.hasAttribute('href')) {
        var t = clean(inline(c));
        var href = abs(c.getAttribute('href'), c);
        links.push({ text: t, href: href });
        out += t ? '[' + t + '](' + href + ')' : '';
        continue;
      }
      if (c.tagName === 'IMG') {
        var alt = clean(c.getAttribute('alt'));
        if (alt) { out += '![' + alt + '](' + abs(c.getAttribute('src') || '', c) + ')'; }
        continue;
      }
      if (c.tagName === 'INPUT' || c.tagName === 'SELECT' || c.tagName === 'TEXTAREA') {
        var type = (c.getAttribute('type') || c.tagName.toLowerCase()).toLowerCase();
        if (type === 'hidden') { continue; }
        if (type === 'submit' || type === 'button') {
          var v = clean(c.value || type);
          actions.push({ kind: 'button', text: v });
          out += ' [button: ' + v + '] ';
        } else {
          actions.push({ kind: 'field', type: type, name: fieldLabel(c) });
          out += ' [' + type + ': ' + fieldLabel(c) + '] ';
        }
        continue;
      }
      out += inline(c);
    }
    return out;
  }
  function emit(s) { if (s) { lines.push(s); } }
  function table(el) {
    var rows = [];
    var trs = el.querySelectorAll('tr');
    for (var i = 0; i < trs.length; i++) {
      var cells = [];
      for (var j = 0; j < trs[i].cells.length; j++) {
        cells.push(clean(inline(trs[i].cells[j])).replace(/\|/g, '\\|'));
      }
      rows.push(cells);
    }
    if (!rows.length) { return; }
    var cols = rows.reduce(function (m, r) { return Math.max(m, r.length); }, 0);
    function line(r) {
      var out = [];
      for (var k = 0; k < cols; k++) { out.push(r[k] || ''); }
      return '| ' + out.join(' | ') + ' |';
    }
    var md = [line(rows[0]), '|' + new Array(cols + 1).join(' --- |')];
    for (var r = 1; r < rows.length; r++) { md.push(line(rows[r])); }
    tables.push({ rows: rows.length, columns: cols, header: rows[0] });
    emit(md.join('\n'));
  }
  function list(el, depth) {
    var n = 0;
    var items = kids(el);
    for (var i = 0; i < items.length; i++) {
      var li = items[i];
      if (li.nodeType !== 1 || li.tagName !== 'LI' || hidden(li)) { continue; }
      n++;
      var marker = el.tagName === 'OL' ? n + '. ' : '- ';
      var own = '';
      var nested = [];
      var parts = kids(li);
      for (var j = 0; j < parts.length; j++) {
        var p = parts[j];
        if (p.nodeType === 1 && (p.tagName === 'UL' || p.tagName === 'OL')) { nested.push(p); }
        else if (p.nodeType === 3) { own += p.nodeValue; }
        else if (p.nodeType === 1 && !SKIP[p.tagName] && !hidden(p)) {
          own += inline({ childNodes: [p], tagName: '', shadowRoot: null });
        }
      }
      emit(new Array(depth + 1).join('  ') + marker + clean(own));
      for (var k = 0; k < nested.length; k++) { list(nested[k], depth + 1); }
    }
  }
  function frame(el) {
    var src = el.src || el.getAttribute('src') || '';
    var doc = null;
    try { doc = el.contentDocument; } catch (e) { doc = null; }
    frames.push({ url: src, same_origin: !!doc });
    if (doc && doc.body) {
      emit('[frame: ' + src + ']');
      block(doc.body);
    } else {
      emit('[frame: ' + src + ' (not readable)]');
    }
  }
  function form(el) {
    var fields = el.querySelectorAll('input,select,textarea');
    var names = [];
    for (var i = 0; i < fields.length; i++) {
      if ((fields[i].getAttribute('type') || '').toLowerCase() !== 'hidden') { names.push(fieldLabel(fields[i])); }
    }
    var action = abs(el.getAttribute('action') || '', el);
    var method = (el.getAttribute('method') || 'get').toUpperCase();
    actions.push({ kind: 'form', action: action, method: method, fields: names });
    emit('[form: ' + method + ' ' + action + ' fields: ' + names.join(', ') + ']');
  }
  function handle(el) {
    var tag = el.tagName;
    var m = /^H([1-6])$/.exec(tag);
    if (m) {
      var h = clean(inline(el));
      if (h) { headings.push({ level: +m[1], text: h }); emit(new Array(+m[1] + 1).join('#') + ' ' + h); }
      return;
    }
    if (tag === 'UL' || tag === 'OL') { list(el, 0); return; }
    if (tag === 'TABLE') { table(el); return; }
    if (tag === 'PRE') { emit('```\n' + el.textContent.replace(/\n+$/, '') + '\n```'); return; }
    if (tag === 'IFRAME') { frame(el); return; }
    if (tag === 'HR') { emit('---'); return; }
    if (tag === 'BUTTON' || el.getAttribute('role') === 'button') {
      var b = clean(inline(el));
      actions.push({ kind: 'button', text: b });
      emit('[button: ' + b + ']');
      return;
    }
    if (tag === 'BLOCKQUOTE') { emit('> ' + clean(inline(el))); return; }
    if (tag === 'FORM') { form(el); }
    block(el);
  }
  function block(container) {
    var buf = '';
    var list = kids(container);
    for (var i = 0; i < list.length; i++) {
      var c = list[i];
      if (c.nodeType === 3) { buf += c.nodeValue; continue; }
      if (c.nodeType !== 1 || SKIP[c.tagName] || hidden(c)) { continue; }
      if (++seen > MAX_ELEMENTS) { break; }
      if (isBlock(c)) {
        emit(clean(buf));
        buf = '';
        handle(c);
      } else {
        buf += inline({ childNodes: [c], tagName: '', shadowRoot: null });
      }
    }
    emit(clean(buf));
  }
  if (document.body) { block(document.body); }
  var markdown = lines.join('\n\n') + (lines.length ? '\n' : '');
  return {
    markdown: markdown,
    json: {
      schema_version: 1,
      url: location.href,
      title: document.title || null,
      headings: headings,
      links: links,
      actions: actions,
      tables: tables,
      frames: frames,
      text_bytes: new TextEncoder().encode(markdown).length,
      truncated: seen > MAX_ELEMENTS
    }
  };
})()
