//! Opt-in screenshot formats and a height cap: `page.jpg` / `page.webp` by the artifact
//! registry, the size and any clipping in `result.screenshot`. Real inline Chromium on the
//! 5000 px `/browser/tall` fixture.

use crate::support::{Fixture, FixtureServer, Run};

/// `afhttp fetch URL --render always --want screenshot EXTRA...` in an inline Chromium.
fn shot(fx: &Fixture, url: &str, extra: &[&str]) -> Run {
    crate::support::chromium::render(fx, url, "screenshot", extra)
}

#[test]
fn jpeg_and_webp_screenshots_with_a_height_cap() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let url = srv.url("/browser/tall");
    for (format, file, magic) in [
        ("jpeg", "page.jpg", &b"\xff\xd8\xff"[..]),
        ("webp", "page.webp", &b"RIFF"[..]),
    ] {
        let run = shot(
            &fx,
            &url,
            &[
                "--screenshot-format",
                format,
                "--screenshot-quality",
                "60",
                "--screenshot-max-height",
                "1000",
            ],
        );
        let r = run.result();
        let path = run.artifact_path("screenshot_file");
        assert!(path.ends_with(file), "{path}");
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.starts_with(magic), "{format}: {:?}", &bytes[..8]);
        let s = &r["screenshot"];
        assert_eq!(s["format"], format, "{r}");
        assert_eq!(s["clipped"], true, "{r}");
        assert_eq!(s["captured_height"], 1000.0, "{r}");
        assert!(s["height"].as_f64().unwrap() >= 5000.0, "{r}");
        assert_eq!(s["bytes"], bytes.len(), "{r}");
        // A cap the user asked for is not a failed capture. (Readiness warnings such as
        // network_not_idle for a late favicon may appear on a loaded machine: not this test's.)
        let screenshot_warnings: Vec<_> = r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| {
                w["artifact"] == "screenshot"
                    || w["code"]
                        .as_str()
                        .is_some_and(|c| c.starts_with("artifact_"))
            })
            .collect();
        assert!(screenshot_warnings.is_empty(), "{r}");
    }
    // The default stays the full-page PNG.
    let run = shot(&fx, &url, &[]);
    let r = run.result();
    assert!(run.artifact_path("screenshot_file").ends_with("page.png"));
    assert_eq!(r["screenshot"]["format"], "png", "{r}");
    assert_eq!(r["screenshot"]["clipped"], false, "{r}");
}

#[test]
fn screenshot_options_are_checked() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let url = srv.url("/static");
    for (args, field) in [
        (&["--screenshot-format", "gif"][..], "screenshot_format"),
        (&["--screenshot-quality", "80"][..], "screenshot_quality"),
        (
            &["--screenshot-format", "jpeg", "--screenshot-quality", "0"][..],
            "screenshot_quality",
        ),
        (
            &["--screenshot-max-height", "0"][..],
            "screenshot_max_height",
        ),
    ] {
        let run = fx.cmd().args(["fetch", &url]).args(args).run();
        let e = run.failure("invalid_argument", 1);
        assert!(e.message.as_str().contains(field), "{args:?}: {e}");
    }
}
