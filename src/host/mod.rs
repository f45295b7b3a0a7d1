//! The browser host (`afhttp host`): supervisor, browser backends, listener.
//!
//! Arrives with the browser-host work; the feature exists so the layout is stable.

pub mod listener;
