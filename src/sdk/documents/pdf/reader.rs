//! The PDF reader proper (lopdf), run on untrusted bytes. The fetch never calls it in its own
//! process: [`child_main`] is the body of the hidden `afhttp __pdf-text` subcommand, which
//! first puts itself under hard limits (address space, CPU time), so a hostile file can at
//! worst get that one process killed. The fuzz target calls [`read`] directly.

use std::collections::BTreeMap;

use lopdf::{Dictionary, Document, Object};
use serde_json::{json, Value};

/// Read up to `max_pages` pages of `bytes`: the JSON document the runner turns into
/// artifacts (see `super::Report`).
pub fn read(bytes: &[u8], max_pages: u32) -> Value {
    let doc = match Document::load_mem(bytes) {
        Ok(d) => d,
        Err(e) => return json!({"error": format!("not a readable PDF: {e}")}),
    };
    let encrypted = doc.is_encrypted() || doc.was_encrypted();
    let pages: BTreeMap<u32, lopdf::ObjectId> = doc.get_pages();
    if doc.is_encrypted() {
        // lopdf already tried the empty user password while loading.
        return json!({"encrypted": true, "needs_password": true, "page_count": pages.len()});
    }
    let mut out_pages = Vec::new();
    for (&number, &id) in pages.iter().take(max_pages as usize) {
        let text = doc.extract_text(&[number]).unwrap_or_default();
        out_pages.push(json!({"number": number, "text": text, "links": page_links(&doc, id)}));
    }
    let outline: Vec<Value> = doc
        .get_toc()
        .map(|toc| {
            toc.toc
                .into_iter()
                .map(|t| json!({"level": t.level, "title": t.title.trim(), "page": t.page}))
                .collect()
        })
        .unwrap_or_default();
    json!({
        "encrypted": encrypted,
        "needs_password": false,
        "page_count": pages.len(),
        "truncated": pages.len() > max_pages as usize,
        "pages": out_pages,
        "info": info(&doc),
        "outline": outline,
    })
}

/// URI link annotations of a page, in order.
fn page_links(doc: &Document, page: lopdf::ObjectId) -> Vec<String> {
    let Ok(annots) = doc.get_page_annotations(page) else {
        return Vec::new();
    };
    annots
        .into_iter()
        .filter(|a| a.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Link".as_slice()))
        .filter_map(|a| {
            let action = match a.get(b"A").ok()? {
                Object::Reference(id) => doc.get_dictionary(*id).ok()?,
                Object::Dictionary(d) => d,
                _ => return None,
            };
            string(doc, action, b"URI")
        })
        .collect()
}

/// A text string of `dict` (direct or referenced): UTF-16BE with a BOM, else
/// PDFDocEncoding (read as Latin-1, which agrees on the printable range).
fn string(doc: &Document, dict: &Dictionary, key: &[u8]) -> Option<String> {
    let obj = match dict.get(key).ok()? {
        Object::Reference(id) => doc.get_object(*id).ok()?,
        o => o,
    };
    let Object::String(bytes, _) = obj else {
        return None;
    };
    let s = match bytes.strip_prefix(&[0xfe, 0xff]) {
        Some(be) => {
            let units: Vec<u16> = be
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16_lossy(&units)
        }
        None => bytes.iter().map(|&b| b as char).collect(),
    };
    let s = s.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn info(doc: &Document) -> Value {
    let dict = match doc.trailer.get(b"Info") {
        Ok(Object::Reference(id)) => doc.get_dictionary(*id).ok(),
        Ok(Object::Dictionary(d)) => Some(d),
        _ => None,
    };
    let get = |k: &[u8]| dict.and_then(|d| string(doc, d, k));
    json!({
        "title": get(b"Title"),
        "author": get(b"Author"),
        "subject": get(b"Subject"),
        "creation_date": get(b"CreationDate"),
        "producer": get(b"Producer"),
    })
}

/// `afhttp __pdf-text <file> <max_pages> <address_space_bytes> <cpu_seconds>`: limit this
/// process, read the file, print the report as one JSON line. Returns the exit status.
pub fn child_main(args: &[std::ffi::OsString]) -> (u8, String) {
    use nix::sys::resource::{getrusage, setrlimit, Resource, UsageWho};
    let arg = |i: usize| args.get(i).and_then(|a| a.to_str()).unwrap_or_default();
    let (Ok(max_pages), Ok(mem), Ok(cpu)) = (
        arg(1).parse::<u32>(),
        arg(2).parse::<u64>(),
        arg(3).parse::<u64>(),
    ) else {
        return (
            2,
            "usage: afhttp __pdf-text FILE MAX_PAGES AS_BYTES CPU_SECONDS\n".into(),
        );
    };
    // The limits come first: nothing of the file is read before they hold.
    if let Err(e) = setrlimit(Resource::RLIMIT_AS, mem, mem)
        .and_then(|_| setrlimit(Resource::RLIMIT_CPU, cpu, cpu + 1))
    {
        return (
            3,
            format!("{}\n", json!({"error": format!("setrlimit failed: {e}")})),
        );
    }
    let mut report = match std::fs::read(arg(0)) {
        Ok(bytes) => read(&bytes, max_pages),
        Err(e) => json!({"error": format!("cannot read the body file: {e}")}),
    };
    if let Ok(u) = getrusage(UsageWho::RUSAGE_SELF) {
        report["peak_rss_kib"] = json!(u.max_rss());
    }
    (0, format!("{report}\n"))
}
