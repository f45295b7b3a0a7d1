//! `read_artifact`: page through a file of an earlier fetch, inside its output directory.

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::budget::{self, Budget};
use super::result::tool_error;
use super::AfhttpMcp;
use crate::error::AfError;

/// Arguments of `read_artifact`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArtifactArgs {
    /// The artifact's path (a `*_file` of the fetch result) or its `file://` URI.
    pub path: String,
    /// Where to start: a byte offset (unit bytes) or a line number counted from 0 (unit
    /// lines). Default 0.
    #[serde(default)]
    pub offset: u64,
    /// How much to return: bytes or lines (default and maximum: the text budget).
    #[serde(default)]
    pub limit: Option<u64>,
    /// `bytes` (default), `lines`, or `entries` (the `links` of links.json, the `entries` of
    /// network.json and console.json, the `nodes` of observation.json; offset and limit
    /// count entries).
    #[serde(default)]
    pub unit: Option<String>,
    /// With `unit: "entries"`: only the links, network or console entries that match.
    #[serde(default)]
    pub filter: Option<super::entries::EntryFilter>,
}

/// Run the `read_artifact` tool.
pub async fn call(server: &AfhttpMcp, args: Map<String, Value>) -> CallToolResult {
    let args: ReadArtifactArgs = match super::decode_args("read_artifact", args) {
        Ok(a) => a,
        Err(e) => return tool_error(&e, None),
    };
    let budget = server.config.text_budget;
    let dirs = server.known_out_dirs();
    match tokio::task::spawn_blocking(move || read(&args, &dirs, budget)).await {
        Ok(Ok((text, facts))) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(facts);
            result
        }
        Ok(Err(e)) => tool_error(&e, None),
        Err(e) => tool_error(&AfError::invalid(format!("read_artifact: {e}")), None),
    }
}

/// The page of `args.path` and its facts (offsets, sizes, where to read on).
fn read(
    args: &ReadArtifactArgs,
    dirs: &[PathBuf],
    budget: Budget,
) -> Result<(String, Value), AfError> {
    let path = inside_out_dir(&args.path, dirs)?;
    let unit = args.unit.as_deref().unwrap_or("bytes");
    if args.filter.is_some() && unit != "entries" {
        return Err(on_field("filter", "filter needs unit \"entries\""));
    }
    // What the page may fill once the header (a path and a few numbers) is written.
    let header_room = format!(
        "{} (entries 0000000000..0000000000 of 0000000000 matching, 0000000000 in the file); \
         read on with offset 0000000000\n",
        path.display()
    );
    let room = budget.less(&header_room);
    let room = Budget {
        tokens: room.tokens.saturating_sub(8).max(1),
        chars: room.chars.max(1),
    };
    // A UTF-8 character is at most 3 bytes per UTF-16 unit.
    let bytes_room = (room.chars as u64).saturating_mul(3).max(4);
    let limit = args.limit.unwrap_or(u64::MAX);
    if limit == 0 {
        return Err(on_field("limit", "limit must be at least 1"));
    }
    let total = std::fs::metadata(&path)
        .map_err(|e| AfError::io(format!("read {}", path.display()), &e))?
        .len();
    let (page, next, returned) = match unit {
        "bytes" => {
            let want = limit.min(bytes_room);
            let mut f = std::fs::File::open(&path)
                .map_err(|e| AfError::io(format!("open {}", path.display()), &e))?;
            f.seek(SeekFrom::Start(args.offset))
                .map_err(|e| AfError::io("seek", &e))?;
            let mut buf = Vec::new();
            f.take(want)
                .read_to_end(&mut buf)
                .map_err(|e| AfError::io("read", &e))?;
            // End on a character boundary so the next page starts on one.
            let mut keep = buf.len();
            if (args.offset + keep as u64) < total {
                while keep > 0 && std::str::from_utf8(&buf[..keep]).is_err() && buf.len() - keep < 4
                {
                    keep -= 1;
                }
                if keep == 0 {
                    keep = buf.len();
                }
            }
            // Within the tokens and characters too; a file that is not UTF-8 (bytes shown
            // lossily) keeps at most one byte per token and per character.
            keep = match std::str::from_utf8(&buf[..keep]) {
                Ok(text) => room.fit(text),
                Err(_) => keep.min(room.tokens / 2).min(room.chars / 2).max(1),
            };
            let text = String::from_utf8_lossy(&buf[..keep]).into_owned();
            let end = args.offset + keep as u64;
            (text, (end < total).then_some(end), keep as u64)
        }
        "lines" => {
            let all = std::fs::read(&path).map_err(|e| AfError::io("read", &e))?;
            let all = String::from_utf8_lossy(&all);
            let lines: Vec<&str> = all.split_inclusive('\n').collect();
            let start = (args.offset as usize).min(lines.len());
            let mut text = String::new();
            let mut n = 0usize;
            let mut left = room;
            for line in lines
                .iter()
                .skip(start)
                .take(usize::try_from(limit).unwrap_or(usize::MAX))
            {
                // Counted line by line (one token of slack each: a line's count alone may
                // differ by one from its count inside the page).
                let (t, c) = (budget::tokens(line) + 1, budget::chars(line));
                if t > left.tokens || c > left.chars {
                    if n == 0 {
                        text.push_str(&line[..room.fit(line)]);
                        n = 1;
                    }
                    break;
                }
                left.tokens -= t;
                left.chars -= c;
                text.push_str(line);
                n += 1;
            }
            let end = start + n;
            (text, (end < lines.len()).then_some(end as u64), n as u64)
        }
        "entries" => {
            return super::entries::page(&path, args.offset, args.limit, args.filter.as_ref(), room)
        }
        other => {
            return Err(on_field(
                "unit",
                &format!("unit must be bytes, lines or entries, not {other}"),
            ))
        }
    };
    let mut header = format!(
        "{} ({unit} {}..{} of a {total}-byte file)",
        path.display(),
        args.offset,
        args.offset + returned
    );
    match next {
        Some(n) => header.push_str(&format!("; read on with offset {n}\n")),
        None => header.push_str("; end of file\n"),
    }
    let facts = json!({
        "path": path,
        "unit": unit,
        "offset": args.offset,
        "returned": returned,
        "total_bytes": total,
        "next_offset": next,
        "eof": next.is_none(),
    });
    Ok((format!("{header}{page}"), facts))
}

/// `raw` as a canonical path inside one of `dirs`, or `invalid_argument`.
pub(crate) fn inside_out_dir(raw: &str, dirs: &[PathBuf]) -> Result<PathBuf, AfError> {
    let given = match url::Url::parse(raw) {
        Ok(u) if u.scheme() == "file" => u
            .to_file_path()
            .map_err(|_| on_field("path", "path is not a usable file:// URI"))?,
        _ => PathBuf::from(raw),
    };
    let canonical = given.canonicalize().map_err(|e| {
        on_field(
            "path",
            &format!("artifact {} cannot be opened: {e}", given.display()),
        )
    })?;
    if dirs.iter().any(|d| canonical.starts_with(d)) && canonical.is_file() {
        return Ok(canonical);
    }
    Err(on_field(
        "path",
        &format!(
            "{} is not an artifact of a fetch in this session",
            given.display()
        ),
    )
    .with_hint("pass a *_file path from a fetch result of this server"))
}

fn on_field(field: &str, message: &str) -> AfError {
    AfError::invalid(message.to_string()).with_field(field)
}
