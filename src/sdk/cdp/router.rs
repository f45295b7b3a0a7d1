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
                Some(Control::Close) | None => {
                    let _ = sink.send(Message::Close(None)).await;
                    break "closed by the client".to_string();
                }
            },
            frame = stream.next() => match frame {
                Some(Ok(Message::Text(text))) => dispatch(text.as_str(), &mut pending, &mut subscribers),
                Some(Ok(Message::Binary(bytes))) => {
                    if let Ok(text) = std::str::from_utf8(&bytes) {
                        dispatch(text, &mut pending, &mut subscribers);
                    }
                }
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

/// Route one frame. Only the envelope is strict; params and results stay raw JSON.
fn dispatch(
    text: &str,
    pending: &mut HashMap<u64, oneshot::Sender<Result<Value, CallError>>>,
    subscribers: &mut Vec<(Filter, mpsc::UnboundedSender<CdpEvent>)>,
) {
    let Ok(mut v) = serde_json::from_str::<Value>(text) else {
        return;
    };
    if let Some(id) = v.get("id").and_then(Value::as_u64) {
        if let Some(reply) = pending.remove(&id) {
            let outcome = match v.get_mut("error") {
                Some(err) => Err(CallError::Protocol {
                    code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: err
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown CDP error")
                        .to_string(),
                }),
                None => Ok(v.get_mut("result").map(Value::take).unwrap_or(Value::Null)),
            };
            let _ = reply.send(outcome);
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
}
