//! The artifact registry: one row per artifact (spec §8), read by the `--want` parser, the
//! file names on both paths, `/capabilities`, the `--want` help and the docs table.
//!
//! Adding an artifact is one [`Artifact`] variant, one row in [`REGISTRY`] and its capture
//! code; every consumer below picks the row up.

use std::fmt::Write as _;
use std::str::FromStr;

use serde::Serialize;

use crate::error::AfError;

/// An artifact token (the `--want` vocabulary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Artifact {
    /// Raw HTTP response body.
    Body,
    /// Post-JavaScript DOM.
    RenderedHtml,
    /// Visible text.
    Text,
    /// Composed markdown view.
    Content,
    /// Structured content.
    ContentJson,
    /// The composed view with links by reference and no image sources.
    Lean,
    /// The link table `lean` refers to.
    Links,
    /// Full-page PNG.
    Screenshot,
    /// The rendered page printed to PDF.
    Pdf,
    /// Request/response log.
    Network,
    /// Console events.
    Console,
    /// DOM snapshot of what can be acted on.
    Observation,
    /// localStorage/sessionStorage/IndexedDB names.
    Storage,
}

/// How an artifact's file is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileName {
    /// Always this name.
    Fixed(&'static str),
    /// `<stem>.<ext>`, the extension derived from the response's `Content-Type`.
    ContentTypeExt {
        /// The part before the extension.
        stem: &'static str,
    },
    /// One name per output format (`(format, file)`); the first is the default format.
    PerFormat(&'static [(&'static str, &'static str)]),
}

/// Engine families a backend belongs to (`Backend::family`, `/health`'s `backend.family`).
pub const FAMILIES: [&str; 3] = ["chromium", "lightpanda", "firefox"];

/// Every engine family.
const ALL_FAMILIES: &[&str] = &FAMILIES;
/// Backends that render pixels and expose Chromium's storage domains.
const CHROMIUM_ONLY: &[&str] = &["chromium"];

/// One artifact's facts.
#[derive(Debug, Clone, Copy)]
pub struct ArtifactSpec {
    /// The artifact.
    pub artifact: Artifact,
    /// The `--want` token, also the `<token>_file` result field's prefix.
    pub token: &'static str,
    /// The file it is written to.
    pub file: FileName,
    /// Only a browser can produce it; requesting it makes `--render auto` escalate.
    pub browser_only: bool,
    /// In the set a browser render writes when `--want` is not given.
    pub browser_default: bool,
    /// In the set the plain HTTP path writes when `--want` is not given.
    pub http_default: bool,
    /// Engine families ([`FAMILIES`]) that can produce it (spec §10); others get a
    /// `backend_unsupported` warning.
    pub families: &'static [&'static str],
    /// Opt-in only, because it can expose sensitive local state.
    pub sensitive: bool,
    /// One line for the help text and the docs.
    pub summary: &'static str,
}

