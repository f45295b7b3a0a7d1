//! The listener in this process, over real TCP: every route of the route table against every
//! kind of bad credential, DNS-rebinding and cross-origin requests, and `X-Forwarded-Proto`.

use super::*;
use crate::support::error_code;
use crate::support::raw_http::header_of;
use afhttp::host::listener::{AuthZone, Handler, ROUTES};

const BEARER: &str = "Bearer security-long-token-5f1c";

/// Mint a handoff with the bearer header; returns `/takeover/panel?handoff=<id>`.
fn mint(ip: &str, port: u16) -> String {
    let (status, _, body) = http(
        ip,
        port,
        "POST",
        "/takeover/handoff",
        &[("Authorization", BEARER)],
    );
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    v["takeover_path"].as_str().unwrap().to_string()
}

/// Spend a handoff from `ip` with extra headers; returns the Set-Cookie header.
fn spend(ip: &str, port: u16, path: &str, extra: &[(&str, &str)]) -> String {
    let (status, head, body) = http(ip, port, "GET", path, extra);
    assert_eq!(status, 303, "{head}\n{body}");
    header_of(&head, "set-cookie").unwrap()
}

/// `afhttp_takeover=<v>` from a Set-Cookie value.
fn cookie_pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap().to_string()
}

#[test]
fn every_route_in_the_table_refuses_missing_wrong_and_misplaced_credentials() {
    rt().block_on(async {
        let l = start_listener("tcp:127.0.0.1:0", true, |_| {}).await;
        let port = l.port();
        let session = cookie_pair(&spend("127.0.0.1", port, &mint("127.0.0.1", port), &[]));
        // An unspent handoff id, offered where it must not count.
        let unspent = mint("127.0.0.1", port);
        let handoff_id = unspent.rsplit('=').next().unwrap().to_string();
        assert!(ROUTES.len() >= 16, "the table lists every route");
        let mut checked = 0;
        for spec in ROUTES {
            let path = concrete(spec.path);
            let methods: Vec<&str> = if spec.methods.is_empty() {
                vec!["GET", "POST", "PUT", "DELETE"]
            } else {
                spec.methods.to_vec()
            };
            for method in methods {
                let what = format!("{method} {path}");
                let refused = |headers: &[(&str, &str)], path: &str, why: &str| {
                    let (status, _, body) = http("127.0.0.1", port, method, path, headers);
                    assert_eq!(status, 401, "{what} {why}: {body}");
                    assert_eq!(error_code(&body), "unauthorized", "{what} {why}");
                };
                refused(&[], &path, "without a token");
                refused(&[("Authorization", "Bearer wrong")], &path, "wrong bearer");
                refused(&[("Authorization", "Basic Zm9vOmJhcg==")], &path, "basic");
                let sep = if path.contains('?') { '&' } else { '?' };
                refused(
                    &[],
                    &format!("{path}{sep}token_secret=wrong"),
                    "wrong query",
                );
                if spec.auth == AuthZone::Takeover {
                    // The long token is never taken from a URL under /takeover.
                    refused(&[], &format!("{path}{sep}token_secret={TOKEN}"), "query");
                }
                let (status, _, body) =
                    http("127.0.0.1", port, method, &path, &[("Cookie", &session)]);
                if spec.handler == Handler::TakeoverPanel {
                    assert!(
                        matches!(status, 200 | 303),
                        "{what} with the cookie: {body}"
                    );
                } else {
                    assert_eq!(status, 401, "{what}: the takeover cookie must not work");
                }
                if spec.auth != AuthZone::Takeover {
                    refused(
                        &[],
                        &format!("{path}{sep}handoff={handoff_id}"),
                        "with a handoff id",
                    );
                }
                let (status, _, body) = http(
                    "127.0.0.1",
                    port,
                    method,
                    &path,
                    &[("Authorization", BEARER)],
                );
                assert!(
                    ![401, 403, 405].contains(&status),
                    "{what} with the bearer: {status} {body}"
                );
                checked += 1;
            }
            if !spec.methods.is_empty() {
                // A method the table does not list: 401 first, 405 once authorized.
                let (status, _, _) = http("127.0.0.1", port, "DELETE", &path, &[]);
                assert_eq!(status, 401, "DELETE {path}");
                let (status, _, _) = http(
                    "127.0.0.1",
                    port,
                    "DELETE",
                    &path,
                    &[("Authorization", BEARER)],
                );
                assert_eq!(status, 405, "DELETE {path} with the bearer");
            }
        }
        assert!(checked >= 16);
        // The handoff offered to the other routes was not spent by them.
        spend("127.0.0.1", port, &unspent, &[]);
        // Unknown paths are 404 whatever the credentials.
        assert_eq!(http("127.0.0.1", port, "GET", "/nope", &[]).0, 404);

        // --health-public minimal: anonymous callers (and cookie holders) get the status only;
        // a wrong bearer is still refused.
        let l = start_listener("tcp:127.0.0.1:0", true, |c| c.health_public_minimal = true).await;
        let port = l.port();
        let session = cookie_pair(&spend("127.0.0.1", port, &mint("127.0.0.1", port), &[]));
        for headers in [vec![], vec![("Cookie", session.as_str())]] {
            let (status, _, body) = http("127.0.0.1", port, "GET", "/health", &headers);
            assert_eq!(status, 200);
            assert_eq!(
                serde_json::from_str::<Value>(&body).unwrap(),
                json!({"status": "starting"})
            );
        }
        let (status, _, _) = http(
            "127.0.0.1",
            port,
            "GET",
            "/health",
            &[("Authorization", "Bearer wrong")],
        );
        assert_eq!(status, 401);
        for spec in ROUTES.iter().filter(|s| s.handler != Handler::Health) {
            let (status, _, _) = http("127.0.0.1", port, "GET", &concrete(spec.path), &[]);
            assert_eq!(status, 401, "{} with public health", spec.path);
        }
    });
}

