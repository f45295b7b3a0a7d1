//! A fake Docker engine over TCP that answers just enough for `afhttp container build`:
//! `/version`, `/_ping`, and a `/build` that drains the context and streams a few
//! classic-builder `Step N/M` lines, so progress output can be tested without dockerd.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, Response};
use axum::Router;
use futures_util::StreamExt;

use super::server::Background;

/// The build steps the fake streams.
pub const STEPS: &[&str] = &[
    "Step 1/3 : FROM debian:bookworm-slim",
    "Step 2/3 : COPY afhttp /usr/local/bin/afhttp",
    "Step 3/3 : ENTRYPOINT [\"afhttp\"]",
];

/// A running fake engine; stops when dropped.
pub struct FakeEngine {
    bg: Background,
}

impl FakeEngine {
    /// Start it on 127.0.0.1.
    pub fn start() -> FakeEngine {
        let bg = Background::spawn("fake-engine", |listener| async move {
            let app = Router::new().fallback(answer);
            let _ = axum::serve(listener, app).await;
        });
        FakeEngine { bg }
    }

    /// `DOCKER_HOST` for it.
    pub fn docker_host(&self) -> String {
        format!("tcp://127.0.0.1:{}", self.bg.port())
    }
}

async fn answer(req: Request<Body>) -> Response<Body> {
    let path = req.uri().path().to_string();
    let json = |body: String| {
        Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap()
    };
    if path.ends_with("/version") {
        return json(
            r#"{"ApiVersion":"1.41","MinAPIVersion":"1.12","Version":"20.10.24","Os":"linux","Arch":"amd64"}"#
                .to_string(),
        );
    }
    if path.ends_with("/_ping") {
        return Response::new(Body::from("OK"));
    }
    if path.ends_with("/build") {
        // The whole context is read first, as an engine does.
        let mut body = req.into_body().into_data_stream();
        while let Some(chunk) = body.next().await {
            if chunk.is_err() {
                break;
            }
        }
        let lines = STEPS.iter().enumerate().flat_map(|(i, step)| {
            [
                format!("{{\"stream\":\"{}\\n\"}}\r\n", step.replace('"', "\\\"")),
                format!("{{\"stream\":\" ---> {:012x}\\n\"}}\r\n", i + 1),
            ]
        });
        let mut items: Vec<String> = lines.collect();
        items.push("{\"aux\":{\"ID\":\"sha256:fake\"}}\r\n".to_string());
        items.push("{\"stream\":\"Successfully built fake\\n\"}\r\n".to_string());
        let stream = futures_util::stream::iter(items).then(|line| async move {
            // A slow build (the fixture's point): the bar has time to draw each step.
            tokio::time::sleep(Duration::from_millis(150)).await;
            Ok::<_, std::convert::Infallible>(line)
        });
        return Response::builder()
            .header("content-type", "application/json")
            .body(Body::from_stream(stream))
            .unwrap();
    }
    Response::builder()
        .status(404)
        .body(Body::from(format!(
            "{{\"message\":\"fake engine: no {path}\"}}"
        )))
        .unwrap()
}
