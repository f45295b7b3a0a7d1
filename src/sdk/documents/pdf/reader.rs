//! The PDF reader proper (hayro), run on untrusted bytes. The fetch never calls it in its own
//! process: [`child_main`] is the body of the `afhttp-pdf-reader` executable, which first puts
//! itself under hard limits (address space, CPU time), so a hostile file can at worst get
//! that one process killed. The fuzz target calls [`read`] directly.
//!
//! This module, [`super::device`] and [`super::structure`] are the only ones that name the
//! parser crates (`hayro-*`, `skrifa`); the rest of the PDF path reads the JSON report.

use std::borrow::Cow;

use hayro_interpret::{
    interpret, interpret_page, Context, InterpreterCache, InterpreterSettings, RenderContent,
};
use hayro_syntax::content::TypedIter;
use hayro_syntax::object::{Array, Stream};
use hayro_syntax::page::Page;
use hayro_syntax::{LoadPdfError, Pdf};
use kurbo::{Affine, Rect};
use serde_json::{json, Value};

use super::device::Collect;
use super::layout::layout;
use super::structure;

/// Read up to `max_pages` pages of `bytes`: the JSON report the parent turns into
/// artifacts (`super::from_report`).
pub fn read(bytes: Vec<u8>, max_pages: u32) -> Value {
    let encrypted = find(&bytes, b"/Encrypt").is_some();
    let damaged = !xref_is_sound(&bytes);
    let pdf = match Pdf::new(bytes) {
        Ok(p) => p,
        Err(LoadPdfError::Decryption(e)) => {
            return json!({"encrypted": true, "needs_password": true, "decryption": format!("{e:?}")})
        }
        Err(LoadPdfError::Invalid) => {
            return json!({"error": "not a readable PDF: no page tree could be found, even by scanning the file", "damaged": true})
        }
    };
    let pages = pdf.pages();
    let numbers = structure::page_numbers(&pdf);
    let cache = InterpreterCache::new();
    // The page's own content is interpreted from a buffer dropped after the page
    // (`page_content`); the interpreter itself draws only the annotations.
    let settings = InterpreterSettings {
        render_content: RenderContent::ANNOTATIONS,
        ..InterpreterSettings::default()
    };
    let mut out_pages = Vec::new();
    for (i, page) in pages.iter().take(max_pages as usize).enumerate() {
        let mut ctx = Context::new(
            Affine::IDENTITY,
            Rect::new(-1e9, -1e9, 1e9, 1e9),
            &cache,
            pdf.xref(),
            settings.clone(),
        );
        let mut dev = Collect::default();
        let content = page_content(page);
        if let Some(c) = &content {
            interpret(TypedIter::new(c), page.resources(), &mut ctx, &mut dev);
        }
        interpret_page(page, &mut ctx, &mut dev);
        let p = layout(&dev.glyphs);
        // Content that is named but cannot be read (a broken stream or reference).
        let unreadable = page.raw().contains_key(b"Contents") && content.is_none();
        drop(content);
        out_pages.push(json!({
            "number": i + 1,
            "text": p.text,
            "glyphs": p.glyphs,
            "unmapped": p.unmapped,
            "images": dev.images,
            "unreadable": unreadable,
            "links": structure::page_links(page.raw()),
        }));
    }
    let declared = declared_page_count(&pdf);
    json!({
        "encrypted": encrypted,
        "needs_password": false,
        "page_count": pages.len(),
        "declared_page_count": declared,
        "truncated": pages.len() > max_pages as usize,
        "damaged": damaged,
        "pages": out_pages,
        "info": structure::info(&pdf),
        "outline": structure::outline(&pdf, &numbers),
    })
}

