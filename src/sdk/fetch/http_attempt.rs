//! One attempt on the HTTP path, in steps: [`receive`] the response and its body, [`read`]
//! what it is (text, challenge, parsed HTML) and let [`render_decision`] say whether a
//! browser must take over, then [`write_artifacts`] and [`outcome`].

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{json, Value};
use url::Url;

use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::challenge::{self, Challenge};
use crate::sdk::content_type;
use crate::sdk::documents::{self, DocKind};
use crate::sdk::fetch::outcome::{FetchOutcome, Trace};
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::{projections, takeover_hint, FetchRequest};
use crate::sdk::html;
use crate::sdk::http::body::{self, BodyCapture};
use crate::sdk::http::client::Clients;
use crate::sdk::http::exchange::{self, CookieState, Hop};
use crate::sdk::http::network;
use crate::sdk::render_decision::{self, EscalationReason};
use crate::sdk::request::Artifact;

/// How an HTTP attempt ended: with a result, or with a reason to render in a browser.
pub enum AttemptEnd {
    /// The HTTP response was enough.
    Done(Box<FetchOutcome>),
    /// A browser must render the page.
    Escalate(EscalationReason),
}

/// The final response, its body on disk.
struct Received {
    /// When the attempt started (its budget counts from here).
    started: Instant,
    hops: Vec<Hop>,
    final_url: Url,
    status: u16,
    headers: Vec<(String, String)>,
    content_type: Option<String>,
    kind: DocKind,
    captured: BodyCapture,
}

/// What the body is, read once: its text, a challenge, and the parsed HTML.
struct Reading {
    challenge: Option<Challenge>,
    parsed: Option<html::ParsedHtml>,
    text: Option<String>,
}

/// What the attempt wrote.
struct Done {
    out_dir: PathBuf,
    files: Vec<(Artifact, PathBuf)>,
    warnings: Vec<Warning>,
}

/// Run one HTTP attempt of `req`.
pub async fn attempt_once(
    client: &Clients,
    req: &FetchRequest,
    out: &mut OutDir,
    cookies: &mut CookieState,
    trace: &mut Trace,
    request_id: &str,
) -> Result<AttemptEnd, AfError> {
    let t0 = Instant::now();
    let got = receive(client, req, out, cookies, trace, t0).await?;
    let mut warnings = receive_warnings(req, &got.captured, cookies);
    let reading = read(&got);
    let facts = render_decision::ResponseFacts {
        status: got.status,
        content_type: got.content_type.as_deref(),
        body_text: reading.text.as_deref().unwrap_or(""),
        challenge: reading.challenge.as_ref(),
    };
    let shell = reading.parsed.as_ref().map(html::ParsedHtml::shell_facts);
    if let Some(reason) = render_decision::after_response_with(req.render, &facts, shell.as_ref()) {
        return Ok(AttemptEnd::Escalate(reason));
    }
    let artifacts_started = Instant::now();
    let files = write_artifacts(req, request_id, &got, &reading, out, trace, &mut warnings).await?;
    trace.timing(
        "artifacts",
        artifacts_started.elapsed().as_secs_f64() * 1000.0,
    );
    let done = Done {
        out_dir: out.path().to_path_buf(),
        files,
        warnings,
    };
    Ok(AttemptEnd::Done(Box::new(outcome(
        req, request_id, got, reading, done,
    ))))
}

/// Send the request (following redirects) and write the final body.
async fn receive(
    client: &Clients,
    req: &FetchRequest,
    out: &mut OutDir,
    cookies: &mut CookieState,
    trace: &mut Trace,
    t0: Instant,
) -> Result<Received, AfError> {
    let ex = exchange::run(client, req, cookies, t0)
        .await
        .map_err(|e| e.error)?;
    let mut hops = ex.hops;
    let Some(last) = hops.last() else {
        return Err(AfError::new(ErrorCode::TargetUnreachable, "no response"));
    };
    trace.timing("response_headers", last.headers_ms);
    let final_url = last.url.clone();
    let status = last.status;
    let headers = last.response_headers.clone();
    let ct = headers
        .iter()
        .find(|(n, _)| n == "content-type")
        .map(|(_, v)| v.clone());
    let body_started = Instant::now();
    let declared = ct.clone();
    let captured = body::capture(
        ex.response,
        out,
        |head| {
            let kind = documents::classify(declared.as_deref(), head);
            let ext = documents::body_extension(declared.as_deref(), head);
            (format!("body.{ext}"), kind.is_textual())
        },
        req.max_response_bytes,
        &final_url,
    )
    .await?;
    let kind = documents::classify(ct.as_deref(), &captured.head);
    if let Some(h) = hops.last_mut() {
        h.finished_ms = Some(t0.elapsed().as_secs_f64() * 1000.0);
        h.body_bytes = Some(captured.bytes);
    }
    trace.timing("body", body_started.elapsed().as_secs_f64() * 1000.0);
    Ok(Received {
        started: t0,
        hops,
        final_url,
        status,
        headers,
        content_type: ct,
        kind,
        captured,
    })
}

