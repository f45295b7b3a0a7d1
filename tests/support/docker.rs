//! A real Docker engine for the container tests, and a locally built base image.
//!
//! `DOCKER_HOST` wins when set. Otherwise the tests start their own `dockerd` on a private
//! socket and data root under `$AFHTTP_TEST_DOCKER_DIR` (default `/var/tmp/afhttp-test-docker`)
//! and stop it when done; the data root persists, so the base image (and the engine's layer
//! cache) survive between runs. There is no image registry here: the base image is made with
//! `debootstrap` from the Debian mirror this machine's apt already uses, then imported.

use super::deadline::CommandDeadline;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bollard::query_parameters::CreateImageOptions;
use bollard::Docker;
use futures_util::StreamExt;

/// Packages baked into the test base image, so the Dockerfile's own install of the browser
/// and fonts is a fast no-op and a run does not download Chromium again. (Installed with apt
/// in a container: debootstrap `--include=chromium` fails configuring dconf in the chroot.)
const BASE_PACKAGES: &str =
    "ca-certificates chromium fonts-liberation fonts-dejavu-core fonts-noto-cjk";
/// Bump when the recipe changes (part of the cache key).
const BASE_RECIPE: &str = "minbase-bookworm-v2";

/// An engine for one test: either the ambient one or a private dockerd we started.
pub struct Engine {
    /// The `DOCKER_HOST` value for commands.
    pub host: String,
    child: Option<Child>,
    _lock: Option<nix::fcntl::Flock<std::fs::File>>,
}

