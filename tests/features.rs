//! The SDK-only build links none of the host, container, CLI or MCP dependencies.

use crate::support::deadline::CommandDeadline;
use std::process::Command;

#[test]
fn sdk_only_build_links_no_heavy_dependencies() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--no-default-features",
            "--features",
            "sdk",
            "--edges",
            "normal",
            "--prefix",
            "none",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output_within(std::time::Duration::from_secs(300))
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(tree.contains("reqwest"), "unexpected tree:\n{tree}");
    for forbidden in [
        "chromiumoxide",
        "axum",
        "bollard",
        "clap ",
        "rmcp",
        "schemars",
    ] {
        assert!(
            !tree.lines().any(|l| l.starts_with(forbidden)),
            "sdk-only build links {forbidden}:\n{tree}"
        );
    }
}
