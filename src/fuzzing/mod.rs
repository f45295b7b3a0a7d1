//! Fuzz bodies: one function per `cargo fuzz` target, shared with the stable replay and
//! property tests so both run exactly the same code and invariants.
//!
//! Each body takes arbitrary bytes and must return normally for every input; the asserts
//! inside state the target's invariants, so a failed assert is a bug in the function under
//! test (or in the invariant). Not part of the supported API: hidden from the docs and free
//! to change with the fuzz targets.

pub mod cookies;
pub mod html;
pub mod inputs;
#[cfg(feature = "pdf")]
pub mod pdf;

use std::borrow::Cow;

/// A fuzz body: raw input bytes in, a panic only on a bug.
pub type Body = fn(&[u8]);

/// Every target by name: `fuzz/fuzz_targets/<name>.rs` and `fuzz/corpus/<name>/` use it.
pub const TARGETS: &[(&str, Body)] = &[
    ("set_cookie", cookies::set_cookie),
    ("cookie_jar", cookies::cookie_jar),
    ("wait_spec", inputs::wait_spec),
    ("endpoint", inputs::endpoint),
    ("header", inputs::header),
    ("profile_name", inputs::profile_name),
    ("html_content", html::html_content),
    #[cfg(feature = "pdf")]
    ("pdf_text", pdf::pdf_text),
];

/// The body registered for target `name`.
pub fn target(name: &str) -> Option<Body> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// Input bytes as text the way an argument or header reaches the parsers: lossily decoded,
/// so invalid UTF-8 still exercises them (as U+FFFD) instead of being thrown away.
pub fn text(data: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(data)
}
