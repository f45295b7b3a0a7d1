//! `afhttp skill` (placeholder: filled in by the skill work).

use clap::Args;

use crate::envelope::Event;
use crate::error::AfError;

/// Arguments of `afhttp skill`.
#[derive(Debug, Args)]
pub struct SkillArgs {}

/// Run `afhttp skill`.
pub fn run(_args: SkillArgs) -> Event {
    Event::error(&AfError::invalid("skill: not built yet"), None)
}
