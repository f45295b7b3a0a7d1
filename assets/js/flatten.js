// afhttp DOM flattening: the rendered document as one HTML string, which the Rust content
// projection (src/sdk/html/) parses exactly like an HTTP body. No projection happens here.
// - An open shadow root is written at its host as a declarative shadow root
//   (<template shadowrootmode="open">…</template>) before the host's light children; Rust
//   composes slots the same way for both paths.
// - A same-origin iframe's document follows its <iframe> as <afhttp-frame src url>…</afhttp-frame>
//   (its body's children); cross-origin frames stay a bare <iframe>.
// - Browser-only facts travel as markup: an element the browser does not render (computed
//   display:none or visibility:hidden) gets the `hidden` attribute, and URL attributes are
//   absolute.
// Evaluates to {html, url, truncated}.
(function () {
  'use strict';
  var MAX_NODES = 200000; // nodes written, across every frame and shadow root
  var MAX_CHARS = 16 * 1024 * 1024; // characters written (the HTTP path's text prefix)
  var VOID = { area: 1, base: 1, br: 1, col: 1, embed: 1, hr: 1, img: 1, input: 1, link: 1,
    meta: 1, param: 1, source: 1, track: 1, wbr: 1 };
  var SKIP = { script: 1, style: 1, noscript: 1, template: 1, head: 1, link: 1, meta: 1, base: 1 };
  var URL_ATTR = { href: 1, src: 1, action: 1, formaction: 1, poster: 1 };
  var LEADING_NEWLINE = { pre: 1, textarea: 1, listing: 1 };
  var out = [];
  var chars = 0;
  var nodes = 0;
  var truncated = false;
  var hiddenDepth = 0; // > 0 inside an element already marked hidden

  function emit(s) {
    if (truncated) { return; }
    if (chars + s.length > MAX_CHARS) { truncated = true; return; }
    chars += s.length;
    out.push(s);
  }
  function text(s) {
    return s.replace(/&/g, '&amp;').replace(/\u00a0/g, '&nbsp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }
  function quoted(s) {
    return s.replace(/&/g, '&amp;').replace(/\u00a0/g, '&nbsp;').replace(/"/g, '&quot;');
  }
  function absolute(value, doc) {
    try { return new URL(value, doc.baseURI).href; } catch (e) { return value; }
  }
  function hidden(el) {
    var view = el.ownerDocument.defaultView;
    if (!view) { return false; }
    try {
      var cs = view.getComputedStyle(el);
      return cs.display === 'none' || cs.visibility === 'hidden' || cs.visibility === 'collapse';
    } catch (e) { return false; }
  }
  function openTag(el, extra) {
    var s = '<' + el.localName;
    var attrs = el.attributes;
    for (var i = 0; i < attrs.length; i++) {
      var name = attrs[i].name;
      if (name === 'srcdoc' || name.charAt(0) === '<') { continue; }
      var v = attrs[i].value;
      if (URL_ATTR[name] && v.trim() !== '') { v = absolute(v, el.ownerDocument); }
      s += ' ' + name + '="' + quoted(v) + '"';
    }
    for (var k in extra) {
      if (Object.prototype.hasOwnProperty.call(extra, k)) { s += ' ' + k + '="' + quoted(extra[k]) + '"'; }
    }
    emit(s + '>');
  }
  function children(parent, inFrame) {
    for (var c = parent.firstChild; c && !truncated; c = c.nextSibling) { node(c, inFrame); }
  }
  function node(n, inFrame) {
    if (++nodes > MAX_NODES) { truncated = true; return; }
    if (n.nodeType === 3) { emit(text(n.nodeValue)); return; }
    if (n.nodeType !== 1) { return; }
    var tag = n.localName;
    if (SKIP[tag]) { return; }
    var extra = {};
    // Not rendered: marked `hidden`, so the projection skips it as it skips markup-hidden
    // elements (form summaries still list its controls, as over HTTP).
    var hides = hiddenDepth === 0 && hidden(n);
    if (hides && !n.hasAttribute('hidden')) { extra.hidden = ''; }
    // A form in an inlined frame submits to the frame's document when it names no action.
    if (tag === 'form' && inFrame && !n.hasAttribute('action')) { extra.action = n.ownerDocument.URL; }
    openTag(n, extra);
    if (VOID[tag]) { return; }
    if (hides) { hiddenDepth++; }
    element(n, tag, inFrame);
    if (hides) { hiddenDepth--; }
  }
  function element(n, tag, inFrame) {
    if (tag === 'iframe') {
      emit('</iframe>');
      frame(n);
      return;
    }
    if (n.shadowRoot) {
      emit('<template shadowrootmode="open">');
      children(n.shadowRoot, inFrame);
      emit('</template>');
    }
    // The parser drops one newline right after these start tags: keep the content's own.
    if (LEADING_NEWLINE[tag] && n.firstChild && n.firstChild.nodeType === 3 &&
        n.firstChild.nodeValue.charAt(0) === '\n') { emit('\n'); }
    children(n, inFrame);
    emit('</' + tag + '>');
  }
  function frame(el) {
    var doc = null;
    try { doc = el.contentDocument; } catch (e) { doc = null; }
    if (!doc || !doc.body) { return; }
    var attrs = hiddenDepth > 0 ? ' hidden' : '';
    emit('<afhttp-frame' + attrs + ' url="' + quoted(doc.URL) + '">');
    children(doc.body, true);
    emit('</afhttp-frame>');
  }

  var root = document.documentElement;
  emit('<!doctype html>');
  if (root) {
    openTag(root, {});
    emit('<head>');
    if (document.querySelector('title')) { emit('<title>' + text(document.title) + '</title>'); }
    emit('</head>');
    for (var c = root.firstChild; c && !truncated; c = c.nextSibling) {
      if (c.nodeType === 1 && c.localName === 'head') { continue; }
      node(c, false);
    }
    emit('</' + root.localName + '>');
  }
  return { html: out.join(''), url: location.href, truncated: truncated };
})()
