//! Deterministic bodies served by the fixture routes: pages, the PNG, byte patterns.

use std::io::Write;

use bytes::Bytes;

/// The small complete page served at `/` and `/static`.
pub const STATIC_HTML: &str = "<!doctype html>\n<html lang=\"en\">\n<head>\n\
<meta charset=\"utf-8\">\n<title>Fixture Static Page</title>\n</head>\n<body>\n\
<h1>Static Fixture</h1>\n\
<p>This is a small static page served by the afhttp test fixture.</p>\n\
<p><a href=\"/article\">Read the article</a></p>\n\
<table>\n<tr><th>Name</th><th>Value</th></tr>\n\
<tr><td>alpha</td><td>1</td></tr>\n<tr><td>beta</td><td>2</td></tr>\n</table>\n\
</body>\n</html>\n";

/// The application shell served at `/spa`: nothing until `/spa.js` runs.
pub const SPA_HTML: &str = "<!doctype html>\n<html lang=\"en\">\n<head>\n\
<meta charset=\"utf-8\">\n<title>Fixture SPA</title>\n</head>\n<body>\n\
<div id=\"root\"></div>\n<script src=\"/spa.js\"></script>\n</body>\n</html>\n";

/// The script of `/spa`: fetches `/api/items` and renders them as a list.
pub const SPA_JS: &str = "(function () {\n\
  var root = document.getElementById('root');\n\
  fetch('/api/items')\n\
    .then(function (r) { return r.json(); })\n\
    .then(function (data) {\n\
      var h1 = document.createElement('h1');\n\
      h1.textContent = 'Items (' + data.items.length + ')';\n\
      root.appendChild(h1);\n\
      var ul = document.createElement('ul');\n\
      ul.id = 'items';\n\
      data.items.forEach(function (item) {\n\
        var li = document.createElement('li');\n\
        li.className = 'item';\n\
        li.textContent = item.name;\n\
        ul.appendChild(li);\n\
      });\n\
      root.appendChild(ul);\n\
      document.title = 'Fixture SPA loaded';\n\
    });\n\
})();\n";

/// The CSV body of `/download`.
pub const DOWNLOAD_CSV: &str = "id,name,amount\n1,alpha,10\n2,beta,20\n3,gamma,30\n";

/// The body of `/text`.
pub const PLAIN_TEXT: &str = "Plain text fixture.\nSecond line.\n";

/// The JSON body of `/api/items`: 50 items.
pub fn items_json() -> String {
    let items: Vec<serde_json::Value> = (1..=50)
        .map(|i| serde_json::json!({"id": i, "name": format!("Item {i}")}))
        .collect();
    serde_json::json!({ "items": items }).to_string()
}

/// The deterministic ~50 KB article served at `/article`.
pub fn article_html() -> String {
    let mut s = String::with_capacity(56 * 1024);
    s.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    s.push_str("<title>Fixture Article: Notes on Deterministic Fetching</title>\n");
    s.push_str("<meta name=\"description\" content=\"A long static article for tests.\">\n");
    s.push_str("</head>\n<body>\n<article>\n<h1>Notes on Deterministic Fetching</h1>\n");
    let mut link = 0;
    for section in 1..=10 {
        s.push_str(&format!(
            "<h2 id=\"section-{section}\">Section {section}</h2>\n"
        ));
        for para in 1..=5 {
            s.push_str("<p>");
            for sentence in 1..=8 {
                s.push_str(&format!(
                    "Sentence {sentence} of paragraph {para} in section {section} explains \
                     how a careful client records facts about what it fetched. "
                ));
            }
            s.push_str(&format!(
                "See <a href=\"/article/ref/{link}\">reference {link}</a>.</p>\n"
            ));
            link += 1;
        }
        s.push_str(&format!(
            "<img src=\"/image.png\" alt=\"Figure {section}: a diagram\" width=\"1\" height=\"1\">\n"
        ));
        s.push_str(&format!(
            "<blockquote>Section {section} summary: facts first, artifacts on disk, one event \
             on stdout, and nothing the agent has to guess about what happened.</blockquote>\n"
        ));
        if section == 5 {
            s.push_str("<table>\n<tr><th>Metric</th><th>Value</th></tr>\n");
            for row in 1..=10 {
                s.push_str(&format!(
                    "<tr><td>metric-{row}</td><td>{}</td></tr>\n",
                    row * 7
                ));
            }
            s.push_str("</table>\n");
        }
    }
    s.push_str("</article>\n</body>\n</html>\n");
    s
}

/// An HTML page that names how it is encoded on the wire (for `/gzip` etc.).
pub fn encoded_page(encoding: &str) -> String {
    let mut s = format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Compressed {encoding}</title>\
         </head><body><h1>Compressed with {encoding}</h1>\n"
    );
    for i in 0..50 {
        s.push_str(&format!("<p>Repeated paragraph {i} compresses well.</p>\n"));
    }
    s.push_str("</body></html>\n");
    s
}

/// `data` compressed as gzip.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// `data` compressed as HTTP `deflate` (zlib format, RFC 1950).
pub fn deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// `data` compressed as brotli.
pub fn brotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
        w.write_all(data).unwrap();
    }
    out
}

/// The HTML of `/charset/latin1`, encoded as ISO-8859-1 ("café" has byte 0xE9).
pub fn latin1_html() -> Vec<u8> {
    let text = "<!doctype html>\n<html><head><title>Latin-1 caf\u{e9}</title></head>\
                <body><h1>Bienvenue au caf\u{e9}</h1><p>Cr\u{e8}me br\u{fb}l\u{e9}e.</p></body></html>\n";
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap())
        .collect()
}

/// A tiny valid PNG (1x1, one red RGB pixel), with correct CRCs.
pub fn png() -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&u32::try_from(data.len()).unwrap().to_be_bytes());
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc.sum().to_be_bytes());
    }
    let mut out = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    // width 1, height 1, bit depth 8, colour type 2 (RGB), compression, filter, interlace.
    chunk(&mut out, b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
    chunk(&mut out, b"IDAT", &deflate(&[0, 0xff, 0, 0]));
    chunk(&mut out, b"IEND", &[]);
    out
}

/// The byte at offset `i` of `/bytes?n=N` (the body is this for `i` in `0..N`).
pub fn pattern_byte(i: u64) -> u8 {
    u8::try_from(i % 251).unwrap()
}

/// The first `n` bytes of the `/bytes` body, for assertions on small sizes.
pub fn pattern_bytes(n: usize) -> Vec<u8> {
    (0..n as u64).map(pattern_byte).collect()
}

/// The repeating unit of `/big-html?n=N` (the body is this unit repeated, cut at N bytes).
pub const BIG_HTML_UNIT: &str = "<p>afhttp big html filler paragraph 0123456789</p>\n";

/// The repeated line of `/big-text?n=BYTES` (plain text).
pub const BIG_TEXT_UNIT: &str = "afhttp big text line: the quick brown fox jumps over 0123456789\n";

/// The first `n` bytes of the `/big-html` body.
pub fn big_html_bytes(n: usize) -> Vec<u8> {
    BIG_HTML_UNIT.bytes().cycle().take(n).collect()
}

/// A block of roughly 64 KiB made of whole `unit`s, shared by every chunk of a stream.
pub fn repeated_block(unit: &[u8]) -> Bytes {
    let reps = (64 * 1024 / unit.len()).max(1);
    Bytes::from(unit.repeat(reps))
}

/// The unit of the `/bytes` pattern: 0, 1, ..., 250.
pub fn pattern_unit() -> Vec<u8> {
    (0..251u64).map(pattern_byte).collect()
}
