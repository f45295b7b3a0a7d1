//! The persistent profile and the token survive an engine restart, a SIGKILL and a
//! reinstall of the container.

use super::{install, token, wait_discovered_healthy};
use crate::support::docker::{rt, Engine};
use crate::support::Fixture;

/// Restart, SIGKILL and reinstall the container; after each the token is the same and
/// `seen` (the cookie echo in profile `work`) still has the cookie. Returns the token.
pub(super) fn restart_kill_and_reinstall(
    fx: &Fixture,
    engine: &Engine,
    base: &str,
    port: u16,
    seen: &dyn Fn(&Fixture) -> String,
) -> String {
    let token_before = token(fx, engine);
    rt().block_on(async {
        let docker = engine.docker().await;
        docker
            .restart_container(
                "afhttp-host",
                None::<bollard::query_parameters::RestartContainerOptions>,
            )
            .await
            .unwrap();
    });
    wait_discovered_healthy(fx, engine);
    assert_eq!(token(fx, engine), token_before, "restart keeps the token");
    assert!(
        seen(fx).contains("keep=yes"),
        "cookie lost across a restart"
    );

    // SIGKILL (no graceful stop: the browser's profile and the token file are left as the
    // kernel found them), then start again.
    let started_before = rt().block_on(async {
        let docker = engine.docker().await;
        let before = docker
            .inspect_container("afhttp-host", None)
            .await
            .unwrap()
            .state
            .and_then(|s| s.started_at);
        docker
            .kill_container(
                "afhttp-host",
                Some(bollard::query_parameters::KillContainerOptions {
                    signal: "KILL".into(),
                }),
            )
            .await
            .unwrap();
        // `unless-stopped` may already be restarting it; a start of a running one is a no-op.
        let _ = docker
            .start_container(
                "afhttp-host",
                None::<bollard::query_parameters::StartContainerOptions>,
            )
            .await;
        before
    });
    wait_discovered_healthy(fx, engine);
    let started_after = rt().block_on(async {
        let docker = engine.docker().await;
        let c = docker.inspect_container("afhttp-host", None).await.unwrap();
        c.state.and_then(|s| s.started_at)
    });
    assert_ne!(
        started_after, started_before,
        "the container was not killed"
    );
    assert_eq!(token(fx, engine), token_before, "SIGKILL keeps the token");
    assert!(
        seen(fx).contains("keep=yes"),
        "cookie lost across a SIGKILL"
    );

    let again = install(fx, engine, base, port);
    assert_eq!(again.result()["image_built"], false, "{}", again.context);
    assert_eq!(token(fx, engine), token_before, "reinstall keeps the token");
    assert!(
        seen(fx).contains("keep=yes"),
        "cookie lost across a reinstall"
    );
    token_before
}
