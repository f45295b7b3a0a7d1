//! The one task that owns a CDP WebSocket: it matches responses to calls by id, fans
//! events out to per-session subscribers, and fails every pending call when the socket closes.

use std::collections::HashMap;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

use super::{CallError, CdpEvent};

/// A command on its way to the browser.
pub struct Outgoing {
    /// The JSON frame, already carrying its id.
    pub frame: String,
    /// The id to match the response on.
    pub id: u64,
    /// Where the response goes.
    pub reply: oneshot::Sender<Result<Value, CallError>>,
}

/// Control messages besides commands.
pub enum Control {
    /// Send a command.
    Send(Outgoing),
    /// Forward events whose `sessionId` equals the key (`None`: browser-level events).
    Subscribe(Option<String>, mpsc::UnboundedSender<CdpEvent>),
    /// Forward every event, whatever its session.
    SubscribeAll(mpsc::UnboundedSender<CdpEvent>),
    /// Drop a call that timed out (its answer, if it ever comes, is discarded).
    Forget(u64),
    /// How many calls await an answer (tests).
    #[cfg(test)]
    Pending(oneshot::Sender<usize>),
    /// Close the socket.
    Close,
}

/// Which events a subscriber gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// Events of one session (`None`: the browser target's own).
    Session(Option<String>),
    /// Every event.
    All,
}

/// Run the router until the socket closes or `Close` arrives.
pub async fn run<S>(ws: S, mut control: mpsc::UnboundedReceiver<Control>)
where
    S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>>
        + futures_util::Sink<Message, Error = tokio_tungstenite::tungstenite::Error>
        + Unpin,
{
    let (mut sink, mut stream) = ws.split();
    let mut pending: HashMap<u64, oneshot::Sender<Result<Value, CallError>>> = HashMap::new();
    let mut subscribers: Vec<(Filter, mpsc::UnboundedSender<CdpEvent>)> = Vec::new();
    let reason = loop {
        tokio::select! {
            msg = control.recv() => match msg {
                Some(Control::Send(out)) => {
                    if let Err(e) = sink.send(Message::text(out.frame)).await {
                        let _ = out.reply.send(Err(CallError::Closed(e.to_string())));
                        break format!("send failed: {e}");
                    }
                    pending.insert(out.id, out.reply);
                }
                Some(Control::Subscribe(session, tx)) => subscribers.push((Filter::Session(session), tx)),
                Some(Control::SubscribeAll(tx)) => subscribers.push((Filter::All, tx)),
                Some(Control::Forget(id)) => {
                    pending.remove(&id);
                }
                #[cfg(test)]
                Some(Control::Pending(tx)) => {
                    let _ = tx.send(pending.len());
                }
                Some(Control::Close) | None => {
                    let _ = sink.send(Message::Close(None)).await;
                    break "closed by the client".to_string();
                }
            },
            frame = stream.next() => match frame {
                Some(Ok(Message::Text(text))) => dispatch(text.as_str(), &mut pending, &mut subscribers),
                Some(Ok(Message::Binary(bytes))) => binary(&bytes, &mut pending, &mut subscribers),
                Some(Ok(Message::Close(frame))) => {
                    break frame.map(|f| f.reason.to_string()).unwrap_or_else(|| "closed by the browser".into());
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => break e.to_string(),
                None => break "the connection ended".to_string(),
            },
        }
    };
    for (_, reply) in pending.drain() {
        let _ = reply.send(Err(CallError::Closed(reason.clone())));
    }
}

/// Route a binary frame: UTF-8 JSON like a text frame; bytes that are not UTF-8 fail the
/// call they answer (when they start as an answer does) instead of vanishing.
fn binary(
    bytes: &[u8],
    pending: &mut HashMap<u64, oneshot::Sender<Result<Value, CallError>>>,
    subscribers: &mut Vec<(Filter, mpsc::UnboundedSender<CdpEvent>)>,
) {
    match std::str::from_utf8(bytes) {
        Ok(text) => dispatch(text, pending, subscribers),
        Err(e) => {
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(64)]).into_owned();
            if let Some(reply) = leading_id(&head).and_then(|id| pending.remove(&id)) {
                let _ = reply.send(Err(CallError::Malformed(format!("not UTF-8: {e}"))));
            }
        }
    }
}

