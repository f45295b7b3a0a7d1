//! Projection tests over fixture pages and small synthetic documents.

use serde_json::json;
use url::Url;

use super::*;

const ARTICLE: &str = include_str!("../../../tests/fixtures/html/article.html");

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

fn article() -> Projection {
    project(ARTICLE, &url("https://docs.example.org/guide/page.html"))
}

#[test]
fn text_is_visible_text_in_order() {
    let p = article();
    let t = &p.text;
    assert!(t.contains("HTML parsing is hard; see the spec."), "{t}");
    for hidden in [
        "secret hidden",
        "invisible div",
        "tracking",
        "template content",
        "Enable JS",
        "Field notes",
        "csrf",
    ] {
        assert!(!t.contains(hidden), "{hidden} leaked: {t}");
    }
    assert!(
        t.contains("Name\tSpeed\nhtml5ever\tfast | safe\nlol_html\tstreaming"),
        "{t}"
    );
    assert!(t.contains("Line one\nLine two"), "{t}");
    assert!(t.contains("fn main() {\n    println!(\"hi\");\n}"), "{t}");
    assert!(
        t.contains("Tokenize\nBuild the tree\nfoster parenting"),
        "{t}"
    );
    // <p> gets a blank line around it, like innerText's two required line breaks.
    assert!(
        t.contains("Parsing HTML in Rust\nHTML parsing")
            || t.contains("Parsing HTML in Rust\n\nHTML parsing"),
        "{t}"
    );
    assert!(t.ends_with("© 2024 Example & Co.\n"), "{t}");
    assert!(t.starts_with("Home | Intro | Top Menu\n"), "{t}");
}

#[test]
fn content_md_is_a_mechanical_markdown_projection() {
    let md = article().content_md;
    let expect = [
        "# Field notes: rust parsers\n",
        "\n# Parsing HTML in Rust\n",
        "HTML parsing is hard; see [the spec](https://html.spec.whatwg.org/).",
        "## Steps\n",
        "1. Tokenize\n2. Build the tree\n   - foster parenting\n   - adoption agency\n3. Walk it\n",
        "3. Walk it\n\n> Be liberal in what you accept.\n\n```rust",
        "```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n",
        "### Comparison\n",
        "Parsers\n\n| Name | Speed |\n| --- | --- |\n| html5ever | fast \\| safe |\n| [lol_html](https://docs.example.org/lol) | streaming |\n",
        "Line one\nLine two\n",
        "![Tree diagram](https://docs.example.org/guide/img/diagram.png)",
        "[form POST https://docs.example.org/login: input email (email, required), input password (password), button \"Sign in\"]",
        "[iframe \"Demo video\" https://player.example.com/embed/42]",
        "[Home](https://docs.example.org/) | [Intro](https://docs.example.org/guide/intro.html) | [Top](https://docs.example.org/guide/#top) Menu",
        "© 2024 Example & Co.\n",
    ];
    for e in expect {
        assert!(md.contains(e), "missing {e:?} in\n{md}");
    }
    for absent in [
        "spacer",
        "javascript:",
        "secret",
        "tracking",
        "template content",
        "csrf",
    ] {
        assert!(!md.contains(absent), "{absent} leaked:\n{md}");
    }
}

#[test]
fn a_form_button_is_not_repeated_after_the_form_summary() {
    let p = project(
        "<form action=/s method=post><input name=q><button type=submit>Search now</button>\
         <button type=button><img alt=Go src=/go.png> Go <a href=/help>help</a></button></form>\
         <button>Outside</button>",
        &url("https://x.test/"),
    );
    let md = &p.content_md;
    assert_eq!(md.matches("Search now").count(), 1, "{md}");
    assert!(md.contains("button \"Search now\""), "{md}");
    assert!(!md.contains("![Go]") && !md.contains("[help]"), "{md}");
    // A button outside any form keeps its text (nothing else shows it).
    assert!(md.contains("Outside"), "{md}");
    assert_eq!(p.content_json["links"][0]["href"], "https://x.test/help");
}

#[test]
fn an_inlined_frame_document_is_a_block_after_its_iframe() {
    let p = project(
        "<p>before</p><iframe src=/f title=Inner></iframe>\
         <afhttp-frame url=\"https://x.test/f\"><p>inside-frame text</p></afhttp-frame><p>after</p>",
        &url("https://x.test/"),
    );
    assert_eq!(
        p.content_md,
        "before\n\n[iframe \"Inner\" https://x.test/f]\n\ninside-frame text\n\nafter\n"
    );
}

