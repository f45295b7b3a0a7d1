//! Documents: a tiny HTTP server for typed (or untyped) bodies, and PDF fixtures made by real
//! producers (Chromium's print-to-PDF, Ghostscript, qpdf) at test time.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// One served document: its `Content-Type` (none = no header) and bytes.
#[derive(Clone)]
pub struct Doc {
    /// `Content-Type` header value, or none.
    pub content_type: Option<String>,
    /// The body.
    pub body: Vec<u8>,
    /// Served instead when the request's `Accept` names `text/markdown`.
    pub markdown: Option<Vec<u8>>,
    /// A `Content-Disposition` header to send, if any.
    pub disposition: Option<String>,
    /// A `Content-Length` to declare instead of the body's (a server that lies about it,
    /// or a body cut short: the connection closes after the bytes there are).
    pub content_length: Option<u64>,
    /// More header lines to send (`Name: value`).
    pub extra_headers: Vec<String>,
}

/// A server on 127.0.0.1 that answers each path with its [`Doc`] (HTTP/1.1, one request a
/// connection), until dropped.
pub struct DocServer {
    port: u16,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl DocServer {
    /// Serve `docs` by path.
    pub fn start(docs: HashMap<String, Doc>) -> DocServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let docs = Arc::new(docs);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if flag.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                let docs = docs.clone();
                std::thread::spawn(move || {
                    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
                    let mut reader = BufReader::new(conn.try_clone().unwrap());
                    let mut line = String::new();
                    if reader.read_line(&mut line).is_err() {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let mut accept = String::new();
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                            break;
                        }
                        if let Some(v) = h.strip_prefix("accept:").or(h.strip_prefix("Accept:")) {
                            accept = v.trim().to_string();
                        }
                    }
                    let disposition = docs.get(&path).and_then(|d| d.disposition.clone());
                    let declared = docs.get(&path).and_then(|d| d.content_length);
                    let extra = docs
                        .get(&path)
                        .map(|d| d.extra_headers.clone())
                        .unwrap_or_default();
                    let (status, ct, body) = match docs.get(&path) {
                        Some(d) => match &d.markdown {
                            Some(md) if accept.contains("text/markdown") => (
                                "200 OK",
                                Some("text/markdown; charset=utf-8".to_string()),
                                md.clone(),
                            ),
                            _ => ("200 OK", d.content_type.clone(), d.body.clone()),
                        },
                        None => (
                            "404 Not Found",
                            Some("text/plain".into()),
                            b"not found".to_vec(),
                        ),
                    };
                    let length = declared.unwrap_or(body.len() as u64);
                    let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {length}\r\nConnection: close\r\nVary: Accept\r\n");
                    if let Some(ct) = ct {
                        head.push_str(&format!("Content-Type: {ct}\r\n"));
                    }
                    if let Some(d) = disposition {
                        head.push_str(&format!("Content-Disposition: {d}\r\n"));
                    }
                    for h in extra {
                        head.push_str(&format!("{h}\r\n"));
                    }
                    head.push_str("\r\n");
                    let _ = conn.write_all(head.as_bytes());
                    let _ = conn.write_all(&body);
                    let _ = conn.flush();
                    let mut sink = [0u8; 64];
                    let _ = conn.set_read_timeout(Some(Duration::from_millis(50)));
                    let _ = conn.read(&mut sink);
                });
            }
        });
        DocServer { port, stop }
    }

    /// The URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for DocServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// A document with a header.
pub fn typed(ct: &str, body: &[u8]) -> Doc {
    Doc {
        content_type: Some(ct.into()),
        body: body.to_vec(),
        markdown: None,
        disposition: None,
        content_length: None,
        extra_headers: Vec::new(),
    }
}

