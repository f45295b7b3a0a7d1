//! Building the managed image: the build stream becomes progress lines, and any error in it
//! fails the build with the tail of the log.

use std::collections::{HashMap, VecDeque};

use bollard::query_parameters::BuildImageOptions;
use bollard::Docker;
use futures_util::StreamExt;

use super::context::{self, BinarySource};
use super::{engine, Reporter};
use crate::error::{AfError, ErrorCode};

/// Lines of build output kept for an error message.
const LOG_TAIL_LINES: usize = 30;

/// What to build.
#[derive(Debug, Clone)]
pub struct BuildSpec {
    /// Where the binary comes from.
    pub source: BinarySource,
    /// `BASE_IMAGE` build argument (None: the Dockerfile's default).
    pub base_image: Option<String>,
    /// `BROWSER`: brave or chromium.
    pub browser: String,
    /// `TAKEOVER`: kasmvnc, novnc or off.
    pub takeover: String,
    /// Extra build arguments, `K=V` already split.
    pub build_args: Vec<(String, String)>,
    /// Ignore the engine's layer cache.
    pub no_cache: bool,
}

/// Browsers the Dockerfile can install.
pub const BROWSERS: &[&str] = &["brave", "chromium"];
/// Takeover providers the Dockerfile can install.
pub const TAKEOVERS: &[&str] = &["kasmvnc", "novnc", "off"];

impl BuildSpec {
    /// Check the choices before any engine work.
    pub fn validate(&self) -> Result<(), AfError> {
        if !BROWSERS.contains(&self.browser.as_str()) {
            return Err(AfError::invalid(format!(
                "--browser must be one of {}, not {:?}",
                BROWSERS.join(", "),
                self.browser
            )));
        }
        if !TAKEOVERS.contains(&self.takeover.as_str()) {
            return Err(AfError::invalid(format!(
                "--takeover-provider must be one of {}, not {:?}",
                TAKEOVERS.join(", "),
                self.takeover
            )));
        }
        Ok(())
    }

    fn args(&self) -> HashMap<String, String> {
        let mut args: HashMap<String, String> = HashMap::new();
        if let Some(b) = &self.base_image {
            args.insert("BASE_IMAGE".into(), b.clone());
        }
        args.insert("BROWSER".into(), self.browser.clone());
        args.insert("TAKEOVER".into(), self.takeover.clone());
        for (k, v) in &self.build_args {
            args.insert(k.clone(), v.clone());
        }
        args
    }
}

/// Build arguments that have their own flag (and end up in the image's labels).
const RESERVED_ARGS: &[(&str, &str)] = &[
    ("BASE_IMAGE", "--base-image"),
    ("BROWSER", "--browser"),
    ("TAKEOVER", "--takeover-provider"),
];

/// Parse `K=V` build arguments.
pub fn parse_build_args(raw: &[String]) -> Result<Vec<(String, String)>, AfError> {
    raw.iter()
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| AfError::invalid(format!("--build-arg {kv:?} needs K=V")))?;
            if let Some((_, flag)) = RESERVED_ARGS.iter().find(|(name, _)| *name == k) {
                return Err(AfError::invalid(format!("--build-arg {k}: use {flag}")));
            }
            Ok((k.to_string(), v.to_string()))
        })
        .collect()
}

/// The outcome of a build.
#[derive(Debug, Clone)]
pub struct Built {
    /// The tag given to the image.
    pub image: String,
    /// The engine's image id.
    pub image_id: Option<String>,
    /// Wall time of the build.
    pub elapsed_ms: u128,
}

/// Build and tag [`super::image_ref`].
pub async fn build(docker: &Docker, spec: &BuildSpec, r: &dyn Reporter) -> Result<Built, AfError> {
    spec.validate()?;
    let started = std::time::Instant::now();
    let tar = context::build(&spec.source)?;
    r.line(&format!(
        "building {} (browser {}, takeover {}, context {} MiB)",
        super::image_ref(),
        spec.browser,
        spec.takeover,
        tar.len() / (1024 * 1024)
    ));
    let mut labels = HashMap::new();
    labels.insert(super::LABEL_MANAGED.to_string(), "true".to_string());
    labels.insert(super::LABEL_VERSION.to_string(), super::VERSION.to_string());
    labels.insert(super::LABEL_BROWSER.to_string(), spec.browser.clone());
    labels.insert(super::LABEL_TAKEOVER.to_string(), spec.takeover.clone());
    let options = BuildImageOptions {
        dockerfile: "image/Dockerfile".into(),
        t: Some(super::image_ref()),
        target: spec.source.target().into(),
        buildargs: Some(spec.args()),
        labels: Some(labels),
        nocache: spec.no_cache,
        rm: true,
        forcerm: true,
        ..Default::default()
    };
    let stream = docker.build_image(options, None, Some(bollard::body_full(tar.into())));
    let outcome = follow_build(stream, r).await;
    r.done();
    Ok(Built {
        image: super::image_ref(),
        image_id: outcome?,
        elapsed_ms: started.elapsed().as_millis(),
    })
}

