//! The one registry of environment variables afhttp reads.
//!
//! clap's `env =` attributes and the docs refer to these constants; nothing else names them.

/// Default endpoint for driver commands when `--endpoint-url` is omitted.
pub const ENDPOINT_URL: &str = "AFHTTP_ENDPOINT_URL";
/// Bearer token for driver commands and the host when `--token-secret` is omitted.
pub const TOKEN_SECRET: &str = "AFHTTP_TOKEN_SECRET";
/// File holding the bearer token (read by drivers; created with mode 0600 by the host).
pub const TOKEN_SECRET_FILE: &str = "AFHTTP_TOKEN_SECRET_FILE";
/// A fleet of hosts for driver commands (`--fleet`): members as `NAME=URL`, comma-separated,
/// or `@FILE`.
pub const FLEET: &str = "AFHTTP_FLEET";
/// Cookie jar file for `fetch` when `--cookie-jar` is omitted.
pub const COOKIE_JAR: &str = "AFHTTP_COOKIE_JAR";
/// Browser executable for inline hosts when `--browser-bin` is omitted.
pub const BROWSER_BIN: &str = "AFHTTP_BROWSER_BIN";
/// A true value (`1`, `true`, `yes`, `on`) disables Chromium's sandbox (containers, root).
pub const NO_SANDBOX: &str = "AFHTTP_NO_SANDBOX";
/// Log level for structured stderr logs: `error`, `warn`, `info`, `debug`.
pub const LOG: &str = "AFHTTP_LOG";
/// `afhttp host --listen`.
pub const LISTEN: &str = "AFHTTP_LISTEN";
/// `afhttp host --profile`.
pub const PROFILE: &str = "AFHTTP_PROFILE";
/// `afhttp host --display`.
pub const DISPLAY_MODE: &str = "AFHTTP_DISPLAY";
/// `afhttp host --browser`.
pub const BROWSER: &str = "AFHTTP_BROWSER";
/// `afhttp host --no-health` (a true value).
pub const NO_HEALTH: &str = "AFHTTP_NO_HEALTH";
/// `afhttp host --health-public`.
pub const HEALTH_PUBLIC: &str = "AFHTTP_HEALTH_PUBLIC";
/// `afhttp host --proxy-url` (explicit; ambient proxies are never used).
pub const PROXY_URL: &str = "AFHTTP_PROXY_URL";
/// `afhttp host --engine-env`, comma-separated `K=V` pairs.
pub const ENGINE_ENV: &str = "AFHTTP_ENGINE_ENV";
/// `afhttp host --browser-arg`, space-separated flags.
pub const BROWSER_ARG: &str = "AFHTTP_BROWSER_ARG";
/// `afhttp host --allowed-host`, comma-separated host names accepted without a bearer header.
pub const ALLOWED_HOST: &str = "AFHTTP_ALLOWED_HOST";
/// `--deny-private-networks` of `afhttp host`, `mcp` and `fetch` (a true value).
pub const DENY_PRIVATE_NETWORKS: &str = "AFHTTP_DENY_PRIVATE_NETWORKS";
/// `--egress-allow` of `afhttp host`, `mcp` and `fetch`: comma-separated IPs, CIDR blocks or
/// host names.
pub const EGRESS_ALLOW: &str = "AFHTTP_EGRESS_ALLOW";
/// `afhttp host --egress-policy` (a true value).
pub const EGRESS_POLICY: &str = "AFHTTP_EGRESS_POLICY";
/// `afhttp host --recent-requests-cap`.
pub const RECENT_REQUESTS_CAP: &str = "AFHTTP_RECENT_REQUESTS_CAP";
/// `afhttp host --profile-switch-wait-ms`.
pub const PROFILE_SWITCH_WAIT_MS: &str = "AFHTTP_PROFILE_SWITCH_WAIT_MS";
/// `afhttp host --trusted-proxy`, comma-separated IPs or CIDR blocks.
pub const TRUSTED_PROXY: &str = "AFHTTP_TRUSTED_PROXY";
/// `afhttp host --ephemeral-only` (a true value).
pub const EPHEMERAL_ONLY: &str = "AFHTTP_EPHEMERAL_ONLY";
/// `afhttp host --upload-max-bytes`.
pub const UPLOAD_MAX_BYTES: &str = "AFHTTP_UPLOAD_MAX_BYTES";
/// `afhttp host --max-clients`.
pub const MAX_CLIENTS: &str = "AFHTTP_MAX_CLIENTS";
/// `afhttp host --max-tabs`.
pub const MAX_TABS: &str = "AFHTTP_MAX_TABS";
/// `afhttp host --tab-pool`.
pub const TAB_POOL: &str = "AFHTTP_TAB_POOL";
/// `afhttp host --no-mcp` (a true value): serve no `/mcp`.
pub const NO_MCP: &str = "AFHTTP_NO_MCP";
/// `afhttp host --mcp-output-ttl` (an age: 90m, 12h, 1d).
pub const MCP_OUTPUT_TTL: &str = "AFHTTP_MCP_OUTPUT_TTL";
/// `afhttp host --mcp-output-max-bytes`.
pub const MCP_OUTPUT_MAX_BYTES: &str = "AFHTTP_MCP_OUTPUT_MAX_BYTES";
/// `afhttp host --mcp-allow-cdp` (a true value).
pub const MCP_ALLOW_CDP: &str = "AFHTTP_MCP_ALLOW_CDP";
/// `fetch --stall-cutoff-ms`: how long a third-party request may go without a response
/// before it is cut (milliseconds; 0 = never).
pub const STALL_CUTOFF_MS: &str = "AFHTTP_STALL_CUTOFF_MS";
/// `afhttp mcp --text-budget-tokens` and `afhttp host --mcp-text-budget-tokens`.
pub const MCP_TEXT_BUDGET_TOKENS: &str = "AFHTTP_MCP_TEXT_BUDGET_TOKENS";
/// `afhttp mcp --text-budget-chars` and `afhttp host --mcp-text-budget-chars`.
pub const MCP_TEXT_BUDGET_CHARS: &str = "AFHTTP_MCP_TEXT_BUDGET_CHARS";
/// `afhttp mcp --image-max-bytes` and `afhttp host --mcp-image-max-bytes`.
pub const MCP_IMAGE_MAX_BYTES: &str = "AFHTTP_MCP_IMAGE_MAX_BYTES";
/// `afhttp host --takeover-provider`.
pub const TAKEOVER_PROVIDER: &str = "AFHTTP_TAKEOVER_PROVIDER";
/// `afhttp host --takeover-quality-percent`.
pub const TAKEOVER_QUALITY_PERCENT: &str = "AFHTTP_TAKEOVER_QUALITY_PERCENT";
/// Test-only: the host's restart window in milliseconds instead of ten minutes, so a test
/// can space injected browser crashes past it without waiting. Not for production use.
pub const TEST_RESTART_WINDOW_MS: &str = "AFHTTP_TEST_RESTART_WINDOW_MS";
/// Base directory for profiles (`$XDG_DATA_HOME/afhttp/profiles`).
pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
/// Terminal type: `dumb` turns the image-build progress bar into plain lines.
pub const TERM: &str = "TERM";
/// Codex's configuration directory (default `~/.codex`): where `afhttp mcp install --agent
/// codex` writes `config.toml`.
pub const CODEX_HOME: &str = "CODEX_HOME";
/// The user's configuration directory (default `~/.config`): where `afhttp mcp install
/// --agent opencode` writes `opencode/opencode.json`.
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
/// Home directory, used for `~/.local/share` and agent skill directories.
pub const HOME: &str = "HOME";
/// The Docker Engine `afhttp container` and driver discovery talk to (default: the local
/// socket `unix:///var/run/docker.sock`).
pub const DOCKER_HOST: &str = "DOCKER_HOST";
/// Program search path: where the host looks for browsers and display programs (never
/// passed on as-is to the browser, which gets a minimal environment).
pub const PATH: &str = "PATH";
/// Temporary directory. When it is set, inline fetches keep their throwaway profile there
/// instead of `/dev/shm`.
pub const TMPDIR: &str = "TMPDIR";
/// Extra PEM CA bundle trusted by the host transport and the HTTP path, read by the
/// system-certificate loader (rustls-native-certs).
pub const SSL_CERT_FILE: &str = "SSL_CERT_FILE";
/// Test-only: `1` makes the docs freshness tests rewrite the generated parts of
/// `docs/reference.md` instead of failing (`make docs`).
pub const TEST_WRITE_DOCS: &str = "AFHTTP_TEST_WRITE_DOCS";

