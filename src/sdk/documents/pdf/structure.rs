//! A PDF's facts besides its text: the info dictionary, the outline and each page's URI
//! links, read with `hayro-syntax` (the parser [`super::reader`] uses).

use std::collections::{HashMap, HashSet};

use hayro_syntax::object::{Array, Dict, MaybeRef, Name, Object, ObjectIdentifier};
use hayro_syntax::Pdf;
use serde_json::{json, Value};

/// Outline entries read at most (a cyclic or huge outline stops here).
const MAX_OUTLINE: usize = 2000;
/// Outline depth followed at most.
const MAX_DEPTH: u64 = 16;

/// A PDF text string: UTF-16BE or UTF-8 with a BOM, else PDFDocEncoding (read as Latin-1,
/// which agrees on the printable range). Trimmed; `None` when empty.
pub fn text_string(bytes: &[u8]) -> Option<String> {
    let s = if let Some(be) = bytes.strip_prefix(&[0xfe, 0xff]) {
        let units: Vec<u16> = be
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        String::from_utf16_lossy(&units)
    } else if let Some(u8s) = bytes.strip_prefix(&[0xef, 0xbb, 0xbf]) {
        String::from_utf8_lossy(u8s).into_owned()
    } else {
        bytes.iter().map(|&b| b as char).collect()
    };
    let s = s.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn string_of(d: &Dict<'_>, key: &[u8]) -> Option<String> {
    text_string(d.get::<hayro_syntax::object::String<'_>>(key)?.as_bytes())
}

/// The info dictionary's fields (`title`, `author`, `subject`, `creation_date`, `producer`).
pub fn info(pdf: &Pdf) -> Value {
    let m = pdf.metadata();
    let get = |b: &Option<Box<[u8]>>| b.as_deref().and_then(text_string);
    let date = m.creation_date.as_ref().map(|d| {
        format!(
            "D:{:04}{:02}{:02}{:02}{:02}{:02}",
            d.year, d.month, d.day, d.hour, d.minute, d.second
        )
    });
    json!({
        "title": get(&m.title),
        "author": get(&m.author),
        "subject": get(&m.subject),
        "creation_date": date,
        "producer": get(&m.producer),
    })
}

/// Page numbers (1-based) by page object id.
pub fn page_numbers(pdf: &Pdf) -> HashMap<ObjectIdentifier, u64> {
    pdf.pages()
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((p.raw().obj_id()?, i as u64 + 1)))
        .collect()
}

/// The outline, depth first: `level` (1 = top), `title`, `page` (when the destination
/// resolves to a page).
pub fn outline(pdf: &Pdf, pages: &HashMap<ObjectIdentifier, u64>) -> Vec<Value> {
    let Some(root) = pdf.xref().get::<Dict<'_>>(pdf.xref().root_id()) else {
        return Vec::new();
    };
    let names = named_dests(&root);
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let first = root
        .get::<Dict<'_>>(b"Outlines")
        .and_then(|o| o.get::<Dict<'_>>(b"First"));
    let mut stack: Vec<(Dict<'_>, u64)> = first.into_iter().map(|d| (d, 1)).collect();
    while let Some((item, level)) = stack.pop() {
        if out.len() >= MAX_OUTLINE || !seen.insert(item.data().as_ptr() as usize) {
            continue;
        }
        if let Some(title) = string_of(&item, b"Title") {
            let page = destination(&item, &names, pages);
            out.push(json!({"level": level, "title": title, "page": page}));
        }
        // Visit the children before the next sibling: push the sibling first.
        if let Some(next) = item.get::<Dict<'_>>(b"Next") {
            stack.push((next, level));
        }
        if level < MAX_DEPTH {
            if let Some(child) = item.get::<Dict<'_>>(b"First") {
                stack.push((child, level + 1));
            }
        }
    }
    out
}

/// Named destinations: the catalog's `/Dests` dictionary and the `/Names /Dests` tree.
fn named_dests<'a>(root: &Dict<'a>) -> HashMap<Vec<u8>, Array<'a>> {
    let mut out = HashMap::new();
    if let Some(d) = root.get::<Dict<'_>>(b"Dests") {
        for k in d.keys() {
            if let Some(a) = dest_array_in(&d, k.as_ref()) {
                out.insert(k.as_ref().to_vec(), a);
            }
        }
    }
    let mut todo: Vec<Dict<'_>> = root
        .get::<Dict<'_>>(b"Names")
        .and_then(|n| n.get::<Dict<'_>>(b"Dests"))
        .into_iter()
        .collect();
    let mut nodes = 0;
    while let Some(node) = todo.pop() {
        nodes += 1;
        if nodes > MAX_OUTLINE {
            break;
        }
        if let Some(kids) = node.get::<Array<'_>>(b"Kids") {
            todo.extend(kids.iter::<Dict<'_>>());
        }
        if let Some(pairs) = node.get::<Array<'_>>(b"Names") {
            let mut it = pairs.iter::<Object<'_>>();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                let Some(key) = k.into_string() else { continue };
                let arr = match v {
                    Object::Array(a) => Some(a),
                    Object::Dict(d) => d.get::<Array<'_>>(b"D"),
                    _ => None,
                };
                if let Some(a) = arr {
                    out.insert(key.as_bytes().to_vec(), a);
                }
            }
        }
    }
    out
}

fn dest_array_in<'a>(d: &Dict<'a>, key: &[u8]) -> Option<Array<'a>> {
    d.get::<Array<'_>>(key)
        .or_else(|| d.get::<Dict<'_>>(key)?.get::<Array<'_>>(b"D"))
}

/// The page an outline item (or link) goes to: `/Dest`, or a GoTo action's `/D`; an array,
/// a name or a string naming a destination.
fn destination(
    item: &Dict<'_>,
    names: &HashMap<Vec<u8>, Array<'_>>,
    pages: &HashMap<ObjectIdentifier, u64>,
) -> Option<u64> {
    let action = item.get::<Dict<'_>>(b"A");
    let holder = if item.contains_key(b"Dest") {
        item
    } else {
        action.as_ref()?
    };
    let key: &[u8] = if item.contains_key(b"Dest") {
        b"Dest"
    } else {
        b"D"
    };
    let arr = match holder.get::<Object<'_>>(key)? {
        Object::Array(a) => a,
        Object::Name(n) => names.get(n.as_ref())?.clone(),
        Object::String(s) => names.get(s.as_bytes())?.clone(),
        _ => return None,
    };
    match arr.raw_iter().next()? {
        MaybeRef::Ref(r) => pages.get(&ObjectIdentifier::from(r)).copied(),
        // A remote destination gives a 0-based page number.
        MaybeRef::NotRef(Object::Number(n)) => Some(n.as_f64() as u64 + 1),
        MaybeRef::NotRef(_) => None,
    }
}

/// URI link annotations of a page, in order.
pub fn page_links(page: &Dict<'_>) -> Vec<String> {
    let Some(annots) = page.get::<Array<'_>>(b"Annots") else {
        return Vec::new();
    };
    annots
        .iter::<Dict<'_>>()
        .filter(|a| {
            a.get::<Name<'_>>(b"Subtype")
                .is_some_and(|s| s.as_ref() == b"Link")
        })
        .filter_map(|a| string_of(&a.get::<Dict<'_>>(b"A")?, b"URI"))
        .collect()
}
