//! The browser host (`afhttp host`): browser processes, the listener, the active profile,
//! and the runtime that ties them together.

pub mod browser;
pub mod capabilities;
pub mod listener;
pub mod profile_session;
