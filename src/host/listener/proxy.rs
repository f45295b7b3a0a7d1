//! `/cdp` and `/cdp/page/{id}`: splice a client WebSocket onto the browser's DevTools socket.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{self, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self as ts, Utf8Bytes};

use super::auth::ApiError;
use super::state::{Disconnect, ListenerState};
use super::tab_lease::TabLeases;

/// Largest message or frame accepted on either side (full-page screenshots are large).
pub const MAX_MESSAGE: usize = 512 * 1024 * 1024;

/// The close reason other clients get when a profile switch replaces their browser.
const SWITCH_CLOSE_REASON: &str = "afhttp: the host switched to another profile; reconnect";

/// The close code for that: 1012 "service restart" (the browser is being restarted).
const CLOSE_SERVICE_RESTART: u16 = 1012;

/// How long connecting to the browser's socket may take.
const UPSTREAM_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// `GET /cdp`: the browser target.
pub(crate) async fn cdp_browser(
    State(state): State<Arc<ListenerState>>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
    upgrade: WebSocketUpgrade,
) -> Response {
    // Taken before anything else so a full host answers at once, without waiting on a
    // profile switch or the browser.
    let Some(slot) = state.slots.try_take() else {
        return busy(&state);
    };
    let param = |name: &str| {
        query.as_deref().and_then(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        })
    };
    let profile = param("profile");
    if state.config.ephemeral_only {
        if let Some(name) = profile
            .as_deref()
            .filter(|p| *p != crate::profile::EPHEMERAL)
        {
            return switch_refusal(&ephemeral_only_refusal(name));
        }
    }
    // A fetch's request id, so host logs can be matched with the driver's result.
    let request_id = param("request_id")
        .filter(|id| id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    // Held until this client is attached: a switch in progress finishes first, and a switch
    // this client may ask for is not interleaved with another. Clients that name no profile
    // only share the lock, so their upstream connects run side by side.
    let switching = match &profile {
        Some(_) => (Some(state.switching.write().await), None),
        None => (None, Some(state.switching.read().await)),
    };
    if let Some(name) = profile.filter(|name| !state.view.profile_is_active(name)) {
        let drain = state.clone();
        let before_stop = Box::pin(async move {
            let left = drain.drain_clients(drain.config.profile_switch_wait).await;
            crate::host::log::log(
                crate::host::log::Level::Info,
                "profile switch: closing clients",
                serde_json::json!({"still_open": left}),
            );
            drain.disconnect_all(SWITCH_CLOSE_REASON);
        });
        if let Err(e) = state.view.switch_profile(name, before_stop).await {
            return switch_refusal(&e);
        }
    }
    let Some(upstream) = state.view.upstream() else {
        return ApiError::CDP_UNAVAILABLE.into_response();
    };
    crate::host::log::log(
        crate::host::log::Level::Info,
        "cdp client attached",
        serde_json::json!({"request_id": request_id}),
    );
    // Temporary tabs of this client are closed when it goes away, however it goes.
    let client = SpliceClient {
        slot,
        request_id,
        leases: Some(TabLeases::default()),
    };
    let response = splice_to(&state, upgrade, &upstream.browser_ws_url, client).await;
    drop(switching);
    response
}

/// `GET /cdp/page/{id}`: one page target.
pub(crate) async fn cdp_page(
    State(state): State<Arc<ListenerState>>,
    Path(id): Path<String>,
    upgrade: WebSocketUpgrade,
) -> Response {
    if !valid_target_id(&id) {
        return ApiError::BAD_REQUEST.into_response();
    }
    let Some(slot) = state.slots.try_take() else {
        return busy(&state);
    };
    let Some(upstream) = state.view.upstream() else {
        return ApiError::CDP_UNAVAILABLE.into_response();
    };
    let authority = upstream
        .http_base
        .split_once("://")
        .map_or(upstream.http_base.as_str(), |(_, a)| a)
        .trim_end_matches('/');
    splice_to(
        &state,
        upgrade,
        &format!("ws://{authority}/devtools/page/{id}"),
        SpliceClient {
            slot,
            request_id: None,
            leases: None,
        },
    )
    .await
}

