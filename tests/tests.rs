//! Black-box tests: they run the built `afhttp` binary as an agent would.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

mod artifacts;
mod bad_input;
mod browser_fetch;
mod browser_options;
mod browser_request_options;
mod cli_contract;
mod container;
mod container_progress;
mod content_conformance;
mod deploy;
mod dialogs;
mod documents;
mod documents_pdf;
mod faults;
mod features;
mod fetch_browser_choice;
mod fetch_cookies;
mod fetch_decision;
mod fetch_http;
mod fetch_transport;
mod fixture_server;
mod fleet;
mod fuzz_props;
mod fuzz_replay;
mod host_browser;
mod host_cli;
mod host_listener;
mod host_profiles;
mod host_runtime;
mod host_transport;
mod identity;
mod load;
mod mcp;
mod network_capture;
mod observation;
mod pdf_artifact;
mod profile;
mod profile_jar;
mod prune;
mod readiness;
mod render_trace;
mod request_contract;
mod sandbox;
mod screenshot_formats;
mod security;
mod skill;
mod stall;
mod swarm;
mod takeover;
mod takeover_fetch;
mod transfer;
