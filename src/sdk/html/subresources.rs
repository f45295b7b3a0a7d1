//! The scripts and stylesheets a document names in its markup, in document order: what the
//! browser path's stall cut probes as soon as the document has arrived
//! ([`crate::sdk::browser::stall_early`]), before the parser reaches them.

use scraper::ElementRef;
use url::Url;

use super::{dom, shell, ParsedHtml};

impl ParsedHtml {
    /// The `http(s)` URLs of the document's `<script src>` (of a type browsers run),
    /// `<link rel=stylesheet href>` and `<link rel=preload|modulepreload>` of a script or
    /// style, resolved against `<base href>` or `doc_url`, in document order, each once.
    pub fn scripts_and_stylesheets(&self, doc_url: &Url) -> Vec<Url> {
        let base = self.base_url(doc_url);
        let mut out: Vec<Url> = Vec::new();
        for el in self.doc.tree.nodes().filter_map(ElementRef::wrap) {
            let Some(href) = named(el) else {
                continue;
            };
            let Some(url) = dom::resolve(&base, href) else {
                continue;
            };
            if matches!(url.scheme(), "http" | "https") && !out.contains(&url) {
                out.push(url);
            }
        }
        out
    }
}

/// The URL `el` makes the browser fetch as a script or stylesheet, when it does.
fn named(el: ElementRef<'_>) -> Option<&str> {
    let v = el.value();
    match v.name() {
        "script" if shell::executable(v.attr("type")) => v.attr("src"),
        "link" => {
            let rel = v.attr("rel")?.to_ascii_lowercase();
            let rels: Vec<&str> = rel.split_ascii_whitespace().collect();
            let as_ = v.attr("as").map(|a| a.trim().to_ascii_lowercase());
            let stylesheet = rels.contains(&"stylesheet") && !rels.contains(&"alternate");
            let preload = rels.contains(&"modulepreload")
                || (rels.contains(&"preload")
                    && matches!(as_.as_deref(), Some("script" | "style")));
            (stylesheet || preload).then(|| v.attr("href")).flatten()
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(html: &str) -> Vec<String> {
        let doc = Url::parse("http://127.0.0.1:8080/dir/page.html").unwrap();
        ParsedHtml::parse(html)
            .scripts_and_stylesheets(&doc)
            .into_iter()
            .map(String::from)
            .collect()
    }

    #[test]
    fn scripts_and_stylesheets_are_named_in_document_order() {
        let html = r#"<html><head>
            <link rel="stylesheet" href="//cdn.example/a.css">
            <script src="https://ads.example/b.js"></script>
            <link rel="icon" href="https://icons.example/i.png">
            <link rel="alternate stylesheet" href="https://alt.example/x.css">
            <script type="application/ld+json" src="https://json.example/d.json"></script>
            <link rel=preload as=script href="https://pre.example/p.js">
            <link rel=preload as=image href="https://img.example/p.png">
            </head><body>
            <script async src="local.js"></script>
            <script src="https://ads.example/b.js"></script>
            <script>document.write('<script src="https://written.example/w.js"><\/script>')</script>
            <script type="module" src="data:text/javascript,1"></script>
            </body></html>"#;
        assert_eq!(
            urls(html),
            [
                "http://cdn.example/a.css",
                "https://ads.example/b.js",
                "https://pre.example/p.js",
                "http://127.0.0.1:8080/dir/local.js",
            ]
        );
    }

    #[test]
    fn a_base_href_resolves_relative_urls() {
        let html = r#"<base href="http://static.example/s/"><script src="x.js"></script>"#;
        assert_eq!(urls(html), ["http://static.example/s/x.js"]);
    }
}
