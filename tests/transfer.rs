//! Downloads and uploads across machines. The host runs as another user (`nobody`) with its
//! own HOME, XDG_DATA_HOME and TMPDIR in a directory only it owns, so the driver shares no
//! paths with it: results must point into the driver's `--out`, never at the host's disk,
//! and an upload must work from a directory the host user cannot read.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::remote_host::{RemoteHost, NOBODY, TOKEN};
use crate::support::routes_transfer::{file_bytes, shown};
use crate::support::{Fixture, FixtureServer};

/// `Runtime.evaluate` in tab `tab`, by value.
fn eval(fx: &Fixture, host: &RemoteHost, tab: &str, expr: &str) -> Value {
    let params = json!({"expression": expr, "returnByValue": true}).to_string();
    let run = fx
        .cmd()
        .args(["cdp", "Runtime.evaluate", "--tab", tab, "--params", &params])
        .args(host.auth())
        .run();
    run.result()["result"]["result"]["value"].clone()
}

/// Poll `expr` in `tab` until it evaluates to `want` (at most 15 s).
fn wait_for(fx: &Fixture, host: &RemoteHost, tab: &str, expr: &str, want: &Value) {
    let mut got = Value::Null;
    let held = crate::support::wait_until(Duration::from_secs(15), || {
        got = eval(fx, host, tab, expr);
        &got == want
    });
    assert!(held, "{expr} stayed {got}, expected {want}");
}

/// A new tab on `url`, loaded (and its first iframe too, if any).
fn open_tab(fx: &Fixture, host: &RemoteHost, url: &str) -> String {
    let params = json!({ "url": url }).to_string();
    let run = fx
        .cmd()
        .args(["cdp", "Target.createTarget", "--params", &params])
        .args(host.auth())
        .run();
    let tab = run.result()["result"]["targetId"]
        .as_str()
        .unwrap()
        .to_string();
    let loaded = "document.readyState === 'complete' && [].every.call(document.querySelectorAll('iframe'), function (f) { return f.contentDocument && f.contentDocument.readyState === 'complete' && f.contentDocument.getElementById('shown'); })";
    wait_for(fx, host, &tab, loaded, &json!(true));
    tab
}

/// One raw HTTP/1.1 GET on the host: (status, body bytes).
fn raw_get(port: u16, path: &str, token: Option<&str>) -> (u16, Vec<u8>) {
    let r = crate::support::raw_http::get(port, path, token);
    (r.status, r.body)
}

/// Every `*_file` path in a fetch result, and `out_dir`.
fn result_paths(result: &Value) -> Vec<String> {
    result
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.ends_with("_file") || *k == "out_dir")
        .filter_map(|(_, v)| v.as_str().map(String::from))
        .collect()
}

