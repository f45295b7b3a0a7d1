//! The browser's environment: cleared, then a minimal allowlist plus explicit `--engine-env`.
//!
//! Spec §7: the host never lets ambient `HTTP_PROXY`/`HTTPS_PROXY` steer browser traffic, and
//! afhttp's own `AFHTTP_*` variables (the bearer token among them) must never reach the engine.

use crate::error::AfError;
use crate::profile::Backend;

use super::LaunchOptions;

/// Proxy variables refused even when asked for explicitly; `--proxy-url` is the only way.
const PROXY_VARS: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "FTP_PROXY",
];

/// The complete environment for the browser process (to be applied after `env_clear`).
///
/// `PATH`, `LANG`, `LC_ALL` and `TZ` come from the parent when set; `HOME` is the
/// user-data-dir so nothing reaches the real home; `DISPLAY` only when `display` is given;
/// `XDG_RUNTIME_DIR` stays unset. `engine_env` entries come last. An `engine_env` entry naming
/// a proxy variable (any case) or an `AFHTTP_*` variable, or a malformed name, is
/// `invalid_argument`.
pub fn browser_env(opts: &LaunchOptions) -> Result<Vec<(String, String)>, AfError> {
    browser_env_with(opts, |name| opts.parent_env.get(name))
}

/// [`browser_env`] with the parent environment supplied by `parent` (tests pass a fake one).
pub(super) fn browser_env_with(
    opts: &LaunchOptions,
    parent: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, AfError> {
    let mut env = crate::host::procs::base_env(&opts.user_data_dir, parent);
    if let Some(display) = &opts.display {
        env.push(("DISPLAY".to_string(), display.clone()));
    }
    if opts.backend == Backend::Lightpanda {
        // Lightpanda phones home by default; test and agent traffic stays where it is sent.
        env.push((
            "LIGHTPANDA_DISABLE_TELEMETRY".to_string(),
            "true".to_string(),
        ));
    }
    for (name, value) in &opts.engine_env {
        check_engine_var(name, value)?;
        env.retain(|(existing, _)| existing != name);
        env.push((name.clone(), value.clone()));
    }
    Ok(env)
}

/// Refuse an `--engine-env` entry that would break isolation or cannot be a variable.
fn check_engine_var(name: &str, value: &str) -> Result<(), AfError> {
    if name.is_empty() || name.contains('=') || name.contains('\0') || value.contains('\0') {
        return Err(AfError::invalid(format!(
            "--engine-env {name:?} is not a valid variable name"
        ))
        .with_hint("pass --engine-env NAME=VALUE"));
    }
    let upper = name.to_ascii_uppercase();
    if PROXY_VARS.contains(&upper.as_str()) {
        return Err(AfError::invalid(format!(
            "--engine-env {name} is refused: proxy variables never reach the browser"
        ))
        .with_hint("use --proxy-url to route browser traffic through a proxy"));
    }
    if upper.starts_with("AFHTTP_") {
        return Err(AfError::invalid(format!(
            "--engine-env {name} is refused: afhttp's own variables never reach the browser"
        )));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use std::path::PathBuf;
    use std::time::Duration;

    fn opts() -> LaunchOptions {
        LaunchOptions {
            backend: Backend::Chromium,
            binary: PathBuf::from("/usr/bin/chromium"),
            user_data_dir: PathBuf::from("/tmp/afhttp-profile"),
            headless: true,
            no_sandbox: false,
            proxy_url: None,
            extra_args: vec![],
            engine_env: vec![],
            display: None,
            downloads_dir: None,
            window_size: (1280, 800),
            startup_timeout: Duration::from_secs(10),
            fingerprint_seed: None,
            parent_env: Default::default(),
        }
    }

    /// A parent environment holding everything that must not leak.
    fn hostile_parent(name: &str) -> Option<String> {
        let value = match name {
            "PATH" => "/usr/bin:/bin",
            "LANG" => "C.UTF-8",
            "HOME" => "/root",
            "XDG_RUNTIME_DIR" => "/run/user/0",
            "DISPLAY" => ":0",
            "HTTP_PROXY" | "HTTPS_PROXY" | "ALL_PROXY" | "http_proxy" => "http://evil:1",
            "AFHTTP_TOKEN_SECRET" => "s3cret",
            _ => return None,
        };
        Some(value.to_string())
    }

    fn names(env: &[(String, String)]) -> Vec<&str> {
        env.iter().map(|(k, _)| k.as_str()).collect()
    }

    #[test]
    fn only_the_allowlist_passes_and_home_is_the_profile() {
        let env = browser_env_with(&opts(), hostile_parent).unwrap();
        assert_eq!(names(&env), ["PATH", "LANG", "HOME"]);
        assert!(env.contains(&("HOME".into(), "/tmp/afhttp-profile".into())));
        assert!(env.contains(&("PATH".into(), "/usr/bin:/bin".into())));
        for (k, v) in &env {
            assert!(!k.to_ascii_uppercase().contains("PROXY"), "{k}");
            assert!(!k.starts_with("AFHTTP_"), "{k}");
            assert!(!v.contains("s3cret"));
        }
    }

    #[test]
    fn display_only_when_given() {
        let mut o = opts();
        o.display = Some(":99".into());
        let env = browser_env_with(&o, hostile_parent).unwrap();
        assert!(env.contains(&("DISPLAY".into(), ":99".into())));
        assert!(!names(&env).contains(&"XDG_RUNTIME_DIR"));
    }

    #[test]
    fn engine_env_is_added_last_and_overrides() {
        let mut o = opts();
        o.engine_env = vec![("TZ".into(), "UTC".into()), ("LANG".into(), "de_DE".into())];
        let env = browser_env_with(&o, hostile_parent).unwrap();
        assert!(env.contains(&("TZ".into(), "UTC".into())));
        assert!(env.contains(&("LANG".into(), "de_DE".into())));
        assert_eq!(names(&env).iter().filter(|n| **n == "LANG").count(), 1);
    }

    #[test]
    fn engine_env_cannot_smuggle_proxies_or_afhttp_vars() {
        for bad in [
            "HTTP_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "no_proxy",
            "AFHTTP_TOKEN_SECRET",
            "afhttp_log",
            "",
            "A=B",
        ] {
            let mut o = opts();
            o.engine_env = vec![(bad.into(), "x".into())];
            let err = browser_env_with(&o, hostile_parent).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument, "{bad:?}");
        }
    }

    #[test]
    fn lightpanda_telemetry_is_off() {
        let mut o = opts();
        o.backend = Backend::Lightpanda;
        let env = browser_env_with(&o, |_| None).unwrap();
        assert!(env.contains(&("LIGHTPANDA_DISABLE_TELEMETRY".into(), "true".into())));
    }
}