#[test]
fn rebinding_and_cross_origin_requests_are_refused_bearer_by_name_works() {
    rt().block_on(async {
        let l = start_listener("tcp:127.0.0.1:0", true, |c| {
            c.allowed_hosts = vec!["afhttp.lan".into()];
        })
        .await;
        let port = l.port();
        let local = format!("127.0.0.1:{port}");
        let same_origin = format!("http://127.0.0.1:{port}");
        let ws = [
            ("Connection", "Upgrade"),
            ("Upgrade", "websocket"),
            ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ];
        let with = |base: &[(&'static str, &'static str)], more: &[(&'static str, &str)]| {
            let mut v: Vec<(&str, String)> =
                base.iter().map(|(k, v)| (*k, v.to_string())).collect();
            v.extend(more.iter().map(|(k, v)| (*k, v.to_string())));
            v
        };
        let send = |method: &str, path: &str, headers: Vec<(&str, String)>| {
            let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let (status, _, body) = http("127.0.0.1", port, method, path, &h);
            (status, error_code(&body))
        };
        let forbidden_host = (403, "forbidden_host".to_string());
        let forbidden_origin = (403, "forbidden_origin".to_string());
        let token_q = format!("token_secret={TOKEN}");

        // A rebound name with the query token (what a malicious page could build if it knew
        // the token from a leaked URL) is refused; the bearer header by name works.
        for path in ["/capabilities", "/json/version", "/recent-requests"] {
            let q = format!("{path}?{token_q}");
            assert_eq!(
                send("GET", &q, with(&[("Host", "evil.example")], &[])),
                forbidden_host,
                "{path}"
            );
            let (status, _) = send("GET", &q, with(&[("Host", "afhttp.lan:9222")], &[]));
            assert!(
                status == 200 || status == 503,
                "{path} allowed name: {status}"
            );
            let (status, _) = send(
                "GET",
                path,
                with(
                    &[("Host", "afhttp.example:9222")],
                    &[("Authorization", BEARER)],
                ),
            );
            assert!(
                status == 200 || status == 503,
                "{path} bearer by name: {status}"
            );
        }
        assert_eq!(
            send("GET", "/capabilities", with(&[("Host", "afhttp.lan")], &[])).0,
            401,
            "an allowed name still needs the token"
        );
        // The /cdp handshake: query token needs a local Host; any upgrade needs a same-origin
        // (or absent) Origin, bearer or not.
        let cdp_q = format!("/cdp?{token_q}");
        assert_eq!(
            send("GET", &cdp_q, with(&ws, &[("Host", "evil.example")])),
            forbidden_host
        );
        assert_eq!(
            send(
                "GET",
                "/cdp",
                with(
                    &ws,
                    &[
                        ("Host", &local),
                        ("Authorization", BEARER),
                        ("Origin", "http://evil.example")
                    ]
                )
            ),
            forbidden_origin
        );
        assert_eq!(
            send(
                "GET",
                &cdp_q,
                with(&ws, &[("Host", &local), ("Origin", "http://localhost:1")])
            ),
            forbidden_origin
        );
        assert_eq!(
            send(
                "GET",
                "/cdp/page/ABC",
                with(
                    &ws,
                    &[
                        ("Host", &local),
                        ("Authorization", BEARER),
                        ("Origin", "null")
                    ]
                )
            ),
            forbidden_origin
        );
        // Past the checks (no browser here, so 503): bearer by name, and same origin.
        assert_eq!(
            send(
                "GET",
                "/cdp",
                with(
                    &ws,
                    &[("Host", "afhttp.example"), ("Authorization", BEARER)]
                )
            ),
            (503, "cdp_unavailable".to_string())
        );
        assert_eq!(
            send(
                "GET",
                &cdp_q,
                with(&ws, &[("Host", &local), ("Origin", &same_origin)])
            ),
            (503, "cdp_unavailable".to_string())
        );

        // Takeover with the cookie: the Host must be local, an Origin must be ours.
        let handoff = mint("127.0.0.1", port);
        assert_eq!(
            send("GET", &handoff, with(&[("Host", "evil.example")], &[])),
            forbidden_host
        );
        assert_eq!(
            send(
                "GET",
                &handoff,
                with(&[("Origin", "http://evil.example")], &[("Host", &local)])
            ),
            forbidden_origin
        );
        // Refused before spending: the handoff still works from the right origin.
        let session = cookie_pair(&spend("127.0.0.1", port, &handoff, &[]));
        let page = "/takeover/panel/vnc.html";
        assert_eq!(
            send(
                "GET",
                page,
                with(&[], &[("Host", &local), ("Cookie", &session)])
            )
            .0,
            200
        );
        assert_eq!(
            send(
                "GET",
                page,
                with(&[("Host", "evil.example")], &[("Cookie", &session)])
            ),
            forbidden_host
        );
        for method in ["GET", "POST"] {
            assert_eq!(
                send(
                    method,
                    page,
                    with(
                        &[("Origin", "http://evil.example:80")],
                        &[("Host", &local), ("Cookie", &session)]
                    )
                ),
                forbidden_origin,
                "{method}"
            );
        }
        assert_eq!(
            send(
                "POST",
                page,
                with(
                    &[],
                    &[
                        ("Host", &local),
                        ("Cookie", &session),
                        ("Origin", &same_origin)
                    ]
                )
            )
            .0,
            200
        );
        assert_eq!(
            send(
                "GET",
                "/takeover/panel/websockify",
                with(
                    &ws,
                    &[
                        ("Host", &local),
                        ("Cookie", &session),
                        ("Origin", "https://evil.example")
                    ]
                )
            ),
            forbidden_origin
        );
        // The bearer header reaches the panel by name (an agent, not a browser).
        assert_eq!(
            send(
                "GET",
                page,
                with(&[("Host", "afhttp.example")], &[("Authorization", BEARER)])
            )
            .0,
            200
        );
    });
}

#[test]
fn forwarded_proto_is_trusted_from_loopback_peers_only() {
    rt().block_on(async {
        let l = start_listener("tcp:0.0.0.0:0", true, |_| {}).await;
        let port = l.port();
        let remote = own_non_loopback_ip();
        let https = [("X-Forwarded-Proto", "https")];
        // A TLS-terminating proxy on this machine: the cookie is Secure.
        let c = spend("127.0.0.1", port, &mint("127.0.0.1", port), &https);
        assert!(c.ends_with("; Secure"), "{c}");
        // The same header from another machine is ignored.
        let c = spend(&remote, port, &mint(&remote, port), &https);
        assert!(!c.contains("Secure"), "{remote}: {c}");
        // Plain http from loopback: not Secure.
        let c = spend("127.0.0.1", port, &mint("127.0.0.1", port), &[]);
        assert!(!c.contains("Secure"), "{c}");
        for flag in ["HttpOnly", "SameSite=Strict", "Path=/takeover"] {
            assert!(c.contains(flag), "{flag}: {c}");
        }
        // An ingress in another pod, named by --trusted-proxy: its header is believed. (The
        // block is every IPv4 peer: the kernel may pick another local source address than
        // `remote` for a connection to it.)
        let l = start_listener("tcp:0.0.0.0:0", true, |c| {
            c.trusted_proxies = vec![("0.0.0.0".parse().unwrap(), 0)];
        })
        .await;
        let port = l.port();
        let c = spend(&remote, port, &mint(&remote, port), &https);
        assert!(c.ends_with("; Secure"), "{remote} trusted: {c}");
    });
}
