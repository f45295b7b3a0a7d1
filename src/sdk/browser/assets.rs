//! Page-side JavaScript, kept in `assets/js/` and compiled into the binary.

/// Installs `window.__afhttpReady` (a DOM mutation counter with a `probe()`); idempotent.
pub const READINESS_JS: &str = include_str!("../../../assets/js/readiness.js");

/// The `sourceURL` `READINESS_JS` names itself by (its last line): its frames appear in
/// request initiator stacks, and `network.json` leaves them out.
pub const READINESS_SOURCE_URL: &str = "__page_readiness__.js";

/// Evaluates to `{html, url, truncated}`: the rendered DOM as one HTML document, open shadow
/// roots and same-origin frames flattened in, for the Rust content projection.
pub const FLATTEN_JS: &str = include_str!("../../../assets/js/flatten.js");

/// Evaluates (with `awaitPromise`) to the storage snapshot.
pub const STORAGE_JS: &str = include_str!("../../../assets/js/storage.js");

/// Evaluates to the observation snapshot.
pub const OBSERVATION_JS: &str = include_str!("../../../assets/js/observation.js");

/// A function of a selector chain (`afhttp upload`): the matched `<input type=file>`, or a
/// failure string `kind:detail`.
pub const UPLOAD_TARGET_JS: &str = include_str!("../../../assets/js/upload_target.js");

/// Evaluates to the readiness probe result, or `null` when the counter is missing.
pub const READINESS_PROBE: &str = "window.__afhttpReady ? window.__afhttpReady.probe() : null";

/// Evaluates to the serialized document: doctype plus `outerHTML`.
pub const RENDERED_HTML: &str = "(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + '\\n' : '') + (document.documentElement ? document.documentElement.outerHTML : '')";

/// Evaluates to `document.body.innerText`.
pub const BODY_TEXT: &str = "document.body ? document.body.innerText : ''";

/// An expression: whether `css` matches (`visible`: with a box and not hidden).
pub fn selector_probe(css: &str, visible: bool) -> String {
    let quoted = serde_json::Value::String(css.to_string()).to_string();
    if visible {
        format!(
            "(function(){{var el=document.querySelector({quoted});if(!el)return false;\
             var r=el.getBoundingClientRect();var cs=getComputedStyle(el);\
             return r.width>0&&r.height>0&&cs.visibility!=='hidden'&&cs.display!=='none';}})()"
        )
    } else {
        format!("!!document.querySelector({quoted})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readiness_script_names_itself_by_its_source_url() {
        let last = READINESS_JS.trim_end().lines().last().unwrap_or_default();
        assert_eq!(last, format!("//# sourceURL={READINESS_SOURCE_URL}"));
    }
}
