//! `afhttp profile` (placeholder: filled in by the profile work).

use clap::Args;

use crate::envelope::Event;
use crate::error::AfError;

/// Arguments of `afhttp profile`.
#[derive(Debug, Args)]
pub struct ProfileArgs {}

/// Run `afhttp profile`.
pub fn run(_args: ProfileArgs) -> Event {
    Event::error(&AfError::invalid("profile: not built yet"), None)
}
