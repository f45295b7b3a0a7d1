//! What each backend can produce, for `/capabilities` (descriptive, not a reservation).

use serde_json::{json, Value};

use crate::profile::Backend;

/// The `/capabilities` document for `backend` (browser `version` when known).
pub fn document(backend: Backend, version: Option<&str>, takeover_provider: Option<&str>) -> Value {
    let family = backend.family();
    let full = family == "chromium";
    let sup = |yes: bool| json!({"supported": yes});
    json!({
        "code": "capabilities",
        "backend": {"family": family, "name": backend.as_str(), "version": version},
        "artifacts": {
            "body": sup(true),
            "rendered_html": sup(true),
            "text": sup(true),
            "content": sup(true),
            "content_json": sup(true),
            "screenshot": sup(full),
            "network": {"supported": true, "body_capture": if full { json!(["off", "xhr", "all"]) } else { json!(["off"]) }},
            "console": sup(true),
            "observation": {"supported": true, "source": if full { "accessibility+dom" } else { "dom" }},
            "storage": sup(full),
        },
        "wait_modes": ["auto", "load", "idle", "selector", "selector-visible", "ms"],
        "takeover": {
            "backend_capable": backend != Backend::Lightpanda,
            "supported": takeover_provider.is_some(),
            "panel_url": takeover_provider.map(|_| "/takeover/panel"),
            "provider": takeover_provider,
        },
        "profile": {"persistent": backend.supports_persistent_profiles(), "ephemeral": true},
        "limits": {"network_body_max_bytes_default": 10 * 1024 * 1024},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truthful_per_backend() {
        let c = document(Backend::Chromium, Some("156"), None);
        assert_eq!(c["artifacts"]["screenshot"]["supported"], true);
        assert_eq!(c["takeover"]["supported"], false);
        let l = document(Backend::Lightpanda, None, None);
        assert_eq!(l["artifacts"]["screenshot"]["supported"], false);
        assert_eq!(l["takeover"]["backend_capable"], false);
        let f = document(Backend::Camoufox, None, Some("kasmvnc"));
        assert_eq!(f["profile"]["persistent"], false);
        assert_eq!(f["takeover"]["panel_url"], "/takeover/panel");
    }
}
