//! One fetch: the validated request, the pipeline that runs it, and its outcome.
//!
//! The pipeline is HTTP first. It decides mechanically whether a browser is needed
//! ([`crate::sdk::render_decision`]) and writes every artifact through [`outdir`].

mod browser_cookies;
pub mod browser_path;
mod http_attempt;
pub mod options;
pub mod outcome;
pub mod outdir;
mod profile_jar;
pub mod projections;
pub mod run;
pub mod spec;
pub mod takeover;
pub mod takeover_hint;
mod validate;

use std::path::PathBuf;
use std::time::Duration;

use url::Url;

use crate::profile::Backend;
use crate::sdk::cookies::Cookie;
use crate::sdk::endpoint::Endpoint;
use crate::sdk::request::{Artifact, NetworkBodies, RenderMode, Wait};
use crate::sdk::secret::Secret;

pub use options::{FormValue, HeaderPair, RequestBody, TransportOptions};
pub use outcome::{FetchFailure, FetchOutcome};
pub use run::{fetch, fetch_with};
pub use spec::FetchSpec;
pub use validate::{MAX_BACKOFF_MS, MAX_NETWORK_BODY_BYTES, MAX_TIMEOUT_MS};

/// Default whole-attempt timeout.
pub const DEFAULT_TIMEOUT: Duration = crate::sdk::defaults::TIMEOUT;
/// Default cap on the main response body (1 GiB).
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 1 << 30;
/// Most redirects followed before `redirect_loop`.
pub const MAX_REDIRECTS: usize = 20;
/// Retries are capped so a typo cannot loop for hours.
pub const MAX_RETRIES: u32 = 20;

/// Browser-side options; they apply only when a browser renders the page.
#[derive(Debug, Clone)]
pub struct BrowserOptions {
    /// Readiness condition.
    pub wait: Wait,
    /// `--tab`.
    pub tab: Option<String>,
    /// `--takeover`.
    pub takeover: bool,
    /// `--profile`.
    pub profile: Option<String>,
    /// `profile` was derived from the URL's site by `--takeover`, not given.
    pub profile_derived: bool,
    /// Arguments a printed `recommended_command` needs to reach the same host again (such as
    /// `--endpoint-url URL`); never a secret.
    pub replay_args: Vec<String>,
    /// `--evaluate-after-wait`.
    pub evaluate_after_wait: Option<String>,
    /// `--network-bodies`, when given.
    pub network_bodies: Option<NetworkBodies>,
    /// `--network-body-max-bytes`.
    pub network_body_max_bytes: u64,
    /// `--readiness-idle-ms`.
    pub readiness_idle_ms: u64,
    /// `--readiness-stable-ms`: the settle window of `--wait auto`.
    pub readiness_stable_ms: u64,
    /// The page's idle evidence may end `--wait auto` before the settle window
    /// (`settle::early_rule`); off when `--readiness-stable-ms` is given.
    pub readiness_idle_evidence: bool,
    /// `--screenshot-format`: `png`, `jpeg` or `webp`.
    pub screenshot_format: &'static str,
    /// `--screenshot-quality` (jpeg and webp only).
    pub screenshot_quality: Option<u8>,
    /// `--screenshot-max-height`, in CSS pixels.
    pub screenshot_max_height: Option<u32>,
    /// `--readiness-budget-ms`: the bound on every wait but `ms:N`, counted from the main
    /// document's arrival.
    pub readiness_budget_ms: u64,
    /// `--stall-cutoff-ms`: how long a third-party request may go without a response before
    /// it is cut (0 = never).
    pub stall_cutoff_ms: u64,
    /// `--readiness-min-text-bytes`.
    pub readiness_min_text_bytes: u64,
    /// `--capture-ws`.
    pub capture_ws: bool,
    /// `--capture-sse`.
    pub capture_sse: bool,
    /// `--dialog accept`: JavaScript dialogs are accepted rather than dismissed.
    pub dialog_accept: bool,
    /// The browser is thrown away right after this fetch (an inline host), so the tab is
    /// left open rather than closed and waited for.
    pub browser_discarded_after: bool,
    /// Third-party hosts (`host[:port]`) that stalled in the host's recent fetches, with the
    /// age of that report in ms: blocked from the start when another site than the page's
    /// (set per fetch from the host's `/stalled-hosts`, never by the caller).
    pub remembered_stalls: Vec<(String, u64)>,
    /// Other-site hosts (`host[:port]`) that answered in the host's recent fetches: their
    /// scripts and stylesheets go out at once, with no probe (set per fetch from the host's
    /// `/stalled-hosts`, never by the caller).
    pub remembered_answers: Vec<String>,
    /// A new tab opens in its own browser context, apart from the host's active profile (a
    /// fleet's ephemeral fetch); ignored with `--tab ID` and `--takeover`.
    pub isolated_context: bool,
}