/// Run `cmd` to completion within `limit`, killing it past that; panics on failure. Output
/// goes through files, so a chatty child never blocks on a full pipe.
pub fn run_with_deadline(cmd: &mut Command, limit: Duration) -> std::process::Output {
    let out_file = tempfile::tempfile().unwrap();
    let err_file = tempfile::tempfile().unwrap();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out_file.try_clone().unwrap())
        .stderr(err_file.try_clone().unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e} (scripts/test.sh installs it)"));
    let status = super::deadline::wait_within(&mut child, limit, &format!("{cmd:?}"));
    let read = |mut f: std::fs::File| {
        use std::io::Seek;
        let mut v = Vec::new();
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut v).unwrap();
        v
    };
    let out = std::process::Output {
        status,
        stdout: read(out_file),
        stderr: read(err_file),
    };
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The PDF fixtures, made once per test run.
pub struct PdfFixtures {
    /// Keeps the directory alive.
    pub dir: tempfile::TempDir,
}

impl PdfFixtures {
    /// The fixture file `name` (e.g. `report.pdf`).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Its bytes.
    pub fn bytes(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path(name)).unwrap()
    }
}

/// A small grey PNG (an image-only, "scanned" page has no text layer).
pub fn png(w: u32, h: u32) -> Vec<u8> {
    use std::io::Write as _;
    let mut raw = Vec::new();
    for y in 0..h {
        raw.push(0u8);
        raw.extend((0..w).map(|x| ((x * 7 + y * 3) % 256) as u8));
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(&raw).unwrap();
    let idat = z.finish().unwrap();
    let chunk = |t: &[u8], d: &[u8]| {
        let mut c = (d.len() as u32).to_be_bytes().to_vec();
        c.extend_from_slice(t);
        c.extend_from_slice(d);
        let mut crc = flate2::Crc::new();
        crc.update(t);
        crc.update(d);
        c.extend_from_slice(&crc.sum().to_be_bytes());
        c
    };
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(chunk(b"IHDR", &ihdr));
    out.extend(chunk(b"IDAT", &idat));
    out.extend(chunk(b"IEND", b""));
    out
}

/// The report fixture's HTML: four pages (headings for the outline, a link, a page that is
/// only an image) in an embedded web font... the system serif, which Chromium embeds.
pub fn report_html() -> String {
    use base64::Engine as _;
    let img = base64::engine::general_purpose::STANDARD.encode(png(200, 200));
    format!(
        "<!doctype html><html><head><meta charset=utf-8><title>Quarterly Report</title>\
         <style>section{{page-break-after:always}} body{{font-family:serif}}</style></head><body>\
         <section><h1>Quarterly Report</h1><p>The first page introduces the report. Revenue grew by twelve percent compared with the previous quarter.</p>\
         <p>See the <a href=\"https://example.com/appendix\">appendix online</a> for details.</p></section>\
         <section><h2>Costs and margins</h2><p>Operating costs stayed flat while margins widened. Café prices rose slightly.</p><ul><li>Item one</li><li>Item two</li></ul></section>\
         <section><img src=\"data:image/png;base64,{img}\" width=400 height=400></section>\
         <section><h2>Outlook</h2><p>The outlook for the next year remains positive, with new markets opening.</p></section>\
         </body></html>"
    )
}

/// HTML of `pages` pages of prose.
pub fn long_html(pages: usize) -> String {
    let mut s = String::from("<!doctype html><html><head><meta charset=utf-8><title>Long</title><style>section{page-break-after:always}</style></head><body>");
    for i in 1..=pages {
        s.push_str(&format!("<section><h2>Chapter {i}</h2><p>"));
        for j in 0..40 {
            s.push_str(&format!(
                "Sentence {j} of chapter {i} talks about widgets and gadgets. "
            ));
        }
        s.push_str("</p></section>");
    }
    s.push_str("</body></html>");
    s
}

/// Print `html` to `pdf` with headless Chromium.
pub fn print_to_pdf(html: &str, dir: &Path, name: &str) {
    let src = dir.join(format!("{name}.html"));
    std::fs::write(&src, html).unwrap();
    let profile = dir.join(format!("{name}-profile"));
    run_with_deadline(
        Command::new("chromium")
            .arg("--headless")
            .arg("--no-sandbox")
            .arg("--disable-gpu")
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("--no-pdf-header-footer")
            .arg("--generate-pdf-document-outline")
            .arg(format!("--print-to-pdf={}", dir.join(name).display()))
            .arg(format!("file://{}", src.display())),
        Duration::from_secs(60),
    );
    let _ = std::fs::remove_dir_all(profile);
}

/// A PDF whose one page's content stream inflates to `inflated` zero bytes.
pub fn bomb_pdf(inflated: usize) -> Vec<u8> {
    use std::io::Write as _;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..inflated / zeros.len() {
        z.write_all(&zeros).unwrap();
    }
    let data = z.finish().unwrap();
    let mut stream = format!(
        "<< /Length {} /Filter /FlateDecode >>\nstream\n",
        data.len()
    )
    .into_bytes();
    stream.extend_from_slice(&data);
    stream.extend_from_slice(b"\nendstream");
    hand_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>".to_vec(),
        stream,
    ])
}

