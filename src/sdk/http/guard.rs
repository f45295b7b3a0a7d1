//! The egress policy on the plain-HTTP step: a resolver that hands the HTTP client only
//! addresses the policy admits (so the address connected to is the address checked, and a
//! rebinding answer cannot slip in between), and a check of every hop's IP-literal target
//! and proxy, which no resolver sees.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use url::Url;

use crate::error::AfError;
use crate::sdk::egress::{self, EgressRefused, Policy};

/// A `reqwest` resolver that refuses names resolving to an address the policy denies.
pub struct PolicyResolver {
    policy: Arc<Policy>,
}

impl PolicyResolver {
    /// A resolver enforcing `policy`.
    pub fn new(policy: Policy) -> PolicyResolver {
        PolicyResolver {
            policy: Arc::new(policy),
        }
    }
}

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = Arc::clone(&self.policy);
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let ips: Vec<IpAddr> = addrs.iter().map(SocketAddr::ip).collect();
            if let Err(denial) = policy.decide(&host, &ips) {
                return Err(Box::new(EgressRefused { host, denial }) as _);
            }
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Check one hop before it is sent: an IP-literal target (the client connects to it
/// without resolving), and with a proxy the proxy itself and the target it is asked for
/// (resolved here, best effort: the proxy resolves it again on its side).
pub async fn check_hop(policy: &Policy, url: &Url, proxy: Option<&Url>) -> Result<(), AfError> {
    let port = url.port_or_known_default().unwrap_or(80);
    let host = url.host_str().unwrap_or_default();
    match (url.host(), proxy) {
        (Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)), _) | (Some(_), Some(_)) => {
            egress::check_host(policy, host, port).await?;
        }
        _ => {}
    }
    if let Some(p) = proxy {
        let proxy_port = p.port_or_known_default().unwrap_or(1080);
        egress::check_host(policy, p.host_str().unwrap_or_default(), proxy_port).await?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::sdk::egress::AllowRule;

    fn deny_private() -> Policy {
        Policy {
            deny_private: true,
            allow: vec![],
        }
    }

    #[tokio::test]
    async fn ip_literal_hops_and_proxies_are_checked_without_connecting() {
        let p = deny_private();
        for url in [
            "http://127.0.0.1:1/",
            "http://10.1.2.3/",
            "http://[::1]:8080/",
            "https://169.254.169.254/latest",
            "http://[::ffff:192.168.0.1]/",
        ] {
            let e = check_hop(&p, &Url::parse(url).unwrap(), None)
                .await
                .unwrap_err();
            assert_eq!(e.code, ErrorCode::EgressDenied, "{url}");
            assert!(e.message.contains("refused by the egress policy"), "{e:?}");
        }
        // The default policy refuses only link-local and metadata addresses.
        let d = Policy::default();
        assert!(
            check_hop(&d, &Url::parse("http://127.0.0.1:1/").unwrap(), None)
                .await
                .is_ok()
        );
        let e = check_hop(&d, &Url::parse("http://169.254.169.254/").unwrap(), None)
            .await
            .unwrap_err();
        assert!(e.message.contains("cloud_metadata"), "{e:?}");
        // A public-looking target through a private proxy is refused at the proxy.
        let proxy = Url::parse("http://10.0.0.5:3128").unwrap();
        let e = check_hop(&p, &Url::parse("http://8.8.8.8/").unwrap(), Some(&proxy))
            .await
            .unwrap_err();
        assert!(e.message.contains("10.0.0.5"), "{e:?}");
        // An exception admits it.
        let allowed = Policy {
            deny_private: true,
            allow: vec![AllowRule::parse("10.0.0.0/8").unwrap()],
        };
        assert!(check_hop(
            &allowed,
            &Url::parse("http://8.8.8.8/").unwrap(),
            Some(&proxy)
        )
        .await
        .is_ok());
    }

    #[tokio::test]
    async fn the_resolver_refuses_a_name_that_resolves_to_loopback() {
        use reqwest::dns::Resolve;
        let r = PolicyResolver::new(deny_private());
        let name: reqwest::dns::Name = "localhost".parse().unwrap();
        let err = match r.resolve(name).await {
            Ok(_) => panic!("localhost must be refused"),
            Err(e) => e,
        };
        let refused = egress::refusal_in(err.as_ref()).unwrap();
        assert_eq!(refused.host, "localhost");
        assert_eq!(refused.denial.category.as_str(), "loopback");
        // Under the default policy the same name resolves.
        let r = PolicyResolver::new(Policy::default());
        let name: reqwest::dns::Name = "localhost".parse().unwrap();
        assert!(r.resolve(name).await.is_ok());
    }
}
