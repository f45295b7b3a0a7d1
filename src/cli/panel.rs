//! `afhttp panel`: print a short-lived takeover URL for a human (a `handoff` capability,
//! never the host's token).

use clap::Args;

use super::driver::DriverArgs;
use crate::envelope::Event;
use crate::error::AfError;

/// Shortest and longest `--ttl-s` (the host enforces the same bounds).
const TTL_RANGE: std::ops::RangeInclusive<u64> = 60..=3600;

/// Arguments of `afhttp panel`.
#[derive(Debug, Args)]
pub struct PanelArgs {
    #[command(flatten)]
    driver: DriverArgs,
    /// How long the URL (and the session it opens) stays valid, 60-3600 seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 900)]
    pub ttl_s: u64,
}

/// Run `afhttp panel`.
pub fn run(args: PanelArgs) -> Event {
    if !TTL_RANGE.contains(&args.ttl_s) {
        return Event::error(
            &AfError::invalid(format!(
                "--ttl-s must be between {} and {}, not {}",
                TTL_RANGE.start(),
                TTL_RANGE.end(),
                args.ttl_s
            )),
            None,
        );
    }
    let ttl = args.ttl_s;
    super::run_client(&args.driver, |client| async move {
        let doc = client.takeover_handoff(Some(ttl)).await?;
        Ok(Event::result("panel", doc, None))
    })
}
