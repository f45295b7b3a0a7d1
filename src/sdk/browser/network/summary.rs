//! The `summary` object of `network.json`, shared by the HTTP and browser paths.

use std::collections::BTreeMap;

use serde_json::{json, Value};

/// The counts every `network.json` summary carries. `entries` yields each entry's state
/// (`pending`, `responded`, `finished`, `failed`) and whether it has a response.
pub fn summary<'a>(
    entries: impl Iterator<Item = (&'a str, bool)>,
    inflight_total_at_capture: usize,
    pending_by_resource_type: &BTreeMap<String, usize>,
    redacted: bool,
) -> Value {
    let (mut total, mut responses, mut finished, mut failed) = (0, 0, 0, 0);
    for (state, responded) in entries {
        total += 1;
        responses += usize::from(responded);
        match state {
            "finished" => finished += 1,
            "failed" => failed += 1,
            _ => {}
        }
    }
    json!({
        "requests_total": total,
        "responses_total": responses,
        "finished_total": finished,
        "failed_total": failed,
        "incomplete_total": total - finished - failed,
        "inflight_total_at_capture": inflight_total_at_capture,
        "pending_by_resource_type": pending_by_resource_type,
        "redacted": redacted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        let mut pending = BTreeMap::new();
        pending.insert("XHR".to_string(), 1);
        let v = summary(
            [
                ("finished", true),
                ("failed", false),
                ("responded", true),
                ("pending", false),
            ]
            .into_iter(),
            2,
            &pending,
            true,
        );
        assert_eq!(v["requests_total"], 4);
        assert_eq!(v["responses_total"], 2);
        assert_eq!(v["finished_total"], 1);
        assert_eq!(v["failed_total"], 1);
        assert_eq!(v["incomplete_total"], 2);
        assert_eq!(v["inflight_total_at_capture"], 2);
        assert_eq!(v["pending_by_resource_type"]["XHR"], 1);
    }
}