#[test]
fn content_json_has_the_structured_lists() {
    let p = article();
    let j = &p.content_json;
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["url"], "https://docs.example.org/guide/page.html");
    assert_eq!(j["title"], "Field notes: rust parsers");
    assert_eq!(j["lang"], "en-GB");
    assert_eq!(j["text_bytes"], p.text.len());
    assert!(j.get("truncated").is_none());
    assert_eq!(
        j["headings"][0],
        json!({"level": 1, "text": "Parsing HTML in Rust"})
    );
    assert_eq!(j["headings"][2], json!({"level": 3, "text": "Comparison"}));
    let links = j["links"].as_array().unwrap();
    let hrefs: Vec<&str> = links.iter().map(|l| l["href"].as_str().unwrap()).collect();
    assert_eq!(
        hrefs,
        [
            "https://docs.example.org/",
            "https://docs.example.org/guide/intro.html",
            "https://docs.example.org/guide/#top",
            "https://html.spec.whatwg.org/",
            "https://docs.example.org/lol",
        ]
    );
    assert_eq!(links[1]["text"], "Intro");
    assert_eq!(links[3]["rel"], "external");
    assert!(links[0].get("rel").is_none());
    let form = &j["actions"][0];
    assert_eq!(form["kind"], "form");
    assert_eq!(form["method"], "POST");
    assert_eq!(form["action"], "https://docs.example.org/login");
    assert_eq!(
        form["fields"][0],
        json!({"name": "csrf", "type": "hidden", "required": false})
    );
    assert_eq!(
        form["fields"][1],
        json!({"name": "email", "type": "email", "required": true})
    );
    assert_eq!(form["fields"][3]["text"], "Sign in");
    assert_eq!(
        j["actions"][1],
        json!({"kind": "button", "text": "Subscribe"})
    );
    assert_eq!(
        j["tables"][0],
        json!({"headers": ["Name", "Speed"], "rows": [["html5ever", "fast | safe"], ["lol_html", "streaming"]]})
    );
    assert_eq!(
        j["images"],
        json!([{"alt": "Tree diagram", "src": "https://docs.example.org/guide/img/diagram.png"}])
    );
    assert_eq!(j["frames"][0]["src"], "https://player.example.com/embed/42");
}

#[test]
fn lists_are_capped_with_truncated_flag() {
    let mut html = String::from("<html><body>");
    for i in 0..(MAX_ITEMS + 100) {
        html.push_str(&format!("<a href=\"/p/{i}\">p{i}</a>"));
    }
    let p = project(&html, &url("https://x.test/"));
    assert_eq!(p.content_json["links"].as_array().unwrap().len(), MAX_ITEMS);
    assert_eq!(p.content_json["truncated"], true);
}

#[test]
fn deep_nesting_does_not_overflow() {
    // html5ever's scope checks are quadratic in nesting depth, so keep this realistic;
    // the point is that nothing here recurses.
    let depth = 5_000;
    let mut html = "<div>".repeat(depth);
    html.push_str("deep");
    html.push_str(&"<ul><li>x".repeat(2_000));
    html.push_str(&"<table><tr><td>c".repeat(500));
    let p = project(&html, &url("https://x.test/"));
    assert!(p.text.contains("deep"));
    // Prefixes stop growing past the cap, so output stays linear.
    assert!(p.content_md.len() < 2_000 * 200, "{}", p.content_md.len());
}

