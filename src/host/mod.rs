//! The browser host (`afhttp host`): browser processes, the listener, the active profile,
//! and the runtime that ties them together.

pub mod browser;
pub mod capabilities;
pub mod inline;
pub mod listener;
pub mod log;
pub mod profile_session;
pub mod recent_requests;
pub mod recorder;
pub mod run;
pub mod token;