/// Warnings known once the body is in: a cut body, cookies not sent.
fn receive_warnings(
    req: &FetchRequest,
    captured: &BodyCapture,
    cookies: &CookieState,
) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if captured.truncated {
        warnings.push(Warning::artifact(
            "body",
            ErrorCode::NetworkBodyTruncated,
            format!(
                "the body was cut at max_response_bytes ({})",
                req.max_response_bytes
            ),
        ));
    }
    for s in &cookies.skipped {
        warnings.push(Warning::general(
            ErrorCode::CookieSkipped,
            format!("cookie {} not sent: {}", s.name, s.reason),
        ));
    }
    warnings
}

/// Decode a textual body, classify a challenge, and parse HTML once: the shell facts and
/// the projections share the parse.
fn read(got: &Received) -> Reading {
    let textual = got.kind.is_textual();
    let text = textual
        .then(|| content_type::decode_text(&got.captured.text_prefix, got.content_type.as_deref()));
    let body_text = text.as_deref().unwrap_or("");
    let challenge = if textual {
        challenge::classify(got.status, &got.headers, body_text)
    } else {
        None
    };
    let parsed = (got.kind == DocKind::Html).then(|| html::ParsedHtml::parse(body_text));
    Reading {
        challenge,
        parsed,
        text,
    }
}

/// Write every wanted artifact besides the body; returns the files, the body first.
async fn write_artifacts(
    req: &FetchRequest,
    request_id: &str,
    got: &Received,
    reading: &Reading,
    out: &mut OutDir,
    trace: &mut Trace,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<(Artifact, PathBuf)>, AfError> {
    let mut files = Vec::new();
    if let Some(p) = &got.captured.path {
        files.push((Artifact::Body, p.clone()));
    }
    let ct = got.content_type.as_deref();
    let document = match &reading.parsed {
        Some(_) => None,
        None if !projections::wanted_http(req).is_empty() => {
            let budget = req.timeout.saturating_sub(got.started.elapsed());
            let d = documents::project(
                got.kind,
                &got.captured.text_prefix,
                got.captured.path.as_deref(),
                ct,
                &got.final_url,
                req.documents,
                budget,
            )
            .await;
            Some(d)
        }
        None => None,
    };
    if req.documents.accept_markdown {
        let source = if got.kind == DocKind::Markdown {
            "server_markdown"
        } else {
            "projection"
        };
        trace.set("content_source", json!(source));
    }
    if let Some(d) = &document {
        if let Some(t) = &d.trace {
            trace.set("document", t.clone());
        }
        warnings.extend(d.warnings.iter().cloned());
    }
    projections::write(
        &projections::wanted_http(req),
        out,
        &got.final_url,
        ct,
        reading.parsed.as_ref(),
        document,
        (!got.captured.prefix_complete).then_some(got.captured.text_prefix.len()),
        &mut files,
        warnings,
    )?;
    if req.wants_http(Artifact::Network) {
        let doc = network::document(request_id, &got.hops, !req.no_network_redact);
        let p = out.write(&Artifact::Network.file_name(), &projections::pretty(&doc))?;
        files.push((Artifact::Network, p));
    }
    if req.browser.evaluate_after_wait.is_some() {
        warnings.push(Warning::general(
            ErrorCode::BackendUnsupported,
            "evaluate_after_wait was not run: the plain HTTP response was enough",
        ));
    }
    Ok(files)
}

/// The result of an attempt the HTTP response was enough for.
fn outcome(
    req: &FetchRequest,
    request_id: &str,
    got: Received,
    reading: Reading,
    done: Done,
) -> FetchOutcome {
    let Done {
        out_dir,
        files,
        mut warnings,
    } = done;
    let (page_kind, next_action) = match &reading.challenge {
        Some(c) => {
            let (kind, warning, next) = takeover_hint::challenge_facts(c, req.url.as_str());
            warnings.push(warning);
            (Some(kind), Some::<Value>(next))
        }
        None => (None, None),
    };
    FetchOutcome {
        request_id: request_id.to_string(),
        url: req.url.to_string(),
        final_url: got.final_url.to_string(),
        status: got.status,
        content_type: got.content_type,
        render_used: "http",
        tab_id: None,
        out_dir,
        files,
        body_bytes: got.captured.bytes,
        body_truncated: got.captured.truncated,
        redirects: got.hops.len().saturating_sub(1),
        page_kind,
        next_action,
        warnings,
        download: None,
        trace: Trace::new(request_id),
        screenshot: None,
    }
}
