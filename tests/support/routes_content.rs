//! `/conform/*`: static pages the content-projection conformance test fetches over plain
//! HTTP and in a browser (`tests/content_conformance.rs`). No scripts and no stylesheets,
//! so the rendered DOM is the served one and both paths must project it alike. The article
//! is the shared `/article`.

use axum::body::Body;
use axum::http::{header, Response};
use axum::routing::get;
use axum::Router;

/// The fixture paths, with the article.
pub const CONFORMANCE_PAGES: [&str; 6] = [
    "/article",
    "/conform/tables",
    "/conform/forms",
    "/conform/links",
    "/conform/shadow",
    "/conform/iframe",
];

/// Text that exists only inside the frame of `/conform/iframe` (the browser inlines it).
pub const INSIDE_FRAME: &str = "inside-frame";

/// The `/conform/*` routes, merged into the shared fixture router.
pub fn router() -> Router {
    Router::new()
        .route("/conform/tables", get(|| async { html(TABLES) }))
        .route("/conform/forms", get(|| async { html(FORMS) }))
        .route("/conform/links", get(|| async { html(LINKS) }))
        .route("/conform/shadow", get(|| async { html(SHADOW) }))
        .route("/conform/iframe", get(|| async { html(IFRAME) }))
        .route("/conform/folds", get(|| async { html(FOLDS) }))
        .route(
            "/conform/folds-in-main",
            get(|| async { html(FOLDS_IN_MAIN) }),
        )
        .route(
            "/conform/iframe-inner",
            get(|| async { html(IFRAME_INNER) }),
        )
}

fn html(body: &'static str) -> Response<Body> {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .body(body.into())
        .unwrap()
}

const TABLES: &str = r##"<!doctype html>
<html lang="en-GB"><head><meta charset="utf-8"><title>Tables &amp; grids</title></head>
<body>
<h1>Tables</h1>
<table>
  <caption>Quarterly figures</caption>
  <thead><tr><th>Quarter</th><th>Revenue</th><th>Notes</th></tr></thead>
  <tbody>
    <tr><td>Q1</td><td>1,200</td><td>a | pipe and <a href="/q1">details</a></td></tr>
    <tr><td>Q2</td><td colspan="2">merged&nbsp;cells</td></tr>
  </tbody>
</table>
<table><tr><td>Layout cell
  <table><tr><th>Inner</th></tr><tr><td>data</td></tr></table>
</td></tr></table>
<table><tr><td>no</td><td>header</td></tr><tr><td>row</td><td>two</td></tr></table>
</body></html>
"##;

const FORMS: &str = r##"<!doctype html>
<html lang="en"><head><title>Forms</title></head>
<body>
<h1>Sign in</h1>
<form action="/login" method="post">
  <fieldset><legend>Account</legend>
  <label for="email">Email</label> <input id="email" name="email" type="email" required>
  <label>Password <input name="password" type="password"></label>
  <input type="hidden" name="csrf" value="token-123">
  <label><input type="checkbox" name="remember" checked> Remember me</label>
  <select name="lang"><option value="en">English</option><option value="fr" selected>French</option></select>
  <textarea name="note">Default note</textarea>
  </fieldset>
  <button type="submit">Sign in now</button>
  <button type="button" aria-label="Show password">👁</button>
  <input type="submit" value="Also submit">
</form>
<form><input name="q" placeholder="Search"><input type="submit" value="Go"></form>
<p>Outside the forms: <button type="button">Help me</button></p>
</body></html>
"##;

const LINKS: &str = r##"<!doctype html>
<html lang="fr"><head><title>Links</title><base href="/conform/base/"></head>
<body>
<h1>Links</h1>
<p>A <a href="relative">relative</a>, an <a href="/absolute-path">absolute path</a>,
a <a href="http://127.0.0.1:9/elsewhere" rel="nofollow external">full URL</a>,
a <a href="#section">fragment</a>, <a href="mailto:someone@example.org">mail</a>,
a <a href="javascript:void(0)">script link</a> and <a href="relative">relative again</a>.</p>
<p><a href="/icon" aria-label="Icon link"><img src="/i.png" alt=""></a>
<a href="/pic"><img src="pic.png" alt="A picture"></a>
<a href="/titled" title="Titled link"></a></p>
<ul><li><a href="/one">One</a></li><li>Two <a href="/two">link</a><ol><li>Nested</li></ol></li></ul>
<h2 id="section">Section</h2>
<blockquote>Quoted <a href="/q">source</a></blockquote>
<pre><code class="language-sh">
curl -s http://x/
</code></pre>
</body></html>
"##;

const SHADOW: &str = r##"<!doctype html>
<html lang="en"><head><title>Shadow DOM</title></head>
<body>
<h1>Shadow roots</h1>
<div id="card"><template shadowrootmode="open"><style>p{color:red}</style>
  <h2><slot name="title">Untitled</slot></h2><section><slot></slot></section>
  <footer><slot name="footer">Default footer</slot></footer></template>
  <span slot="title">Card title</span><p>Card body with <a href="/card">a link</a>.</p>
  <span slot="unused">never rendered</span></div>
<x-outer><template shadowrootmode="open"><x-inner><template shadowrootmode="open">
  <p>Inner frame: <slot></slot></p></template><slot></slot></x-inner></template>
  <em>passed through two roots</em></x-outer>
<div><template shadowrootmode="closed"><p>closed root text</p></template><p>Light of a closed host</p></div>
<p>After the hosts.</p>
</body></html>
"##;

