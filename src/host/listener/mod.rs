//! The host's CDP/HTTP listener: `/health`, `/capabilities`, `/json/*`, the `/cdp`
//! WebSocket proxy, file transfer (`/downloads/{id}`, `/uploads`) and `/takeover/*`, each
//! route in an authentication zone.
//!
//! The host builds a [`ListenerState`] over its [`HostView`], then [`serve`]s it (or mounts
//! [`router`] itself).

pub mod auth;
pub mod caps;
mod client_frames;
pub mod config;
mod devtools;
pub mod handoff;
mod pool_frames;
pub mod proxy;
pub mod refusal;
mod request_facts;
pub mod routes;
pub mod serve;
pub mod slots;
pub mod stall_memory;
pub mod state;
pub mod tab_lease;
pub mod tab_pool;
pub mod takeover;
pub mod transfer;
pub mod uploads;

pub use auth::{Access, ApiError, AuthZone};
pub use config::{ListenAddr, ListenerConfig, TokenSecret};
pub use routes::{router, Handler, RouteSpec, ROUTES};
pub use serve::{serve, BoundListener};
pub use state::{HostStatus, HostView, ListenerState, McpEndpoint, TakeoverUpstream, Upstream};