/// Report the build stream's lines (`Step N/M` ones as steps) until it ends; the image id,
/// or the error with the tail of the log.
async fn follow_build(
    mut stream: impl futures_util::Stream<Item = Result<bollard::models::BuildInfo, bollard::errors::Error>>
        + Unpin,
    r: &dyn Reporter,
) -> Result<Option<String>, AfError> {
    let mut tail: VecDeque<String> = VecDeque::new();
    let mut image_id = None;
    while let Some(item) = stream.next().await {
        let info = match item {
            Ok(info) => info,
            Err(e) => return Err(build_failed(&e.to_string(), &tail)),
        };
        if let Some(detail) = info.error_detail.and_then(|d| d.message) {
            return Err(build_failed(&detail, &tail));
        }
        if let Some(text) = info.stream.as_deref().or(info.status.as_deref()) {
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                match parse_step(line) {
                    Some((n, total)) => r.step(n, total, line),
                    None => r.line(line),
                }
                if tail.len() == LOG_TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(line.to_string());
            }
        }
        if let Some(id) = info.aux.and_then(|a| a.id) {
            image_id = Some(id);
        }
    }
    Ok(image_id)
}

/// `Step 3/12 : RUN ...` (the classic builder's step line) as `(3, 12)`.
pub fn parse_step(line: &str) -> Option<(u32, u32)> {
    let rest = line.trim_start().strip_prefix("Step ")?;
    let (counts, _) = rest.split_once(' ').unwrap_or((rest, ""));
    let (n, total) = counts.split_once('/')?;
    let (n, total) = (n.parse().ok()?, total.parse().ok()?);
    (n >= 1 && n <= total).then_some((n, total))
}

fn build_failed(error: &str, tail: &VecDeque<String>) -> AfError {
    let log: Vec<&str> = tail.iter().map(String::as_str).collect();
    AfError::new(
        ErrorCode::IoError,
        format!(
            "image build failed: {}\n--- last build output ---\n{}",
            error.trim(),
            log.join("\n")
        ),
    )
    .with_hint(
        "fix the failing step (see the log above), or pass --base-image/--browser/--build-arg",
    )
}

/// Whether the managed image for this version exists.
pub async fn exists(docker: &Docker) -> Result<bool, AfError> {
    match docker.inspect_image(&super::image_ref()).await {
        Ok(_) => Ok(true),
        Err(e) if engine::is_not_found(&e) => Ok(false),
        Err(e) => Err(engine::failed("inspect the image", &e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_lines_are_recognised() {
        assert_eq!(parse_step("Step 3/12 : RUN apt-get update"), Some((3, 12)));
        assert_eq!(parse_step("Step 12/12 : CMD [\"afhttp\"]"), Some((12, 12)));
        for other in [
            " ---> Running in 4f2a",
            "Step x/12 : RUN",
            "Step 13/12 : RUN",
            "Step 0/3 : FROM",
            "Successfully built 4f2a",
        ] {
            assert_eq!(parse_step(other), None, "{other}");
        }
    }

    #[test]
    fn build_args_need_key_and_value() {
        assert_eq!(
            parse_build_args(&["A=1".into(), "B=".into()]).unwrap(),
            vec![("A".into(), "1".into()), ("B".into(), String::new())]
        );
        assert!(parse_build_args(&["=1".into()]).is_err());
        assert!(parse_build_args(&["novalue".into()]).is_err());
        assert!(parse_build_args(&["BROWSER=chromium".into()]).is_err());
    }

    #[test]
    fn choices_are_checked() {
        let mut s = BuildSpec {
            source: BinarySource::Running,
            base_image: None,
            browser: "chromium".into(),
            takeover: "off".into(),
            build_args: vec![],
            no_cache: false,
        };
        assert!(s.validate().is_ok());
        s.browser = "firefox".into();
        assert!(s.validate().is_err());
        s.browser = "brave".into();
        s.takeover = "vnc".into();
        assert!(s.validate().is_err());
    }
}