/// The registry, in canonical order.
pub const REGISTRY: &[ArtifactSpec] = &[
    ArtifactSpec {
        artifact: Artifact::Body,
        token: "body",
        file: FileName::ContentTypeExt { stem: "body" },
        browser_only: false,
        browser_default: true,
        http_default: true,
        families: ALL_FAMILIES,
        sensitive: false,
        summary: "The main response body, decoded; written whenever a main response arrived.",
    },
    ArtifactSpec {
        artifact: Artifact::RenderedHtml,
        token: "rendered_html",
        file: FileName::Fixed("rendered.html"),
        browser_only: true,
        browser_default: true,
        http_default: false,
        families: ALL_FAMILIES,
        sensitive: false,
        summary: "The DOM after scripts ran, serialized.",
    },
    ArtifactSpec {
        artifact: Artifact::Text,
        token: "text",
        file: FileName::Fixed("text.txt"),
        browser_only: false,
        browser_default: true,
        http_default: false,
        families: ALL_FAMILIES,
        sensitive: false,
        summary: "Visible text (innerText in a browser, projected from the HTML over HTTP).",
    },
    ArtifactSpec {
        artifact: Artifact::Content,
        token: "content",
        file: FileName::Fixed("content.md"),
        browser_only: false,
        browser_default: true,
        http_default: false,
        families: ALL_FAMILIES,
        sensitive: false,
        summary: "The composed markdown view: headings, paragraphs, lists, tables, links, forms.",
    },
    ArtifactSpec {
        artifact: Artifact::ContentJson,
        token: "content_json",
        file: FileName::Fixed("content.json"),
        browser_only: false,
        browser_default: true,
        http_default: false,
        families: ALL_FAMILIES,
        sensitive: false,
        summary: "The structured form of content: headings, links, actions, tables, images.",
    },
    ArtifactSpec {
        artifact: Artifact::Lean,
        token: "lean",
        file: FileName::Fixed("lean.md"),
        browser_only: false,
        browser_default: false,
        http_default: false,
        families: ALL_FAMILIES,
        sensitive: false,
        summary: "content.md with links as `[text][n]` (n: an entry of links.json), no image \
                  sources (alt text stays), and navigation, header/footer/aside landmarks and \
                  links-only blocks folded into one line naming their content.md lines. \
                  Implies `links` and `content`.",
    },
    ArtifactSpec {
        artifact: Artifact::Links,
        token: "links",
        file: FileName::Fixed("links.json"),
        browser_only: false,
        browser_default: false,
        http_default: false,
        families: ALL_FAMILIES,
        sensitive: false,
        summary: "The link table of lean.md: index, text, absolute url, same_site (and kind for \
                  frames and form actions).",
    },
    ArtifactSpec {
        artifact: Artifact::Screenshot,
        token: "screenshot",
        file: FileName::PerFormat(&[
            ("png", "page.png"),
            ("jpeg", "page.jpg"),
            ("webp", "page.webp"),
        ]),
        browser_only: true,
        browser_default: true,
        http_default: false,
        families: CHROMIUM_ONLY,
        sensitive: false,
        summary: "A full-page screenshot.",
    },
    ArtifactSpec {
        artifact: Artifact::Pdf,
        token: "pdf",
        file: FileName::Fixed("page.pdf"),
        browser_only: true,
        browser_default: false,
        http_default: false,
        families: CHROMIUM_ONLY,
        sensitive: false,
        summary:
            "The rendered page printed to PDF (background graphics, the page's CSS page size).",
    },
    ArtifactSpec {
        artifact: Artifact::Network,
        token: "network",
        file: FileName::Fixed("network.json"),
        browser_only: false,
        browser_default: true,
        http_default: false,
        families: ALL_FAMILIES,
        sensitive: false,
        summary: "Every request hop (HTTP) or every request the page made (browser).",
    },
    ArtifactSpec {
        artifact: Artifact::Console,
        token: "console",
        file: FileName::Fixed("console.json"),
        browser_only: true,
        browser_default: true,
        http_default: false,
        families: ALL_FAMILIES,
        sensitive: false,
        summary: "Console messages and uncaught exceptions.",
    },
    ArtifactSpec {
        artifact: Artifact::Observation,
        token: "observation",
        file: FileName::Fixed("observation.json"),
        browser_only: true,
        browser_default: true,
        http_default: false,
        families: ALL_FAMILIES,
        sensitive: false,
        summary: "What the page offers to act on: roles, names, states, boxes (a DOM walk).",
    },
    ArtifactSpec {
        artifact: Artifact::Storage,
        token: "storage",
        file: FileName::Fixed("storage.json"),
        browser_only: true,
        browser_default: false,
        http_default: false,
        families: CHROMIUM_ONLY,
        sensitive: true,
        summary: "localStorage, sessionStorage and IndexedDB database names.",
    },
];

impl Artifact {
    /// Every artifact in canonical (registry) order.
    pub fn all() -> impl Iterator<Item = Artifact> {
        REGISTRY.iter().map(|s| s.artifact)
    }

    /// What a browser render writes when `--want` is not given.
    pub fn browser_default() -> Vec<Artifact> {
        REGISTRY
            .iter()
            .filter(|s| s.browser_default)
            .map(|s| s.artifact)
            .collect()
    }

    /// What the plain HTTP path writes when `--want` is not given.
    pub fn http_default() -> Vec<Artifact> {
        REGISTRY
            .iter()
            .filter(|s| s.http_default)
            .map(|s| s.artifact)
            .collect()
    }

