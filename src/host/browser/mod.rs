//! Launching and owning browser processes for the host (spec §7 "Isolation invariant", §10).
//!
//! Every backend is spawned by afhttp itself — cleared environment plus a small allowlist, an
//! explicit `--user-data-dir`, its own process group — so nothing ambient (proxies, the user's
//! real profile, afhttp's own secrets) reaches the engine, and no browser process outlives us.

mod args;
mod binary;
mod env;
mod process;

pub use args::{
    camoufox_args, check_extra_args, chromium_args, fingerprint_seed, lightpanda_args,
    LaunchOptions,
};
pub use binary::{executable_names, find_executable, resolve_auto, resolve_binary};
pub use env::browser_env;
pub use process::{launch, product, RunningBrowser};
