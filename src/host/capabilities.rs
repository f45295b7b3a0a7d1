//! What each backend can produce, for `/capabilities` (descriptive, not a reservation).

use serde_json::{json, Map, Value};

use crate::profile::Backend;
use crate::sdk::artifact::{Artifact, REGISTRY};

/// The `/capabilities` document for `backend` (browser `version` when known).
pub fn document(backend: Backend, version: Option<&str>, takeover_provider: Option<&str>) -> Value {
    let family = backend.family();
    json!({
        "code": "capabilities",
        "backend": {"family": family, "name": backend.as_str(), "version": version},
        "artifacts": artifacts(family),
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

/// The observation artifact's source: a DOM walk that reads ARIA attributes
/// (`assets/js/observation.js`); the browser's accessibility tree is not read.
pub const OBSERVATION_SOURCE: &str = "dom+aria_attributes";

/// One entry per registry row: `supported` for this engine family, plus per-artifact detail.
fn artifacts(family: &str) -> Value {
    let mut m = Map::new();
    for spec in REGISTRY {
        let supported = spec.artifact.supported_by(Some(family));
        let mut v = json!({"supported": supported});
        match spec.artifact {
            Artifact::Network => {
                v["body_capture"] = if family == "chromium" {
                    json!(["off", "xhr", "all"])
                } else {
                    json!(["off"])
                };
            }
            Artifact::Observation => v["source"] = json!(OBSERVATION_SOURCE),
            _ => {}
        }
        if spec.sensitive {
            v["opt_in"] = json!(true);
        }
        m.insert(spec.token.to_string(), v);
    }
    Value::Object(m)
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

    #[test]
    fn artifacts_come_from_the_registry() {
        for backend in Backend::ALL.iter().copied() {
            let doc = document(backend, None, None);
            let listed = doc["artifacts"].as_object().unwrap();
            assert_eq!(listed.len(), REGISTRY.len());
            for spec in REGISTRY {
                assert_eq!(
                    listed[spec.token]["supported"],
                    spec.artifact.supported_by(Some(backend.family())),
                    "{} on {}",
                    spec.token,
                    backend.as_str()
                );
            }
        }
        // The Lightpanda fetch filter and /capabilities agree on storage (spec §10).
        let l = document(Backend::Lightpanda, None, None);
        assert_eq!(l["artifacts"]["storage"]["supported"], false);
        assert!(!Artifact::Storage.supported_by(Some("lightpanda")));
        assert_eq!(l["artifacts"]["storage"]["opt_in"], true);
        assert_eq!(
            document(Backend::Chromium, None, None)["artifacts"]["observation"]["source"],
            OBSERVATION_SOURCE
        );
    }
}
