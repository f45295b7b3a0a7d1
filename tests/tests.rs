//! Black-box tests: they run the built `afhttp` binary as an agent would.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

mod cli_contract;
mod profile;
mod skill;
