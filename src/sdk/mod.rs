//! The client side: fetch requests, the HTTP path, cookies, artifacts and classification.
//!
//! `afhttp fetch` is a thin consumer of this module; library users get the same surface.

pub mod afterwards;
pub mod artifact;
pub mod browser;
pub mod builder;
pub mod cdp;
pub mod challenge;
pub mod client;
pub mod content_type;
pub mod cookies;
pub mod defaults;
pub mod documents;
pub mod egress;
pub mod endpoint;
pub mod fetch;
#[cfg(test)]
mod flag_free;
pub mod fleet;
pub mod host_http;
pub mod html;
pub mod http;
pub mod launcher;
pub mod redact;
pub mod render_decision;
pub mod request;
pub mod secret;
pub mod tab_id;
pub mod target;
pub mod transfer;

pub use builder::{CdpBuilder, FetchBuilder, FetchCookie, FetchCookieSameSite};
pub use fetch::{FetchFailure, FetchOutcome, FetchRequest, FetchSpec};
pub use secret::Secret;
