//! The browser half of a fetch: find a browser (the `--endpoint-url` host, or an inline
//! ephemeral host started on first need), run the CDP fetch, and merge cookies back.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::cdp::CdpConnection;
use crate::sdk::client::Client;
use crate::sdk::cookies::Cookie;
use crate::sdk::fetch::browser_cookies::{
    forget_request_cookies, is_request_cookie, read_browser_cookies,
};
use crate::sdk::fetch::outcome::{FetchOutcome, Trace};
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::takeover;
use crate::sdk::fetch::FetchRequest;
use crate::sdk::launcher::{LaunchedBrowser, Launcher};
use crate::sdk::request::Artifact;

/// Where browser work goes for one fetch; the inline host starts lazily and lives until drop.
#[derive(Default)]
pub struct BrowserSlot {
    client: Option<Arc<Client>>,
    /// `backend.family` from the host's `/health` (`None` when unknown).
    family: Option<String>,
    /// Whether `family` was asked for yet.
    family_known: bool,
    /// The persistent profile's implicit jar, once the host was found to run the profile
    /// from this machine's store ([`super::profile_jar`]).
    implicit_jar: Option<std::path::PathBuf>,
    /// Whether the implicit jar was looked for yet.
    implicit_jar_checked: bool,
    /// The throwaway browser this slot launched for this fetch alone.
    inline: Option<Box<dyn LaunchedBrowser>>,
    /// Clean-ups of successful attempts (closing their tabs), run by [`Self::shutdown`].
    after: Vec<futures_util::future::BoxFuture<'static, ()>>,
}

impl BrowserSlot {
    /// Browser work on `client`'s host and connection (see [`Client::sharing_connection`]).
    pub fn sharing(client: Client) -> BrowserSlot {
        BrowserSlot {
            client: Some(Arc::new(client)),
            ..BrowserSlot::default()
        }
    }

    /// The CDP connection, starting an inline host when no endpoint was given.
    pub async fn connection(
        &mut self,
        req: &FetchRequest,
        trace: &mut Trace,
    ) -> Result<Arc<CdpConnection>, AfError> {
        let connect_started = std::time::Instant::now();
        if !self.started_inline() && (req.endpoint.is_some() || self.client.is_some()) {
            check_host_transport(req)?;
        }
        let client = match &self.client {
            Some(c) => Arc::clone(c),
            None => {
                let client = match &req.endpoint {
                    Some(ep) => Client::new(ep.clone())
                        .with_token(req.token.clone())
                        .with_profile(req.browser.profile.clone()),
                    None => self.start_inline(req, trace).await?,
                };
                let request_id = trace
                    .get("request_id")
                    .and_then(Value::as_str)
                    .map(String::from);
                let client = Arc::new(client.with_timeout(req.timeout).with_request_id(request_id));
                // Before the first `/cdp` connection, which switches the host's profile.
                if req.browser.takeover {
                    takeover::require_takeover_host(&client).await?;
                }
                self.client = Some(Arc::clone(&client));
                client
            }
        };
        if !self.family_known {
            self.family_known = true;
            if let Some(h) = &self.inline {
                self.family = h.family().map(String::from);
            }
            if self.family.is_none() {
                self.family = client.health().await.ok().and_then(|h| {
                    h.pointer("/backend/family")
                        .and_then(Value::as_str)
                        .map(String::from)
                });
            }
        }
        let conn = client.cdp_connection().await;
        trace.timing(
            "host_connect",
            connect_started.elapsed().as_secs_f64() * 1000.0,
        );
        conn
    }

    /// The cookie jar this fetch reads and updates: the named one, else the persistent
    /// profile's implicit jar when its directory is on this machine.
    pub fn jar_path(&self, req: &FetchRequest) -> Option<std::path::PathBuf> {
        req.cookie_jar.clone().or_else(|| self.implicit_jar.clone())
    }

    /// Look for the implicit jar once, after the first connection switched the host to the
    /// profile; its cookies are returned to be installed with the request's own.
    async fn find_implicit_jar(
        &mut self,
        req: &FetchRequest,
        trace: &mut Trace,
    ) -> Result<Vec<Cookie>, AfError> {
        if self.implicit_jar_checked || req.cookie_jar.is_some() || !req.implicit_jar {
            return Ok(Vec::new());
        }
        self.implicit_jar_checked = true;
        let (Some(name), Some(client), Some(store)) =
            (&req.browser.profile, &self.client, &req.profile_store)
        else {
            return Ok(Vec::new());
        };
        if self.started_inline() {
            return Ok(Vec::new());
        }
        let Some(path) = super::profile_jar::local_profile_jar(client, name, store).await else {
            return Ok(Vec::new());
        };
        let jar = crate::sdk::cookies::jar::read_jar_file(&path)?;
        trace.set("cookie_jar_file", json!(path));
        self.implicit_jar = Some(path);
        Ok(jar.cookies)
    }

