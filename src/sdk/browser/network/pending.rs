//! Requests still open: which ones hold up `--wait auto` (first-party work the page waits
//! on) and how the warnings name the stuck ones (by host and type).

use serde_json::{json, Value};
use url::Url;

use super::{CaptureSnapshot, NetworkLog, State, STREAMING_TYPES};
use crate::error::{ErrorCode, Warning};
use crate::sdk::fetch::takeover::site_of;
use crate::sdk::redact;

/// Resource types whose first-party requests keep `--wait auto` waiting: the page's own data
/// and code. Images, fonts, media and beacons do not: they do not change what the page says.
/// A first-party WebSocket holds it until its handshake is answered (the page's own wait
/// for an answer on it is seen by the page-side probe).
const SETTLE_TYPES: &[&str] = &[
    "XHR",
    "Fetch",
    "Script",
    "EventSource",
    "Document",
    "WebSocket",
];

/// One request that has started and not finished or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRequest {
    /// The URL, redacted.
    pub url: String,
    /// `host[:port]` of the URL.
    pub host: String,
    /// The CDP resource type (`Script`, `XHR`, `Image`, ...).
    pub resource_type: String,
    /// Same registrable domain as the main document.
    pub first_party: bool,
    /// The response headers arrived (the body is still coming).
    pub responded: bool,
}

impl PendingRequest {
    /// Whether this request keeps `--wait auto` waiting: first-party, of a settle type, and
    /// not a stream that already answered (an open EventSource never finishes).
    pub fn holds_settle(&self) -> bool {
        self.first_party
            && SETTLE_TYPES.contains(&self.resource_type.as_str())
            && !(self.resource_type == "EventSource" && self.responded)
    }

    /// Whether this is the page's own open event stream: what it brings next is content
    /// no idle evidence can foresee, so only the settle window may end the wait.
    pub fn is_own_stream(&self) -> bool {
        self.first_party && self.resource_type == "EventSource"
    }

    /// The trace form.
    pub fn to_json(&self, parser_blocking: bool) -> Value {
        json!({
            "host": self.host,
            "type": self.resource_type,
            "url": self.url,
            "first_party": self.first_party,
            "responded": self.responded,
            "parser_blocking": parser_blocking,
        })
    }
}

/// `host[:port]` of a URL, or the URL itself when it has none.
pub fn host_of(url: &str) -> String {
    match Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => redact::url(url),
        },
        Err(_) => redact::url(url),
    }
}

/// Whether `url` is on the same site (registrable domain) as `site`.
pub fn is_first_party(url: &str, site: Option<&str>) -> bool {
    let Some(site) = site else {
        return true;
    };
    Url::parse(url)
        .ok()
        .and_then(|u| site_of(&u))
        .is_none_or(|s| s == site)
}

impl NetworkLog {
    /// The main document's site, once it is known.
    pub fn document_site(&self) -> Option<String> {
        let d = self.document()?;
        site_of(&Url::parse(&d.url).ok()?)
    }

    /// A request ends (finished or failed): when it is one that holds `--wait auto`, this is
    /// when the page's last own response came. The main document is not one: its parse is
    /// its own evidence (DOMContentLoaded comes after its last byte), and its
    /// `loadingFinished` may come after that.
    pub(super) fn note_end(&mut self, cdp_id: &str) {
        if self.document.as_deref() == Some(cdp_id) {
            return;
        }
        let site = self.document_site();
        let Some(e) = self
            .chains
            .get(cdp_id)
            .and_then(|h| h.last())
            .and_then(|&i| self.entries.get(i))
        else {
            return;
        };
        if SETTLE_TYPES.contains(&e.resource_type.as_str())
            && is_first_party(&e.url, site.as_deref())
        {
            self.settle_done_at = Some(std::time::Instant::now());
        }
    }

