//! `afhttp health`: the host's `/health` document.

use clap::Args;

use super::driver::DriverArgs;
use crate::envelope::Event;

/// Arguments of `afhttp health`.
#[derive(Debug, Args)]
pub struct HealthArgs {
    #[command(flatten)]
    driver: DriverArgs,
    /// Succeed only when the host is ready (`status: ok`): asks `/health?ready`, which answers
    /// 503 while the host is starting or degraded (for probes and healthchecks).
    #[arg(long)]
    ready: bool,
}

/// Run `afhttp health`.
pub fn run(args: HealthArgs) -> Event {
    let ready = args.ready;
    super::run_client(&args.driver, |client| async move {
        let h = if ready {
            client.health_ready().await?
        } else {
            client.health().await?
        };
        Ok(Event::result("health", h, None))
    })
}