/// The `host_busy` refusal, logged so an operator sees the cap being hit.
fn busy(state: &ListenerState) -> Response {
    crate::host::log::log(
        crate::host::log::Level::Warn,
        "client cap full: refusing a CDP client",
        serde_json::json!({"max_clients": state.config.max_clients}),
    );
    ApiError::HOST_BUSY.into_response()
}

/// Why an `--ephemeral-only` host will not open persistent profile `name`: it would keep
/// state a stateless member loses on restart, and fork the profile its owner holds.
fn ephemeral_only_refusal(name: &str) -> crate::error::AfError {
    crate::error::AfError::new(
        crate::error::ErrorCode::BackendUnsupported,
        format!(
            "this host is ephemeral-only (--ephemeral-only) and keeps no persistent profile, \
             so it cannot open profile {name:?}; mark it `ephemeral:` in --fleet so profiles \
             are placed on the other members"
        ),
    )
}

/// A refused profile switch as a JSON error with the stable code.
fn switch_refusal(e: &crate::error::AfError) -> Response {
    super::refusal::ApiError::error(e.code, e.message.clone()).into_response()
}

/// Whether `id` looks like a DevTools target id (no path tricks).
pub fn valid_target_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        && id != "."
        && id != ".."
}

/// What the proxy keeps for one client while its splice lasts.
pub(crate) struct SpliceClient {
    /// Its `--max-clients` slot, held until the splice ends.
    slot: super::slots::Slot,
    /// The fetch's request id, for the "detached" log line.
    request_id: Option<String>,
    /// On the browser target: its temporary tabs, closed after it.
    leases: Option<TabLeases>,
}