    /// The third-party hosts that stalled in the host's recent fetches, to block from the
    /// start, and the ones that answered, to let go at once (none when cutting is off, or
    /// for a browser this fetch started: nothing came before it). A host that cannot say
    /// gives none.
    async fn remembered_stalls(&self, req: &FetchRequest) -> (Vec<(String, u64)>, Vec<String>) {
        match &self.client {
            Some(c) if !self.started_inline() && req.browser.stall_cutoff_ms > 0 => {
                c.stalled_hosts().await.unwrap_or_default()
            }
            _ => (Vec::new(), Vec::new()),
        }
    }

    /// Report the hosts this fetch cut for stalling and the ones that answered its probes
    /// (`trace.readiness.cuts`) to the host, for its next fetches; a host that cannot take
    /// them is left alone.
    async fn report_stalls(&self, req: &FetchRequest, trace: &Trace) {
        let Some(c) = self.client.as_ref().filter(|_| !self.started_inline()) else {
            return;
        };
        let cut = crate::sdk::browser::stall::cut_hosts(trace);
        let new: Vec<String> = cut
            .into_iter()
            .filter(|h| !req.browser.remembered_stalls.iter().any(|(r, _)| r == h))
            .collect();
        let answered = crate::sdk::browser::stall::answered_hosts(trace);
        if !new.is_empty() || !answered.is_empty() {
            let _ = c.report_stalled_hosts(&new, &answered).await;
        }
    }

    /// Whether this slot's browser is an inline host it started (for this fetch alone).
    fn started_inline(&self) -> bool {
        self.inline.is_some()
    }

    async fn start_inline(
        &mut self,
        req: &FetchRequest,
        trace: &mut Trace,
    ) -> Result<Client, AfError> {
        let started = std::time::Instant::now();
        let host = Launcher::launch_with(
            req.launcher.as_ref(),
            req.browser_bin.as_ref(),
            req.browser_family,
            &req.transport,
        )
        .await?;
        trace.timing(
            "inline_host_start",
            started.elapsed().as_secs_f64() * 1000.0,
        );
        trace.set("browser_host", json!("inline"));
        let mut client = Client::new(host.endpoint().clone());
        // Drive the browser over the host's own connection: the listener would only splice
        // a second WebSocket onto the same browser.
        if let Some(conn) = host.connection() {
            client = client.with_connection(conn);
        }
        self.inline = Some(host);
        Ok(client)
    }

    /// Whether the slot started an inline browser.
    pub fn has_inline(&self) -> bool {
        self.started_inline()
    }

    /// Close the attempts' tabs, then stop the inline host, if one was started; true when
    /// there was one.
    pub async fn shutdown(self) -> bool {
        for end in self.after {
            end.await;
        }
        if let Some(c) = &self.client {
            c.close().await;
        }
        match self.inline {
            Some(h) => {
                h.stop().await;
                true
            }
            None => false,
        }
    }
}

/// Refuse per-fetch transport options a host's browser cannot take (it serves other
/// fetches, and its proxy and trust store are set when it starts). Called before the first
/// browser connection that is not an inline browser of this fetch's own.
fn check_host_transport(req: &FetchRequest) -> Result<(), AfError> {
    let t = &req.transport;
    if t.proxy_url.is_some() {
        return Err(AfError::invalid(
            "proxy_url applies to this fetch's HTTP requests and inline browser, not to a host's browser",
        )
        .with_field("proxy_url")
        .with_hint("start the host with `afhttp host --proxy-url URL`, or drop endpoint_url to render in an inline browser"));
    }
    if t.tls_insecure {
        return Err(AfError::invalid(
            "tls_insecure cannot be applied to a host's browser per fetch",
        )
        .with_field("tls_insecure")
        .with_hint("configure the host (e.g. `afhttp host --browser-arg=--ignore-certificate-errors`), or drop endpoint_url to render in an inline browser"));
    }
    if t.ca_cert.is_some() {
        return Err(AfError::invalid(
            "ca_cert cannot be applied to a host's browser per fetch",
        )
        .with_field("ca_cert")
        .with_hint("add the CA to the trust store of the host's browser, or drop endpoint_url to render in an inline browser"));
    }
    Ok(())
}

