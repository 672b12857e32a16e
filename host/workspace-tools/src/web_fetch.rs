//! `web_fetch`: GET a URL and return its text (HTML turned into plain text).
//!
//! Every hop (the URL and each redirect, at most five) is resolved here and
//! refused when any address it resolves to is private, loopback, link-local
//! or otherwise not public, unless `tools.web.allowPrivate`; the connection
//! then goes to the address that was checked (no second lookup a rebinding
//! DNS server could answer differently, and no proxy from the environment).
//! Size and time are capped.

use clawhost_agent_core::ToolError;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use clawhost_config::WebConfig;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::spec::{parse, schema, HostTool};

/// Redirects followed at most.
const MAX_REDIRECTS: usize = 5;
/// Column width of HTML rendered as text.
const TEXT_WIDTH: usize = 100;

/// Whether `ip` is a public unicast address.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)) // shared (CGNAT) 100.64/10
                || (a == 198 && (18..20).contains(&b)) // benchmarking 198.18/15
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (first == 0x64 && v6.segments()[1] == 0xff9b) // NAT64 64:ff9b::/96
                || first == 0x2001 && v6.segments()[1] == 0x0db8) // documentation
        }
    }
}

/// The fetcher: `tools.web` settings.
pub(crate) struct WebFetch {
    spec: clawhost_agent_core::ToolSpec,
    config: WebConfig,
}

/// `web_fetch`'s parameters.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebFetchParams {
    /// The http(s) URL
    #[schemars(length(min = 1))]
    url: String,
}

impl WebFetch {
    pub(crate) fn new(config: WebConfig) -> Self {
        Self {
            spec: clawhost_agent_core::ToolSpec {
                name: "web_fetch".into(),
                description: "Fetch an http(s) URL and return its text (HTML is turned into plain text). Private and local addresses are refused.".into(),
                parameters: schema::<WebFetchParams>().into(),
            },
            config,
        }
    }

    /// The checked address to connect to for `url`.
    async fn address(&self, url: &reqwest::Url) -> Result<SocketAddr, ToolError> {
        let host = url
            .host_str()
            .ok_or_else(|| ToolError::invalid("the URL has no host"))?;
        let port = url
            .port_or_known_default()
            .ok_or_else(|| ToolError::invalid("the URL has no port"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .collect();
        let first = *addrs
            .first()
            .ok_or_else(|| format!("{host} has no address"))?;
        if !self.config.allow_private {
            if let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
                return Err(format!(
                    "refused: {host} resolves to {}, which is not a public address (tools.web.allowPrivate allows it)",
                    bad.ip()
                ).into());
            }
        }
        Ok(first)
    }

    async fn fetch(&self, url: &str) -> Result<Value, ToolError> {
        let mut url =
            reqwest::Url::parse(url).map_err(|e| ToolError::invalid(format!("bad URL: {e}")))?;
        let deadline = tokio::time::Instant::now() + Duration::from_millis(self.config.timeout_ms);
        let cap = usize::try_from(self.config.max_kb << 10).unwrap_or(usize::MAX);
        for _ in 0..=MAX_REDIRECTS {
            if !matches!(url.scheme(), "http" | "https") {
                return Err(ToolError::invalid(format!(
                    "only http and https URLs are fetched, not {}",
                    url.scheme()
                )));
            }
            let addr = self.address(&url).await?;
            // No proxy from the environment either: the request goes to the
            // address checked above, not to a proxy that resolves again.
            let client = reqwest::Client::builder()
                .no_proxy()
                .redirect(reqwest::redirect::Policy::none())
                .resolve(url.host_str().unwrap_or_default(), addr)
                .user_agent(concat!("clawhost/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|e| e.to_string())?;
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let mut response = tokio::time::timeout(left, client.get(url.clone()).send())
                .await
                .map_err(|_| "the fetch timed out".to_string())?
                .map_err(|e| format!("fetch failed: {e}"))?;
            if response.status().is_redirection() {
                let location = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .ok_or("a redirect without a Location")?;
                url = url
                    .join(location)
                    .map_err(|e| format!("bad redirect: {e}"))?;
                continue;
            }
            let status = response.status().as_u16();
            let content_type = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|c| c.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase();
            let mut body = Vec::new();
            let mut truncated = false;
            loop {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                let chunk = tokio::time::timeout(left, response.chunk())
                    .await
                    .map_err(|_| "the fetch timed out".to_string())?
                    .map_err(|e| format!("fetch failed: {e}"))?;
                let Some(chunk) = chunk else { break };
                let room = cap - body.len();
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    truncated = true;
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            let content = if content_type.contains("html") {
                html2text::from_read(&body[..], TEXT_WIDTH)
                    .unwrap_or_else(|_| String::from_utf8_lossy(&body).into_owned())
            } else if content_type.is_empty()
                || content_type.starts_with("text/")
                || content_type.contains("json")
                || content_type.contains("xml")
            {
                String::from_utf8_lossy(&body).into_owned()
            } else {
                return Err(format!("{url} is {content_type}, not text").into());
            };
            return Ok(json!({
                "url": url.as_str(),
                "status": status,
                "contentType": content_type,
                "content": content,
                "truncated": truncated,
            }));
        }
        Err(format!("more than {MAX_REDIRECTS} redirects").into())
    }
}

#[async_trait::async_trait]
impl HostTool for WebFetch {
    fn spec(&self) -> &clawhost_agent_core::ToolSpec {
        &self.spec
    }
    async fn invoke(
        &self,
        _call_id: &str,
        params: Value,
        _ctx: &clawhost_agent_core::RunContext,
    ) -> Result<Value, ToolError> {
        let p: WebFetchParams = parse(params)?;
        self.fetch(&p.url).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "172.16.5.4",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "255.255.255.255",
            "224.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["93.184.216.34", "1.1.1.1", "2606:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }
}
