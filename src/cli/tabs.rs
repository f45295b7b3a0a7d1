//! `afhttp tabs list|close`: page targets of a host.

use clap::{Args, Subcommand};
use serde_json::json;

use super::driver::DriverArgs;
use crate::envelope::Event;
use crate::sdk::tab_id::TabId;

/// Arguments of `afhttp tabs`.
#[derive(Debug, Args)]
pub struct TabsArgs {
    #[command(subcommand)]
    command: TabsCommand,
}

#[derive(Debug, Subcommand)]
enum TabsCommand {
    /// List page targets.
    List {
        #[command(flatten)]
        driver: DriverArgs,
    },
    /// Close one tab.
    Close {
        /// The tab id.
        #[arg(long, value_name = "ID")]
        tab: String,
        #[command(flatten)]
        driver: DriverArgs,
    },
}

/// Run `afhttp tabs`.
pub fn run(args: TabsArgs) -> Event {
    match args.command {
        TabsCommand::List { driver } => super::run_client(&driver, |client| async move {
            let tabs = client.tabs().await?;
            Ok(Event::result("tabs_list", json!({"tabs": tabs}), None))
        }),
        TabsCommand::Close { tab, driver } => {
            // A bad id is refused before any host is contacted.
            let tab = match TabId::parse(&tab) {
                Ok(t) => t,
                Err(e) => return super::error_event(e, None),
            };
            super::run_client(&driver, |client| async move {
                client.close_tab(tab.as_str()).await?;
                Ok(Event::result(
                    "tabs_close",
                    json!({"tab_id": tab.as_str(), "closed": true}),
                    None,
                ))
            })
        }
    }
}
