//! `afhttp health`: the host's `/health` document.

use clap::Args;

use super::driver::DriverArgs;
use crate::envelope::Event;

/// Arguments of `afhttp health`.
#[derive(Debug, Args)]
pub struct HealthArgs {
    #[command(flatten)]
    driver: DriverArgs,
}

/// Run `afhttp health`.
pub fn run(args: HealthArgs) -> Event {
    super::run_client(&args.driver, |client| async move {
        let h = client.health().await?;
        Ok(Event::result("health", h, None))
    })
}