impl Default for BrowserOptions {
    fn default() -> Self {
        BrowserOptions {
            wait: Wait::Auto,
            tab: None,
            takeover: false,
            profile: None,
            profile_derived: false,
            replay_args: Vec::new(),
            evaluate_after_wait: None,
            network_bodies: None,
            network_body_max_bytes: 10 * 1024 * 1024,
            readiness_idle_ms: 500,
            readiness_stable_ms: 200,
            readiness_idle_evidence: true,
            readiness_budget_ms: 5000,
            stall_cutoff_ms: 1000,
            screenshot_format: "png",
            screenshot_quality: None,
            screenshot_max_height: None,
            readiness_min_text_bytes: 1,
            capture_ws: false,
            browser_discarded_after: false,
            remembered_stalls: Vec::new(),
            remembered_answers: Vec::new(),
            isolated_context: false,
            capture_sse: false,
            dialog_accept: false,
        }
    }
}

/// A fully validated fetch request: made only by [`FetchSpec::validate`], so its fields are
/// crate-private and nothing unchecked reaches the pipeline.
#[derive(Debug, Clone)]
pub struct FetchRequest {
    /// Target URL (http or https).
    pub(crate) url: Url,
    /// HTTP method.
    pub(crate) method: String,
    /// Extra headers.
    pub(crate) headers: Vec<HeaderPair>,
    /// Request body.
    pub(crate) body: Option<RequestBody>,
    /// `--cookie` values: sent, not stored.
    pub(crate) cookies: Vec<Cookie>,
    /// User-Agent override.
    pub(crate) user_agent: Option<String>,
    /// Render mode.
    pub(crate) render: RenderMode,
    /// Explicit `--want`; `None` means the default set for the path taken.
    pub(crate) want: Option<Vec<Artifact>>,
    /// The HTTP path's default set when `want` is `None` (`None`: the registry's, body only).
    pub(crate) http_default_want: Option<Vec<Artifact>>,
    /// The browser path's default set when `want` is `None` (`None`: the registry's).
    pub(crate) browser_default_want: Option<Vec<Artifact>>,
    /// Artifact directory; `None` is `<out_root>/<request_id>/`.
    pub(crate) out_dir: Option<PathBuf>,
    /// The parent of a default artifact directory (`None`: `<tmp>/afhttp-out`).
    pub(crate) out_root: Option<PathBuf>,
    /// Cookie jar file to read and update.
    pub(crate) cookie_jar: Option<PathBuf>,
    /// Whether a persistent profile's implicit jar may be used when no `cookie_jar` is
    /// named (false with `no_cookie_jar`).
    pub(crate) implicit_jar: bool,
    /// This machine's profile store, where the implicit jar is looked for (`None`: nowhere;
    /// the front end sets it from its environment, [`FetchRequest::with_profile_store`]).
    pub(crate) profile_store: Option<PathBuf>,
    /// Retries of retryable failures.
    pub(crate) retry: u32,
    /// First backoff delay.
    pub(crate) backoff: Duration,
    /// Proxy, CA and TLS options.
    pub(crate) transport: TransportOptions,
    /// Whole-attempt timeout.
    pub(crate) timeout: Duration,
    /// Main body cap (0 = unlimited).
    pub(crate) max_response_bytes: u64,
    /// Keep credential headers in network.json.
    pub(crate) no_network_redact: bool,
    /// Browser host to drive.
    pub(crate) endpoint: Option<Endpoint>,
    /// Bearer token for the host.
    pub(crate) token: Option<Secret>,
    /// A fleet that picks the host per fetch ([`FetchRequest::with_target`]); taken when the
    /// fetch is routed.
    pub(crate) fleet: Option<Box<crate::sdk::target::FleetTarget>>,
    /// Browser for an inline host (otherwise the launcher's default).
    pub(crate) browser_bin: Option<PathBuf>,
    /// `browser`: the inline host's browser family.
    pub(crate) browser_family: Option<Backend>,
    /// What starts a throwaway browser when no host is named (`None`: nothing can).
    pub(crate) launcher: Option<crate::sdk::launcher::Launcher>,
    /// Browser-only options.
    pub(crate) browser: BrowserOptions,
    /// Document options: PDF page cap, `Accept: text/markdown`.
    pub(crate) documents: crate::sdk::documents::DocumentOptions,
}

impl FetchRequest {
    /// A GET of `url` with every default.
    pub(crate) fn get(url: Url) -> FetchRequest {
        FetchRequest {
            url,
            method: "GET".into(),
            headers: Vec::new(),
            body: None,
            cookies: Vec::new(),
            user_agent: None,
            render: RenderMode::Auto,
            want: None,
            http_default_want: None,
            browser_default_want: None,
            out_dir: None,
            out_root: None,
            cookie_jar: None,
            implicit_jar: true,
            profile_store: None,
            retry: 0,
            backoff: crate::sdk::defaults::BACKOFF,
            transport: TransportOptions::default(),
            timeout: DEFAULT_TIMEOUT,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            no_network_redact: false,
            endpoint: None,
            token: None,
            fleet: None,
            browser_bin: None,
            browser_family: None,
            launcher: None,
            browser: BrowserOptions::default(),
            documents: crate::sdk::documents::DocumentOptions::default(),
        }
    }

