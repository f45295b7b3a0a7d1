//! `--fleet` routing against real hosts (each with its own data directory, as replicas have
//! their own volumes): profile affinity, placement, isolation of ephemeral fetches, failover,
//! refusal when an owner is down, `fleet status`, and the thin commands.

use std::io::{Read, Write};
use std::net::TcpListener;

use serde_json::Value;

use crate::support::{Fixture, FixtureServer, HostProc, Run};

const TOKEN: &str = "fleet-test-token-0123456789";

fn host(fx: &Fixture, data: &std::path::Path) -> HostProc {
    HostProc::start(
        fx,
        &["--listen", "tcp:127.0.0.1:0", "--token-secret", TOKEN],
        &[("XDG_DATA_HOME", data.to_str().unwrap())],
    )
}

/// A port nothing listens on.
fn dead_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn fetch(fx: &Fixture, fleet: &str, url: &str, extra: &[&str]) -> Run {
    fx.cmd()
        .args(["fetch", url, "--fleet", fleet, "--token-secret", TOKEN])
        .args(["--render", "always", "--want", "text", "--no-cookie-jar"])
        .args(["--timeout-ms", "60000"])
        // The probe's connect bound, generous: under the whole suite's load a live member's
        // /health can take longer than the 2 s default (a dead port still refuses at once).
        .args(["--fleet-connect-timeout-ms", "10000"])
        .args(extra)
        .run()
}

fn status(fx: &Fixture, fleet: &str) -> Value {
    let r = fx
        .cmd()
        .args(["fleet", "status", "--fleet", fleet, "--token-secret", TOKEN])
        .run();
    r.result().clone()
}

fn member<'a>(status: &'a Value, name: &str) -> &'a Value {
    status["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no member {name}: {status}"))
}

