//! The other-site hosts a page's markup names for scripts and stylesheets, read as soon as
//! the main document has arrived, so the in-place stall cut ([`super::stall_hold`]) probes
//! all of them at once instead of each when the parser reaches it: a chain of
//! parser-blocking scripts from stalled hosts then costs one window, not one each.
//!
//! The document is not held for this: its body is read (`Network.getResponseBody`) once the
//! browser has it whole (`loadingFinished`), while the parser goes on.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};
use url::Url;

use super::network::entry::State;
use super::network::pending::{host_of, is_first_party};
use super::session::{lock, Shared};
use crate::sdk::cdp::CdpConnection;

/// The most hosts probed up front for one page (each probe is one request).
pub const MAX_HOSTS: usize = 32;

/// How often the network log is looked at for the document's end.
const POLL: Duration = Duration::from_millis(20);

/// Longest wait for the document to finish loading; past it, hosts are probed as the
/// parser meets them.
const DOCUMENT_WAIT: Duration = Duration::from_secs(10);

/// The hosts named by the document, each with the first URL naming it, and the frame to
/// probe them from.
#[derive(Debug, Default)]
pub struct Named {
    /// `(host[:port], url)`, in document order.
    pub hosts: Vec<(String, String)>,
    /// The main frame's id.
    pub frame_id: String,
}

/// Wait for the main document to finish loading, read it and name its other-site script and
/// stylesheet hosts (`None` when the document fails, is not readable or never ends).
pub async fn named_hosts(conn: &CdpConnection, session: &str, state: &Shared) -> Option<Named> {
    let started = std::time::Instant::now();
    let (request_id, url, frame_id) = loop {
        let doc = {
            let st = lock(state);
            st.network.document().map(|d| {
                let ids = (d.cdp_request_id.clone(), d.url.clone(), d.frame_id.clone());
                (d.state, ids)
            })
        };
        match doc {
            Some((State::Finished, ids)) => break ids,
            Some((State::Failed, _)) => return None,
            _ if started.elapsed() > DOCUMENT_WAIT => return None,
            _ => tokio::time::sleep(POLL).await,
        }
    };
    let params = json!({ "requestId": request_id });
    let body = conn
        .send(
            Some(session),
            "Network.getResponseBody",
            params,
            DOCUMENT_WAIT,
        )
        .await
        .ok()?;
    let html = decode(&body)?;
    let doc_url = Url::parse(&url).ok()?;
    let site = crate::sdk::fetch::takeover::site_of(&doc_url);
    let hosts = tokio::task::spawn_blocking(move || other_site(&html, &doc_url, site.as_deref()))
        .await
        .ok()?;
    Some(Named { hosts, frame_id })
}

fn decode(body: &Value) -> Option<String> {
    let raw = body["body"].as_str()?;
    match body["base64Encoded"].as_bool().unwrap_or(false) {
        true => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(raw).ok()?;
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
        false => Some(raw.to_string()),
    }
}

/// The hosts of another site than `site` among the document's scripts and stylesheets,
/// each once with its first URL, at most [`MAX_HOSTS`].
pub fn other_site(html: &str, doc_url: &Url, site: Option<&str>) -> Vec<(String, String)> {
    let urls = crate::sdk::html::ParsedHtml::parse(html).scripts_and_stylesheets(doc_url);
    let mut out: Vec<(String, String)> = Vec::new();
    for url in urls {
        let url = String::from(url);
        let host = host_of(&url);
        if is_first_party(&url, site) || out.iter().any(|(h, _)| *h == host) {
            continue;
        }
        out.push((host, url));
        if out.len() == MAX_HOSTS {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_site_hosts_are_named_once_each_and_first_party_left_out() {
        let doc = Url::parse("http://www.news.example/a/page.html").unwrap();
        let html = r#"<script src="/own.js"></script>
            <script src="http://static.news.example/s.js"></script>
            <script src="http://ads.example:8080/one.js"></script>
            <link rel="stylesheet" href="http://fonts.example/f.css">
            <script src="http://ads.example:8080/two.js"></script>"#;
        let site = crate::sdk::fetch::takeover::site_of(&doc);
        assert_eq!(
            other_site(html, &doc, site.as_deref()),
            [
                (
                    "ads.example:8080".to_string(),
                    "http://ads.example:8080/one.js".to_string()
                ),
                (
                    "fonts.example".to_string(),
                    "http://fonts.example/f.css".to_string()
                ),
            ]
        );
    }

    #[test]
    fn at_most_max_hosts_are_named() {
        let doc = Url::parse("http://127.0.0.1/").unwrap();
        let html: String = (0..MAX_HOSTS + 5)
            .map(|i| format!("<script src=\"http://h{i}.example/x.js\"></script>"))
            .collect();
        assert_eq!(other_site(&html, &doc, Some("127.0.0.1")).len(), MAX_HOSTS);
    }
}
