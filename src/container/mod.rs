//! The managed local host container, driven through the Docker Engine API (`bollard`).
//!
//! One engine operation per file: [`context`] (the build context tar), [`image`] (build),
//! [`run`] (install: volume, create, start, wait for `/health`), [`discover`] (label → port
//! and token for driver commands), [`logs`], [`admin`] (status, uninstall). Nothing here
//! shells out to a docker CLI.

pub mod admin;
pub mod context;
pub mod discover;
pub mod engine;
pub mod image;
pub mod logs;
pub mod run;

/// Name of the managed container (one per engine).
pub const CONTAINER_NAME: &str = "afhttp-host";
/// Repository of the managed image; the tag is the afhttp version.
pub const IMAGE_REPO: &str = "afhttp-host";
/// Named volume mounted at `/data` (profiles and the token file).
pub const VOLUME_NAME: &str = "afhttp-host-data";
/// Fixed hostname, so a reinstalled container can reopen its profiles (Chromium's
/// `Singleton*` files name the host).
pub const HOSTNAME: &str = "afhttp-host";
/// Port the host listens on inside the container.
pub const INNER_PORT: u16 = 9222;
/// Default port published on 127.0.0.1.
pub const DEFAULT_PORT: u16 = 9222;
/// The token file inside the container (on the volume).
pub const TOKEN_PATH: &str = "/data/afhttp/host-token";

/// Label marking everything afhttp manages (container, image, volume).
pub const LABEL_MANAGED: &str = "afhttp.managed";
/// Label: the afhttp version inside the image.
pub const LABEL_VERSION: &str = "afhttp.version";
/// Label: the port published on 127.0.0.1.
pub const LABEL_PORT: &str = "afhttp.port";
/// Label: the takeover provider the image was built with.
pub const LABEL_TAKEOVER: &str = "afhttp.takeover";
/// Label: the browser the image was built with.
pub const LABEL_BROWSER: &str = "afhttp.browser";

/// The Dockerfile, embedded so an installed binary can build its own image.
pub const DOCKERFILE: &str = include_str!("../../image/Dockerfile");
/// The KasmVNC server configuration the image installs (`kasmvnc/kasmvnc.yaml`).
pub const KASMVNC_CONFIG: &str = include_str!("../../kasmvnc/kasmvnc.yaml");

/// This binary's version: the image tag and the version drivers insist on.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The managed image reference for this version.
pub fn image_ref() -> String {
    format!("{IMAGE_REPO}:{VERSION}")
}

/// Receives progress from long engine operations (image builds, waits); the CLI prints it
/// to stderr so stdout keeps its one event (as a progress bar on a terminal).
pub trait Reporter {
    /// One line of progress.
    fn line(&self, text: &str);
    /// Build step `n` of `total` began; `text` is its line. By default just the line.
    fn step(&self, n: u32, total: u32, text: &str) {
        let _ = (n, total);
        self.line(text);
    }
    /// The stepped operation ended (successfully or not): a progress bar goes away.
    fn done(&self) {}
}

/// A reporter that drops everything.
pub struct Silent;

impl Reporter for Silent {
    fn line(&self, _text: &str) {}
}