/// A PDF of numbered objects with a correct xref table.
pub fn hand_pdf(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(o);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A page showing `content` (a content stream, uncompressed) with `/F1` Helvetica and `/T3`
/// [`type3_font`] in its resources; `parent` is the page tree's object number.
fn page_object(parent: usize, content_obj: usize, font_obj: usize, t3_obj: usize) -> Vec<u8> {
    format!(
        "<< /Type /Page /Parent {parent} 0 R /MediaBox [0 0 612 792] /Contents {content_obj} 0 R \
         /Resources << /Font << /F1 {font_obj} 0 R /T3 {t3_obj} 0 R >> >> >>"
    )
    .into_bytes()
}

fn stream(data: &[u8], extra: &str) -> Vec<u8> {
    let mut s = format!("<< /Length {}{extra} >>\nstream\n", data.len()).into_bytes();
    s.extend_from_slice(data);
    s.extend_from_slice(b"\nendstream");
    s
}

/// A Type3 font whose two glyphs (codes `A`, `B`) are named `g1` and `g2` — names with no
/// Unicode meaning — and which has no `ToUnicode`: what a reader cannot map (objects
/// `first`..`first+1`).
fn type3_font(first: usize) -> Vec<Vec<u8>> {
    vec![
        format!(
            "<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1000 1000] /FontMatrix [0.001 0 0 0.001 0 0] \
             /CharProcs << /g1 {p} 0 R /g2 {p} 0 R >> /Encoding << /Type /Encoding /Differences [65 /g1 /g2] >> \
             /FirstChar 65 /LastChar 66 /Widths [600 600] /Resources << >> >>",
            p = first + 1
        )
        .into_bytes(),
        stream(b"600 0 0 0 500 700 d1 0 0 500 700 re f", ""),
    ]
}

/// Pages of plain Helvetica text (`lines[i]` on page i+1), and one page of unmappable Type3
/// glyphs at `unmapped_page` (1-based; 0 = none). Objects: catalog, pages, Helvetica, the
/// Type3 font and its glyph, then a page and its content per page.
fn text_pdf(lines: &[&str], unmapped_page: usize) -> Vec<u8> {
    let n = lines.len() + usize::from(unmapped_page > 0);
    let first_page = 6;
    let kids: Vec<String> = (0..n)
        .map(|i| format!("{} 0 R", first_page + 2 * i))
        .collect();
    let mut objs = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!("<< /Type /Pages /Kids [{}] /Count {n} >>", kids.join(" ")).into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
    ];
    objs.extend(type3_font(4));
    let mut text = lines.iter();
    for i in 0..n {
        let content = if i + 1 == unmapped_page {
            "BT /T3 12 Tf 72 700 Td (ABBA BAAB ABAB BBAA AABB) Tj 0 -20 Td (BABA ABBA BAAB) Tj ET"
                .to_string()
        } else {
            let line = text.next().map_or("", |l| l);
            format!("BT /F1 12 Tf 72 700 Td ({line}) Tj ET")
        };
        objs.push(page_object(2, first_page + 2 * i + 1, 3, 4));
        objs.push(stream(content.as_bytes(), ""));
    }
    hand_pdf(&objs)
}

