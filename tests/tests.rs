//! Black-box tests: they run the built `afhttp` binary as an agent would.

mod support;