const IFRAME: &str = r##"<!doctype html>
<html lang="en"><head><title>Frames</title></head>
<body>
<h1>Frames</h1>
<p>Before the frame.</p>
<iframe src="/conform/iframe-inner" title="Inner page"></iframe>
<p>After the frame, with <a href="/after">a link</a>.</p>
</body></html>
"##;

const IFRAME_INNER: &str = r##"<!doctype html>
<html><head><title>Inner</title></head>
<body><h2>inside-frame heading</h2><p>inside-frame paragraph with
<a href="/inside-frame-link">inside-frame link</a>.</p></body></html>
"##;

/// A news page's chrome around an article, as sites mark it (or do not): a site header with
/// a menu and a search form, a links-only "trending" block outside the article, a sidebar
/// `<aside>` with text, the page's own outline (in-page links), a links-only list inside the
/// article, a small footer and a big one. `lean.md` folds the chrome (see
/// `tests/mcp/lean.rs`).
pub const FOLDS: &str = r##"<!doctype html>
<html lang="en"><head><title>Folds</title></head>
<body>
<header class="site">
  <a href="/">Daily Example</a>
  <nav><ul>
    <li><a href="/world">World news</a></li><li><a href="/business">Business desk</a></li>
    <li><a href="/science">Science and technology</a></li><li><a href="/culture">Culture pages</a></li>
    <li><a href="/sport">Sport results</a></li><li><a href="/opinion">Opinion columns</a></li>
  </ul></nav>
  <form action="/search"><input name="q"><button>Search</button></form>
</header>
<div class="trending">
  <a href="/t/1">Heatwave breaks records across the region</a> |
  <a href="/t/2">Council approves the harbour bridge budget</a> |
  <a href="/t/3">Local team wins the championship final</a> |
  <a href="https://elsewhere.example/t/4">Elsewhere: markets rally at the close</a>
</div>
<ul class="outline">
  <li><a href="#findings">Findings of the survey</a></li>
  <li><a href="#methods">Methods of the survey</a></li>
  <li><a href="#caveats">Caveats of the survey</a></li>
</ul>
<main>
<article>
  <h1>Survey finds gardeners prefer tomatoes</h1>
  <p id="findings">A survey of nine hundred gardeners found tomatoes the favourite crop by a wide margin.</p>
  <p id="methods">Researchers visited allotments every weekend through the summer.</p>
  <ul class="sources">
    <li><a href="/report.pdf">The full report</a></li>
    <li><a href="/data.csv">The survey data</a></li>
    <li><a href="/method">The method statement</a></li>
  </ul>
  <p id="caveats">Respondents chose their own allotments, so the sample leans towards keen growers.</p>
  <footer>Filed by the gardening correspondent</footer>
</article>
<aside class="sidebar">
  <h2>About the newsletter</h2>
  <p>Our weekly letter brings gardening news, seasonal advice and reader questions to your inbox.</p>
  <a href="/newsletter">Sign up for the newsletter</a>
</aside>
</main>
<div class="small"><a href="/a">A</a> <a href="/b">B</a> <a href="/c">C</a></div>
<footer>
  <p>Daily Example is published by Example Media Group, registered in the Example Islands.</p>
  <ul><li><a href="/about">About us</a></li><li><a href="/contact">Contact the newsroom</a></li>
  <li><a href="/privacy">Privacy policy</a></li><li><a href="/terms">Terms of service</a></li>
  <li><a href="/cookies">Cookie settings</a></li><li><a href="/jobs">Work for us</a></li></ul>
</footer>
</body></html>
"##;

/// Chrome that sites put inside `<main>`/`<article>` without marking it: a "follow us" box
/// (a heading and links) above the article and again below it, a numbered "most read" list
/// (`1.`, `2.` outside the links), and a list of other stories. `lean.md` folds the lists
/// (links only, wherever they are) and the second box (a repeat); the article stays (see
/// `tests/mcp/lean.rs`).
pub const FOLDS_IN_MAIN: &str = r##"<!doctype html>
<html lang="en"><head><title>Folds in main</title></head>
<body><main><article>
<h1>Harbour bridge opens to traffic</h1>
<div class="follow"><h3>Follow the Daily Example</h3><ul>
  <li><a href="/follow/fb">Follow the Daily Example on Facebook</a></li>
  <li><a href="/follow/tw">Follow the Daily Example on Twitter</a></li>
  <li><a href="/follow/ig">Follow the Daily Example on Instagram</a></li>
</ul></div>
<p>The new harbour bridge opened to traffic on Monday after four years of construction work.</p>
<p>Engineers said the crossing would cut the journey into town by twenty minutes.</p>
<h3>Most read</h3>
<ol class="most-read">
  <li>1. <a href="/r/1">Heatwave breaks records across the region</a></li>
  <li>2. <a href="/r/2">Council approves the harbour budget</a></li>
  <li>3. <a href="/r/3">Local team wins the championship final</a></li>
</ol>
<ul class="related">
  <li><a href="/s/1">Ferry timetable changes for the summer season</a></li>
  <li><a href="/s/2">Why the old swing bridge was finally retired</a></li>
  <li><a href="/s/3">Cyclists welcome the new riverside path</a></li>
</ul>
<div class="follow"><h3>Follow the Daily Example</h3><ul>
  <li><a href="/follow/fb">Follow the Daily Example on Facebook</a></li>
  <li><a href="/follow/tw">Follow the Daily Example on Twitter</a></li>
  <li><a href="/follow/ig">Follow the Daily Example on Instagram</a></li>
</ul></div>
</article></main></body></html>
"##;
