//! What the `/cdp` proxy does to one client's frames on their way through: the `--max-tabs`
//! gate ([`super::caps`]), the temporary-tab lease ([`super::tab_lease`]), and the host's
//! ready tabs ([`super::tab_pool`]): a driver's temporary blank tab is answered from the
//! pool (attached on the driver's connection when it asks), the ready tabs are left out of
//! its target lists, and a tab it closes counts as closed at once.

use std::sync::Arc;

use axum::extract::ws;
use tokio::sync::mpsc::UnboundedSender;
use tokio_tungstenite::tungstenite::{self as ts, Utf8Bytes};

use super::pool_frames::{AttachCalls, ListCalls};
use super::state::ListenerState;
use super::tab_lease::TabLeases;

/// One client's frames, both ways.
pub struct ClientFrames {
    state: Arc<ListenerState>,
    /// On the browser target: the client's temporary tabs (`None` on a page socket).
    leases: Option<TabLeases>,
    /// The browser's DevTools socket URL (which browser the ready tabs must be of).
    browser_ws_url: String,
    /// Answers the host gives itself, mixed into the browser's on the way to the client.
    answers: UnboundedSender<String>,
    lists: ListCalls,
    attaches: AttachCalls,
}

impl ClientFrames {
    /// The frames of a client spliced onto `browser_ws_url`; the host's own answers go to
    /// `answers`.
    pub fn new(
        state: Arc<ListenerState>,
        leases: Option<TabLeases>,
        browser_ws_url: String,
        answers: UnboundedSender<String>,
    ) -> ClientFrames {
        ClientFrames {
            state,
            leases,
            browser_ws_url,
            answers,
            lists: ListCalls::default(),
            attaches: AttachCalls::default(),
        }
    }

    /// A client → browser frame: what goes to the browser instead (`None`: nothing; the
    /// host answered it itself).
    pub async fn outgoing(&self, text: ws::Utf8Bytes) -> Option<ws::Message> {
        if let Some(l) = &self.leases {
            if let Some(taken) = self.take_ready(l, text.as_str()).await {
                return taken;
            }
            self.lists.outgoing(text.as_str());
        }
        if let Some(target) = super::pool_frames::closed_target(text.as_str()) {
            self.state.pool.closing(&target);
        }
        let gated = super::caps::gate_text(&self.state, text).await;
        Some(match (gated, &self.leases) {
            (ws::Message::Text(text), Some(l)) => match l.outgoing(text.as_str()) {
                Some(rewritten) => ws::Message::Text(ws::Utf8Bytes::from(rewritten)),
                None => ws::Message::Text(text),
            },
            (other, _) => other,
        })
    }

    /// A temporary blank `Target.createTarget` answered with a ready tab of the pool, now
    /// leased to this client: the host answers it (`Some(None)`), or, when the driver asked
    /// to be attached, sends the browser the attach under the same id
    /// (`Some(Some(frame))`). `None`: the frame goes on to the browser, through the tab cap
    /// (a full `--max-tabs` cap gives no ready tab either: the client's tabs are what it
    /// caps).
    async fn take_ready(&self, leases: &TabLeases, text: &str) -> Option<Option<ws::Message>> {
        let pool = &self.state.pool;
        if !text.contains("Target.createTarget") {
            return None;
        }
        let msg: serde_json::Value = serde_json::from_str(text).ok()?;
        let create = super::pool_frames::poolable_create(&msg)?;
        // An isolated one with none ready goes on to the browser, which refuses the context
        // it does not know: the driver then makes its own.
        let ready = match create.isolated {
            true => pool.isolated_ready(),
            false => !pool.is_empty(),
        };
        if !ready || !super::caps::room_for_a_tab(&self.state).await {
            return None;
        }
        let (tab, context) = match create.isolated {
            true => pool
                .take_isolated(&self.browser_ws_url)
                .map(|(t, c)| (t, Some(c)))?,
            false => (pool.take(&self.browser_ws_url)?, None),
        };
        leases.adopt(&tab);
        if let Some(c) = &context {
            leases.adopt_context(c);
        }
        if create.attach {
            self.attaches.sent(create.id, &tab, context.as_deref());
            let frame = super::pool_frames::attach_frame(create.id, &tab);
            return Some(Some(ws::Message::Text(ws::Utf8Bytes::from(frame))));
        }
        let _ = self.answers.send(super::pool_frames::created_answer(
            create.id,
            &tab,
            context.as_deref(),
        ));
        Some(None)
    }

    /// A browser → client frame, as the client gets it.
    pub async fn incoming(&self, text: Utf8Bytes) -> ts::Message {
        let Some(l) = &self.leases else {
            return ts::Message::Text(text);
        };
        l.incoming(text.as_str());
        if let Some(answer) = self.attaches.incoming(text.as_str()) {
            return ts::Message::Text(Utf8Bytes::from(answer));
        }
        match self.lists.incoming(text.as_str(), &self.state.pool).await {
            Some(rewritten) => ts::Message::Text(Utf8Bytes::from(rewritten)),
            None => ts::Message::Text(text),
        }
    }
}
