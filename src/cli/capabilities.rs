//! `afhttp capabilities`: the host's `/capabilities` document.

use clap::Args;

use super::driver::DriverArgs;
use crate::envelope::Event;

/// Arguments of `afhttp capabilities`.
#[derive(Debug, Args)]
pub struct CapabilitiesArgs {
    #[command(flatten)]
    driver: DriverArgs,
}

/// Run `afhttp capabilities`.
pub fn run(args: CapabilitiesArgs) -> Event {
    super::run_client(&args.driver, |client| async move {
        let c = client.capabilities().await?;
        Ok(Event::result("capabilities", c, None))
    })
}
