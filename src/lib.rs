//! afhttp: open a URL and get back facts instead of guesses.
//!
//! The library is the SDK that the `afhttp` binary consumes: an HTTP-first fetch pipeline
//! that writes artifacts to disk and reports one structured result or error.

pub mod env;
pub mod envelope;
pub mod error;
pub mod fsutil;
#[doc(hidden)]
pub mod fuzzing;
pub mod profile;
pub mod sdk;
pub mod skill;

#[cfg(feature = "host")]
pub mod host;

#[cfg(feature = "container")]
pub mod container;

#[cfg(feature = "mcp")]
pub mod mcp;

#[cfg(feature = "cli")]
pub mod cli;

#[cfg(feature = "cli")]
pub mod mcp_install;

pub use error::{AfError, ErrorCode, Warning};

/// The crate version, reported in results and compared with hosts.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub use sdk::client::Client;
pub use sdk::request::{Artifact, NetworkBodies, RenderMode, Wait};
