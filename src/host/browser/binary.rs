//! Finding a backend's executable: an explicit `--browser-bin`, else a search of `PATH`.
//!
//! Binaries are only ever looked up as executables; nothing here reads a browser's data
//! directories (spec §7: "Backend binaries are looked up only as executables").

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{AfError, ErrorCode};
use crate::profile::Backend;

/// Chromium-family backends `resolve_auto` tries, most open and most common first.
const AUTO_ORDER: &[Backend] = &[
    Backend::Chromium,
    Backend::Chrome,
    Backend::Brave,
    Backend::Edge,
    Backend::ChromeHeadlessShell,
];

/// The executable names searched on `PATH` for `backend`, in preference order.
///
/// Camoufox is driven through foxbridge, so both `camoufox` and `foxbridge` must exist; this
/// lists the browser itself (`camoufox`) and [`resolve_binary`] checks for `foxbridge` too.
pub fn executable_names(backend: Backend) -> &'static [&'static str] {
    match backend {
        Backend::Chromium => &["chromium", "chromium-browser"],
        Backend::Chrome => &["google-chrome", "google-chrome-stable", "chrome"],
        Backend::ChromeHeadlessShell => &["chrome-headless-shell"],
        Backend::FingerprintChromium => &["fingerprint-chromium"],
        Backend::Edge => &["microsoft-edge", "microsoft-edge-stable"],
        Backend::Brave => &["brave-browser", "brave"],
        Backend::Lightpanda => &["lightpanda"],
        Backend::Camoufox => &["camoufox"],
    }
}

/// What to install when a backend's executable is missing.
fn install_hint(backend: Backend) -> String {
    let what = match backend {
        Backend::Chromium => "install Chromium (Debian: `apt-get install chromium`)",
        Backend::Chrome => "install Google Chrome",
        Backend::ChromeHeadlessShell => "install chrome-headless-shell",
        Backend::FingerprintChromium => "install adryfish/fingerprint-chromium",
        Backend::Edge => "install Microsoft Edge",
        Backend::Brave => "install Brave",
        Backend::Lightpanda => {
            "install Lightpanda (`pip install lightpanda` ships the binary inside the package)"
        }
        Backend::Camoufox => "install both camoufox and foxbridge",
    };
    format!(
        "{what}, or pass --browser-bin with the executable's path (looked for on PATH: {})",
        executable_names(backend).join(", ")
    )
}