    /// Run where `target` says: locally (plain HTTP and the launcher's browser), on one
    /// host, or on a fleet, whose member [`fetch`] picks.
    pub fn with_target(mut self, target: crate::sdk::target::Target) -> FetchRequest {
        use crate::sdk::target::Target;
        match target {
            Target::Local => {}
            Target::Host(h) => return self.on_host(h.endpoint, h.token, h.replay_args),
            Target::Fleet(f) => {
                self.token = f.token.clone();
                self.fleet = Some(Box::new(f));
            }
        }
        self
    }

    /// Run against the host at `endpoint` (with its bearer `token`) instead of plain HTTP and
    /// an inline browser. `replay_args` are what a printed `recommended_command` must repeat
    /// to reach the same host again (such as `--endpoint-url URL`); never a secret.
    pub fn on_host(
        mut self,
        endpoint: Endpoint,
        token: Option<Secret>,
        replay_args: Vec<String>,
    ) -> FetchRequest {
        self.endpoint = Some(endpoint);
        self.token = token;
        self.browser.replay_args = replay_args;
        self.fleet = None;
        self
    }

    /// What the HTTP path writes when no `want` was given (the MCP server asks for the text
    /// projections too, so its summary can quote `content.md`); the browser path keeps its own
    /// default set, which already contains them.
    pub fn with_http_default_want(mut self, want: Vec<Artifact>) -> FetchRequest {
        self.http_default_want = Some(want);
        self
    }

    /// What the browser path writes when no `want` was given (an MCP fetch captures what its
    /// answer reads), and the sub-request body mode when none was given.
    pub fn with_browser_defaults(
        mut self,
        want: Vec<Artifact>,
        network_bodies: NetworkBodies,
    ) -> FetchRequest {
        self.browser_default_want = Some(want);
        if self.browser.network_bodies.is_none() {
            self.browser.network_bodies = Some(network_bodies);
        }
        self
    }

    /// The artifacts the browser path writes: `want`, or the browser default set.
    pub fn browser_artifacts(&self) -> Vec<Artifact> {
        self.want
            .clone()
            .or_else(|| self.browser_default_want.clone())
            .unwrap_or_else(Artifact::browser_default)
    }

    /// Enforce `policy` on this fetch's own connections: every hop of the plain-HTTP step
    /// (the address connected to, IP literals, a proxy), and an inline browser's requests
    /// (through the host's egress proxy). A remote host's browser obeys that host's own
    /// policy. A refusal is `egress_denied`.
    pub fn with_egress_policy(mut self, policy: crate::sdk::egress::Policy) -> FetchRequest {
        self.transport.egress = Some(policy);
        self
    }

    /// The egress policy this fetch enforces, if any.
    pub fn egress_policy(&self) -> Option<&crate::sdk::egress::Policy> {
        self.transport.egress.as_ref()
    }

    /// Put a default artifact directory (no `out`) under `root` instead of
    /// `<tmp>/afhttp-out` (a host's MCP output area).
    pub fn with_out_root(mut self, root: PathBuf) -> FetchRequest {
        self.out_root = Some(root);
        self
    }

    /// Look for a persistent profile's implicit cookie jar in the profile store at `root`
    /// (this machine's, as the front end's environment locates it; without one, no
    /// implicit jar is used).
    pub fn with_profile_store(mut self, root: PathBuf) -> FetchRequest {
        self.profile_store = Some(root);
        self
    }

    /// Start a throwaway browser with `launcher` when the fetch needs one and names no host.
    pub fn with_launcher(mut self, launcher: crate::sdk::launcher::Launcher) -> FetchRequest {
        self.launcher = Some(launcher);
        self
    }

    /// The target URL.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The render mode.
    pub fn render(&self) -> RenderMode {
        self.render
    }

    /// The host this request runs on, if any.
    pub fn endpoint(&self) -> Option<&Endpoint> {
        self.endpoint.as_ref()
    }

    /// The artifact directory asked for (`None`: `<tmp>/afhttp-out/<request_id>/`).
    pub fn out_dir(&self) -> Option<&std::path::Path> {
        self.out_dir.as_deref()
    }

    /// The explicit `want` list, if one was given.
    pub fn want(&self) -> Option<&[Artifact]> {
        self.want.as_deref()
    }

    /// The artifacts the HTTP path writes: `--want`, or just `body`.
    pub fn http_artifacts(&self) -> Vec<Artifact> {
        self.want
            .clone()
            .or_else(|| self.http_default_want.clone())
            .unwrap_or_else(Artifact::http_default)
    }

    /// Whether `artifact` should be written on the HTTP path.
    pub fn wants_http(&self, artifact: Artifact) -> bool {
        artifact == Artifact::Body || self.http_artifacts().contains(&artifact)
    }
}
