//! Target `html_content`: the HTML → text / `content.md` / `content.json` projection of an
//! HTTP body, decoded exactly as the fetch path decodes it.

use serde_json::Value;
use url::Url;

use crate::sdk::content_type::decode_text;
use crate::sdk::html::{ParsedHtml, MAX_ITEMS};

/// The document URL: a path, a query and a fragment-free base, so relative links resolve.
pub const DOC_URL: &str = "https://example.com/dir/page.html?q=1";

/// How many output bytes one input byte may turn into, plus a fixed allowance. Resolving a
/// relative link repeats the base URL and `colspan` expands into empty cells (a 16-byte
/// `<td colspan=100>` is 100 cells plus 100 delimiter cells, about 60×), so linear growth
/// is expected; growth beyond it is a denial of service against the fetching machine.
pub const MAX_GROWTH: usize = 128;

/// Parse, project, and check the projection's invariants.
// Harness code: DOC_URL is a constant that parses (the replay test runs this body).
#[allow(clippy::expect_used)]
pub fn html_content(data: &[u8]) {
    let url = Url::parse(DOC_URL).expect("DOC_URL parses");
    let html = decode_text(data, Some("text/html"));
    let parsed = ParsedHtml::parse(&html);
    let p = parsed.project(&url);
    let _ = parsed.shell_facts();
    let _ = parsed.user_input_count();

    let budget = MAX_GROWTH * (data.len() + 1024);
    assert!(
        p.text.len() <= budget,
        "text grew to {} bytes",
        p.text.len()
    );
    assert!(
        p.content_md.len() <= budget,
        "content.md grew to {} bytes from {} input bytes",
        p.content_md.len(),
        data.len()
    );

    let doc = &p.content_json;
    assert_eq!(doc["url"], Value::from(DOC_URL));
    assert_eq!(doc["text_bytes"], Value::from(p.text.len()));
    for list in ["headings", "links", "actions", "tables", "images", "frames"] {
        let len = doc[list].as_array().map(Vec::len);
        assert!(len.is_some_and(|n| n <= MAX_ITEMS), "{list}: {len:?}");
    }
    // content.json is written to disk and read by agents: it must serialize and read back.
    let bytes = serde_json::to_vec(doc).unwrap_or_default();
    let back: Option<Value> = serde_json::from_slice(&bytes).ok();
    assert_eq!(back.as_ref(), Some(doc), "content.json does not round-trip");

    // A projection is mechanical: the same bytes give the same artifacts.
    let again = ParsedHtml::parse(&html).project(&url);
    assert_eq!(again.text, p.text);
    assert_eq!(again.content_md, p.content_md);
}