/// Route one frame. Only the envelope is strict; params and results stay raw JSON.
fn dispatch(
    text: &str,
    pending: &mut HashMap<u64, oneshot::Sender<Result<Value, CallError>>>,
    subscribers: &mut Vec<(Filter, mpsc::UnboundedSender<CdpEvent>)>,
) {
    let mut v = match serde_json::from_str::<Value>(text) {
        Ok(v) => v,
        Err(e) => {
            // The call this frame answers fails now instead of waiting out its timeout.
            if let Some(reply) = leading_id(text).and_then(|id| pending.remove(&id)) {
                let _ = reply.send(Err(CallError::Malformed(e.to_string())));
            }
            return;
        }
    };
    if let Some(id) = v.get("id").and_then(Value::as_u64) {
        if let Some(reply) = pending.remove(&id) {
            let _ = reply.send(answer(&mut v));
        }
        return;
    }
    let Some(method) = v.get("method").and_then(Value::as_str).map(String::from) else {
        return;
    };
    let session_id = v.get("sessionId").and_then(Value::as_str).map(String::from);
    let params = v.get_mut("params").map(Value::take).unwrap_or(Value::Null);
    subscribers.retain(|(_, tx)| !tx.is_closed());
    for (want, tx) in subscribers.iter() {
        let wanted = match want {
            Filter::All => true,
            Filter::Session(s) => *s == session_id,
        };
        if wanted {
            let _ = tx.send(CdpEvent {
                method: method.clone(),
                params: params.clone(),
                session_id: session_id.clone(),
            });
        }
    }
}

/// The outcome an answer frame carries: its `result`, or its protocol `error` (an error
/// that is not an object is a malformed answer).
fn answer(v: &mut Value) -> Result<Value, CallError> {
    match v.get_mut("error") {
        Some(err) if !err.is_object() => Err(CallError::Malformed(format!(
            "its error is not an object: {err}"
        ))),
        Some(err) => Err(CallError::Protocol {
            code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("unknown CDP error")
                .to_string(),
        }),
        None => Ok(v.get_mut("result").map(Value::take).unwrap_or(Value::Null)),
    }
}

/// The id of a frame that is not valid JSON, when it starts as an answer does
/// (`{"id":N,` — the browser writes `id` first).
fn leading_id(text: &str) -> Option<u64> {
    let rest = text.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest
        .strip_prefix("\"id\"")?
        .trim_start()
        .strip_prefix(':')?;
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_and_events_are_tolerated() {
        let mut pending = HashMap::new();
        let (tx, mut rx) = oneshot::channel();
        pending.insert(7, tx);
        let (etx, mut erx) = mpsc::unbounded_channel();
        let mut subs = vec![(Filter::Session(Some("S1".to_string())), etx)];
        dispatch(
            r#"{"method":"Brand.newEvent","params":{"x":1},"sessionId":"S1","extra":true}"#,
            &mut pending,
            &mut subs,
        );
        dispatch(
            r#"{"method":"Other","params":{},"sessionId":"S2"}"#,
            &mut pending,
            &mut subs,
        );
        dispatch("not json at all", &mut pending, &mut subs);
        dispatch(
            r#"{"id":7,"result":{"value":{"deep":[1,2]}},"unknownField":5}"#,
            &mut pending,
            &mut subs,
        );
        assert_eq!(rx.try_recv().unwrap().unwrap()["value"]["deep"][1], 2);
        let ev = erx.try_recv().unwrap();
        assert_eq!(ev.method, "Brand.newEvent");
        assert!(erx.try_recv().is_err(), "S2 event must not reach S1");
    }

    #[test]
    fn protocol_errors_fail_their_call() {
        let mut pending = HashMap::new();
        let (tx, mut rx) = oneshot::channel();
        pending.insert(1, tx);
        dispatch(
            r#"{"id":1,"error":{"code":-32601,"message":"'X.y' wasn't found"}}"#,
            &mut pending,
            &mut Vec::new(),
        );
        match rx.try_recv().unwrap() {
            Err(CallError::Protocol { code, .. }) => assert_eq!(code, -32601),
            other => panic!("{other:?}"),
        }
    }

    /// A frame that cannot be decoded fails the one call it answers, with a typed error,
    /// instead of vanishing (the call used to wait out its whole timeout).
    #[test]
    fn an_undecodable_answer_fails_its_call() {
        let mut pending = HashMap::new();
        let (tx, mut rx) = oneshot::channel();
        pending.insert(9, tx);
        let (other_tx, mut other) = oneshot::channel();
        pending.insert(10, other_tx);
        dispatch(
            r#"{"id":9,"result":{"data":"trunc"#,
            &mut pending,
            &mut Vec::new(),
        );
        assert!(matches!(rx.try_recv(), Ok(Err(CallError::Malformed(_)))));
        assert!(other.try_recv().is_err(), "only its own call fails");
        let (tx, mut rx) = oneshot::channel();
        pending.insert(11, tx);
        dispatch(r#"{"id":11,"error":"boom"}"#, &mut pending, &mut Vec::new());
        assert!(matches!(rx.try_recv(), Ok(Err(CallError::Malformed(_)))));
        assert_eq!(pending.len(), 1);
        let (tx, mut rx) = oneshot::channel();
        pending.insert(12, tx);
        binary(
            b"{\"id\":12,\"result\":{\"v\":\"\xff\xfe\"}}",
            &mut pending,
            &mut Vec::new(),
        );
        assert!(matches!(rx.try_recv(), Ok(Err(CallError::Malformed(_)))));
        assert_eq!(pending.len(), 1);
        assert_eq!(leading_id(r#" { "id" : 42 , "#), Some(42));
        assert_eq!(leading_id(r#"{"method":"x","id":1"#), None);
    }
}
