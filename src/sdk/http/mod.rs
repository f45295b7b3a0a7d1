//! The plain-HTTP path: client, redirect chain, body streaming, error mapping, network log.

pub mod body;
pub mod client;
pub mod errors;
pub mod exchange;
pub mod guard;
pub mod network;
