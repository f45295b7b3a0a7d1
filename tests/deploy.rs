//! `deploy/`: the Kubernetes manifests render with `kubectl kustomize`, validate offline and
//! strictly against two Kubernetes minors (PyPI `kubernetes-validate`'s bundled schemas), and
//! agree with `image/Dockerfile` and `src/env.rs` (port, user, paths, env names, probes), so
//! neither can drift from the other. No cluster runs here.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::deadline::output_within;

/// These tools answer in seconds; a loaded machine gets a generous bound.
const BOUND: Duration = Duration::from_secs(120);

/// The current stable minor and the oldest one still supported when this was written.
const KUBERNETES_MINORS: [&str; 2] = ["1.37.0", "1.35.0"];

/// Every kustomization a user may apply.
const KUSTOMIZATIONS: [&str; 3] = ["base", "overlays/ephemeral", "overlays/takeover-ingress"];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run `cmd` (bounded: these tools answer in seconds) and return stdout; panics with
/// stderr on failure.
fn run(cmd: &mut Command, what: &str) -> String {
    let out = output_within(cmd, BOUND);
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// A copy of `deploy/k8s` with the git-ignored token file an operator writes first.
fn k8s_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("deploy/k8s"), dir.path());
    std::fs::write(
        dir.path().join("base/token.secret"),
        "0123456789abcdef0123456789abcdef\n",
    )
    .unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else if e.file_name() != "token.secret" {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// `kubectl kustomize DIR` (the YAML stream).
fn render(tree: &Path, kustomization: &str) -> String {
    run(
        Command::new("kubectl")
            .arg("kustomize")
            .arg(tree.join(kustomization)),
        &format!("kubectl kustomize {kustomization}"),
    )
}

/// The documents of a YAML stream as JSON (PyYAML comes with kubernetes-validate).
fn documents(yaml: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.yaml");
    std::fs::write(&file, yaml).unwrap();
    let json = run(
        Command::new("python3").arg("-c").arg(
            "import json,sys,yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))",
        ).arg(&file),
        "python3 yaml to json",
    );
    serde_json::from_str::<Vec<Value>>(&json).unwrap()
}

/// `kubernetes-validate --strict` of `file` against `minor`: (passed, output).
fn validate(file: &Path, minor: &str) -> (bool, String) {
    let out = output_within(
        Command::new("kubernetes-validate")
            .args(["--strict", "--quiet", "-k", minor])
            .arg(file),
        BOUND,
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn k8s_manifests_render_and_validate_strictly_on_two_minors() {
    let tree = k8s_tree();
    let out = tempfile::tempdir().unwrap();
    for k in KUSTOMIZATIONS {
        let yaml = render(tree.path(), k);
        let docs = documents(&yaml);
        assert!(docs.len() >= 4, "{k}: {} documents", docs.len());
        let file = out.path().join(format!("{}.yaml", k.replace('/', "-")));
        std::fs::write(&file, &yaml).unwrap();
        for minor in KUBERNETES_MINORS {
            let (ok, text) = validate(&file, minor);
            assert!(ok, "{k} against {minor}:\n{text}");
        }
    }
    // Strict really is strict: an unknown field in the StatefulSet fails.
    let yaml = render(tree.path(), "base").replacen(
        "  serviceName: afhttp\n",
        "  serviceName: afhttp\n  replicaz: 3\n",
        1,
    );
    let bad = out.path().join("bad.yaml");
    std::fs::write(&bad, yaml).unwrap();
    let (ok, text) = validate(&bad, KUBERNETES_MINORS[0]);
    assert!(!ok && text.contains("replicaz"), "{text}");
}

/// What `image/Dockerfile` says about the runtime: port, uid, volume, environment, healthcheck.
struct Image {
    port: u16,
    uid: u64,
    volume: String,
    env: Vec<(String, String)>,
    healthcheck: String,
}

fn image() -> Image {
    let text = std::fs::read_to_string(repo().join("image/Dockerfile")).unwrap();
    let runtime = &text[..text.find("FROM runtime-base AS prebuilt").unwrap()];
    let port = runtime
        .lines()
        .find_map(|l| l.strip_prefix("EXPOSE "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let uid = runtime
        .split("useradd")
        .nth(1)
        .and_then(|rest| rest.split("--uid ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    let volume = runtime
        .lines()
        .find_map(|l| l.strip_prefix("VOLUME [\""))
        .unwrap()
        .trim_end_matches("\"]")
        .to_string();
    let env_block = runtime.split("\nENV ").nth(1).unwrap();
    let env = env_block
        .lines()
        .take_while(|l| !l.trim().is_empty() && !l.starts_with("VOLUME"))
        .filter_map(|l| {
            let (k, v) = l.trim().trim_end_matches('\\').trim().split_once('=')?;
            Some((k.to_string(), v.to_string()))
        })
        .collect();
    let healthcheck = runtime.split("HEALTHCHECK").nth(1).unwrap();
    let healthcheck = healthcheck[..healthcheck.find("\nENTRYPOINT").unwrap()].to_string();
    Image {
        port,
        uid,
        volume,
        env,
        healthcheck,
    }
}

/// Every `AFHTTP_*` name `src/env.rs` declares.
fn env_registry() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("src/env.rs")).unwrap();
    text.split('"')
        .filter(|s| s.starts_with("AFHTTP_") && !s.contains(' '))
        .map(str::to_string)
        .collect()
}

fn of_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

/// Check one pod template's host container against the image.
fn check_pod(what: &str, pod: &Value, img: &Image, registry: &[String], version: &str) {
    let spec = &pod["spec"];
    let sc = &spec["securityContext"];
    assert_eq!(sc["runAsUser"], img.uid, "{what}: runAsUser");
    assert_eq!(sc["runAsNonRoot"], true, "{what}");
    assert!(
        spec["terminationGracePeriodSeconds"].as_u64().unwrap() >= 20,
        "{what}: the grace period must outlast the host's shutdown (~13 s)"
    );
    let c = &spec["containers"][0];
    assert_eq!(
        c["image"],
        format!("afhttp-host:{version}"),
        "{what}: image tag"
    );
    let csc = &c["securityContext"];
    assert_eq!(csc["readOnlyRootFilesystem"], true, "{what}");
    assert_eq!(csc["allowPrivilegeEscalation"], false, "{what}");
    assert_eq!(
        csc["capabilities"]["drop"],
        serde_json::json!(["ALL"]),
        "{what}"
    );
    let port = c["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "afhttp")
        .unwrap();
    assert_eq!(port["containerPort"], img.port, "{what}: containerPort");
    let listen = img.env.iter().find(|(k, _)| k == "AFHTTP_LISTEN").unwrap();
    assert!(
        listen.1.ends_with(&format!(":{}", img.port)),
        "{:?}",
        listen
    );
    // Env names come from the registry; the token file is in the mounted secret.
    let env: Vec<(String, String)> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["value"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    for (name, _) in &env {
        assert!(
            registry.contains(name),
            "{what}: {name} is not in src/env.rs"
        );
    }
    let value = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    assert_eq!(value("AFHTTP_HEALTH_PUBLIC").as_deref(), Some("minimal"));
    let token_file = value("AFHTTP_TOKEN_SECRET_FILE").unwrap();
    let mounts = c["volumeMounts"].as_array().unwrap();
    let mount_of = |path: &str| {
        mounts
            .iter()
            .find(|m| m["mountPath"] == path)
            .unwrap_or_else(|| panic!("{what}: nothing mounted at {path}"))
    };
    let token_mount = mounts
        .iter()
        .find(|m| token_file.starts_with(&format!("{}/", m["mountPath"].as_str().unwrap())))
        .unwrap_or_else(|| panic!("{what}: {token_file} is not in a mounted volume"));
    assert_eq!(token_mount["readOnly"], true);
    let volume = |name: &Value| {
        spec["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| &v["name"] == name)
            .cloned()
    };
    let token_volume = volume(&token_mount["name"]).unwrap();
    assert!(
        token_volume["secret"]["secretName"]
            .as_str()
            .unwrap()
            .starts_with("afhttp-token"),
        "{token_volume}"
    );
    // The image's volume, a writable /tmp (read-only root) and memory for /dev/shm.
    mount_of(&img.volume);
    mount_of("/tmp");
    let shm = volume(&mount_of("/dev/shm")["name"]).unwrap();
    assert_eq!(shm["emptyDir"]["medium"], "Memory", "{what}");
    // Every probe asks the readiness form on the listener's port, like the HEALTHCHECK.
    for probe in ["startupProbe", "readinessProbe", "livenessProbe"] {
        let p = &c[probe]["httpGet"];
        assert_eq!(p["path"], "/health?ready", "{what}: {probe}");
        assert!(
            p["port"] == "afhttp" || p["port"] == img.port,
            "{what}: {probe} port {}",
            p["port"]
        );
    }
}

#[test]
fn k8s_manifests_match_the_image_and_the_env_registry() {
    let img = image();
    let registry = env_registry();
    let version = env!("CARGO_PKG_VERSION");
    // The image itself: its env names are ours, and its HEALTHCHECK asks for readiness.
    for (name, _) in img.env.iter().filter(|(k, _)| k.starts_with("AFHTTP_")) {
        assert!(registry.contains(name), "image/Dockerfile: {name}");
    }
    assert!(
        img.healthcheck.contains("\"--ready\""),
        "{}",
        img.healthcheck
    );
    let compose = std::fs::read_to_string(repo().join("compose.yaml")).unwrap();
    assert!(compose.contains("\"health\", \"--ready\""), "compose.yaml");
    let tree = k8s_tree();
    for k in KUSTOMIZATIONS {
        let docs = documents(&render(tree.path(), k));
        let sets = of_kind(&docs, "StatefulSet");
        assert_eq!(sets.len(), 1, "{k}");
        let set = sets[0];
        check_pod(k, &set["spec"]["template"], &img, &registry, version);
        // Profiles live on a claim per pod at the image's volume.
        let claims = set["spec"]["volumeClaimTemplates"].as_array().unwrap();
        let data = &claims[0]["metadata"]["name"];
        let c = &set["spec"]["template"]["spec"]["containers"][0];
        assert!(c["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| &m["name"] == data && m["mountPath"] == img.volume.as_str()));
        // The headless Service names each pod and serves the listener's port.
        let svc = of_kind(&docs, "Service")
            .into_iter()
            .find(|s| s["metadata"]["name"] == set["spec"]["serviceName"])
            .unwrap();
        assert_eq!(svc["spec"]["clusterIP"], "None", "{k}");
        assert_eq!(svc["spec"]["ports"][0]["port"], img.port, "{k}");
        assert_eq!(of_kind(&docs, "PodDisruptionBudget").len(), 1, "{k}");
        assert_eq!(of_kind(&docs, "Secret").len(), 1, "{k}");
        for d in of_kind(&docs, "Deployment") {
            check_pod(k, &d["spec"]["template"], &img, &registry, version);
            assert!(d["spec"].get("volumeClaimTemplates").is_none());
        }
    }
}

/// `deploy/swarm/stack.sh N` as JSON.
fn swarm_stack(n: usize) -> Value {
    let out = output_within(
        Command::new("sh")
            .arg(repo().join("deploy/swarm/stack.sh"))
            .args([n.to_string(), "19222".to_string()]),
        BOUND,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs = documents(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(docs.len(), 1);
    docs[0].clone()
}

#[test]
fn swarm_stack_matches_the_image_and_the_env_registry() {
    let img = image();
    let registry = env_registry();
    let version = env!("CARGO_PKG_VERSION");
    let stack = swarm_stack(4);
    let services = stack["services"].as_object().unwrap();
    assert_eq!(services.len(), 4);
    for (i, (name, svc)) in services.iter().enumerate() {
        // One service per replica: stable name, hostname, port and volume.
        assert_eq!(name, &format!("afhttp-{}", i + 1));
        assert_eq!(svc["hostname"], name.as_str());
        assert_eq!(svc["deploy"]["replicas"], 1);
        assert_eq!(svc["image"], format!("afhttp-host:{version}"));
        let port = &svc["ports"][0];
        assert_eq!(port["target"], img.port);
        assert_eq!(port["published"], 19222 + i as u64);
        assert_eq!(port["mode"], "host");
        for env in svc["environment"].as_object().unwrap().keys() {
            assert!(registry.contains(env), "{name}: {env} is not in src/env.rs");
        }
        let token_file = svc["environment"]["AFHTTP_TOKEN_SECRET_FILE"]
            .as_str()
            .unwrap();
        let secret = &svc["secrets"][0];
        assert_eq!(
            token_file,
            format!("/run/secrets/{}", secret["target"].as_str().unwrap())
        );
        assert_eq!(secret["uid"], img.uid.to_string());
        let volumes = svc["volumes"].as_array().unwrap();
        assert!(volumes.contains(&Value::String(format!(
            "afhttp-data-{}:{}",
            i + 1,
            img.volume
        ))));
        let tmpfs: Vec<&str> = volumes
            .iter()
            .filter(|v| v["type"] == "tmpfs")
            .map(|v| v["target"].as_str().unwrap())
            .collect();
        assert_eq!(tmpfs, ["/tmp", "/dev/shm"], "{name}");
        assert_eq!(svc["read_only"], true);
        assert_eq!(svc["cap_drop"], serde_json::json!(["ALL"]));
        assert_eq!(svc["stop_grace_period"], "30s");
        let check: Vec<&str> = svc["healthcheck"]["test"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(check.contains(&"--ready"), "{check:?}");
        assert!(
            check.contains(&format!("ws://127.0.0.1:{}", img.port).as_str()),
            "{check:?}"
        );
        for key in [
            "restart_policy",
            "update_config",
            "rollback_config",
            "resources",
        ] {
            assert!(svc["deploy"].get(key).is_some(), "{name}: deploy.{key}");
        }
    }
    assert_eq!(stack["volumes"].as_object().unwrap().len(), 4);
    assert!(stack["secrets"]["afhttp_token"].is_object());
}