/// Whether an environment value counts as true (`1`, `true`, `yes`, `on`, any case).
pub fn is_truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

/// The process environment, read once by a front end's resolve step (the CLI, an SDK entry
/// point such as `Client::inline_ephemeral`) and handed down, so that the layers below take
/// what they need from it instead of reading the environment themselves (`env.rs`'s test
/// keeps it so). `Debug` lists the names only: values may be secrets.
#[derive(Clone, Default)]
pub struct Snapshot {
    vars: std::sync::Arc<std::collections::HashMap<String, std::ffi::OsString>>,
}

impl Snapshot {
    /// Read the whole process environment now.
    pub fn read() -> Snapshot {
        Snapshot::of(std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v))))
    }

    /// A snapshot of exactly `vars` (tests, embedders).
    pub fn of(vars: impl IntoIterator<Item = (String, std::ffi::OsString)>) -> Snapshot {
        Snapshot {
            vars: std::sync::Arc::new(vars.into_iter().collect()),
        }
    }

    /// A variable as a non-empty UTF-8 string.
    pub fn get(&self, name: &str) -> Option<String> {
        self.vars
            .get(name)
            .and_then(|v| v.to_str())
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    }

    /// A variable as it was, bytes and all (`PATH`), even when empty.
    pub fn get_os(&self, name: &str) -> Option<&std::ffi::OsStr> {
        self.vars.get(name).map(std::ffi::OsString::as_os_str)
    }

    /// Whether a variable holds a true value ([`is_truthy`]).
    pub fn is_true(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| is_truthy(&v))
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort();
        f.debug_struct("Snapshot").field("names", &names).finish()
    }
}