/// Two pages of text, then a page of glyphs without Unicode values (a Type3 font with
/// meaningless glyph names and no `ToUnicode`).
pub fn unmapped_pdf() -> Vec<u8> {
    text_pdf(
        &[
            "The contract starts on the first of March and runs for two years.",
            "Either party may end it with three months notice in writing.",
        ],
        3,
    )
}

/// A damaged file: its `startxref` points nowhere (so the reader must rebuild the table by
/// scanning), and page 2's content stream claims FlateDecode but holds garbage. Page 1 and 3
/// are intact.
pub fn damaged_pdf() -> Vec<u8> {
    let mut pdf = text_pdf(
        &[
            "Invoice number four hundred and two is due on the fifth.",
            "This line is lost with its broken stream.",
            "Payment goes to the account named on the first page.",
        ],
        0,
    );
    // Page 2's content (object 9): a stream that does not inflate.
    let marker = b"9 0 obj\n";
    let at = pdf.windows(marker.len()).position(|w| w == marker).unwrap() + marker.len();
    let end = at + pdf[at..].windows(6).position(|w| w == b"endobj").unwrap();
    let garbage = stream(
        b"\x00\x01 not deflate data \xff\xfe",
        " /Filter /FlateDecode",
    );
    let mut bad = garbage.clone();
    bad.push(b'\n');
    pdf.splice(at..end, bad);
    // The cross-reference table now points at the wrong offsets anyway; make startxref
    // point nowhere too.
    let sx = b"startxref\n";
    let at = pdf.windows(sx.len()).rposition(|w| w == sx).unwrap() + sx.len();
    let end = at + pdf[at..].iter().position(|b| *b == b'\n').unwrap();
    pdf.splice(at..end, b"999999".iter().copied());
    pdf
}

/// One page whose content is an array of three streams, split between operators (a font set
/// in the first, the text shown in the second, an empty third): the streams are read as one.
pub fn split_content_pdf() -> Vec<u8> {
    hand_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [5 0 R 6 0 R 7 0 R] \
          /Resources << /Font << /F1 4 0 R >> >> >>"
            .to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
        stream(b"BT /F1 12 Tf 72 700 Td", ""),
        stream(b"(The notice period is three months.) Tj ET", ""),
        stream(b"", ""),
    ])
}

/// A PDF nested `depth` arrays deep in its page dictionary.
pub fn nested_pdf(depth: usize) -> Vec<u8> {
    let mut page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Deep ".to_vec();
    page.extend(std::iter::repeat_n(b'[', depth));
    page.extend(std::iter::repeat_n(b']', depth));
    page.extend_from_slice(b" >>");
    hand_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        page,
    ])
}

const GS_SOURCE: &str = "%!PS\n/Times-Roman findfont 14 scalefont setfont\n72 700 moveto (Ghostscript produced this first page of plain text.) show\n72 680 moveto (It has two lines written in Times Roman.) show\nshowpage\n/Helvetica findfont 12 scalefont setfont\n72 700 moveto (The second page mentions invoices and filings.) show\nshowpage\n";