/// The page's decoded content stream(s), concatenated with a space between streams: what
/// hayro's `Page::page_stream` gives, but owned by the caller. `page_stream` keeps each
/// page's decoded content for as long as the document is open, so a long document would
/// hold all of them at the end (3.1 of the reader's 9.7 MiB heap on a 352-page book).
fn page_content<'a>(page: &Page<'a>) -> Option<Cow<'a, [u8]>> {
    let raw = page.raw();
    if let Some(s) = raw.get::<Stream<'a>>(b"Contents") {
        return s.decoded_data().ok();
    }
    let streams = raw.get::<Array<'a>>(b"Contents")?;
    let mut out = Vec::new();
    for s in streams.iter::<Stream<'a>>() {
        if let Ok(d) = s.decoded_data() {
            out.extend_from_slice(&d);
            // Streams must have at least one whitespace in between.
            out.push(b' ');
        }
    }
    Some(Cow::Owned(out))
}

/// The page tree's own `/Count` (more than the pages found means some were lost).
fn declared_page_count(pdf: &Pdf) -> Option<u64> {
    let root = pdf
        .xref()
        .get::<hayro_syntax::object::Dict<'_>>(pdf.xref().root_id())?;
    let n = root
        .get::<hayro_syntax::object::Dict<'_>>(b"Pages")?
        .get::<hayro_syntax::object::Number>(b"Count")?
        .as_i64();
    u64::try_from(n).ok()
}

/// Whether the file's last `startxref` points at a cross-reference table or stream. When it
/// does not, the parser rebuilt the table by scanning the file: the document is damaged.
fn xref_is_sound(bytes: &[u8]) -> bool {
    let tail_at = bytes.len().saturating_sub(2048);
    let Some(at) = rfind(&bytes[tail_at..], b"startxref") else {
        return false;
    };
    let rest = &bytes[tail_at + at + b"startxref".len()..];
    let digits: String = rest
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .take_while(|b| b.is_ascii_digit())
        .map(|&b| b as char)
        .collect();
    let Ok(offset) = digits.parse::<usize>() else {
        return false;
    };
    let Some(target) = bytes.get(offset..) else {
        return false;
    };
    let target = &target[..target.len().min(64)];
    let start = target
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(0);
    let t = &target[start..];
    t.starts_with(b"xref")
        || (t.first().is_some_and(u8::is_ascii_digit) && find(t, b"obj").is_some())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// `afhttp-pdf-reader <file> <max_pages> <address_space_bytes> <cpu_seconds>`: limit this
/// process, read the file, write the report to `out` as one JSON line. Returns the exit
/// status.
pub fn child_main(args: &[std::ffi::OsString], out: &mut impl std::io::Write) -> u8 {
    use nix::sys::resource::{setrlimit, Resource};
    let arg = |i: usize| args.get(i).and_then(|a| a.to_str()).unwrap_or_default();
    let (Ok(max_pages), Ok(mem), Ok(cpu)) = (
        arg(1).parse::<u32>(),
        arg(2).parse::<u64>(),
        arg(3).parse::<u64>(),
    ) else {
        let _ = out.write_all(b"usage: afhttp-pdf-reader FILE MAX_PAGES AS_BYTES CPU_SECONDS\n");
        return 2;
    };
    // The limits come first: nothing of the file is read before they hold.
    let mut report = match setrlimit(Resource::RLIMIT_AS, mem, mem)
        .and_then(|_| setrlimit(Resource::RLIMIT_CPU, cpu, cpu + 1))
    {
        Err(e) => json!({"error": format!("setrlimit failed: {e}")}),
        Ok(()) => match std::fs::read(arg(0)) {
            Ok(bytes) => read(bytes, max_pages),
            Err(e) => json!({"error": format!("cannot read the body file: {e}")}),
        },
    };
    report["peak_rss_kib"] = json!(peak_rss_kib());
    // Streamed, not formatted into a string first: the report of a long document is large.
    let written = serde_json::to_writer(&mut *out, &report)
        .map_err(std::io::Error::from)
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.flush());
    if written.is_err() {
        return 4;
    }
    0
}

/// This process's peak RSS (VmHWM). Not `getrusage`: a spawned child's `ru_maxrss` carries
/// the parent's pages across exec, so it would count the fetch's own memory twice.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
