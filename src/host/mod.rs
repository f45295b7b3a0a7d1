//! The browser host (`afhttp host`): browser processes, the listener, the active profile,
//! and the runtime that ties them together.

pub mod browser;
pub mod capabilities;
pub mod display;
pub mod downloads;
pub mod egress;
pub mod init;
pub mod inline;
pub mod listener;
pub(crate) mod live;
pub mod log;
pub mod mcp_host;
pub mod nssdb;
pub mod orphans;
pub mod procs;
pub mod profile_session;
pub mod recent_requests;
pub mod recorder;
pub mod restart_budget;
pub mod run;
pub(crate) mod stderr;
mod supervisor;
pub mod token;