#[test]
fn large_document_is_bounded() {
    let row = "<tr><td><a href=\"/r\">row</a></td><td>value with some words</td></tr>";
    let mut html = String::from("<html><body><table>");
    while html.len() < 5 * 1024 * 1024 {
        html.push_str(row);
    }
    html.push_str("</table></body></html>");
    let p = project(&html, &url("https://x.test/"));
    let rows = p.content_json["tables"][0]["rows"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(rows, MAX_ITEMS);
    assert_eq!(p.content_json["truncated"], true);
    assert_eq!(p.content_json["links"].as_array().unwrap().len(), 1);
}

#[test]
fn layout_tables_render_as_blocks_and_inner_data_tables_as_tables() {
    let html = "<table><tr><td>Menu</td><td><table><tr><th>A</th><th>B</th></tr>\
                <tr><td>1</td><td>2</td></tr></table></td></tr></table>";
    let p = project(html, &url("https://x.test/"));
    assert!(
        p.content_md
            .contains("Menu\n\n| A | B |\n| --- | --- |\n| 1 | 2 |"),
        "{}",
        p.content_md
    );
    assert_eq!(p.content_json["tables"].as_array().unwrap().len(), 1);
}

#[test]
fn table_without_th_uses_first_row_in_markdown_only() {
    let p = project(
        "<table><tr><td>a</td><td colspan=2>b</td></tr><tr><td>c</td></tr></table>",
        &url("https://x.test/"),
    );
    assert!(
        p.content_md
            .contains("| a | b |  |\n| --- | --- | --- |\n| c |  |  |"),
        "{}",
        p.content_md
    );
    assert_eq!(
        p.content_json["tables"][0],
        json!({"headers": [], "rows": [["a", "b", ""], ["c"]]})
    );
}

/// Regression (fuzz target `html_content`): one row of colspans made the table thousands of
/// columns wide and every short row was padded to that width, so 3 KB of HTML gave 3.6 MB
/// of markdown. Wide tables keep short rows short; narrow ones are still padded.
#[test]
fn wide_tables_do_not_pad_every_row() {
    let html = format!(
        "<table><tr>{}{}</table>",
        "<td colspan=100>".repeat(40),
        "<tr><td>x".repeat(300)
    );
    let p = project(&html, &url("https://x.test/"));
    assert!(
        p.content_md.len() < 64 * html.len(),
        "{}",
        p.content_md.len()
    );
    assert!(
        p.content_md.contains("\n| x |\n| x |\n"),
        "short rows stay short"
    );
    let header = p.content_md.lines().find(|l| l.starts_with('|')).unwrap();
    assert_eq!(
        header.matches(" |").count(),
        4000,
        "header row spans the full width"
    );
    let narrow = project(
        "<table><tr><td>a<td colspan=3>b<tr><td>c</table>",
        &url("https://x.test/"),
    );
    assert!(
        narrow.content_md.contains("| c |  |  |  |"),
        "{}",
        narrow.content_md
    );
}

#[test]
fn links_without_text_use_labels_or_vanish_from_markdown() {
    let p = project(
        "<p><a href='/a' aria-label='Account'><svg></svg></a> <a href='/b'></a> <a>plain</a></p>",
        &url("https://x.test/"),
    );
    assert_eq!(p.content_md, "[Account](https://x.test/a) plain\n");
    assert_eq!(
        p.content_json["links"][1],
        json!({"text": "", "href": "https://x.test/b"})
    );
}

#[test]
fn card_links_with_blocks_stay_on_one_line() {
    let p = project(
        "<a href='/post'><h3>Title</h3><p>Summary text</p></a>",
        &url("https://x.test/"),
    );
    assert_eq!(p.content_md, "[Title Summary text](https://x.test/post)\n");
    assert_eq!(
        p.content_json["headings"][0],
        json!({"level": 3, "text": "Title"})
    );
}

#[test]
fn pre_keeps_whitespace_and_uses_a_longer_fence_when_needed() {
    let p = project("<pre>a  b\n```\n  c</pre>", &url("https://x.test/"));
    assert_eq!(p.content_md, "````\na  b\n```\n  c\n````\n");
    assert_eq!(p.text, "a  b\n```\n  c\n");
}

#[test]
fn empty_and_non_html_input_do_not_panic() {
    for s in [
        "",
        "   ",
        "{\"a\":1}",
        "<",
        "<html><body></body></html>",
        "\u{0}\u{feff}",
    ] {
        let p = project(s, &url("https://x.test/"));
        assert!(p.content_json.is_object());
    }
    assert_eq!(project("", &url("https://x.test/")).text, "");
}

#[test]
fn data_urls_are_shortened() {
    let p = project(
        "<img alt='pic' src='data:image/png;base64,AAAABBBBCCCC'>",
        &url("https://x.test/"),
    );
    assert_eq!(p.content_json["images"][0]["src"], "data:image/png,…");
}

fn shell(name: &str) -> ShellFacts {
    let html = match name {
        "react" => include_str!("../../../tests/fixtures/html/react_shell.html"),
        "vue" => include_str!("../../../tests/fixtures/html/vue_shell.html"),
        "next" => include_str!("../../../tests/fixtures/html/next_shell.html"),
        "angular" => include_str!("../../../tests/fixtures/html/angular_shell.html"),
        "tiny" => include_str!("../../../tests/fixtures/html/tiny_static.html"),
        "spinner" => include_str!("../../../tests/fixtures/html/loading_spinner_shell.html"),
        _ => ARTICLE,
    };
    shell_facts(html)
}

#[test]
fn shell_facts_from_fixtures() {
    let r = shell("react");
    assert_eq!(r.empty_mount.as_deref(), Some("#root"));
    assert_eq!(r.script_count, 1);
    assert!(r.noscript_requires_js);
    assert_eq!(r.visible_text_bytes, 0);
    assert_eq!(shell("vue").empty_mount.as_deref(), Some("#app"));
    let n = shell("next");
    assert_eq!(n.empty_mount.as_deref(), Some("#__next"));
    assert_eq!(n.script_count, 5, "the JSON data script is not executable");
    assert_eq!(shell("angular").empty_mount.as_deref(), Some("app-root"));
    assert_eq!(shell("angular").script_count, 3);
    let t = shell("tiny");
    assert_eq!(
        (t.visible_text_bytes, t.script_count, t.empty_mount),
        (5, 0, None)
    );
    assert!(!t.noscript_requires_js);
    let a = shell("article");
    assert!(a.visible_text_bytes > 200);
    assert!(!a.noscript_requires_js);
}

#[test]
fn one_parse_serves_both() {
    let doc = ParsedHtml::parse(ARTICLE);
    let facts = doc.shell_facts();
    let p = doc.project(&url("https://docs.example.org/guide/page.html"));
    assert_eq!(facts.visible_text_bytes, p.text.trim().len());
    assert_eq!(doc.user_input_count(), 2);
}