/// Run one browser attempt; jar cookies are installed with the request's own.
pub async fn attempt(
    slot: &mut BrowserSlot,
    req: &FetchRequest,
    jar_cookies: &[Cookie],
    out: &mut OutDir,
    request_id: &str,
    trace: &mut Trace,
) -> Result<(FetchOutcome, Vec<Cookie>), AfError> {
    let started = std::time::Instant::now();
    let conn = slot.connection(req, trace).await?;
    let implicit = slot.find_implicit_jar(req, trace).await?;
    let mut with_jar = req.clone();
    // The attempt's --timeout-ms also covers starting the inline host and connecting: the
    // browser fetch gets what is left, so its own deadline (and the capture calls that end
    // before it) comes before the attempt's.
    with_jar.timeout = req
        .timeout
        .saturating_sub(started.elapsed())
        .max(std::time::Duration::from_millis(100));
    with_jar.browser.browser_discarded_after = slot.inline.is_some();
    (
        with_jar.browser.remembered_stalls,
        with_jar.browser.remembered_answers,
    ) = slot.remembered_stalls(req).await;
    with_jar.cookies = jar_cookies
        .iter()
        .cloned()
        .chain(implicit)
        .chain(req.cookies.iter().cloned())
        .collect();
    // What the backend cannot produce (the registry's backend subsets, spec §10) gets a
    // per-artifact warning, not a fake file.
    let family = slot.family.as_deref();
    let wanted = req.browser_artifacts();
    let (kept, skipped): (Vec<Artifact>, Vec<Artifact>) =
        wanted.into_iter().partition(|a| a.supported_by(family));
    if !skipped.is_empty() {
        with_jar.want = Some(kept);
    }
    let (fetched, tab_end) =
        crate::sdk::browser::fetch_in_tab(&conn, &with_jar, out, request_id, trace).await;
    slot.report_stalls(&with_jar, trace).await;
    // An isolated context (a fleet's ephemeral fetch) lives until its cookies are read.
    let context = trace
        .get("tab")
        .and_then(|t| t.get("browser_context_id"))
        .and_then(Value::as_str)
        .map(String::from);
    let result = finish_attempt(
        slot,
        req,
        &conn,
        fetched,
        skipped,
        context.as_deref(),
        out,
        trace,
    )
    .await;
    // Closing the tab and its context changes no fact of the answer: once the fetch has
    // one, they wait for the slot's shutdown, after the answer ([`crate::sdk::afterwards`]).
    // A failed attempt cleans up at once (a retry may follow).
    let end = async move {
        if let Some(end) = tab_end {
            end.run(&conn).await;
        }
        crate::sdk::browser::session::dispose_context(&conn, context.as_deref()).await;
    };
    match result.is_ok() {
        true => slot.after.push(Box::pin(end)),
        false => end.await,
    }
    result
}

#[allow(clippy::too_many_arguments)]
async fn finish_attempt(
    slot: &BrowserSlot,
    req: &FetchRequest,
    conn: &CdpConnection,
    fetched: Result<FetchOutcome, AfError>,
    skipped: Vec<Artifact>,
    context: Option<&str>,
    out: &mut OutDir,
    trace: &mut Trace,
) -> Result<(FetchOutcome, Vec<Cookie>), AfError> {
    let mut outcome = fetched?;
    for a in skipped {
        outcome.warnings.push(Warning::artifact(
            a.as_str(),
            ErrorCode::BackendUnsupported,
            "this browser backend cannot produce this artifact",
        ));
    }
    if let (Some(d), Some(client)) = (outcome.download.as_mut(), slot.client.as_ref()) {
        if d.facts.state == "completed" {
            let started = std::time::Instant::now();
            let warning = crate::sdk::transfer::download::copy_to_driver(
                client,
                d,
                out,
                req.max_response_bytes,
                req.timeout,
            )
            .await?;
            outcome.warnings.extend(warning);
            trace.timing("download_copy", started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    outcome.tab_id = trace
        .get("tab")
        .and_then(|t| t.get("target_id"))
        .and_then(Value::as_str)
        .map(String::from);
    if req.browser.takeover {
        hand_over_if_needed(slot, req, &mut outcome, trace).await?;
    }
    let cookies = if slot.jar_path(req).is_some() {
        let mut held = read_browser_cookies(conn, context, &outcome.final_url, req.timeout)
            .await
            .unwrap_or_default();
        held.retain(|c| !is_request_cookie(c, &req.cookies));
        held
    } else {
        Vec::new()
    };
    if !slot.started_inline() && context.is_none() {
        forget_request_cookies(conn, context, req, req.timeout).await;
    }
    Ok((outcome, cookies))
}

/// `--takeover`: when the target was not reached, mint a takeover URL for the kept tab and
/// say so in `next_action`; when it was, there is nothing for a human to do.
async fn hand_over_if_needed(
    slot: &BrowserSlot,
    req: &FetchRequest,
    outcome: &mut FetchOutcome,
    trace: &mut Trace,
) -> Result<(), AfError> {
    let reason = takeover::not_reached(&req.url, outcome);
    let mut facts = json!({
        "profile": req.browser.profile,
        "profile_source": if req.browser.profile_derived { "site" } else { "flag" },
        "tab_id": outcome.tab_id,
        "reason": reason,
    });
    outcome.next_action = None;
    if let (Some(reason), Some(tab), Some(client)) = (reason, &outcome.tab_id, &slot.client) {
        let next = takeover::next_action(client, req, tab, &reason).await?;
        facts["takeover_url_expires_at_rfc3339"] = next["takeover_url_expires_at_rfc3339"].clone();
        outcome.next_action = Some(next);
    }
    trace.set("takeover", facts);
    Ok(())
}