/// One declared variable: its name and its documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// The constant in this module.
    pub constant: String,
    /// The variable's name.
    pub name: String,
    /// The doc comment, joined into one line.
    pub doc: String,
}

/// Every variable declared in this file, in order, read from its own source, so the
/// documentation table cannot miss a constant added later.
pub fn declared() -> Vec<Declared> {
    let mut out = Vec::new();
    let mut doc: Vec<&str> = Vec::new();
    for line in include_str!("env.rs").lines() {
        let line = line.trim();
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.trim());
            continue;
        }
        let decl = line
            .strip_prefix("pub const ")
            .and_then(|rest| rest.split_once(": &str = \""))
            .and_then(|(c, v)| Some((c, v.strip_suffix("\";")?)));
        if let Some((constant, name)) = decl {
            out.push(Declared {
                constant: constant.to_string(),
                name: name.to_string(),
                doc: doc.join(" "),
            });
        }
        doc.clear();
    }
    out
}

/// The environment table of `docs/reference.md`, generated from [`declared`].
pub fn reference_table() -> String {
    let mut t = String::from("| Variable | Meaning |\n| --- | --- |\n");
    for d in declared() {
        t.push_str(&format!(
            "| `{}` | {} |\n",
            d.name,
            d.doc.replace('|', "\\|")
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_constant_is_declared_once_with_a_doc() {
        let all = super::declared();
        assert!(all.len() > 30, "{}", all.len());
        let mut names = std::collections::HashSet::new();
        for d in &all {
            assert!(!d.doc.is_empty(), "{} has no doc comment", d.constant);
            assert!(names.insert(d.name.clone()), "{} declared twice", d.name);
        }
        assert!(all.iter().any(|d| d.name == "DOCKER_HOST"));
    }

    #[test]
    fn reference_table_is_fresh() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let (start, end) = ("<!-- env-table:start -->\n", "<!-- env-table:end -->");
        let a = doc
            .find(start)
            .expect("docs/reference.md has the env-table markers")
            + start.len();
        let b = doc.find(end).unwrap();
        let table = super::reference_table();
        if doc[a..b] != table {
            if std::env::var_os(super::TEST_WRITE_DOCS).is_some() {
                std::fs::write(path, format!("{}{table}{}", &doc[..a], &doc[b..])).unwrap();
                return;
            }
            panic!("docs/reference.md's environment table is stale: run `make docs`");
        }
    }

    /// Variables are read only through the names declared here.
    #[test]
    fn no_variable_is_named_outside_this_file() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        let mut stack = vec![std::path::PathBuf::from(root)];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("src/env.rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    for bad in ["env::var(\"", "env::var_os(\""] {
                        assert!(!text.contains(bad), "{} reads a variable by literal name ({bad}…); declare it in src/env.rs", p.display());
                    }
                }
            }
        }
    }

    /// The environment is read once, into a snapshot, by the front end's resolve step, and
    /// handed down: no other file reads it (not `host/run.rs`, `host/inline.rs`,
    /// `host/log.rs`, `container/engine.rs`, the profile store, the skill and MCP installers,
    /// or the browser's and display's children, which did). (`std::env::temp_dir`, the
    /// standard temp-dir lookup, is not counted.)
    #[test]
    fn only_the_snapshot_reads_the_environment() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut stack = vec![root.join("src")];
        let mut offenders = Vec::new();
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().to_string();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                if !rel.ends_with(".rs") || rel == "src/env.rs" {
                    continue;
                }
                let text = std::fs::read_to_string(&p).unwrap();
                for read in [
                    "env::var(",
                    "env::var_os(",
                    "env::vars(",
                    "env::vars_os(",
                    "std::env::var",
                ] {
                    if text.contains(read) {
                        offenders.push(format!("{rel} ({read}…)"));
                    }
                }
            }
        }
        assert!(
            offenders.is_empty(),
            "read the environment through env::Snapshot, handed down from the resolve step: {offenders:?}"
        );
    }

    #[test]
    fn snapshot_reads_what_it_holds_and_shows_no_value() {
        let env = super::Snapshot::of([
            ("AFHTTP_NO_SANDBOX".to_string(), "yes".into()),
            ("AFHTTP_TOKEN_SECRET".to_string(), "hunter2".into()),
            ("EMPTY".to_string(), "".into()),
        ]);
        assert!(env.is_true(super::NO_SANDBOX));
        assert_eq!(env.get("EMPTY"), None);
        assert!(env.get_os("EMPTY").is_some());
        assert_eq!(env.get(super::TOKEN_SECRET).as_deref(), Some("hunter2"));
        let shown = format!("{env:?}");
        assert!(
            shown.contains("AFHTTP_TOKEN_SECRET") && !shown.contains("hunter2"),
            "{shown}"
        );
    }

    #[test]
    fn truthy_values() {
        for v in ["1", "true", "TRUE", "yes", "on"] {
            assert!(super::is_truthy(v));
        }
        for v in ["", "0", "false", "no", "off", "2"] {
            assert!(!super::is_truthy(v));
        }
    }
}