/// Connect to `url` first (so a dead browser is a 503, not a dropped socket), then upgrade.
/// The client's frames pass the `--max-tabs` gate (a page socket can call
/// `Target.createTarget` too) and, on the browser target, the temporary-tab lease.
async fn splice_to(
    state: &Arc<ListenerState>,
    upgrade: WebSocketUpgrade,
    url: &str,
    client_facts: SpliceClient,
) -> Response {
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    let connecting = tokio_tungstenite::connect_async_with_config(url, Some(config), true);
    let upstream = match tokio::time::timeout(UPSTREAM_CONNECT_TIMEOUT, connecting).await {
        Ok(Ok((socket, _))) => socket,
        _ => return ApiError::CDP_UNAVAILABLE.into_response(),
    };
    let disconnected = state.disconnected();
    let guard = state.client_opened();
    let refill = Arc::clone(&state.pool);
    let state = state.clone();
    let browser_url = url.to_string();
    upgrade
        .max_message_size(MAX_MESSAGE)
        .max_frame_size(MAX_MESSAGE)
        .on_upgrade(move |client| async move {
            let SpliceClient {
                slot,
                request_id,
                leases,
            } = client_facts;
            let attached = std::time::Instant::now();
            let (client_tx, client_rx) = client.split();
            let (upstream_tx, upstream_rx) = upstream.split();
            // Answers the host gives itself (a ready tab for a created one) join the
            // browser's on the way to the client.
            let (answers_tx, answers_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
            let frames = Arc::new(super::client_frames::ClientFrames::new(
                state,
                leases.clone(),
                browser_url.clone(),
                answers_tx,
            ));
            let out_frames = Arc::clone(&frames);
            let gated = client_rx
                .then(move |message| {
                    let frames = Arc::clone(&out_frames);
                    async move {
                        match message {
                            Ok(ws::Message::Text(text)) => frames.outgoing(text).await.map(Ok),
                            other => Some(other),
                        }
                    }
                })
                .filter_map(std::future::ready);
            let upstream_rx = Box::pin(upstream_rx.then(move |m| {
                let frames = Arc::clone(&frames);
                async move {
                    match m {
                        Ok(ts::Message::Text(text)) => Ok(frames.incoming(text).await),
                        m => m,
                    }
                }
            }));
            let upstream_rx = with_own_answers(upstream_rx, answers_rx);
            splice_halves(
                client_tx,
                Box::pin(gated),
                upstream_tx,
                upstream_rx,
                disconnected,
            )
            .await;
            // The client's socket is gone: a profile switch waiting for it need not wait for
            // the clean-up as well.
            drop(guard);
            if let Some(leases) = leases {
                for target in leases.release(&browser_url).await {
                    refill.closing(&target);
                }
                refill.refill();
            }
            drop(slot);
            if let Some(id) = request_id {
                crate::host::log::log(
                    crate::host::log::Level::Info,
                    "cdp client detached",
                    serde_json::json!({
                        "request_id": id,
                        "duration_ms": attached.elapsed().as_millis() as u64,
                    }),
                );
            }
        })
}

/// The browser's frames, with the host's own answers mixed in; ends when the browser's
/// side ends.
fn with_own_answers<UR, UE>(
    upstream_rx: UR,
    answers: tokio::sync::mpsc::UnboundedReceiver<String>,
) -> impl Stream<Item = Result<ts::Message, UE>> + Unpin
where
    UR: Stream<Item = Result<ts::Message, UE>> + Unpin,
{
    let browser = upstream_rx
        .map(Some)
        .chain(futures_util::stream::iter([None]));
    let own = futures_util::stream::unfold(answers, |mut rx| async move {
        let text = rx.recv().await?;
        Some((Some(Ok(ts::Message::Text(Utf8Bytes::from(text)))), rx))
    });
    Box::pin(
        futures_util::stream::select(browser, own)
            .take_while(|m| std::future::ready(m.is_some()))
            .filter_map(std::future::ready),
    )
}

/// Pump both directions until either side closes or the host disconnects everyone; in
/// the last case the client gets a close frame that says why.
pub(super) async fn splice<U>(
    client: WebSocket,
    upstream: U,
    disconnected: watch::Receiver<Disconnect>,
) where
    U: Stream<Item = Result<ts::Message, ts::Error>> + Sink<ts::Message> + Send + Unpin,
{
    let (client_tx, client_rx) = client.split();
    let (upstream_tx, upstream_rx) = upstream.split();
    splice_halves(client_tx, client_rx, upstream_tx, upstream_rx, disconnected).await;
}

/// The body of [`splice`] over already split (and possibly wrapped) halves.
async fn splice_halves<CT, CR, UT, UR, CE, UE>(
    mut client_tx: CT,
    client_rx: CR,
    upstream_tx: UT,
    upstream_rx: UR,
    mut disconnected: watch::Receiver<Disconnect>,
) where
    CT: Sink<ws::Message> + Unpin,
    CR: Stream<Item = Result<ws::Message, CE>> + Unpin,
    UT: Sink<ts::Message> + Unpin,
    UR: Stream<Item = Result<ts::Message, UE>> + Unpin,
{
    let mut reason = None;
    pump(client_rx, &mut client_tx, upstream_rx, upstream_tx, async {
        if disconnected.changed().await.is_ok() {
            reason = Some(disconnected.borrow().reason.clone());
        }
    })
    .await;
    if let Some(reason) = reason {
        let frame = ws::CloseFrame {
            code: CLOSE_SERVICE_RESTART,
            reason: ws::Utf8Bytes::from(reason),
        };
        let _ = client_tx.send(ws::Message::Close(Some(frame))).await;
    }
}

/// Join the two directions with `select!`: the first to end (or `stop`) tears both down.
///
/// Generic over the socket halves so it can be exercised with channels.
pub async fn pump<CR, CT, UR, UT, CE, UE>(
    client_rx: CR,
    client_tx: CT,
    upstream_rx: UR,
    upstream_tx: UT,
    stop: impl std::future::Future<Output = ()>,
) where
    CR: Stream<Item = Result<ws::Message, CE>> + Unpin,
    CT: Sink<ws::Message> + Unpin,
    UR: Stream<Item = Result<ts::Message, UE>> + Unpin,
    UT: Sink<ts::Message> + Unpin,
{
    tokio::select! {
        () = forward(client_rx, upstream_tx, to_upstream) => {}
        () = forward(upstream_rx, client_tx, to_client) => {}
        () = stop => {}
    }
}

/// Copy messages from `src` to `dst` until a close, an error, or the end; then close `dst`.
async fn forward<S, K, A, B, E>(mut src: S, mut dst: K, convert: fn(A) -> Option<(B, bool)>)
where
    S: Stream<Item = Result<A, E>> + Unpin,
    K: Sink<B> + Unpin,
{
    while let Some(Ok(message)) = src.next().await {
        let Some((message, is_close)) = convert(message) else {
            continue;
        };
        if dst.send(message).await.is_err() || is_close {
            return;
        }
    }
    let _ = dst.close().await;
}

/// Client → browser. Pings and pongs stay per hop; the bool marks a close.
fn to_upstream(message: ws::Message) -> Option<(ts::Message, bool)> {
    Some(match message {
        ws::Message::Text(text) => {
            let bytes = bytes::Bytes::from(text);
            (ts::Message::Text(Utf8Bytes::try_from(bytes).ok()?), false)
        }
        ws::Message::Binary(data) => (ts::Message::Binary(data), false),
        ws::Message::Close(frame) => (
            ts::Message::Close(frame.map(|f| CloseFrame {
                code: CloseCode::from(f.code),
                reason: Utf8Bytes::from(f.reason.as_str()),
            })),
            true,
        ),
        ws::Message::Ping(_) | ws::Message::Pong(_) => return None,
    })
}

/// Browser → client.
fn to_client(message: ts::Message) -> Option<(ws::Message, bool)> {
    Some(match message {
        ts::Message::Text(text) => {
            let bytes = bytes::Bytes::from(text);
            (
                ws::Message::Text(ws::Utf8Bytes::try_from(bytes).ok()?),
                false,
            )
        }
        ts::Message::Binary(data) => (ws::Message::Binary(data), false),
        ts::Message::Close(frame) => (
            ws::Message::Close(frame.map(|f| ws::CloseFrame {
                code: u16::from(f.code),
                reason: ws::Utf8Bytes::from(f.reason.as_str()),
            })),
            true,
        ),
        ts::Message::Ping(_) | ts::Message::Pong(_) | ts::Message::Frame(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use futures_util::stream;

    #[tokio::test]
    async fn pump_forwards_both_ways_until_a_close() {
        let from_client = stream::iter(vec![
            Ok::<_, ()>(ws::Message::Text("one".into())),
            Ok(ws::Message::Ping(bytes::Bytes::new())),
            Ok(ws::Message::Binary(bytes::Bytes::from_static(b"\x00\x01"))),
            Ok(ws::Message::Close(None)),
            Ok(ws::Message::Text("after close".into())),
        ]);
        let mut to_browser: Vec<ts::Message> = Vec::new();
        let mut to_client_side: Vec<ws::Message> = Vec::new();
        pump(
            from_client,
            &mut to_client_side,
            stream::pending::<Result<ts::Message, ()>>(),
            &mut to_browser,
            std::future::pending(),
        )
        .await;
        assert_eq!(
            to_browser,
            vec![
                ts::Message::Text("one".into()),
                ts::Message::Binary(bytes::Bytes::from_static(b"\x00\x01")),
                ts::Message::Close(None),
            ]
        );
        assert!(to_client_side.is_empty());
    }

    #[tokio::test]
    async fn pump_stops_when_the_browser_side_ends() {
        let from_browser = stream::iter(vec![Ok::<_, ()>(ts::Message::Text("event".into()))]);
        let mut to_client_side: Vec<ws::Message> = Vec::new();
        let mut to_browser: Vec<ts::Message> = Vec::new();
        pump(
            stream::pending::<Result<ws::Message, ()>>(),
            &mut to_client_side,
            from_browser,
            &mut to_browser,
            std::future::pending(),
        )
        .await;
        assert_eq!(to_client_side, vec![ws::Message::Text("event".into())]);
    }

    #[test]
    fn target_ids() {
        assert!(valid_target_id("E3B0C44298FC1C149AFBF4C8996FB924"));
        assert!(!valid_target_id(".."));
        assert!(!valid_target_id("a/b"));
        assert!(!valid_target_id(""));
    }

    #[test]
    fn converts_text_binary_and_close() {
        let (m, close) = to_upstream(ws::Message::Text("{\"id\":1}".into())).unwrap();
        assert!(!close);
        assert_eq!(m, ts::Message::Text("{\"id\":1}".into()));
        assert!(to_upstream(ws::Message::Ping(bytes::Bytes::new())).is_none());
        let (m, close) = to_client(ts::Message::Close(Some(CloseFrame {
            code: CloseCode::Normal,
            reason: "bye".into(),
        })))
        .unwrap();
        assert!(close);
        assert_eq!(
            m,
            ws::Message::Close(Some(ws::CloseFrame {
                code: 1000,
                reason: "bye".into()
            }))
        );
    }
}
