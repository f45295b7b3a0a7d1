//! `afhttp profile …` against profile directories built by hand in an isolated data dir.

use std::fs;
use std::io::Write;
use std::path::PathBuf;

use nix::fcntl::{Flock, FlockArg};
use serde_json::{json, Value};

use crate::support::Fixture;

fn profile_dir(fx: &Fixture, backend: &str, name: &str) -> PathBuf {
    let dir = fx.data.join("afhttp/profiles").join(backend).join(name);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_meta(dir: &std::path::Path, backend: &str, name: &str, last_used: &str) {
    let meta = json!({
        "schema_version": 2,
        "name": name,
        "backend": backend,
        "created_at_rfc3339": "2020-01-01T00:00:00Z",
        "last_used_at_rfc3339": last_used,
        "last_host_version": "0.0.1",
    });
    fs::write(dir.join("afhttp-profile.json"), meta.to_string()).unwrap();
}

/// Hold the profile lock the way a host does: flock on `afhttp.lock`, then the pid record.
fn hold_lock(dir: &std::path::Path) -> Flock<fs::File> {
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join("afhttp.lock"))
        .unwrap();
    let mut lock = Flock::lock(file, FlockArg::LockExclusiveNonblock).unwrap();
    let record =
        json!({"pid": 4242, "started_at_rfc3339": "2026-01-01T00:00:00Z", "hostname": "h"});
    lock.write_all(record.to_string().as_bytes()).unwrap();
    lock
}

