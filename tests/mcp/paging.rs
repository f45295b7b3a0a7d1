//! Results that fit: the `fetch` text stays within its budget on huge pages, structuredContent
//! carries facts only, and `read_artifact` pages the whole artifact back, by bytes and by
//! entries with a filter.

use serde_json::{json, Value};

use super::run_steps;
use crate::support::events::{tool_error, tool_fetch};
use crate::support::{chromium, Fixture, FixtureServer};

/// The default budget: 10,000 o200k_base tokens and 50,000 characters.
const BUDGET_TOKENS: usize = 10_000;
/// The default character cap (the pages here are ASCII: bytes are characters).
const BUDGET_BYTES: u64 = 50_000;

/// What every huge fetch must show: a full-but-bounded text, small facts, links not
/// contents, and a paging that gives back exactly the file.
fn assert_fits(r: &Value, what: &str) {
    let fetched = &r["steps"][0];
    assert_eq!(fetched["is_error"], false, "{what}: {fetched}");
    let text = fetched["text_bytes"].as_u64().unwrap();
    assert!(text <= BUDGET_BYTES, "{what}: text {text} bytes");
    let tokens = super::o200k(fetched["text"].as_str().unwrap());
    assert!(tokens <= BUDGET_TOKENS, "{what}: text {tokens} tokens");
    assert!(
        tokens > BUDGET_TOKENS / 2 || text > BUDGET_BYTES / 2,
        "{what}: the budget is used ({tokens} tokens, {text} bytes)"
    );
    assert!(
        fetched["text"].as_str().unwrap().contains("read_artifact"),
        "{what}: the text says how to read on"
    );
    let structured = fetched["structured"].to_string().len() as u64;
    assert!(
        structured < 20_000,
        "{what}: structuredContent {structured} bytes"
    );
    // The whole tool result: the text, the facts, one link per artifact and the inline
    // screenshot (within the default 1,000,000-byte image cap), nothing more.
    let blocks = fetched["content"].as_array().unwrap();
    let image: u64 = blocks
        .iter()
        .filter_map(|b| b["data_bytes"].as_u64())
        .inspect(|n| assert!(*n <= 1_000_000, "{what}: image {n} bytes"))
        .map(|n| n.div_ceil(3) * 4)
        .sum();
    let whole = fetched["result_bytes"].as_u64().unwrap() - image;
    assert!(
        whole < BUDGET_BYTES + 2 * structured + 10_000,
        "{what}: result {whole} bytes besides the image"
    );
    assert_eq!(blocks[0]["type"], "text", "{what}");
    assert!(
        blocks[1..]
            .iter()
            .all(|b| b["type"] == "resource_link" || b["type"] == "image"),
        "{what}: {blocks:?}"
    );
    let content_file = fetched["structured"]["result"]["content_file"]
        .as_str()
        .unwrap();
    let whole_file = std::fs::read_to_string(content_file).unwrap();
    assert!(
        whole_file.len() as u64 > 10 * BUDGET_BYTES,
        "{what}: page too small"
    );
    let paged = &r["steps"][1];
    assert_eq!(
        paged["last"]["is_error"], false,
        "{what}: {}",
        paged["last"]
    );
    assert!(
        paged["max_text_bytes"].as_u64().unwrap() <= BUDGET_BYTES,
        "{what}"
    );
    assert!(
        super::o200k(paged["max_text"].as_str().unwrap()) <= BUDGET_TOKENS,
        "{what}: a page over the token budget"
    );
    assert!(paged["pages"].as_u64().unwrap() >= 10, "{what}");
    assert!(
        paged["body"] == whole_file,
        "{what}: the pages differ from the file"
    );
}

#[test]
fn a_5_mb_text_page_fits_the_budget_and_pages_back_whole() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let r = run_steps(
        &fx,
        &["mcp"],
        json!([
            {"call": "fetch", "args": {"url": srv.url("/big-text?n=5242880")}},
            {"page": {"path": "$0.result.content_file"}},
        ]),
    );
    assert_fits(&r, "5 MB text");
}

#[test]
fn a_20000_node_dom_rendered_fits_the_budget_and_pages_back_whole() {
    let _one = chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    // 20,000 paragraphs of /big-html's 51-byte unit.
    let url = srv.url("/big-html?n=1020000");
    let r = run_steps(
        &fx,
        &["mcp"],
        json!([
            {"call": "fetch", "args": {"url": url, "render": "always", "timeout_ms": 120000}},
            {"page": {"path": "$0.result.content_file"}},
        ]),
    );
    assert_eq!(
        tool_fetch(&r["steps"][0]["structured"]).render,
        "browser",
        "{}",
        r["steps"][0]["structured"]
    );
    assert_fits(&r, "20,000-node DOM");
}

#[test]
fn network_entries_page_by_index_with_a_filter() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let net = "$0.result.network_file";
    let r = run_steps(
        &fx,
        &["mcp"],
        json!([
            {"call": "fetch", "args": {"url": srv.url("/redirect/2"), "want": "body,network,content"}},
            {"page": {"path": net, "unit": "entries", "limit": 1, "filter": {"status": "3xx"}}},
            {"call": "read_artifact", "args": {"path": net, "unit": "entries", "filter": {"url_contains": "/static", "resource_type": "DOCUMENT"}}},
            {"call": "read_artifact", "args": {"path": net, "unit": "entries", "offset": 1}},
            {"call": "read_artifact", "args": {"path": net, "unit": "entries", "filter": {"status": "5xx"}}},
            {"call": "read_artifact", "args": {"path": "$0.result.content_file", "unit": "entries"}},
            {"call": "read_artifact", "args": {"path": net, "filter": {"status": "200"}}},
            {"call": "read_artifact", "args": {"path": net, "unit": "entries", "filter": {"status": "2x"}}},
        ]),
    );
    let s = &r["steps"];
    assert_eq!(s[0]["is_error"], false, "{}", s[0]);
    // Two redirect hops, one page at a time.
    assert_eq!(s[1]["pages"], 2, "{}", s[1]);
    let body = s[1]["body"].as_str().unwrap();
    let hops: Vec<Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(hops.len(), 2, "{body}");
    assert_eq!(hops[0]["index"], 0, "{body}");
    assert_eq!(hops[1]["index"], 1, "{body}");
    // /redirect/2 answers 302, /redirect/1 307.
    let statuses: Vec<&Value> = hops
        .iter()
        .map(|h| &h["entries"]["response"]["status"])
        .collect();
    assert_eq!(statuses, [&json!(302), &json!(307)], "{body}");
    let facts = &s[1]["structured"];
    assert_eq!(facts["matched_entries"], 2, "{facts}");
    assert_eq!(facts["total_entries"], 3, "{facts}");
    // The final hop by URL and type (case-insensitive).
    assert_eq!(s[2]["structured"]["indexes"], json!([2]), "{}", s[2]);
    // By index without a filter.
    assert_eq!(s[3]["structured"]["indexes"], json!([1, 2]), "{}", s[3]);
    // A filter that matches nothing is an empty page, not an error.
    assert_eq!(s[4]["is_error"], false, "{}", s[4]);
    assert_eq!(s[4]["structured"]["returned"], 0, "{}", s[4]);
    // Entries of a file that has none, a filter without entries, a bad status pattern.
    for bad in &s.as_array().unwrap()[5..8] {
        assert_eq!(bad["is_error"], true, "{bad}");
        assert_eq!(
            tool_error(&bad["structured"]).code,
            "invalid_argument",
            "{bad}"
        );
    }
}
