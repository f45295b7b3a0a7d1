//! `next_action` for pages that need a human, and shell quoting for commands we print.

use serde_json::{json, Value};

use crate::error::{ErrorCode, Warning};
use crate::sdk::challenge::{Challenge, PageKind};

/// What a matched challenge adds to a result: `page_kind`, its warning, and `next_action`.
pub fn challenge_facts(c: &Challenge, requested_url: &str) -> (PageKind, Warning, Value) {
    let code = match c.page_kind {
        PageKind::BotWall => ErrorCode::BotWallDetected,
        PageKind::SecurityChallenge => ErrorCode::SecurityChallengeDetected,
    };
    let warning = Warning::general(code, format!("{}: {}", c.vendor, c.marker));
    let next = human_takeover(
        requested_url,
        &format!("challenge_markers: {} ({})", c.vendor, c.marker),
    );
    (c.page_kind, warning, next)
}

/// Quote one argument for a POSIX shell (single quotes; only when needed).
pub fn shell_quote(arg: &str) -> String {
    let safe = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if safe {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r#"'\''"#))
    }
}

/// The `next_action` object telling the agent a human must clear the page.
pub fn human_takeover(url: &str, reason: &str) -> Value {
    json!({
        "kind": "human_takeover",
        "reason": reason,
        "target_content_verified": false,
        "recommended_command": format!("afhttp fetch {} --takeover", shell_quote(url)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("https://a.b/c"), "https://a.b/c");
        assert_eq!(shell_quote("https://a/?x=1&y=2"), "'https://a/?x=1&y=2'");
        assert_eq!(shell_quote("it's"), r#"'it'\''s'"#);
        assert_eq!(shell_quote(""), "''");
    }
}
