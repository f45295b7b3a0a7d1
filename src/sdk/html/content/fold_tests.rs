//! Unit tests of [`super`]: the fold rules.
use super::*;
use scraper::Html;

fn folds(html: &str) -> Vec<(String, Fold)> {
    let doc = Html::parse_document(html);
    let plan = plan(doc.root_element());
    let mut v: Vec<(String, Fold)> = doc
        .tree
        .nodes()
        .filter_map(|n| {
            let f = plan.get(&n.id())?;
            let el = ElementRef::wrap(n)?;
            let id = el.value().attr("id").unwrap_or(el.value().name());
            Some((id.to_string(), f.clone()))
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn landmarks_by_html_aam_scoping() {
    let got = folds(
        "<header id=h><a href=/>Home</a></header>\
         <main><article><header id=ah>Title</header><footer id=af>By me</footer>\
         <aside id=pull>A quote</aside></article><aside id=side>Related</aside></main>\
         <div role=contentinfo id=ci>c</div><nav id=n>x</nav><footer id=f>© 2024</footer>",
    );
    let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["ci", "f", "h", "n", "side"]);
    let f = &got[1].1;
    assert_eq!(f.landmark.as_deref(), Some("<footer>"));
    assert_eq!((f.links, f.words), (0, 2));
    assert_eq!(got[0].1.landmark.as_deref(), Some("role=contentinfo"));
}

#[test]
fn links_only_blocks_need_three_links_and_nothing_else() {
    let got = folds(
        "<ul id=menu><li><a href=/a>A</a> | <li><a href=/b>B b</a><li><a href=/c>C</a></ul>\
         <p id=two><a href=/a>A</a> <a href=/b>B</a></p>\
         <p id=prose><a href=/a>A</a> and <a href=/b>B</a>, <a href=/c>C</a></p>\
         <div id=form><a href=/a>A</a><a href=/b>B</a><a href=/c>C</a><input name=q></div>\
         <div id=js><a href=/a>A</a><a href=/b>B</a><a href='javascript:x()'>C</a></div>\
         <div id=imgs><a href=/a><img alt=Logo></a><a href=/b>B</a><a href=/c>C</a></div>",
    );
    let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["imgs", "menu"]);
    assert_eq!(got[1].1.landmark, None);
    assert_eq!((got[1].1.links, got[1].1.words), (3, 5));
}

#[test]
fn never_main_or_what_holds_it() {
    let got = folds(
        "<div role=navigation id=wrap><main><a href=/a>A</a><a href=/b>B</a>\
         <a href=/c>C</a></main></div><pre id=p><a href=/a>A</a><a href=/b>B</a>\
         <a href=/c>C</a></pre>",
    );
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn label_says_what_it_folds() {
    let nav = Fold {
        landmark: Some("<nav>".into()),
        links: 1,
        words: 3,
    };
    assert_eq!(
        label(std::slice::from_ref(&nav)),
        "[folded <nav>: 1 link, 3 words; "
    );
    let links = Fold {
        landmark: None,
        links: 4,
        words: 1,
    };
    assert_eq!(
        label(std::slice::from_ref(&links)),
        "[folded 4 links, 1 word; "
    );
    assert_eq!(
        label(&[nav.clone(), links.clone(), nav]),
        "[folded 3 blocks (<nav>, links): 6 links, 7 words; "
    );
}

#[test]
fn hidden_from_assistive_technology_and_widgets_fold_like_landmarks() {
    let got = folds(
        "<div aria-hidden=true id=ah><p>Play Mute Current Time</p></div>\
         <div aria-hidden=false id=shown><p>Text</p></div>\
         <ul role=menubar id=mb><li>File<li>Edit</ul><div role=dialog id=d>Cookies?</div>\
         <main><div role=toolbar id=tb><button>Bold</button></div><p>Body</p></main>",
    );
    let got: Vec<(&str, Option<&str>)> = got
        .iter()
        .map(|(id, f)| (id.as_str(), f.landmark.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("ah", Some("aria-hidden")),
            ("d", Some("role=dialog")),
            ("mb", Some("role=menubar")),
            ("tb", Some("role=toolbar"))
        ]
    );
}

#[test]
fn script_controls_are_not_an_outline() {
    // `#` alone and `#!/route` go nowhere on the page: such a block is links-only;
    // `#id` links are an outline, kept.
    let got = folds(
        "<ul id=menu><li><a href=#>Edit</a><li><a href=#>Delete</a><li><a href='#!/x'>Flag</a></ul>\
         <ul id=toc><li><a href=#a>A</a><li><a href=#b>B</a><li><a href=#c>C</a></ul>",
    );
    let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["menu"]);
    assert!(in_page("#intro") && !in_page("#") && !in_page(" #!/r") && !in_page("/a#b"));
}

/// `lean.md` and `content.md` of a page (through the public projection).
fn both(html: &str) -> (String, String) {
    let url = url::Url::parse("https://site.test/page").unwrap();
    let p = crate::sdk::html::project(html, &url);
    (p.lean.unwrap().md, p.content_md)
}

#[test]
fn adjacent_folds_make_one_line_and_a_shown_again_link_bar_folds() {
    let links = |n: usize, what: &str| {
        (0..n)
            .map(|i| format!("<li><a href=/{what}{i}>{what} number {i} of the site</a>"))
            .collect::<String>()
    };
    let bar = format!(
        "<div class=share><h4>Share this story</h4><ul>{}</ul></div>",
        links(5, "share")
    );
    let html = format!(
        "<header><ul>{}</ul></header><nav><ul>{}</ul></nav>\
         <main><h1>Title</h1>{bar}<p>The article text.</p>{bar}\
         <iframe src=/px width=0 height=0></iframe><iframe src=/v title=Video></iframe></main>",
        links(4, "section"),
        links(3, "topic")
    );
    let (lean, content) = both(&html);
    let folds: Vec<&str> = lean.lines().filter(|l| l.contains("[folded ")).collect();
    assert_eq!(
        folds,
        [
            "[folded 2 blocks (<header>, <nav>): 7 links, 42 words; content.md lines 0..8]",
            "[folded 5 links, 30 words; content.md lines 13..18]",
            "[folded repeat: 5 links, 33 words; content.md lines 21..28]"
        ],
        "{lean}\n---\n{content}"
    );
    // The first bar's list folds (links only, `main` included), its heading stays; the
    // second bar, heading and all, is a repeat. The article stays.
    assert!(lean.contains("#### Share this story") && lean.contains("article text"));
    assert_eq!(lean.matches("Share this story").count(), 1, "{lean}");
    let lines: Vec<&str> = content.lines().collect();
    assert!(lines[0].contains("section number 0"), "{content}");
    assert!(lines[7].contains("topic number 2"), "{content}");
    assert!(
        lines[13..18].iter().all(|l| l.contains("share number")),
        "{content}"
    );
    assert!(lines[21].contains("Share this story"), "{content}");
    assert!(lines[27].contains("share number 4"), "{content}");
    // A frame 0 px wide shows nothing: no line; a real one keeps its note.
    assert!(!content.contains("/px") && lean.contains("[iframe \"Video\"]["));
}

#[test]
fn repeats_are_found_by_links_and_text_not_by_wrappers() {
    // Outlines (`#id` links) are kept, so only the repeat rule can fold these.
    let got = folds(
        "<main><div id=w1><ul id=a><li><a href=#x>X</a><li><a href=#y>Y</a><li><a href=#z>Z</a></ul></div>\
         <p>text</p><div id=w2><ul id=b><li><a href=#x>X</a><li><a href=#y>Y</a><li><a href=#z>Z</a></ul></div>\
         <ul id=c><li><a href=#x>X</a><li><a href=#y>Y</a><li><a href=#q>Z</a></ul></main>",
    );
    let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["b", "w2"], "{got:?}");
    assert_eq!(got[0].1.landmark.as_deref(), Some("repeat"));
}

