//! The lean answer: `lean.md` refers to `links.json` for every link (`[text][n]`), carries no
//! image URL and the same words as `content.md`; `links.json` pages and filters through
//! `read_artifact`; and a host's `/mcp` takes the budget and image knobs, and a browser fetch
//! over MCP captures what its answer reads by default.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::run_steps;
use crate::support::{Fixture, FixtureServer};

/// The pages: many kinds of links, images with and without alt text, forms, a frame.
const PAGES: [&str; 4] = [
    "/conform/links",
    "/conform/forms",
    "/conform/iframe",
    "/article",
];

/// Words of 4+ letters, case-folded, counted (the benches' recall words).
fn words(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for w in text
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 4)
    {
        *out.entry(w.to_lowercase()).or_insert(0) += 1;
    }
    out
}

/// The URLs of `content.md` in order: the `(url)` of links and images, and the URL that
/// ends a frame note (`[iframe url]`) or names a form's action.
fn inline_targets(md: &str) -> (Vec<String>, String) {
    let mut targets = Vec::new();
    let mut rest = md.to_string();
    let mut without = String::new();
    while let Some(at) = rest.find("](") {
        let Some(end) = rest[at..].find(')') else {
            break;
        };
        targets.push(rest[at + 2..at + end].to_string());
        without.push_str(&rest[..at + 1]);
        rest = rest[at + end + 1..].to_string();
    }
    without.push_str(&rest);
    (targets, without)
}

#[test]
fn lean_text_resolves_every_link_from_links_json_and_keeps_the_words_of_content_md() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut steps: Vec<Value> = PAGES
        .iter()
        .map(|p| json!({"call": "fetch", "args": {"url": srv.url(p), "render": "none"}}))
        .collect();
    let links = "$0.result.links_file";
    steps.extend([
        json!({"call": "read_artifact", "args": {"path": links, "unit": "entries", "offset": 2, "limit": 1}}),
        json!({"call": "read_artifact", "args": {"path": links, "unit": "entries", "filter": {"same_site": false}}}),
        json!({"call": "read_artifact", "args": {"path": links, "unit": "entries", "filter": {"text_contains": "RELATIVE"}}}),
    ]);
    let r = run_steps(&fx, &["mcp"], json!(steps));
    let s = r["steps"].as_array().unwrap();
    for (i, page) in PAGES.iter().enumerate() {
        let step = &s[i];
        assert_eq!(step["is_error"], false, "{page}: {step}");
        let result = &step["structured"]["result"];
        let read = |k: &str| std::fs::read_to_string(result[k].as_str().unwrap()).unwrap();
        let (lean, content) = (read("lean_file"), read("content_file"));
        let table: Value = serde_json::from_str(&read("links_file")).unwrap();
        let table = table["links"].as_array().unwrap().clone();
        // The answer quotes lean.md (the article only its start: it is over the budget).
        let text = step["text"].as_str().unwrap();
        assert!(
            text.contains(lean.get(..2000).unwrap_or(&lean)),
            "{page}: the answer is not lean.md:\n{text}"
        );
        let key = format!(
            "[text][n]: read_artifact {{\"path\":{},\"unit\":\"entries\",\"offset\":n,\
             \"limit\":1}}",
            json!(result["links_file"])
        );
        assert!(text.contains(&key), "{key}\n{text}");
        // No link target left in the lean text (these pages never show a URL as text), and
        // no image source at all.
        assert!(!lean.contains("]("), "{page}: an inline link:\n{lean}");
        for entry in &table {
            let url = entry["url"].as_str().unwrap();
            assert!(!lean.contains(url), "{page}: {url} in\n{lean}");
        }
        for src in [".png", "data:"] {
            assert!(!lean.contains(src), "{page}: {src} in\n{lean}");
        }
        // Every inline link target of content.md, in order, is the links.json entry the
        // lean text names at the same place (images aside: they have no reference; frames
        // and form actions are checked by the words below and the no-URL check above).
        let (targets, _) = inline_targets(&content);
        let refs: Vec<usize> = lean
            .match_indices("][")
            .map(|(at, _)| {
                let n = &lean[at + 2..];
                n[..n.find(']').unwrap()].parse().unwrap()
            })
            // Frames and form actions are entries too, but not `](url)` in content.md.
            .filter(|n: &usize| table[*n]["kind"].is_null())
            .collect();
        let link_targets: Vec<&String> = targets.iter().filter(|t| !t.ends_with(".png")).collect();
        assert_eq!(refs.len(), link_targets.len(), "{page}:\n{lean}\n{content}");
        for (n, url) in refs.iter().zip(&link_targets) {
            let entry = &table[*n];
            assert_eq!(entry["index"], *n, "{entry}");
            assert_eq!(
                entry["url"].as_str().unwrap(),
                url.as_str(),
                "{page}: [{n}]"
            );
            assert!(entry["same_site"].is_boolean(), "{entry}");
        }
        // The same words, once URLs are taken out of content.md.
        // (Frames and form actions show their URL bare in content.md.)
        let (_, mut bare) = inline_targets(&content);
        for entry in &table {
            bare = bare.replace(entry["url"].as_str().unwrap(), " ");
        }
        assert_eq!(
            words(&lean),
            words(&bare),
            "{page}:\n{lean}\n---\n{content}"
        );
    }
    // /conform/links: its frame-free, form-free table, read back entry by entry.
    let links_page: Value = serde_json::from_str(
        &std::fs::read_to_string(s[0]["structured"]["result"]["links_file"].as_str().unwrap())
            .unwrap(),
    )
    .unwrap();
    let entry: Value =
        serde_json::from_str(s[4]["text"].as_str().unwrap().lines().nth(1).unwrap()).unwrap();
    assert_eq!(entry, links_page["links"][2], "{}", s[4]);
    // Filters: a mailto link is never on the page's site (the fixture's other URLs are all on
    // 127.0.0.1, one site whatever the port).
    let other: Vec<Value> = s[5]["text"]
        .as_str()
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!other.is_empty(), "{}", s[5]);
    assert!(other.iter().all(|e| e["same_site"] == false), "{other:?}");
    assert!(
        other
            .iter()
            .any(|e| e["url"].as_str().unwrap().starts_with("mailto:")),
        "{other:?}"
    );
    let by_text = s[6]["structured"]["matched_entries"].as_u64().unwrap();
    assert_eq!(
        by_text, 1,
        "relative and relative again share one URL: {}",
        s[6]
    );
}