fn names(list: &Value) -> Vec<String> {
    list["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p["backend"].as_str().unwrap(),
                p["name"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn list_reports_profiles_metadata_and_locks() {
    let fx = Fixture::new();
    let empty = fx.cmd().args(["profile", "list"]).run();
    let r = empty.result();
    assert_eq!(r["code"], "profile_list");
    assert_eq!(r["profiles"], json!([]));

    let work = profile_dir(&fx, "chromium", "work");
    write_meta(&work, "chromium", "work", "2026-01-02T03:04:05Z");
    fs::write(work.join("Cookies"), vec![0u8; 1000]).unwrap();
    let bare = profile_dir(&fx, "brave", "contabo.com");
    let bad = profile_dir(&fx, "edge", "bad");
    write_meta(&bad, "chromium", "bad", "2026-01-02T03:04:05Z");
    profile_dir(&fx, "chromium", ".hidden");
    fs::create_dir_all(fx.data.join("afhttp/profiles/legacy")).unwrap();
    let _held = hold_lock(&bare);

    let run = fx.cmd().args(["profile", "list"]).run();
    let r = run.result();
    assert_eq!(names(r), ["chromium/work", "edge/bad", "brave/contabo.com"]);
    let p = &r["profiles"][0];
    assert_eq!(p["metadata_status"], "ok");
    assert_eq!(p["last_used_at_rfc3339"], "2026-01-02T03:04:05Z");
    assert_eq!(p["locked"], false);
    assert!(p["size_bytes"].as_u64().unwrap() >= 1000);
    assert_eq!(p["path"], json!(work));
    assert_eq!(r["profiles"][1]["metadata_status"], "invalid");
    let b = &r["profiles"][2];
    assert_eq!(b["metadata_status"], "missing");
    assert_eq!(b["locked"], true);
    assert_eq!(b["lock_owner_pid"], 4242);
    assert_eq!(
        r["deprecated_unscoped"],
        json!([fx.data.join("afhttp/profiles/legacy")])
    );

    let only = fx
        .cmd()
        .args(["profile", "list", "--backend", "brave"])
        .run();
    assert_eq!(names(only.result()), ["brave/contabo.com"]);
}

#[test]
fn info_and_lock_status() {
    let fx = Fixture::new();
    let dir = profile_dir(&fx, "brave", "work");
    write_meta(&dir, "brave", "work", "2026-01-02T03:04:05Z");

    let run = fx.cmd().args(["profile", "info", "work"]).run();
    let r = run.result();
    assert_eq!(r["code"], "profile_info");
    assert_eq!(r["backend"], "brave");
    assert_eq!(r["browser_family"], "chromium");
    assert_eq!(r["metadata"]["schema_version"], 2);
    assert_eq!(r["locked"], false);

    let held = hold_lock(&dir);
    let run = fx.cmd().args(["profile", "lock-status", "work"]).run();
    let r = run.result();
    assert_eq!(r["code"], "profile_lock_status");
    assert_eq!(r["locked"], true);
    assert_eq!(r["lock_owner_pid"], 4242);
    drop(held);
    let run = fx.cmd().args(["profile", "lock-status", "work"]).run();
    assert_eq!(run.result()["locked"], false);

    // The same name under two backends needs --backend.
    profile_dir(&fx, "chromium", "work");
    let run = fx.cmd().args(["profile", "info", "work"]).run();
    let e = run.failure("invalid_argument", 1);
    assert!(e.message.as_str().contains("brave"));
    let run = fx
        .cmd()
        .args(["profile", "info", "work", "--backend", "chromium"])
        .run();
    assert_eq!(run.result()["metadata_status"], "missing");
    fx.cmd()
        .args(["profile", "info", "work", "--backend", "firefox"])
        .run()
        .error("invalid_argument", 1);
    fx.cmd()
        .args(["profile", "info", "nope"])
        .run()
        .error("profile_not_found", 1);
}

#[test]
fn hostile_names_are_refused() {
    let fx = Fixture::new();
    let victim = fx.path().join("victim");
    fs::create_dir_all(&victim).unwrap();
    for name in ["../etc", "a/b", "", "..", ".hidden", "-", "x\u{7f}"] {
        for sub in ["info", "lock-status", "downloads", "cookies"] {
            fx.cmd()
                .args(["profile", sub, name])
                .run()
                .error("profile_invalid_name", 1);
        }
        fx.cmd()
            .args(["profile", "delete", name, "--confirm", name])
            .run()
            .error("profile_invalid_name", 1);
    }
    assert!(victim.exists());
}

#[test]
fn delete_needs_confirmation_and_an_unlocked_profile() {
    let fx = Fixture::new();
    let dir = profile_dir(&fx, "chromium", "work");
    fs::write(dir.join("state"), b"x").unwrap();
    let outside = fx.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("keep"), b"k").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("escape")).unwrap();

    fx.cmd()
        .args(["profile", "delete", "work"])
        .run()
        .error("invalid_argument", 1);
    fx.cmd()
        .args(["profile", "delete", "work", "--confirm", "other"])
        .run()
        .error("invalid_argument", 1);

    let held = hold_lock(&dir);
    fx.cmd()
        .args(["profile", "delete", "work", "--confirm", "work"])
        .run()
        .error("profile_delete_locked", 1);
    assert!(dir.exists());
    drop(held);

    let run = fx
        .cmd()
        .args(["profile", "delete", "work", "--confirm", "work"])
        .run();
    let r = run.result();
    assert_eq!(r["code"], "profile_delete");
    assert_eq!(r["deleted"], true);
    assert!(!dir.exists());
    assert!(outside.join("keep").exists());
    fx.cmd()
        .args(["profile", "delete", "work", "--confirm", "work"])
        .run()
        .error("profile_not_found", 1);

    // A profile path that is a symlink is refused, and its target survives.
    let target = fx.path().join("target");
    fs::create_dir_all(&target).unwrap();
    std::os::unix::fs::symlink(&target, fx.data.join("afhttp/profiles/chromium/linked")).unwrap();
    fx.cmd()
        .args(["profile", "delete", "linked", "--confirm", "linked"])
        .run()
        .error("invalid_argument", 1);
    assert!(target.exists());
}

#[test]
fn prune_dry_run_then_real() {
    let fx = Fixture::new();
    let old = profile_dir(&fx, "chromium", "old");
    write_meta(&old, "chromium", "old", "2001-01-01T00:00:00Z");
    let busy = profile_dir(&fx, "brave", "busy");
    write_meta(&busy, "brave", "busy", "2001-01-01T00:00:00Z");
    let fresh = profile_dir(&fx, "chromium", "fresh");
    write_meta(&fresh, "chromium", "fresh", "2999-01-01T00:00:00Z");
    // No metadata: judged by mtime, which is now.
    let nometa = profile_dir(&fx, "chromium", "nometa");
    let held = hold_lock(&busy);

    let run = fx
        .cmd()
        .args(["profile", "prune", "--older-than", "30d", "--dry-run"])
        .run();
    let r = run.result();
    assert_eq!(r["code"], "profile_prune");
    assert_eq!(r["dry_run"], true);
    assert!(r.get("deleted").is_none());
    let would: Vec<&str> = r["would_delete"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(would, ["old"]);
    assert_eq!(r["skipped"][0]["name"], "busy");
    assert_eq!(r["skipped"][0]["lock_owner_pid"], 4242);
    assert!(old.exists());

    let run = fx
        .cmd()
        .args(["profile", "prune", "--older-than", "30d"])
        .run();
    let r = run.result();
    assert_eq!(r["deleted"][0]["name"], "old");
    assert_eq!(r["deleted"].as_array().unwrap().len(), 1);
    assert!(!old.exists());
    assert!(busy.exists() && fresh.exists() && nometa.exists());
    drop(held);

    for bad in ["", "-1d", "30", "3x", "99999999999999999999d"] {
        fx.cmd()
            .args(["profile", "prune", "--older-than", bad])
            .run()
            .error("invalid_argument", 1);
    }
}

#[test]
fn downloads_are_listed_read_only() {
    let fx = Fixture::new();
    let dir = profile_dir(&fx, "chromium", "work");
    let run = fx.cmd().args(["profile", "downloads", "work"]).run();
    assert_eq!(run.result()["downloads"], json!([]));

    let dl = dir.join("downloads");
    fs::create_dir_all(&dl).unwrap();
    fs::write(dl.join("report.pdf"), b"%PDF-1.4").unwrap();
    fs::write(dl.join("big.iso.crdownload"), b"part").unwrap();
    let run = fx.cmd().args(["profile", "downloads", "work"]).run();
    let r = run.result();
    assert_eq!(r["code"], "profile_downloads");
    let got: Vec<(String, u64, String)> = r["downloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["path"].as_str().unwrap().to_string(),
                d["size_bytes"].as_u64().unwrap(),
                d["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                dl.join("big.iso.crdownload").display().to_string(),
                4,
                "in_progress".to_string()
            ),
            (
                dl.join("report.pdf").display().to_string(),
                8,
                "complete".to_string()
            ),
        ]
    );
    assert_eq!(fs::read_dir(&dl).unwrap().count(), 2);
}

#[test]
fn cookies_never_print_values() {
    let fx = Fixture::new();
    let dir = profile_dir(&fx, "chromium", "work");
    let run = fx.cmd().args(["profile", "cookies", "work"]).run();
    let r = run.result();
    assert_eq!(r["cookies"], json!([]));
    assert_eq!(r["cookie_jar_present"], false);

    let jar = json!({"schema_version": 1, "cookies": [
        {"name": "sid", "value": "TOPSECRETVALUE", "domain": "example.com", "host_only": true,
         "path": "/", "secure": true, "http_only": true, "same_site": "Lax",
         "expires_at_unix": 1893456000, "created_at_unix": 1700000000},
        {"name": "theme", "value": "dark", "domain": "example.com", "host_only": false,
         "path": "/", "secure": false, "http_only": false, "created_at_unix": 1700000000}
    ]});
    fs::write(dir.join("cookies.jar.json"), jar.to_string()).unwrap();
    let run = fx.cmd().args(["profile", "cookies", "work"]).run();
    assert!(!run.stdout.contains("TOPSECRETVALUE"), "{}", run.stdout);
    assert!(!run.stdout.contains("dark"), "{}", run.stdout);
    let r = run.result();
    assert_eq!(r["code"], "profile_cookies");
    let sid = &r["cookies"][0];
    assert_eq!(sid["name"], "sid");
    assert_eq!(sid["value_bytes"], 14);
    assert_eq!(sid["same_site"], "Lax");
    assert_eq!(sid["expires_at_rfc3339"], "2030-01-01T00:00:00Z");
    assert!(sid.get("value").is_none());
    assert_eq!(r["cookies"][1]["expires_at_rfc3339"], Value::Null);

    fs::write(
        dir.join("cookies.jar.json"),
        br#"{"cookies": [{"value": "TOPSECRETVALUE"#,
    )
    .unwrap();
    let run = fx.cmd().args(["profile", "cookies", "work"]).run();
    run.error("io_error", 1);
    assert!(!run.stdout.contains("TOPSECRETVALUE"));
}
