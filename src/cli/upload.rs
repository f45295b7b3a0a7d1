//! `afhttp upload`: attach a local file to an `<input type=file>` in a host's tab.

use std::path::PathBuf;

use clap::Args;

use super::driver::DriverArgs;
use crate::envelope::Event;
use crate::sdk::tab_id::TabId;
use crate::sdk::transfer::upload::{LocalFile, Selector};

/// Arguments of `afhttp upload`.
#[derive(Debug, Args)]
pub struct UploadArgs {
    /// The tab holding the input (`afhttp tabs list`, or a fetch's `tab_id`).
    #[arg(long, value_name = "ID")]
    pub tab: String,
    /// CSS selector of the input; `host >> shadow >> inner` enters an open shadow root and
    /// `iframe >> frame >> inner` a same-origin iframe (observation.json selector hints).
    #[arg(long, value_name = "CSS", allow_hyphen_values = true)]
    pub selector: String,
    /// The file on this machine; its bytes are sent to the host.
    #[arg(long, value_name = "PATH")]
    pub file: PathBuf,
    #[command(flatten)]
    driver: DriverArgs,
}

/// Run `afhttp upload`.
pub fn run(args: UploadArgs) -> Event {
    // Bad input is refused before any host is contacted.
    let checked = TabId::parse(&args.tab)
        .and_then(|_| Selector::parse(&args.selector))
        .and_then(|s| Ok((s, LocalFile::check(&args.file)?)));
    if let Err(e) = checked {
        return super::error_event(e, None);
    }
    let UploadArgs {
        tab,
        selector,
        file,
        driver,
    } = args;
    super::run_client(&driver, |client| async move {
        let done = client.upload(&tab, &selector, &file).await?;
        Ok(Event::result("upload", done.to_json(), None))
    })
}