/// `[folded ...; content.md lines A..B]` lines of `lean`: (the line, A, B).
fn fold_lines(lean: &str) -> Vec<(String, usize, usize)> {
    lean.lines()
        .filter_map(|l| {
            let range = l
                .trim()
                .strip_prefix("[folded ")?
                .split("; content.md lines ")
                .nth(1)?;
            let (a, b) = range.strip_suffix(']')?.split_once("..")?;
            Some((l.to_string(), a.parse().ok()?, b.parse().ok()?))
        })
        .collect()
}

#[test]
fn folded_blocks_are_named_by_their_lines_of_content_md_and_nothing_is_lost() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let content = "$0.result.content_file";
    let steps = json!([
        {"call": "fetch", "args": {"url": srv.url("/conform/folds"), "render": "none"}},
        {"call": "read_artifact", "args": {"path": content, "unit": "lines", "offset": 2, "limit": 10}},
    ]);
    let r = run_steps(&fx, &["mcp"], steps);
    let s = r["steps"].as_array().unwrap();
    assert_eq!(s[0]["is_error"], false, "{}", s[0]);
    let result = &s[0]["structured"]["result"];
    let read = |k: &str| std::fs::read_to_string(result[k].as_str().unwrap()).unwrap();
    let (lean, content) = (read("lean_file"), read("content_file"));
    let table: Value = serde_json::from_str(&read("links_file")).unwrap();
    let lines: Vec<&str> = content.lines().collect();
    // The default directory's name is short (the answer spells it out in every key).
    let dir = std::path::Path::new(result["content_file"].as_str().unwrap());
    let name = dir.parent().unwrap().file_name().unwrap().to_str().unwrap();
    assert!(
        name.len() == 8 && name.bytes().all(|c| c.is_ascii_hexdigit()),
        "{name}"
    );
    // What is folded, by the page's own markup: the site header (menu and search) and the
    // links-only trending block after it, as one line (adjacent folds join); the sidebar
    // aside, the small links-only block and the big footer, as one line (the small block
    // alone would not fold: its line would be longer than it). Kept: the outline (in-page
    // links) and the article's own links-only list.
    let folds = fold_lines(&lean);
    let kinds: Vec<&str> = folds
        .iter()
        .map(|(l, _, _)| l.split(':').next().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "[folded 2 blocks (<header>, links)",
            "[folded 3 blocks (<aside>, links, <footer>)"
        ],
        "{lean}"
    );
    for kept in ["[Findings of the survey][", "[The full report]["] {
        assert!(lean.contains(kept), "{kept} folded:\n{lean}");
    }
    // Each fold names exactly its block's lines of content.md, and the words of lean.md
    // plus those lines are the words of content.md: nothing is lost.
    let mut folded = String::new();
    let mut unfolded = String::new();
    for l in lean.lines() {
        if let Some((_, a, b)) = folds.iter().find(|f| f.0 == l) {
            assert!(a < b && *b <= lines.len(), "{l}: {} lines", lines.len());
            folded.push_str(&lines[*a..*b].join("\n"));
            folded.push('\n');
        } else {
            unfolded.push_str(l);
            unfolded.push('\n');
        }
    }
    assert!(folded.contains("Opinion columns") && folded.contains("Work for us"));
    assert!(folded.contains("Our weekly letter") && folded.contains("markets rally"));
    assert!(folded.contains("[A](") && !lean.contains("[A]["), "{lean}");
    let (_, mut bare) = inline_targets(&format!("{unfolded}{folded}"));
    let (_, mut whole) = inline_targets(&content);
    for entry in table["links"].as_array().unwrap() {
        let url = entry["url"].as_str().unwrap();
        bare = bare.replace(url, " ");
        whole = whole.replace(url, " ");
    }
    assert_eq!(words(&bare), words(&whole), "{lean}\n---\n{content}");
    // Every link of a folded block is an entry of links.json.
    let (targets, _) = inline_targets(&folded);
    for t in &targets {
        assert!(
            table["links"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["url"] == *t),
            "{t} not in links.json"
        );
    }
    // The answer says how to open a fold, and that call returns the block.
    let text = s[0]["text"].as_str().unwrap();
    let key = format!(
        "[folded ...; content.md lines A..B]: read_artifact {{\"path\":{},\
         \"unit\":\"lines\",\"offset\":A,\"limit\":B-A}}",
        json!(result["content_file"])
    );
    assert!(text.contains(&key), "{key}\n{text}");
    assert!(text.contains(&lean), "{text}");
    assert_eq!(folds[0].1, 2, "{lean}");
    let opened = s[1]["text"].as_str().unwrap();
    let body = opened.split_once('\n').unwrap().1;
    assert_eq!(body.trim_end(), lines[2..12].join("\n"), "{}", s[1]);
}