/// A member that says it is healthy and idle but refuses every CDP connection (503), as a
/// host that died between the probe and the fetch would: the fetch must fail over.
fn refusing_member() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().take(200) {
            let Ok(mut s) = s else { continue };
            let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(5)));
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]);
            let path = head.split_whitespace().nth(1).unwrap_or("");
            let (code, body) = if path.starts_with("/health") {
                (
                    200,
                    r#"{"code":"health","status":"ok","version":"0","tabs_active":0}"#,
                )
            } else if path.starts_with("/capabilities") {
                (
                    200,
                    r#"{"code":"capabilities","limits":{"clients_in_use":0}}"#,
                )
            } else {
                (503, r#"{"code":"cdp_unavailable","message":"gone"}"#)
            };
            let _ = write!(
                s,
                "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

#[test]
fn fleet_routes_profiles_isolates_ephemeral_fetches_and_fails_over() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let data_a = tempfile::tempdir().unwrap();
    let data_b = tempfile::tempdir().unwrap();
    let a = host(&fx, data_a.path());
    let b = host(&fx, data_b.path());
    let two = format!("a={},b={}", a.endpoint, b.endpoint);

    // A new profile goes to its rendezvous owner, and stays there.
    let owner = afhttp::sdk::fleet::placement::owner("alpha", ["a", "b"]).unwrap();
    let set = fetch(
        &fx,
        &two,
        &srv.url("/cookies/set-raw?h=alpha%3D1%3B%20Path%3D%2F%3B%20Max-Age%3D3600"),
        &["--profile", "alpha"],
    );
    let t = &set.event["trace"]["fleet"];
    assert_eq!(t["member"], owner, "{}", set.context);
    assert_eq!(t["reason"], "placed_by_rendezvous", "{}", set.context);
    let again = fetch(
        &fx,
        &two,
        &srv.url("/cookies/echo"),
        &["--profile", "alpha"],
    );
    assert!(again.artifact_text("text_file").contains("alpha=1"));
    assert_eq!(again.event["trace"]["fleet"]["member"], owner);
    assert_eq!(again.event["trace"]["fleet"]["reason"], "holds_profile");
    let st = status(&fx, &two);
    assert_eq!(st["profiles"]["alpha"], serde_json::json!([owner]), "{st}");
    assert_eq!(member(&st, owner)["active_profile"], "alpha", "{st}");
    assert_eq!(st["members_healthy"], 2, "{st}");
    for m in st["members"].as_array().unwrap() {
        assert_eq!(m["version"], afhttp::VERSION, "{m}");
        assert!(m["load"]["clients_in_use"].is_u64(), "{m}");
    }

    // An ephemeral fetch on the member running alpha neither sees nor writes alpha's
    // cookies, and does not switch its profile.
    let owner_ep = if owner == "a" {
        &a.endpoint
    } else {
        &b.endpoint
    };
    let only_owner = format!("{owner}={owner_ep}");
    let eph = fetch(&fx, &only_owner, &srv.url("/cookies/echo"), &[]);
    assert_eq!(
        eph.event["trace"]["fleet"]["member"], owner,
        "{}",
        eph.context
    );
    assert_eq!(eph.event["trace"]["fleet"]["isolated_context"], true);
    assert!(
        !eph.artifact_text("text_file").contains("alpha=1"),
        "{}",
        eph.context
    );
    fetch(
        &fx,
        &only_owner,
        &srv.url("/cookies/set-raw?h=eph%3D1%3B%20Path%3D%2F%3B%20Max-Age%3D3600"),
        &[],
    );
    let after = fetch(
        &fx,
        &two,
        &srv.url("/cookies/echo"),
        &["--profile", "alpha"],
    );
    let text = after.artifact_text("text_file");
    assert!(
        text.contains("alpha=1") && !text.contains("eph=1"),
        "{text}"
    );
    let st = status(&fx, &two);
    assert_eq!(member(&st, owner)["active_profile"], "alpha", "{st}");

    // Failover: a member that looks idle but refuses CDP is tried first, then the next one;
    // both attempts are in the trace and the fetch succeeds.
    let refusing = refusing_member();
    let flaky = format!("r=ws://127.0.0.1:{refusing},{only_owner}");
    let ok = fetch(&fx, &flaky, &srv.url("/static"), &[]);
    let attempts = ok.event["trace"]["fleet"]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "{}", ok.context);
    assert_eq!(attempts[0]["member"], "r");
    let code = attempts[0]["error"]["code"].as_str().unwrap();
    assert!(
        ["cdp_unavailable", "host_unreachable", "host_busy"].contains(&code),
        "{}",
        ok.context
    );
    assert_eq!(attempts[1]["member"], owner);
    assert!(attempts[1].get("error").is_none());

    // Ephemeral fetches spread: over many fetches both members are used.
    let mut used = std::collections::HashSet::new();
    for _ in 0..8 {
        let r = fetch(&fx, &two, &srv.url("/static"), &[]);
        used.insert(
            r.event["trace"]["fleet"]["member"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    assert_eq!(used.len(), 2, "{used:?}");

    // A profile whose owner is down is a retryable host_unreachable naming it, never run on
    // a live member; a down member that might hold a profile blocks its placement too.
    let dead = dead_port();
    let with_dead = format!("{two},gone=ws://127.0.0.1:{dead}");
    let name = (0..)
        .map(|i| format!("beta{i}"))
        .find(|n| afhttp::sdk::fleet::placement::owner(n, ["a", "b", "gone"]) == Some("gone"))
        .unwrap();
    let refused = fetch(&fx, &with_dead, &srv.url("/static"), &["--profile", &name]);
    let e = refused.failure("host_unreachable", 1);
    assert!(e.retryable);
    assert!(e.message.as_str().contains("gone"), "{e:?}");
    // alpha is held by a live member: it still works with a member down.
    let held = fetch(
        &fx,
        &with_dead,
        &srv.url("/cookies/echo"),
        &["--profile", "alpha"],
    );
    assert!(held.artifact_text("text_file").contains("alpha=1"));
    let st = status(&fx, &with_dead);
    assert_eq!(member(&st, "gone")["reachable"], false, "{st}");
    assert_eq!(st["members_unreachable"], 1);

    // The thin commands reach the member that holds a profile, or a named member.
    let tabs = fx
        .cmd()
        .args(["tabs", "list", "--fleet", &two, "--token-secret", TOKEN])
        .args(["--profile", "alpha"])
        .run();
    assert_eq!(
        tabs.event["trace"]["fleet"]["member"], owner,
        "{}",
        tabs.context
    );
    tabs.result();
    let h = fx
        .cmd()
        .args([
            "health",
            "--fleet",
            &two,
            "--token-secret",
            TOKEN,
            "--member",
            "b",
        ])
        .run();
    assert_eq!(h.result()["status"], "ok");
    assert_eq!(h.event["trace"]["fleet"]["member"], "b");
    fx.cmd()
        .args(["tabs", "list", "--fleet", &two, "--token-secret", TOKEN])
        .run()
        .error("invalid_argument", 1);
    fx.cmd()
        .args([
            "panel",
            "--fleet",
            &two,
            "--token-secret",
            TOKEN,
            "--profile",
            "nobody",
        ])
        .run()
        .error("profile_not_found", 1);
}

#[test]
fn bad_fleet_specs_are_one_clear_error() {
    let fx = Fixture::new();
    for spec in ["", "ws://127.0.0.1:1", "a=ws://h:1,a=ws://h:2", "dns:nope"] {
        fx.cmd()
            .args(["fleet", "status", "--fleet", spec])
            .run()
            .error("invalid_argument", 1);
    }
    fx.cmd()
        .args(["fleet", "status"])
        .run()
        .error("invalid_argument", 1);
}

/// An `--ephemeral-only` host enforces its role itself: it says so in `/health` and
/// `/capabilities`, refuses any persistent profile (directly or through a fleet that lists it
/// as persistent) with `backend_unsupported`, still serves ephemeral fetches, and cannot be
/// started on a profile.
#[test]
fn ephemeral_only_host_refuses_persistent_profiles() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let data = tempfile::tempdir().unwrap();
    let h = HostProc::start(
        &fx,
        &[
            "--listen",
            "tcp:127.0.0.1:0",
            "--token-secret",
            TOKEN,
            "--ephemeral-only",
        ],
        &[("XDG_DATA_HOME", data.path().to_str().unwrap())],
    );
    let port = crate::support::host::port_of(&h.endpoint);
    assert_eq!(
        crate::support::host::health(port, Some(TOKEN))["role"],
        "ephemeral"
    );

    let direct = fx
        .cmd()
        .args(["fetch", &srv.url("/"), "--endpoint-url", &h.endpoint])
        .args([
            "--token-secret",
            TOKEN,
            "--profile",
            "alpha",
            "--no-cookie-jar",
        ])
        .run();
    let e = direct.failure("backend_unsupported", 1);
    assert!(e.message.as_str().contains("ephemeral-only"), "{e:?}");
    assert!(
        !names_under(data.path()).iter().any(|n| n == "alpha"),
        "a refused profile left a directory behind: {:?}",
        names_under(data.path())
    );

    // Listed as persistent by mistake: fleet status says so, and the profile is refused.
    let listed = format!("e={}", h.endpoint);
    let st = status(&fx, &listed);
    let m = member(&st, "e");
    assert_eq!(m["host_role"], "ephemeral", "{st}");
    assert!(m["role_mismatch"].is_string(), "{st}");
    fetch(&fx, &listed, &srv.url("/"), &["--profile", "alpha"]).error("backend_unsupported", 1);

    // Ephemeral work is what it is for.
    let ok = fetch(
        &fx,
        &format!("ephemeral:e={}", h.endpoint),
        &srv.url("/"),
        &[],
    );
    ok.result();
    assert!(
        !ok.artifact_text("text_file").trim().is_empty(),
        "{}",
        ok.context
    );
    let st = status(&fx, &format!("ephemeral:e={}", h.endpoint));
    assert!(member(&st, "e").get("role_mismatch").is_none(), "{st}");

    fx.cmd()
        .args(["host", "--ephemeral-only", "--profile", "alpha"])
        .run()
        .error("invalid_argument", 1);
}

/// Every file and directory name below `dir`.
fn names_under(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        out.push(entry.file_name().to_string_lossy().into_owned());
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(names_under(&entry.path()));
        }
    }
    out
}