impl Engine {
    /// The ambient engine (`DOCKER_HOST`), or a private dockerd.
    pub fn start() -> Engine {
        if let Ok(host) = std::env::var("DOCKER_HOST") {
            assert!(
                ping(&host),
                "DOCKER_HOST={host} is set but no engine answers"
            );
            return Engine {
                host,
                child: None,
                _lock: None,
            };
        }
        let dir = PathBuf::from(
            std::env::var("AFHTTP_TEST_DOCKER_DIR")
                .unwrap_or_else(|_| "/var/tmp/afhttp-test-docker".into()),
        );
        std::fs::create_dir_all(&dir).unwrap();
        // One test run at a time owns the private engine and its data root.
        let lock = std::fs::File::create(dir.join("lock")).unwrap();
        let lock = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| e)
            .unwrap();
        let host = format!("unix://{}", dir.join("docker.sock").display());
        if ping(&host) {
            // A dockerd someone started by hand on the same private socket: use it.
            return Engine {
                host,
                child: None,
                _lock: Some(lock),
            };
        }
        let dockerd = which("dockerd").expect(
            "dockerd is not installed (scripts/test.sh installs Debian's docker.io package)",
        );
        let log = std::fs::File::create(dir.join("dockerd.log")).unwrap();
        let child = Command::new(dockerd)
            .arg("--host")
            .arg(&host)
            .arg("--data-root")
            .arg(dir.join("data"))
            .arg("--exec-root")
            .arg(dir.join("exec"))
            .arg("--pidfile")
            .arg(dir.join("dockerd.pid"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let mut engine = Engine {
            host,
            child: Some(child),
            _lock: Some(lock),
        };
        crate::support::deadline::wait_for("dockerd to answer", Duration::from_secs(60), || {
            if let Some(status) = engine.child.as_mut().and_then(|c| c.try_wait().unwrap()) {
                panic!(
                    "dockerd exited ({status}); log:\n{}",
                    std::fs::read_to_string(dir.join("dockerd.log")).unwrap_or_default()
                );
            }
            ping(&engine.host)
        });
        engine
    }

    /// A bollard client for this engine (for checks the CLI does not print).
    pub async fn docker(&self) -> Docker {
        Docker::connect_with_host(&self.host)
            .unwrap()
            .negotiate_version()
            .await
            .unwrap()
    }

    /// The test base image (built once, then reused): a Debian bookworm rootfs with
    /// Chromium and fonts, imported as `afhttp-test-base:<key>`.
    pub fn base_image(&self) -> String {
        let mirrors = apt_mirrors();
        let key = fnv(&format!("{BASE_RECIPE}|{BASE_PACKAGES}|{mirrors:?}"));
        let name = format!("afhttp-test-base:{key:016x}");
        rt().block_on(async {
            let docker = self.docker().await;
            if docker.inspect_image(&name).await.is_ok() {
                return;
            }
            let rootfs = tempfile::tempdir_in("/var/tmp").unwrap();
            debootstrap(rootfs.path(), &mirrors);
            let tar = Command::new("tar")
                .args(["--numeric-owner", "-C"])
                .arg(rootfs.path())
                .args(["-c", "."])
                .output_within(Duration::from_secs(1800))
                .unwrap();
            assert!(tar.status.success(), "tar of the rootfs failed");
            let raw = format!("afhttp-test-base-raw:{key:016x}");
            import(&docker, &raw, tar.stdout).await;
            // debootstrap only knows the release suite: upgrade to bookworm-updates/-security
            // and add the browser once here, so no run downloads Chromium again.
            upgrade_and_commit(&docker, &raw, &name).await;
            let _ = docker
                .remove_image(
                    &raw,
                    None::<bollard::query_parameters::RemoveImageOptions>,
                    None,
                )
                .await;
        });
        name
    }

    /// An image with one file and no shell: every `RUN` in a build on it fails.
    pub fn shell_less_image(&self) -> String {
        let name = "afhttp-test-noshell:1".to_string();
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(3);
        h.set_mode(0o644);
        b.append_data(&mut h, "hello", &b"hi\n"[..]).unwrap();
        let tar = b.into_inner().unwrap();
        rt().block_on(async {
            let docker = self.docker().await;
            if docker.inspect_image(&name).await.is_err() {
                import(&docker, &name, tar).await;
            }
        });
        name
    }

    /// Run `cmd` in a running container (test inspection only) and return its stdout.
    pub fn exec_output(&self, container: &str, cmd: &[&str]) -> String {
        rt().block_on(async {
            let docker = self.docker().await;
            let config = bollard::models::ExecConfig {
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                cmd: Some(cmd.iter().map(|s| s.to_string()).collect()),
                ..Default::default()
            };
            let exec = docker.create_exec(container, config).await.unwrap();
            let mut out = String::new();
            if let bollard::exec::StartExecResults::Attached { mut output, .. } =
                docker.start_exec(&exec.id, None).await.unwrap()
            {
                while let Some(Ok(chunk)) = output.next().await {
                    if let bollard::container::LogOutput::StdOut { message } = chunk {
                        out.push_str(&String::from_utf8_lossy(&message));
                    }
                }
            }
            out
        })
    }

    /// The bridge network's gateway: an address of this machine that containers reach. A
    /// freshly created data root's bridge may list only its subnet, whose first address is the
    /// gateway.
    pub fn bridge_gateway(&self) -> String {
        let configs = rt().block_on(async {
            let docker = self.docker().await;
            let net = docker
                .inspect_network(
                    "bridge",
                    None::<bollard::query_parameters::InspectNetworkOptions>,
                )
                .await
                .unwrap();
            net.ipam.and_then(|i| i.config).unwrap_or_default()
        });
        let pairs: Vec<(Option<String>, Option<String>)> =
            configs.into_iter().map(|c| (c.gateway, c.subnet)).collect();
        gateway_of(&pairs).expect("the bridge network has neither a gateway nor an IPv4 subnet")
    }
}

/// The gateway among a network's (gateway, subnet) configs: the first non-empty gateway, else
/// the first address of the first IPv4 subnet.
fn gateway_of(configs: &[(Option<String>, Option<String>)]) -> Option<String> {
    let listed = configs
        .iter()
        .find_map(|(g, _)| g.clone().filter(|g| !g.is_empty()));
    listed.or_else(|| {
        configs.iter().find_map(|(_, subnet)| {
            let net: std::net::Ipv4Addr = subnet.as_deref()?.split('/').next()?.parse().ok()?;
            Some(std::net::Ipv4Addr::from(u32::from(net) + 1).to_string())
        })
    })
}

#[test]
fn a_bridge_listing_only_its_subnet_has_its_first_address_as_gateway() {
    let only_subnet = [(None, Some("172.17.0.0/16".to_string()))];
    assert_eq!(gateway_of(&only_subnet).as_deref(), Some("172.17.0.1"));
    let empty_gateway = [(Some(String::new()), Some("10.9.0.0/24".to_string()))];
    assert_eq!(gateway_of(&empty_gateway).as_deref(), Some("10.9.0.1"));
    let listed = [(
        Some("172.18.0.1".to_string()),
        Some("172.18.0.0/16".to_string()),
    )];
    assert_eq!(gateway_of(&listed).as_deref(), Some("172.18.0.1"));
    assert_eq!(gateway_of(&[]), None);
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
            let exited = crate::support::deadline::wait_until(Duration::from_secs(20), || {
                matches!(child.try_wait(), Ok(Some(_)))
            });
            if exited {
                return;
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

async fn import(docker: &Docker, name: &str, tar: Vec<u8>) {
    // `repo` carries the tag: Docker accepts both forms, Podman's compat API only this one.
    let options = CreateImageOptions {
        from_src: Some("-".into()),
        repo: Some(name.into()),
        ..Default::default()
    };
    let mut s = docker.create_image(Some(options), Some(bollard::body_full(tar.into())), None);
    while let Some(item) = s.next().await {
        item.unwrap();
    }
}

async fn upgrade_and_commit(docker: &Docker, from: &str, to: &str) {
    use bollard::models::ContainerCreateBody;
    let script = format!(
        "export DEBIAN_FRONTEND=noninteractive && apt-get update -qq && apt-get -y -qq upgrade \
         && apt-get install -y -qq --no-install-recommends {BASE_PACKAGES} \
         && apt-get clean && rm -rf /var/lib/apt/lists/*"
    );
    let body = ContainerCreateBody {
        image: Some(from.into()),
        cmd: Some(vec!["/bin/sh".into(), "-c".into(), script]),
        ..Default::default()
    };
    let c = docker
        .create_container(
            None::<bollard::query_parameters::CreateContainerOptions>,
            body,
        )
        .await
        .unwrap();
    docker.start_container(&c.id, None).await.unwrap();
    let mut wait = docker.wait_container(&c.id, None);
    while let Some(w) = wait.next().await {
        let w = w.unwrap_or_else(|e| panic!("upgrading the test base image failed: {e}"));
        assert_eq!(w.status_code, 0, "upgrading the test base image failed");
    }
    let (repo, tag) = to.split_once(':').unwrap();
    let options = bollard::query_parameters::CommitContainerOptions {
        container: Some(c.id.clone()),
        repo: Some(repo.into()),
        tag: Some(tag.into()),
        ..Default::default()
    };
    docker
        .commit_container(options, bollard::models::ContainerConfig::default())
        .await
        .unwrap();
    let _ = docker
        .remove_container(
            &c.id,
            None::<bollard::query_parameters::RemoveContainerOptions>,
        )
        .await;
}

/// A current-thread runtime for engine calls from a sync test.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn ping(host: &str) -> bool {
    let Ok(docker) = Docker::connect_with_host(host) else {
        return false;
    };
    rt().block_on(async {
        match docker.negotiate_version().await {
            Ok(d) => d.ping().await.is_ok(),
            Err(_) => false,
        }
    })
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let extra = ["/usr/sbin", "/usr/bin", "/sbin"];
    let found = path
        .split(':')
        .chain(extra)
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file());
    found
}

/// The Debian and Debian-security mirrors this machine's apt uses (never a name we invent).
fn apt_mirrors() -> (String, Option<String>) {
    let mut uris = Vec::new();
    let mut texts = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/etc/apt/sources.list.d") {
        for e in rd.flatten() {
            texts.push(std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    texts.push(std::fs::read_to_string("/etc/apt/sources.list").unwrap_or_default());
    for text in texts {
        for line in text.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("URIs:") {
                uris.extend(rest.split_whitespace().map(str::to_string));
            } else if let Some(rest) = line.strip_prefix("deb ") {
                if let Some(u) = rest.split_whitespace().find(|w| w.contains("://")) {
                    uris.push(u.to_string());
                }
            }
        }
    }
    let security = uris.iter().find(|u| u.contains("security")).cloned();
    let main = uris
        .iter()
        .find(|u| u.trim_end_matches('/').ends_with("/debian"))
        .cloned()
        .expect("no Debian mirror in /etc/apt sources (needed to build the test base image)");
    (main, security)
}

fn debootstrap(dir: &Path, (main, security): &(String, Option<String>)) {
    let bin =
        which("debootstrap").expect("debootstrap is not installed (scripts/test.sh installs it)");
    let out = Command::new(bin)
        .args(["--variant=minbase", "bookworm"])
        .arg(dir)
        .arg(main)
        .output_within(Duration::from_secs(1800))
        .unwrap();
    assert!(
        out.status.success(),
        "debootstrap failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Updates and security too, or the image's Chromium lags behind the host's.
    let mut sources = format!("deb {main} bookworm main\ndeb {main} bookworm-updates main\n");
    if let Some(s) = security {
        sources.push_str(&format!("deb {s} bookworm-security main\n"));
    }
    std::fs::write(dir.join("etc/apt/sources.list"), sources).unwrap();
    let _ = std::fs::remove_dir_all(dir.join("var/cache/apt/archives"));
    std::fs::create_dir_all(dir.join("var/cache/apt/archives/partial")).unwrap();
}

/// FNV-1a: a stable cache key (std's hasher may change between Rust versions).
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