    /// This artifact's registry row.
    pub fn spec(self) -> &'static ArtifactSpec {
        REGISTRY
            .iter()
            .find(|s| s.artifact == self)
            // Every variant has a row (a unit test checks it); the first row is a safe fallback.
            .unwrap_or(&REGISTRY[0])
    }

    /// The token string.
    pub fn as_str(self) -> &'static str {
        self.spec().token
    }

    /// Whether only a browser can produce it (the HTTP path projects the rest).
    pub fn browser_only(self) -> bool {
        self.spec().browser_only
    }

    /// Whether a backend of engine `family` can produce it; an unknown family is assumed
    /// capable (a user-launched CDP browser: whatever it implements).
    pub fn supported_by(self, family: Option<&str>) -> bool {
        match family {
            Some(f) if FAMILIES.contains(&f) => self.spec().families.contains(&f),
            _ => true,
        }
    }

    /// The file name for a fixed-name artifact, or for the default format of a per-format
    /// one. `body` needs [`Artifact::file_name_for`] (its extension comes from the
    /// content type); here it is `body.bin`.
    pub fn file_name(self) -> String {
        self.file_name_for(None, None)
    }

    /// The file name, given the output `format` (per-format artifacts; `None` = the default)
    /// and the response's `content_type` (content-type-named artifacts).
    pub fn file_name_for(self, format: Option<&str>, content_type: Option<&str>) -> String {
        match self.spec().file {
            FileName::Fixed(name) => name.to_string(),
            FileName::ContentTypeExt { stem } => {
                format!(
                    "{stem}.{}",
                    crate::sdk::content_type::extension(content_type)
                )
            }
            FileName::PerFormat(files) => format
                .and_then(|f| files.iter().find(|(fmt, _)| *fmt == f))
                .or(files.first())
                .map(|(_, file)| (*file).to_string())
                .unwrap_or_default(),
        }
    }

    /// Parse a comma-separated `--want` list; duplicates are folded.
    pub fn parse_list(list: &str) -> Result<Vec<Artifact>, AfError> {
        let mut out: Vec<Artifact> = Vec::new();
        for token in list.split(',').map(str::trim) {
            if token.is_empty() {
                return Err(AfError::invalid("want has an empty artifact name").with_field("want"));
            }
            let a = token.parse::<Artifact>()?;
            if !out.contains(&a) {
                out.push(a);
            }
        }
        Ok(out)
    }
}

impl FromStr for Artifact {
    type Err = AfError;
    fn from_str(s: &str) -> Result<Self, AfError> {
        REGISTRY
            .iter()
            .find(|spec| spec.token == s)
            .map(|spec| spec.artifact)
            .ok_or_else(|| {
                AfError::invalid(format!(
                    "unknown artifact {s:?}; expected one of: {}",
                    tokens().join(",")
                ))
            })
    }
}

/// Every token, in registry order.
pub fn tokens() -> Vec<&'static str> {
    REGISTRY.iter().map(|s| s.token).collect()
}

/// The `--want` help text.
pub fn want_help() -> String {
    let opt_in: Vec<&str> = REGISTRY
        .iter()
        .filter(|s| s.sensitive)
        .map(|s| s.token)
        .collect();
    format!(
        "Artifacts to write, comma-separated: {} (default: body over plain HTTP; with a \
         browser render {}; opt-in only: {}). content.md keeps absolute URLs; an agent \
         reading files asks for lean: lean.md, the same text with links as [text][n] (n an \
         entry of links.json) and no image URLs, in about half the tokens",
        tokens().join(","),
        Artifact::browser_default()
            .iter()
            .map(|a| a.as_str())
            .collect::<Vec<_>>()
            .join(","),
        opt_in.join(","),
    )
}

