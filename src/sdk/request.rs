//! The vocabulary of a fetch request: render mode, wait spec, artifact tokens (from the
//! artifact registry).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::AfError;

/// Artifact tokens live in the registry ([`crate::sdk::artifact`]).
pub use crate::sdk::artifact::Artifact;

/// Whether and when a browser renders the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RenderMode {
    /// Plain HTTP only; never start a browser.
    None,
    /// HTTP first; escalate to a browser on a mechanical reason.
    #[default]
    Auto,
    /// Always render in a browser.
    Always,
}

impl RenderMode {
    /// The textual form (`none`, `auto`, `always`).
    pub fn as_str(self) -> &'static str {
        match self {
            RenderMode::None => "none",
            RenderMode::Auto => "auto",
            RenderMode::Always => "always",
        }
    }
}

impl FromStr for RenderMode {
    type Err = AfError;
    fn from_str(s: &str) -> Result<Self, AfError> {
        match s {
            "none" => Ok(RenderMode::None),
            "auto" => Ok(RenderMode::Auto),
            "always" => Ok(RenderMode::Always),
            _ => Err(AfError::invalid(format!(
                "render must be none, auto or always, not {s:?}"
            ))),
        }
    }
}

/// When the page counts as ready for capture.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Wait {
    /// Load, then network quiet and DOM stable (readiness knobs apply).
    #[default]
    Auto,
    /// The `load` event.
    Load,
    /// Network idle.
    Idle,
    /// A CSS selector matches.
    Selector(String),
    /// A CSS selector matches a visible element.
    SelectorVisible(String),
    /// A fixed delay after the navigation commit, in milliseconds.
    Ms(u64),
}

/// The largest `ms:` wait accepted (10 minutes).
pub const MAX_WAIT_MS: u64 = 600_000;

impl FromStr for Wait {
    type Err = AfError;
    fn from_str(s: &str) -> Result<Self, AfError> {
        let bad = |why: &str| AfError::invalid(format!("wait {s:?}: {why}"));
        if s.chars().any(char::is_control) {
            return Err(bad("control characters are not allowed"));
        }
        match s {
            "auto" => return Ok(Wait::Auto),
            "load" => return Ok(Wait::Load),
            "idle" => return Ok(Wait::Idle),
            _ => {}
        }
        if let Some(css) = s.strip_prefix("selector-visible:") {
            return selector(css).map(Wait::SelectorVisible).map_err(&bad);
        }
        if let Some(css) = s.strip_prefix("selector:") {
            return selector(css).map(Wait::Selector).map_err(&bad);
        }
        if let Some(ms) = s.strip_prefix("ms:") {
            let n: u64 = ms
                .parse()
                .map_err(|_| bad("ms: takes a whole number of milliseconds"))?;
            if n > MAX_WAIT_MS {
                return Err(bad("ms: is at most 600000"));
            }
            return Ok(Wait::Ms(n));
        }
        Err(bad(
            "expected auto, load, idle, selector:<css>, selector-visible:<css> or ms:<n>",
        ))
    }
}

fn selector(css: &str) -> Result<String, &'static str> {
    let css = css.trim();
    if css.is_empty() {
        return Err("the selector is empty");
    }
    if css.len() > 4096 {
        return Err("the selector is longer than 4096 bytes");
    }
    Ok(css.to_string())
}

impl fmt::Display for Wait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wait::Auto => f.write_str("auto"),
            Wait::Load => f.write_str("load"),
            Wait::Idle => f.write_str("idle"),
            Wait::Selector(s) => write!(f, "selector:{s}"),
            Wait::SelectorVisible(s) => write!(f, "selector-visible:{s}"),
            Wait::Ms(n) => write!(f, "ms:{n}"),
        }
    }
}

/// Which sub-request response bodies a browser fetch saves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkBodies {
    /// Metadata only.
    Off,
    /// Text/JSON XHR and fetch bodies.
    Xhr,
    /// Every body CDP exposes.
    All,
}

impl NetworkBodies {
    /// The textual form (`off`, `xhr`, `all`).
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkBodies::Off => "off",
            NetworkBodies::Xhr => "xhr",
            NetworkBodies::All => "all",
        }
    }
}

impl FromStr for NetworkBodies {
    type Err = AfError;
    fn from_str(s: &str) -> Result<Self, AfError> {
        match s {
            "off" => Ok(NetworkBodies::Off),
            "xhr" => Ok(NetworkBodies::Xhr),
            "all" => Ok(NetworkBodies::All),
            _ => Err(AfError::invalid(format!(
                "network_bodies must be off, xhr or all, not {s:?}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_specs() {
        assert_eq!("auto".parse::<Wait>().unwrap(), Wait::Auto);
        assert_eq!("ms:250".parse::<Wait>().unwrap(), Wait::Ms(250));
        assert_eq!(
            "selector:#app .x".parse::<Wait>().unwrap(),
            Wait::Selector("#app .x".into())
        );
        assert_eq!(
            "selector-visible:#late".parse::<Wait>().unwrap(),
            Wait::SelectorVisible("#late".into())
        );
        for bad in [
            "",
            "ms:",
            "ms:-1",
            "ms:99999999999",
            "selector:",
            "soon",
            "selector:\u{7}",
        ] {
            assert!(bad.parse::<Wait>().is_err(), "{bad:?}");
        }
        for w in [
            "auto",
            "load",
            "idle",
            "ms:5",
            "selector:a",
            "selector-visible:b",
        ] {
            assert_eq!(w.parse::<Wait>().unwrap().to_string(), w);
        }
    }
}
