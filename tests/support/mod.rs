//! Test support: the command wrapper, fixtures and fixture servers.
#![allow(dead_code, unused_imports)]

pub mod cmd;

pub use cmd::{Cmd, Fixture, Run};