/// The artifact table of `docs/reference.md` (a unit test keeps the checked-in copy equal).
pub fn docs_table() -> String {
    let mut t = String::from(
        "| Token | File | Browser only | Default (HTTP / browser) | Backends | Notes |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for s in REGISTRY {
        let file = match s.file {
            FileName::Fixed(f) => format!("`{f}`"),
            FileName::ContentTypeExt { stem } => format!("`{stem}.<ext>`"),
            FileName::PerFormat(files) => files
                .iter()
                .map(|(fmt, f)| format!("`{f}` ({fmt})"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        let default = if s.sensitive {
            "opt-in (sensitive)".to_string()
        } else {
            format!("{} / {}", yes_no(s.http_default), yes_no(s.browser_default))
        };
        let backends = if s.families == ALL_FAMILIES {
            "all".to_string()
        } else {
            s.families.join(", ")
        };
        let _ = writeln!(
            t,
            "| `{}` | {file} | {} | {default} | {backends} | {} |",
            s.token,
            yes_no(s.browser_only),
            s.summary
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVERY_VARIANT: [Artifact; 13] = [
        Artifact::Body,
        Artifact::RenderedHtml,
        Artifact::Text,
        Artifact::Content,
        Artifact::ContentJson,
        Artifact::Lean,
        Artifact::Links,
        Artifact::Screenshot,
        Artifact::Pdf,
        Artifact::Network,
        Artifact::Console,
        Artifact::Observation,
        Artifact::Storage,
    ];

    #[test]
    fn every_variant_has_exactly_one_row_and_unique_names() {
        for a in EVERY_VARIANT {
            assert_eq!(
                REGISTRY.iter().filter(|s| s.artifact == a).count(),
                1,
                "{a:?}"
            );
        }
        assert_eq!(REGISTRY.len(), EVERY_VARIANT.len());
        let mut toks = tokens();
        toks.sort_unstable();
        toks.dedup();
        assert_eq!(toks.len(), REGISTRY.len(), "duplicate token");
        let mut files: Vec<String> = REGISTRY
            .iter()
            .flat_map(|s| match s.file {
                FileName::PerFormat(f) => f.iter().map(|(_, n)| n.to_string()).collect(),
                _ => vec![s.artifact.file_name()],
            })
            .collect();
        let n = files.len();
        files.sort();
        files.dedup();
        assert_eq!(files.len(), n, "duplicate file name");
        for s in REGISTRY {
            assert!(
                !(s.sensitive && (s.browser_default || s.http_default)),
                "{} is sensitive, so it cannot be in a default set",
                s.token
            );
            assert!(
                !(s.browser_only && s.http_default),
                "{} is browser-only but in the HTTP default set",
                s.token
            );
            assert!(s.families.iter().all(|f| FAMILIES.contains(f)));
        }
    }

    #[test]
    fn want_parser_reads_the_registry() {
        for s in REGISTRY {
            assert_eq!(s.token.parse::<Artifact>().unwrap(), s.artifact);
            assert_eq!(s.artifact.as_str(), s.token);
            // The serde name (the SDK's JSON) is the token too.
            assert_eq!(serde_json::to_value(s.artifact).unwrap(), s.token);
        }
        assert_eq!(
            Artifact::parse_list("body,text,body").unwrap(),
            vec![Artifact::Body, Artifact::Text]
        );
        assert!(Artifact::parse_list("body,,text").is_err());
        let e = Artifact::parse_list("html").unwrap_err();
        assert!(e.message.contains(&tokens().join(",")), "{}", e.message);
    }

    #[test]
    fn default_sets_and_browser_only() {
        assert_eq!(Artifact::http_default(), vec![Artifact::Body]);
        let browser = Artifact::browser_default();
        assert!(browser.contains(&Artifact::Screenshot) && !browser.contains(&Artifact::Storage));
        assert!(Artifact::Screenshot.browser_only());
        assert!(!Artifact::Content.browser_only());
    }

    #[test]
    fn file_names_by_format_and_content_type() {
        assert_eq!(Artifact::Screenshot.file_name(), "page.png");
        assert_eq!(
            Artifact::Screenshot.file_name_for(Some("png"), None),
            "page.png"
        );
        assert_eq!(Artifact::Content.file_name(), "content.md");
        assert_eq!(
            Artifact::Body.file_name_for(None, Some("text/html; charset=utf-8")),
            "body.html"
        );
    }

    #[test]
    fn backend_subsets_follow_spec_section_10() {
        for f in ["lightpanda", "firefox"] {
            assert!(!Artifact::Screenshot.supported_by(Some(f)));
            assert!(!Artifact::Storage.supported_by(Some(f)));
            assert!(!Artifact::Pdf.supported_by(Some(f)));
            assert!(Artifact::Observation.supported_by(Some(f)));
            assert!(Artifact::Content.supported_by(Some(f)));
        }
        assert!(Artifact::all().all(|a| a.supported_by(Some("chromium"))));
        assert!(Artifact::all().all(|a| a.supported_by(None)));
    }

    #[test]
    fn help_names_every_token() {
        let help = want_help();
        for t in tokens() {
            assert!(help.contains(t), "{t} missing from {help}");
        }
    }

    #[test]
    fn reference_docs_carry_the_generated_table() {
        let docs = include_str!("../../docs/reference.md");
        let table = docs_table();
        assert!(
            docs.contains(&table),
            "docs/reference.md's artifact table is stale; replace it with:\n{table}"
        );
    }
}
