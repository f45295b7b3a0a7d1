//! afhttp: open a URL and get back facts instead of guesses.
//!
//! The library is the SDK that the `afhttp` binary consumes: an HTTP-first fetch pipeline
//! that writes artifacts to disk and reports one structured result or error.
//!
//! # Layers (each names only the ones below it; `layers`'s test keeps it so)
//!
//! ```text
//! cli                        clap front end: flags -> requests, events out   (feature cli)
//! host   container   mcp     browser host + listener | Docker | MCP server   (features)
//! sdk    profile             fetch pipeline, CDP, HTTP, artifacts | profile store
//! env  error  envelope  fsutil                                  shared leaves
//! ```
//!
//! `sdk` names nothing above it: what it needs from above comes in through traits it defines
//! (a [`sdk::launcher::BrowserLauncher`] starts an inline browser; `host` implements it and
//! the CLI hands it to requests). `mcp` names nothing of `host`: it hands the listener a
//! service to serve under `/mcp`. `host` may name `mcp` (it serves it) and `cli` names all.

pub mod env;
pub mod envelope;
pub mod error;
pub mod fsutil;
#[doc(hidden)]
pub mod fuzzing;
#[cfg(test)]
mod layers;
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