#[test]
fn chrome_inside_main_folds_by_links_only_and_repeat_and_stays_in_content_md() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/conform/folds-in-main"),
            "--want",
            "lean",
        ])
        .run();
    let lean = run.artifact_text("lean_file");
    let content = run.artifact_text("content_file");
    let table = run.artifact_json("links_file");
    let lines: Vec<&str> = content.lines().collect();
    // Folded: the first box's list; then the numbered list, the list of stories and the
    // second box whole (shown again), adjacent, so one line. Kept: the article, the headings.
    let folds = fold_lines(&lean);
    let kinds: Vec<&str> = folds
        .iter()
        .map(|(l, _, _)| l.split([':', ';']).next().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "[folded 3 links, 18 words",
            "[folded 3 blocks (links, repeat)"
        ],
        "{lean}"
    );
    for kept in ["# Harbour bridge", "twenty minutes", "### Most read"] {
        assert!(lean.contains(kept), "{kept} folded:\n{lean}");
    }
    assert_eq!(
        lean.matches("Follow the Daily Example").count(),
        1,
        "{lean}"
    );
    // Each fold's lines of content.md hold its words and links; links.json has every link.
    let block = |i: usize| lines[folds[i].1..folds[i].2].join("\n");
    assert!(block(0).contains("on Instagram"), "{content}");
    assert!(block(1).contains("2. [Council approves"), "{content}");
    assert!(block(1).contains("riverside path"), "{content}");
    assert!(
        block(1).contains("### Follow the Daily Example"),
        "{content}"
    );
    let (targets, _) = inline_targets(&content);
    for t in &targets {
        assert!(
            table["links"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["url"] == *t),
            "{t} not in links.json"
        );
    }
    assert_eq!(targets.len(), 12, "{content}");
}