    /// Milliseconds since the last first-party data or code request other than the main
    /// document ended; `None` before any did.
    pub fn settle_quiet_ms(&self) -> Option<u64> {
        self.settle_done_at
            .map(|t| u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX))
    }

    /// Every open request except the main document, oldest first. A WebSocket is open
    /// until its handshake is answered.
    pub fn pending(&self) -> Vec<PendingRequest> {
        let site = self.document_site();
        let doc = self.document().map(|d| d.id.clone());
        let mut out: Vec<(f64, PendingRequest)> = self
            .open_entries()
            .filter(|e| e.resource_type != "WebSocket" && Some(&e.id) != doc.as_ref())
            .chain(
                self.entries
                    .iter()
                    .filter(|e| e.resource_type == "WebSocket" && e.state == State::Pending),
            )
            .map(|e| {
                (
                    e.sent_at.unwrap_or(0.0),
                    PendingRequest {
                        url: redact::url(&e.url),
                        host: host_of(&e.url),
                        resource_type: e.resource_type.clone(),
                        first_party: is_first_party(&e.url, site.as_deref()),
                        responded: e.state == State::Responded,
                    },
                )
            })
            .collect();
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out.into_iter().map(|(_, p)| p).collect()
    }
}

/// `network_not_idle` and `pending_xhr_at_capture` for a snapshot; both name the stuck
/// requests (by type and host, XHR/fetch by URL).
pub fn readiness_warnings(snap: &CaptureSnapshot) -> Vec<Warning> {
    const SHOWN: usize = 5;
    let shown = |list: &[String]| {
        let mut out: Vec<String> = list.iter().take(SHOWN).cloned().collect();
        if list.len() > SHOWN {
            out.push(format!("and {} more", list.len() - SHOWN));
        }
        out.join(", ")
    };
    let mut out = Vec::new();
    if snap.not_idle > 0 {
        let by_type: Vec<String> = snap
            .pending_by_resource_type
            .iter()
            .filter(|(t, _)| !STREAMING_TYPES.contains(&t.as_str()))
            .map(|(t, n)| format!("{t}: {n}"))
            .collect();
        let named = if snap.pending_named.is_empty() {
            String::new()
        } else {
            format!(": {}", shown(&snap.pending_named))
        };
        out.push(Warning::general(
            ErrorCode::NetworkNotIdle,
            format!(
                "{} request(s) still in flight at capture ({}){named}",
                snap.not_idle,
                by_type.join(", ")
            ),
        ));
    }
    if !snap.pending_xhr.is_empty() {
        out.push(Warning::general(
            ErrorCode::PendingXhrAtCapture,
            format!(
                "{} XHR/fetch request(s) still in flight at capture: {}",
                snap.pending_xhr.len(),
                shown(&snap.pending_xhr)
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_party_is_the_document_site() {
        let site = Some("example.com");
        assert!(is_first_party("https://cdn.example.com/a.js", site));
        assert!(!is_first_party("https://ads.other.net/a.js", site));
        assert!(is_first_party("http://127.0.0.1:9/x", Some("127.0.0.1")));
        assert!(!is_first_party("http://127.0.0.2:9/x", Some("127.0.0.1")));
        assert!(is_first_party("data:text/plain,x", site));
        assert_eq!(host_of("http://127.0.0.2:4000/a.js"), "127.0.0.2:4000");
    }

    #[test]
    fn only_first_party_page_work_holds_the_settle() {
        let p = |t: &str, first_party: bool, responded: bool| PendingRequest {
            url: String::new(),
            host: String::new(),
            resource_type: t.into(),
            first_party,
            responded,
        };
        assert!(p("XHR", true, false).holds_settle());
        assert!(p("Script", true, true).holds_settle());
        assert!(!p("Script", false, false).holds_settle());
        assert!(!p("Image", true, false).holds_settle());
        assert!(p("EventSource", true, false).holds_settle());
        assert!(!p("EventSource", true, true).holds_settle());
    }
}
