//! The one registry of environment variables afhttp reads.
//!
//! clap's `env =` attributes and the docs refer to these constants; nothing else names them.

/// Default endpoint for driver commands when `--endpoint-url` is omitted.
pub const ENDPOINT_URL: &str = "AFHTTP_ENDPOINT_URL";
/// Bearer token for driver commands and the host when `--token-secret` is omitted.
pub const TOKEN_SECRET: &str = "AFHTTP_TOKEN_SECRET";
/// File holding the bearer token (read by drivers; created with mode 0600 by the host).
pub const TOKEN_SECRET_FILE: &str = "AFHTTP_TOKEN_SECRET_FILE";
/// A fleet of hosts for driver commands (`--fleet`): members as `NAME=URL`, comma-separated,
/// or `@FILE`.
pub const FLEET: &str = "AFHTTP_FLEET";
/// Cookie jar file for `fetch` when `--cookie-jar` is omitted.
pub const COOKIE_JAR: &str = "AFHTTP_COOKIE_JAR";
/// Browser executable for inline hosts when `--browser-bin` is omitted.
pub const BROWSER_BIN: &str = "AFHTTP_BROWSER_BIN";
/// A true value (`1`, `true`, `yes`, `on`) disables Chromium's sandbox (containers, root).
pub const NO_SANDBOX: &str = "AFHTTP_NO_SANDBOX";
/// Log level for structured stderr logs: `error`, `warn`, `info`, `debug`.
pub const LOG: &str = "AFHTTP_LOG";
/// `afhttp host --listen`.
pub const LISTEN: &str = "AFHTTP_LISTEN";
/// `afhttp host --profile`.
pub const PROFILE: &str = "AFHTTP_PROFILE";
/// `afhttp host --display`.
pub const DISPLAY_MODE: &str = "AFHTTP_DISPLAY";
/// `afhttp host --browser`.
pub const BROWSER: &str = "AFHTTP_BROWSER";
/// `afhttp host --no-health` (a true value).
pub const NO_HEALTH: &str = "AFHTTP_NO_HEALTH";
/// `afhttp host --health-public`.
pub const HEALTH_PUBLIC: &str = "AFHTTP_HEALTH_PUBLIC";
/// `afhttp host --proxy-url` (explicit; ambient proxies are never used).
pub const PROXY_URL: &str = "AFHTTP_PROXY_URL";
/// `afhttp host --engine-env`, comma-separated `K=V` pairs.
pub const ENGINE_ENV: &str = "AFHTTP_ENGINE_ENV";
/// `afhttp host --browser-arg`, space-separated flags.
pub const BROWSER_ARG: &str = "AFHTTP_BROWSER_ARG";
/// `afhttp host --allowed-host`, comma-separated host names accepted without a bearer header.
pub const ALLOWED_HOST: &str = "AFHTTP_ALLOWED_HOST";
/// `afhttp host --deny-private-networks` (a true value).
pub const DENY_PRIVATE_NETWORKS: &str = "AFHTTP_DENY_PRIVATE_NETWORKS";
/// `afhttp host --egress-allow`, comma-separated IPs, CIDR blocks or host names.
pub const EGRESS_ALLOW: &str = "AFHTTP_EGRESS_ALLOW";
/// `afhttp host --egress-policy` (a true value).
pub const EGRESS_POLICY: &str = "AFHTTP_EGRESS_POLICY";
/// `afhttp host --recent-requests-cap`.
pub const RECENT_REQUESTS_CAP: &str = "AFHTTP_RECENT_REQUESTS_CAP";
/// `afhttp host --profile-switch-wait-ms`.
pub const PROFILE_SWITCH_WAIT_MS: &str = "AFHTTP_PROFILE_SWITCH_WAIT_MS";
/// `afhttp host --upload-max-bytes`.
pub const UPLOAD_MAX_BYTES: &str = "AFHTTP_UPLOAD_MAX_BYTES";
/// `afhttp host --max-clients`.
pub const MAX_CLIENTS: &str = "AFHTTP_MAX_CLIENTS";
/// `afhttp host --max-tabs`.
pub const MAX_TABS: &str = "AFHTTP_MAX_TABS";
/// `afhttp host --takeover-provider`.
pub const TAKEOVER_PROVIDER: &str = "AFHTTP_TAKEOVER_PROVIDER";
/// `afhttp host --takeover-quality-percent`.
pub const TAKEOVER_QUALITY_PERCENT: &str = "AFHTTP_TAKEOVER_QUALITY_PERCENT";
/// Test-only: the host's restart window in milliseconds instead of ten minutes, so a test
/// can space injected browser crashes past it without waiting. Not for production use.
pub const TEST_RESTART_WINDOW_MS: &str = "AFHTTP_TEST_RESTART_WINDOW_MS";
/// Base directory for profiles (`$XDG_DATA_HOME/afhttp/profiles`).
pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
/// Terminal type: `dumb` turns the image-build progress bar into plain lines.
pub const TERM: &str = "TERM";
/// Home directory, used for `~/.local/share` and agent skill directories.
pub const HOME: &str = "HOME";

/// Whether an environment value counts as true (`1`, `true`, `yes`, `on`, any case).
pub fn is_truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// Read a variable as a non-empty string.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    #[test]
    fn truthy_values() {
        for v in ["1", "true", "TRUE", "yes", "on"] {
            assert!(super::is_truthy(v));
        }
        for v in ["", "0", "false", "no", "off", "2"] {
            assert!(!super::is_truthy(v));
        }
    }
}
