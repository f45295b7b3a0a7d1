//! `afhttp profile prune --downloads --outputs`: retention by age for captured downloads and
//! default fetch output directories, never reaching outside afhttp's own directories.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::support::Fixture;

/// Set the modification time of `path` (not following a symlink) `days` into the past.
fn age_days(path: &Path, days: u64) {
    let t = SystemTime::now() - Duration::from_secs(days * 24 * 3600);
    let ts = nix::sys::time::TimeSpec::from(t.duration_since(SystemTime::UNIX_EPOCH).unwrap());
    nix::sys::stat::utimensat(
        None,
        path,
        &ts,
        &ts,
        nix::sys::stat::UtimensatFlags::NoFollowSymlink,
    )
    .unwrap();
}

fn paths(list: &Value) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| PathBuf::from(e["path"].as_str().unwrap()))
        .collect();
    out.sort();
    out
}

#[test]
fn prune_removes_old_downloads_and_outputs_only_inside_afhttp_directories() {
    let fx = Fixture::new();
    let outside = fx.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("precious.txt"), b"keep me").unwrap();
    age_days(&outside.join("precious.txt"), 30);
    age_days(&outside, 30);

    // A profile in use (locked or not does not matter for downloads): one old capture, one
    // new, and a symlink pointing out of the profile.
    let profile = fx.data.join("afhttp/profiles/chromium/work");
    let downloads = profile.join("downloads");
    fs::create_dir_all(&downloads).unwrap();
    fs::write(downloads.join("old-guid"), b"0123456789").unwrap();
    age_days(&downloads.join("old-guid"), 10);
    fs::write(downloads.join("new-guid"), b"new").unwrap();
    std::os::unix::fs::symlink(outside.join("precious.txt"), downloads.join("escape")).unwrap();
    age_days(&downloads.join("escape"), 10);
    // Another profile whose downloads/ itself is a symlink out: refused whole.
    let linked = fx.data.join("afhttp/profiles/chromium/linked");
    fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink(&outside, linked.join("downloads")).unwrap();

    // Default output directories: one old, one fresh, one symlink out.
    let outputs = fx.tmp.join("afhttp-out");
    fs::create_dir_all(outputs.join("oldreq")).unwrap();
    fs::write(outputs.join("oldreq/body.html"), b"<p>old</p>").unwrap();
    age_days(&outputs.join("oldreq/body.html"), 9);
    age_days(&outputs.join("oldreq"), 9);
    fs::create_dir_all(outputs.join("newreq")).unwrap();
    fs::write(outputs.join("newreq/body.html"), b"<p>new</p>").unwrap();
    std::os::unix::fs::symlink(&outside, outputs.join("linkreq")).unwrap();
    age_days(&outputs.join("linkreq"), 9);

    let dry = fx
        .cmd()
        .args(["profile", "prune", "--downloads", "--outputs", "--dry-run"])
        .run();
    let r = dry.result();
    assert_eq!(r["code"], "profile_prune", "{}", dry.context);
    assert_eq!(r["older_than"], "7d");
    assert_eq!(r["dry_run"], true);
    assert!(r.get("deleted").is_none() && r.get("would_delete").is_none());
    assert_eq!(
        paths(&r["downloads"]["would_remove"]),
        [downloads.join("old-guid")]
    );
    assert_eq!(
        paths(&r["outputs"]["would_remove"]),
        [outputs.join("oldreq")]
    );
    assert!(downloads.join("old-guid").exists() && outputs.join("oldreq").exists());

    let run = fx
        .cmd()
        .args(["profile", "prune", "--downloads", "--outputs"])
        .run();
    let r = run.result();
    assert_eq!(
        paths(&r["downloads"]["removed"]),
        [downloads.join("old-guid")]
    );
    assert_eq!(r["downloads"]["bytes"], 10);
    assert_eq!(
        paths(&r["downloads"]["skipped"]),
        [linked.join("downloads"), downloads.join("escape")]
    );
    assert_eq!(paths(&r["outputs"]["removed"]), [outputs.join("oldreq")]);
    assert_eq!(paths(&r["outputs"]["skipped"]), [outputs.join("linkreq")]);
    assert_eq!(r["outputs"]["root"], outputs.to_str().unwrap());

    assert!(!downloads.join("old-guid").exists());
    assert!(!outputs.join("oldreq").exists());
    assert!(downloads.join("new-guid").exists() && outputs.join("newreq").exists());
    assert!(outputs.join("linkreq").symlink_metadata().is_ok());
    assert!(downloads.join("escape").symlink_metadata().is_ok());
    assert_eq!(fs::read(outside.join("precious.txt")).unwrap(), b"keep me");
    // Whole profiles are only pruned when asked for.
    assert!(profile.is_dir() && linked.is_dir());

    // An explicit age applies to both, and a tighter one takes the fresh entries too.
    let run = fx
        .cmd()
        .args(["profile", "prune", "--outputs", "--older-than", "0s"])
        .run();
    assert_eq!(
        paths(&run.result()["outputs"]["removed"]),
        [outputs.join("newreq")]
    );
    assert!(run.result().get("downloads").is_none());
    assert!(downloads.join("new-guid").exists());
}

#[test]
fn prune_outputs_also_ages_out_a_hosts_mcp_output_area() {
    let fx = Fixture::new();
    let area = fx.data.join("afhttp/mcp-out");
    for (name, days) in [("oldmcp", 9), ("newmcp", 0)] {
        fs::create_dir_all(area.join(name)).unwrap();
        fs::write(area.join(name).join("body.html"), b"<p>x</p>").unwrap();
        if days > 0 {
            age_days(&area.join(name).join("body.html"), days);
            age_days(&area.join(name), days);
        }
    }
    let run = fx.cmd().args(["profile", "prune", "--outputs"]).run();
    let r = run.result();
    assert_eq!(
        paths(&r["mcp_outputs"]["removed"]),
        [area.join("oldmcp")],
        "{}",
        run.context
    );
    assert_eq!(r["mcp_outputs"]["root"], area.to_str().unwrap());
    assert!(!area.join("oldmcp").exists() && area.join("newmcp").exists());
}

#[test]
fn prune_without_an_age_for_whole_profiles_is_refused() {
    let fx = Fixture::new();
    let e = fx
        .cmd()
        .args(["profile", "prune"])
        .run()
        .error("invalid_argument", 1)
        .clone();
    assert!(
        e["message"].as_str().unwrap().contains("--older-than"),
        "{e}"
    );
    fx.cmd()
        .args(["profile", "prune", "--outputs", "--older-than", "7x"])
        .run()
        .error("invalid_argument", 1);
}

#[test]
fn a_foreign_outputs_root_is_refused() {
    let fx = Fixture::new();
    let outside = fx.path().join("elsewhere");
    fs::create_dir(&outside).unwrap();
    fs::create_dir(outside.join("req")).unwrap();
    age_days(&outside.join("req"), 30);
    std::os::unix::fs::symlink(&outside, fx.tmp.join("afhttp-out")).unwrap();
    let run = fx
        .cmd()
        .args(["profile", "prune", "--outputs", "--older-than", "1d"])
        .run();
    let r = run.result();
    assert!(r["outputs"]["removed"].as_array().unwrap().is_empty());
    assert_eq!(paths(&r["outputs"]["skipped"]), [fx.tmp.join("afhttp-out")]);
    assert!(outside.join("req").is_dir());
}