#[test]
fn a_block_with_text_and_links_shown_again_is_a_repeat() {
    // A "follow us" box (a heading and three links) above and below the article: the
    // second is a repeat; a box with the same links but other text is not.
    let boxed = |id: &str, head: &str, tail: &str| {
        format!(
            "<div id={id}><h3>{head}</h3><p><a href=/fb>Facebook</a> \
             <a href=/tw>Twitter</a> <a href=/ig>Instagram</a> {tail}</p></div>"
        )
    };
    let got = folds(&format!(
        "<article>{}<p>Body text.</p>{}{}</article>",
        boxed("one", "Follow us", "and more"),
        boxed("two", "Follow us", "and more"),
        boxed("three", "Follow them", "too")
    ));
    let got: Vec<(&str, Option<&str>)> = got
        .iter()
        .map(|(id, f)| (id.as_str(), f.landmark.as_deref()))
        .collect();
    // The second box's paragraph is a repeat too; only the outermost block folds.
    assert_eq!(got, [("p", Some("repeat")), ("two", Some("repeat"))]);
}

#[test]
fn links_only_blocks_fold_inside_main_and_numbers_are_separators() {
    // A menu inside `<main>` and a numbered list of topics (`1.` is no word) fold; a
    // list with words outside its links stays.
    let got = folds(
        "<main><ul id=menu><li><a href=/a>Apps</a><li><a href=/b>Books</a>\
         <li><a href=/c>Cars</a></ul><ol id=top><li>1. <a href=/s>Snoring</a>\
         <li>2. <a href=/f>Flakka</a><li>3. <a href=/t>Testosterone</a></ol>\
         <ul id=prose><li>See <a href=/a>Apps</a><li>or <a href=/b>Books</a>\
         <li>or <a href=/c>Cars</a></ul></main>",
    );
    let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["menu", "top"], "{got:?}");
}