#[test]
fn lean_and_links_are_want_tokens_for_the_cli_too() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/conform/links"), "--want", "lean"])
        .run();
    // `lean` brings its link table and content.md (what a fold names), nothing else.
    let lean = run.artifact_text("lean_file");
    let table = run.artifact_json("links_file");
    assert!(run.result()["content_file"].is_string(), "{}", run.context);
    assert!(run.result()["text_file"].is_null(), "{}", run.context);
    let n: usize = {
        let at = lean.find("[relative][").expect("the relative link") + "[relative][".len();
        lean[at..at + lean[at..].find(']').unwrap()]
            .parse()
            .unwrap()
    };
    assert!(
        table["links"][n]["url"]
            .as_str()
            .unwrap()
            .ends_with("/conform/base/relative"),
        "{table}"
    );
}

#[test]
fn a_hosts_mcp_takes_the_budget_and_image_knobs_and_its_browser_fetch_captures_what_it_reads() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let knobs = [
        "--mcp-text-budget-tokens",
        "600",
        "--mcp-text-budget-chars",
        "4000",
        "--mcp-image-max-bytes",
        "0",
    ];
    let (host, port) = super::http::start_host(&fx, &knobs);
    assert_eq!(
        host.ready["mcp"]["limits"],
        json!({"text_budget_tokens": 600, "text_budget_chars": 4000, "image_max_bytes": 0}),
        "{}",
        host.ready
    );
    // A page over the budget: cut within both limits, ending with the call that reads on.
    let page = super::http::call_fetch(port, json!({"url": srv.url("/article"), "render": "none"}));
    assert_eq!(page["isError"], false, "{page}");
    let text = page["content"][0]["text"].as_str().unwrap();
    assert!(text.encode_utf16().count() <= 4000, "{text}");
    assert!(
        super::o200k(text) <= 600,
        "{} tokens: {text}",
        super::o200k(text)
    );
    let lean_file = page["structuredContent"]["result"]["lean_file"]
        .as_str()
        .unwrap();
    let shown = text
        .split("cut at the text budget after ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .unwrap_or_else(|| panic!("not cut: {text}"));
    let call = format!(
        "read on with read_artifact {} ---",
        json!({"path": lean_file, "offset": shown.parse::<u64>().unwrap()})
    );
    assert!(text.trim_end().ends_with(&call), "{call}\n{text}");
    // A browser fetch: the screenshot is over the 0-byte cap (only linked), and the default
    // set is what the answer reads: no rendered HTML, console or observation, no bodies.
    let spa = super::http::call_fetch(port, json!({"url": srv.url("/spa")}));
    assert_eq!(spa["isError"], false, "{spa}");
    let result = &spa["structuredContent"]["result"];
    assert_eq!(result["render"], "browser", "{result}");
    let blocks = spa["content"].as_array().unwrap();
    assert!(blocks.iter().all(|b| b["type"] != "image"), "{blocks:?}");
    let text = blocks[0]["text"].as_str().unwrap();
    assert!(text.contains("screenshot: not inline"), "{text}");
    assert!(text.contains("network: "), "{text}");
    for key in [
        "text_file",
        "content_file",
        "lean_file",
        "links_file",
        "screenshot_file",
        "network_file",
    ] {
        assert!(result[key].is_string(), "{key} missing: {result}");
    }
    for key in [
        "rendered_html_file",
        "console_file",
        "observation_file",
        "storage_file",
    ] {
        assert!(result[key].is_null(), "{key} written: {result}");
    }
    let network: Value = serde_json::from_str(
        &std::fs::read_to_string(result["network_file"].as_str().unwrap()).unwrap(),
    )
    .unwrap();
    assert_eq!(
        network["capture"]["bodies"], "off",
        "{}",
        network["capture"]
    );
}