/// Whether `path` is a regular file (after symlinks) with an execute bit set.
fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The first executable called `name` in the directories of `path_env`.
///
/// Empty `PATH` entries mean "the current directory" to a shell; they are skipped so a
/// browser is never picked up from wherever afhttp happens to run.
pub fn find_executable(name: &str, path_env: Option<&OsStr>) -> Option<PathBuf> {
    let path_env = path_env?;
    std::env::split_paths(path_env)
        .filter(|dir| !dir.as_os_str().is_empty() && dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// The executable to launch for `backend`.
///
/// An explicit path must exist and be executable (`invalid_argument` otherwise); without one,
/// `path_env` is searched for [`executable_names`]. Nothing found is `browser_launch_failed`
/// with a hint naming what to install. Camoufox also needs `foxbridge` on `path_env`; the
/// returned path is the camoufox browser.
pub fn resolve_binary(
    backend: Backend,
    explicit: Option<&Path>,
    path_env: Option<&OsStr>,
) -> Result<PathBuf, AfError> {
    let found = match explicit {
        Some(path) => {
            if !is_executable(path) {
                let why = if path.exists() {
                    "is not an executable file"
                } else {
                    "does not exist"
                };
                return Err(
                    AfError::invalid(format!("--browser-bin {} {why}", path.display()))
                        .with_hint("pass the path of the browser executable itself"),
                );
            }
            path.to_path_buf()
        }
        None => executable_names(backend)
            .iter()
            .find_map(|name| find_executable(name, path_env))
            .ok_or_else(|| not_found(backend))?,
    };
    if backend == Backend::Camoufox && find_executable("foxbridge", path_env).is_none() {
        return Err(AfError::new(
            ErrorCode::BrowserLaunchFailed,
            "the camoufox backend needs foxbridge (the CDP bridge), which is not on PATH",
        )
        .with_hint(install_hint(backend)));
    }
    Ok(found)
}

fn not_found(backend: Backend) -> AfError {
    AfError::new(
        ErrorCode::BrowserLaunchFailed,
        format!("no executable for the {backend} backend was found on PATH"),
    )
    .with_hint(install_hint(backend))
}

/// The first chromium-family backend with an executable on `path_env`, for `--browser auto`.
pub fn resolve_auto(path_env: Option<&OsStr>) -> Option<(Backend, PathBuf)> {
    AUTO_ORDER.iter().find_map(|&backend| {
        executable_names(backend)
            .iter()
            .find_map(|name| find_executable(name, path_env))
            .map(|path| (backend, path))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn fake_exe(dir: &Path, name: &str, mode: u32) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    fn path_of(dirs: &[&Path]) -> OsString {
        std::env::join_paths(dirs).unwrap()
    }

    #[test]
    fn explicit_missing_is_invalid_argument() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope");
        let err = resolve_binary(Backend::Chromium, Some(&missing), None).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(err.message.contains("does not exist"), "{}", err.message);
    }

    #[test]
    fn explicit_not_executable_is_invalid_argument() {
        let dir = tempfile::tempdir().unwrap();
        let plain = fake_exe(dir.path(), "chromium", 0o644);
        let err = resolve_binary(Backend::Chromium, Some(&plain), None).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        let err = resolve_binary(Backend::Chromium, Some(dir.path()), None).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
    }

    #[test]
    fn explicit_executable_wins_over_path() {
        let dir = tempfile::tempdir().unwrap();
        let exe = fake_exe(dir.path(), "my-browser", 0o755);
        let got = resolve_binary(Backend::Chrome, Some(&exe), None).unwrap();
        assert_eq!(got, exe);
    }

    #[test]
    fn path_search_finds_fake_executable_and_skips_non_executables() {
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        fake_exe(first.path(), "google-chrome", 0o644);
        let exe = fake_exe(second.path(), "google-chrome", 0o755);
        let path = path_of(&[first.path(), second.path()]);
        let got = resolve_binary(Backend::Chrome, None, Some(&path)).unwrap();
        assert_eq!(got, exe);
    }

    #[test]
    fn later_names_are_found_too() {
        let dir = tempfile::tempdir().unwrap();
        let exe = fake_exe(dir.path(), "chromium-browser", 0o755);
        let path = path_of(&[dir.path()]);
        assert_eq!(
            resolve_binary(Backend::Chromium, None, Some(&path)).unwrap(),
            exe
        );
    }

    #[test]
    fn nothing_found_is_browser_launch_failed_with_hint() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_of(&[dir.path()]);
        for backend in Backend::ALL {
            let err = resolve_binary(*backend, None, Some(&path)).unwrap_err();
            assert_eq!(err.code, ErrorCode::BrowserLaunchFailed, "{backend}");
            assert!(err.hint.unwrap().contains("--browser-bin"), "{backend}");
        }
        let err = resolve_binary(Backend::Chromium, None, None).unwrap_err();
        assert_eq!(err.code, ErrorCode::BrowserLaunchFailed);
    }

    #[test]
    fn camoufox_needs_foxbridge_too() {
        let dir = tempfile::tempdir().unwrap();
        let camoufox = fake_exe(dir.path(), "camoufox", 0o755);
        let path = path_of(&[dir.path()]);
        let err = resolve_binary(Backend::Camoufox, None, Some(&path)).unwrap_err();
        assert_eq!(err.code, ErrorCode::BrowserLaunchFailed);
        assert!(err.message.contains("foxbridge"));
        fake_exe(dir.path(), "foxbridge", 0o755);
        let got = resolve_binary(Backend::Camoufox, None, Some(&path)).unwrap();
        assert_eq!(got, camoufox);
    }

    #[test]
    fn relative_and_empty_path_entries_are_ignored() {
        let path = OsString::from(":.:relative/dir");
        assert!(find_executable("sh", Some(&path)).is_none());
    }

    #[test]
    fn auto_prefers_chromium_then_chrome() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_of(&[dir.path()]);
        assert!(resolve_auto(Some(&path)).is_none());
        let shell = fake_exe(dir.path(), "chrome-headless-shell", 0o755);
        assert_eq!(
            resolve_auto(Some(&path)).unwrap(),
            (Backend::ChromeHeadlessShell, shell)
        );
        let chrome = fake_exe(dir.path(), "google-chrome-stable", 0o755);
        assert_eq!(
            resolve_auto(Some(&path)).unwrap(),
            (Backend::Chrome, chrome)
        );
        let chromium = fake_exe(dir.path(), "chromium", 0o755);
        assert_eq!(
            resolve_auto(Some(&path)).unwrap(),
            (Backend::Chromium, chromium)
        );
        fake_exe(dir.path(), "lightpanda", 0o755);
        assert_eq!(resolve_auto(Some(&path)).unwrap().0, Backend::Chromium);
    }
}
