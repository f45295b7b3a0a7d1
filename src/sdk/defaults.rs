//! The defaults every front end shares: the CLI's flags (`default_value_t`), the MCP tools,
//! the SDK's client and [`crate::sdk::fetch::FetchSpec::validate`] read them here, so a
//! default changes in one place.

use std::time::Duration;

/// Bound of a fetch attempt, a control call or a CDP command, in milliseconds.
pub const TIMEOUT_MS: u64 = 30_000;
/// [`TIMEOUT_MS`] as a duration.
pub const TIMEOUT: Duration = Duration::from_millis(TIMEOUT_MS);
/// The hint of a fetch that ran out of `timeout_ms` (the error's field is `timeout_ms`, so a
/// front end can name its own option).
pub const TIMEOUT_HINT: &str = "raise timeout_ms, or set retry";
/// First delay between retries, in milliseconds (it doubles each retry).
pub const BACKOFF_MS: u64 = 250;
/// [`BACKOFF_MS`] as a duration.
pub const BACKOFF: Duration = Duration::from_millis(BACKOFF_MS);
/// How long a host remembers a third-party host that stalled (`/stalled-hosts`), so its
/// next fetches block it from the start.
pub const STALL_MEMORY_TTL: Duration = Duration::from_secs(300);