#[test]
fn a_download_reaches_the_driver_from_a_host_run_as_another_user() {
    let _one = crate::support::chromium::lock();
    let srv = FixtureServer::start();
    let mut host = RemoteHost::start(&["--profile", "work"]);
    let fx = Fixture::new();
    let out = fx.path().join("out");
    let size = 300_000;
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/transfer/file?size=300000&name=q3%20report.csv"),
        ])
        .args(["--render", "always", "--out"])
        .arg(&out)
        .args(host.auth())
        .run();
    let r = run.result();
    assert_eq!(r["status"], 200, "{}", run.context);
    assert_eq!(r["trace"], Value::Null);
    assert_eq!(run.event["trace"]["navigation"], "download");
    let d = &r["download"];
    assert_eq!(d["state"], "completed", "{}", run.context);
    assert_eq!(d["suggested_filename"], "q3 report.csv");
    assert_eq!(d["size_bytes"], size);
    assert_eq!(d["total_bytes"], size);
    assert!(d["url"].as_str().unwrap().ends_with("name=q3%20report.csv"));
    let file = PathBuf::from(run.artifact_path("download_file"));
    assert_eq!(file, out.join("download").join("q3 report.csv"));
    assert_eq!(std::fs::read(&file).unwrap(), file_bytes(size));
    assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);

    // Every path in the result is on the driver's side; the host's disk is never named.
    for p in result_paths(r) {
        assert!(Path::new(&p).starts_with(&out), "{p} is outside --out");
    }
    let text = run.event.to_string();
    let host_root = host.root.to_string_lossy().to_string();
    assert!(!text.contains(&host_root), "{text}");
    assert!(!text.contains("afhttp/profiles"), "{text}");

    // The host kept its own copy in the profile, owned by the host user; the listing shows it.
    let id = d["id"].as_str().unwrap();
    let profile = PathBuf::from(host.ready["profile_path"].as_str().unwrap());
    let host_copy = profile.join("downloads").join(id);
    assert_eq!(std::fs::metadata(&host_copy).unwrap().uid(), NOBODY);
    let listing = fx
        .cmd()
        .env("XDG_DATA_HOME", host.root.join("data"))
        .args(["profile", "downloads", "work", "--backend", "chromium"])
        .run();
    let l = listing.result();
    assert_eq!(l["code"], "profile_downloads");
    let files = l["downloads"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{}", listing.context);
    assert_eq!(files[0]["size_bytes"], size);
    assert_eq!(files[0]["state"], "complete");
    assert!(files[0]["path"].as_str().unwrap().ends_with(id));
    assert!(files[0]["modified_at_rfc3339"].is_string());
    // The host's index gives the id-named file back its name and URL.
    assert_eq!(files[0]["id"], id);
    assert_eq!(files[0]["suggested_filename"], "q3 report.csv");
    assert_eq!(files[0]["url"], d["url"]);

    // The route serves exactly that download, and nothing else.
    let port = host.port();
    let path = format!("/downloads/{id}");
    assert_eq!(raw_get(port, &path, None).0, 401);
    assert_eq!(raw_get(port, &path, Some("wrong")).0, 401);
    let (status, body) = raw_get(port, &path, Some(TOKEN));
    assert_eq!(status, 200);
    assert_eq!(body, file_bytes(size));
    for (trick, want) in [
        ("/downloads/..%2F..%2F..%2Fetc%2Fpasswd", 400),
        ("/downloads/%2Fetc%2Fpasswd", 400),
        ("/downloads/x", 400),
        (&format!("/downloads/{id}%2F..") as &str, 400),
        (&format!("/downloads/{}", id.to_uppercase()), 404),
        ("/downloads/00000000-0000-0000-0000-000000000000", 404),
        ("/downloads/../../../etc/passwd", 404),
        ("/downloads/", 404),
    ] {
        let (status, body) = raw_get(port, trick, Some(TOKEN));
        assert_eq!(status, want, "{trick}: {}", String::from_utf8_lossy(&body));
        assert!(!String::from_utf8_lossy(&body).contains("root:"), "{trick}");
    }
    host.stop();
}