/// Every PDF fixture: `report.pdf` (Chromium: outline, link, embedded font, an image-only
/// page), `scanned.pdf` (Chromium: images only), `long.pdf` (Chromium, 100 pages), `gs.pdf`
/// (Ghostscript), `empty_pw.pdf` / `empty_pw_aes128.pdf` (qpdf, empty user password),
/// `locked.pdf` (qpdf, user password), `truncated.pdf` (the report cut in half).
pub fn pdf_fixtures() -> &'static PdfFixtures {
    static FIXTURES: OnceLock<PdfFixtures> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        print_to_pdf(&report_html(), d, "report.pdf");
        use base64::Engine as _;
        let img = base64::engine::general_purpose::STANDARD.encode(png(300, 300));
        let scanned = format!("<!doctype html><body style=margin:0><img src=\"data:image/png;base64,{img}\" width=600 height=600><div style=page-break-before:always><img src=\"data:image/png;base64,{img}\" width=300></div></body>");
        print_to_pdf(&scanned, d, "scanned.pdf");
        print_to_pdf(&long_html(100), d, "long.pdf");
        std::fs::write(d.join("gs.ps"), GS_SOURCE).unwrap();
        run_with_deadline(
            Command::new("gs")
                .args(["-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=pdfwrite"])
                .arg(format!("-sOutputFile={}", d.join("gs.pdf").display()))
                .arg(d.join("gs.ps")),
            Duration::from_secs(60),
        );
        let qpdf = |args: &[&str], input: &str, output: &str| {
            run_with_deadline(
                Command::new("qpdf")
                    .args(args)
                    .arg("--")
                    .arg(d.join(input))
                    .arg(d.join(output)),
                Duration::from_secs(60),
            );
        };
        qpdf(&["--encrypt", "", "owner-pw", "256"], "report.pdf", "empty_pw.pdf");
        qpdf(&["--encrypt", "", "owner-pw", "128", "--use-aes=y"], "gs.pdf", "empty_pw_aes128.pdf");
        qpdf(&["--encrypt", "user-pw", "owner-pw", "256"], "report.pdf", "locked.pdf");
        let report = std::fs::read(d.join("report.pdf")).unwrap();
        std::fs::write(d.join("truncated.pdf"), &report[..report.len() / 2]).unwrap();
        PdfFixtures { dir }
    })
}

/// `pdftotext` of a file: `(text, pages)` (poppler ends every page with a form feed).
pub fn pdftotext(path: &Path) -> (String, usize) {
    let out = run_with_deadline(
        Command::new("pdftotext").arg(path).arg("-"),
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let pages = text.matches('\u{c}').count();
    (text, pages)
}

/// Word-level F1 of `got` against `reference` (bags of lower-cased words).
pub fn word_f1(got: &str, reference: &str) -> f64 {
    let bag = |s: &str| {
        let mut m: HashMap<String, usize> = HashMap::new();
        for w in s
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            *m.entry(w.to_lowercase()).or_default() += 1;
        }
        m
    };
    let (a, b) = (bag(got), bag(reference));
    let common: usize = a
        .iter()
        .map(|(w, n)| (*n).min(*b.get(w).unwrap_or(&0)))
        .sum();
    let (na, nb): (usize, usize) = (a.values().sum(), b.values().sum());
    if na == 0 || nb == 0 {
        return if na == nb { 1.0 } else { 0.0 };
    }
    let (p, r) = (common as f64 / na as f64, common as f64 / nb as f64);
    if p + r == 0.0 {
        0.0
    } else {
        2.0 * p * r / (p + r)
    }
}

/// The `d_tag`s of a 64-bit little-endian ELF executable's dynamic section (empty when it
/// has none).
pub fn elf_dynamic_tags(elf: &[u8]) -> Vec<u64> {
    let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
    assert_eq!(&elf[..5], b"\x7fELF\x02", "not a 64-bit ELF file");
    let (phoff, phentsize, phnum) = (u64_at(0x20) as usize, u16_at(0x36), u16_at(0x38));
    const PT_DYNAMIC: u32 = 2;
    let Some(dynamic) = (0..phnum)
        .map(|i| phoff + i * phentsize)
        .find(|&ph| u32::from_le_bytes(elf[ph..ph + 4].try_into().unwrap()) == PT_DYNAMIC)
    else {
        return Vec::new();
    };
    let (off, size) = (u64_at(dynamic + 8) as usize, u64_at(dynamic + 32) as usize);
    (off..off + size)
        .step_by(16)
        .map(u64_at)
        .take_while(|&tag| tag != 0)
        .collect()
}
