//! The managed local host container, driven through the Docker Engine API.
//!
//! Arrives with the container work; the feature exists so the layout is stable.
