//! The host container's logs: a structured summary of its JSON log lines by default, raw
//! lines on request.

use std::collections::BTreeMap;

use bollard::container::LogOutput;
use bollard::query_parameters::LogsOptions;
use bollard::Docker;
use futures_util::StreamExt;
use serde_json::{json, Value};

use super::{engine, Reporter};
use crate::error::AfError;

/// Recent warnings and errors kept in a summary.
const PROBLEMS_KEPT: usize = 20;

/// The last `n` lines (stdout and stderr) as one string.
pub async fn tail_text(docker: &Docker, id: &str, n: usize) -> Result<String, AfError> {
    Ok(lines(docker, id, Some(n)).await?.join("\n"))
}

/// Log lines, oldest first; `tail` limits to the last N.
pub async fn lines(docker: &Docker, id: &str, tail: Option<usize>) -> Result<Vec<String>, AfError> {
    let options = LogsOptions {
        stdout: true,
        stderr: true,
        tail: tail.map_or_else(|| "all".to_string(), |n| n.to_string()),
        ..Default::default()
    };
    let mut stream = docker.logs(id, Some(options));
    let mut out = Vec::new();
    let mut partial = String::new();
    while let Some(item) = stream.next().await {
        let chunk = item.map_err(|e| engine::failed("read the container logs", &e))?;
        push_lines(&mut out, &mut partial, &chunk);
    }
    if !partial.is_empty() {
        out.push(partial);
    }
    Ok(out)
}

fn push_lines(out: &mut Vec<String>, partial: &mut String, chunk: &LogOutput) {
    let bytes = match chunk {
        LogOutput::StdOut { message }
        | LogOutput::StdErr { message }
        | LogOutput::Console { message }
        | LogOutput::StdIn { message } => message,
    };
    partial.push_str(&String::from_utf8_lossy(bytes));
    while let Some(i) = partial.find('\n') {
        let line: String = partial.drain(..=i).collect();
        out.push(line.trim_end_matches(['\n', '\r']).to_string());
    }
}

/// Follow the logs (after the last `tail` lines, or all), handing each line to `r` until
/// the container stops.
pub async fn follow(
    docker: &Docker,
    id: &str,
    tail: Option<usize>,
    r: &dyn Reporter,
) -> Result<usize, AfError> {
    let options = LogsOptions {
        stdout: true,
        stderr: true,
        follow: true,
        tail: tail.map_or_else(|| "all".to_string(), |n| n.to_string()),
        ..Default::default()
    };
    let mut stream = docker.logs(id, Some(options));
    let mut count = 0;
    let mut partial = String::new();
    while let Some(item) = stream.next().await {
        let chunk = item.map_err(|e| engine::failed("follow the container logs", &e))?;
        let mut done = Vec::new();
        push_lines(&mut done, &mut partial, &chunk);
        for line in done {
            r.line(&line);
            count += 1;
        }
    }
    Ok(count)
}

/// A structured summary of host log lines: counts per level and message, the time span,
/// the `host_ready` event, recent warnings and errors, and lines that were not JSON.
pub fn summarize(lines: &[String]) -> Value {
    let mut levels: BTreeMap<String, u64> = BTreeMap::new();
    let mut messages: BTreeMap<String, u64> = BTreeMap::new();
    let mut problems: Vec<Value> = Vec::new();
    let mut first_ts: Option<String> = None;
    let mut last_ts: Option<String> = None;
    let mut ready: Option<Value> = None;
    let mut ready_count = 0u64;
    let mut other = 0u64;
    for line in lines {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            if !line.trim().is_empty() {
                other += 1;
            }
            continue;
        };
        if v.get("kind").is_some() {
            // The host's one stdout event (printed again after every restart).
            if v.pointer("/result/code").and_then(Value::as_str) == Some("host_ready") {
                ready_count += 1;
                ready = v.get("result").cloned();
            } else if v.get("kind").and_then(Value::as_str) == Some("error") {
                problems.push(v.clone());
            }
            continue;
        }
        let level = v.get("level").and_then(Value::as_str).unwrap_or("unknown");
        *levels.entry(level.to_string()).or_default() += 1;
        if let Some(msg) = v.get("msg").and_then(Value::as_str) {
            *messages.entry(msg.to_string()).or_default() += 1;
        }
        if let Some(ts) = v.get("ts").and_then(Value::as_str) {
            first_ts.get_or_insert_with(|| ts.to_string());
            last_ts = Some(ts.to_string());
        }
        if matches!(level, "warn" | "error") {
            problems.push(v);
        }
    }
    let skip = problems.len().saturating_sub(PROBLEMS_KEPT);
    json!({
        "lines_total": lines.len(),
        "levels": levels,
        "messages": messages,
        "first_rfc3339": first_ts,
        "last_rfc3339": last_ts,
        "host_ready_count": ready_count,
        "host_ready": ready,
        "recent_problems": problems.split_off(skip),
        "non_json_lines": other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_counts_levels_and_keeps_problems() {
        let lines: Vec<String> = [
            r#"{"ts":"2026-01-01T00:00:00Z","level":"info","msg":"browser started"}"#,
            r#"{"kind":"result","result":{"code":"host_ready","version":"0.1.0"}}"#,
            r#"{"ts":"2026-01-01T00:00:05Z","level":"warn","msg":"browser exited"}"#,
            "plain text",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let s = summarize(&lines);
        assert_eq!(s["levels"]["info"], 1);
        assert_eq!(s["levels"]["warn"], 1);
        assert_eq!(s["host_ready_count"], 1);
        assert_eq!(s["host_ready"]["version"], "0.1.0");
        assert_eq!(s["recent_problems"][0]["msg"], "browser exited");
        assert_eq!(s["first_rfc3339"], "2026-01-01T00:00:00Z");
        assert_eq!(s["last_rfc3339"], "2026-01-01T00:00:05Z");
        assert_eq!(s["non_json_lines"], 1);
    }

    #[test]
    fn partial_chunks_join_into_lines() {
        let mut out = Vec::new();
        let mut partial = String::new();
        for part in ["ab", "c\nde", "f\n"] {
            let chunk = LogOutput::StdErr {
                message: bytes::Bytes::from(part.to_string()),
            };
            push_lines(&mut out, &mut partial, &chunk);
        }
        assert_eq!(out, vec!["abc", "def"]);
    }
}