#[test]
fn an_upload_attaches_a_file_the_host_user_cannot_read() {
    let _one = crate::support::chromium::lock();
    let srv = FixtureServer::start();
    let mut host = RemoteHost::start(&["--upload-max-bytes", "200000"]);
    let fx = Fixture::new();
    // The driver's file sits in a root-owned 0700 directory: `nobody` cannot read it, so the
    // bytes the page sees can only have come over the listener.
    let private = tempfile::tempdir().unwrap();
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let meta = std::fs::metadata(private.path()).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o777), (0, 0o700));
    let bytes = file_bytes(150_000);
    let file = private.path().join("hello upload.bin");
    std::fs::write(&file, &bytes).unwrap();
    let want = json!(shown("hello upload.bin", &bytes));

    let upload = |tab: &str, selector: &str, file: &Path| {
        fx.cmd()
            .args(["upload", "--tab", tab, "--selector", selector, "--file"])
            .arg(file)
            .args(host.auth())
            .run()
    };

    // A plain input.
    let tab = open_tab(&fx, &host, &srv.url("/transfer/input"));
    let run = upload(&tab, "#up", &file);
    let r = run.result();
    assert_eq!(r["code"], "upload");
    assert_eq!(r["tab_id"], tab.as_str());
    assert_eq!(r["selector"], "#up");
    assert_eq!(r["file_name"], "hello upload.bin");
    assert_eq!(r["size_bytes"], 150_000);
    assert!(r["upload_id"].is_string());
    let text = run.event.to_string();
    assert!(!text.contains(&*host.root.to_string_lossy()), "{text}");
    assert!(r.get("path").is_none(), "{text}");
    wait_for(
        &fx,
        &host,
        &tab,
        "document.getElementById('shown').textContent",
        &want,
    );

    // Inside an open shadow root, with the hint observation.json gives for that input.
    let tab = open_tab(&fx, &host, &srv.url("/transfer/shadow"));
    let run = upload(&tab, "#host >> shadow >> input[name=\"doc\"]", &file);
    run.result();
    wait_for(
        &fx,
        &host,
        &tab,
        "document.getElementById('shown').textContent",
        &want,
    );

    // Inside a same-origin iframe.
    let tab = open_tab(&fx, &host, &srv.url("/transfer/frame"));
    upload(&tab, "#f >> frame >> #up", &file).result();
    wait_for(
        &fx,
        &host,
        &tab,
        "document.getElementById('f').contentDocument.getElementById('shown').textContent",
        &want,
    );

    // Bad input: each refused with a stable code, and the page is left as it was.
    let tab = open_tab(&fx, &host, &srv.url("/transfer/input"));
    let e = upload(&tab, "#missing", &file)
        .error("selector_not_found", 1)
        .clone();
    assert!(e["message"].as_str().unwrap().contains("#missing"), "{e}");
    assert_eq!(e["retryable"], false);
    upload(&tab, "#up >> shadow >> input", &file).error("selector_not_found", 1);
    upload(&tab, "#up >> frame >> input", &file).error("selector_not_found", 1);
    let e = upload(&tab, "#text", &file)
        .error("invalid_argument", 1)
        .clone();
    assert!(e["message"].as_str().unwrap().contains("type=text"), "{e}");
    upload(&tab, "input[", &file).error("invalid_argument", 1);
    upload(&tab, "#up >>", &file).error("invalid_argument", 1);
    upload(&tab, "#up", &private.path().join("missing.bin")).error("invalid_argument", 1);
    upload(&tab, "#up", private.path()).error("invalid_argument", 1);
    upload("NO-SUCH-TAB", "#up", &file).error("invalid_argument", 1);
    let big = private.path().join("big.bin");
    std::fs::write(&big, file_bytes(250_000)).unwrap();
    let e = upload(&tab, "#up", &big)
        .error("invalid_argument", 1)
        .clone();
    assert!(
        e["message"].as_str().unwrap().contains("upload-max-bytes"),
        "{e}"
    );
    assert_eq!(
        eval(
            &fx,
            &host,
            &tab,
            "document.getElementById('shown').textContent"
        ),
        json!("empty")
    );
    // Refused files left nothing behind on the host; accepted ones go when it stops.
    let stored = |root: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(root.join("tmp"))
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("afhttp-uploads-")
            })
            .flat_map(|e| std::fs::read_dir(e.path()).unwrap().flatten())
            .map(|e| e.path())
            .collect()
    };
    assert_eq!(stored(&host.root).len(), 3, "one per accepted upload");
    host.stop();
    assert!(stored(&host.root).is_empty());
}

#[test]
fn an_inline_fetch_copies_its_download_out_of_the_private_host() {
    let _one = crate::support::chromium::lock();
    let srv = FixtureServer::start();
    let fx = Fixture::new();
    let out = fx.path().join("out");
    let run = fx
        .cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_BROWSER_BIN", "/usr/bin/chromium")
        .args([
            "fetch",
            &srv.url("/transfer/file?size=5000&name=..%2F..%2Fevil.sh"),
        ])
        .args(["--render", "always", "--out"])
        .arg(&out)
        .run();
    let r = run.result();
    assert_eq!(r["download"]["state"], "completed", "{}", run.context);
    // Chromium already strips the directory part; the driver would too.
    let file = PathBuf::from(run.artifact_path("download_file"));
    assert!(file.starts_with(out.join("download")), "{}", file.display());
    assert_eq!(std::fs::read(&file).unwrap(), file_bytes(5000));
    for p in result_paths(r) {
        assert!(Path::new(&p).starts_with(&out), "{p} is outside --out");
    }
    // Nothing was saved into the user's own Downloads folder.
    assert!(!fx.home.join("Downloads").exists());
}
