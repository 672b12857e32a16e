//! The gateway against the web. A browser page may send requests to any
//! address, loopback included; what stops it here:
//! - `Host` must be `localhost`, an IP address, or a name in
//!   `gateway.allowedHosts`: a page that rebinds its own name to this
//!   address (DNS rebinding) sends its own name and is refused;
//! - a request with an `Origin` (every cross-origin `POST` a browser sends,
//!   forms included) must come from `gateway.allowedOrigins`, and one a
//!   browser marks cross-site (`Sec-Fetch-Site`) is refused without it;
//! - a body in a form's content type (`application/x-www-form-urlencoded`,
//!   `multipart/form-data`, `text/plain`) is refused: no form reaches an
//!   endpoint, whatever its origin.
//!
//! Each refusal is an OpenAI-shaped 403 or 415.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::{ApiError, Gateway};

/// The names and origins this gateway answers.
#[derive(Debug, Clone, Default)]
pub struct WebGuard {
    hosts: Vec<String>,
    origins: Vec<String>,
}

impl WebGuard {
    /// A guard admitting `hosts` (besides `localhost` and IP addresses) and
    /// pages of `origins`.
    pub fn new(hosts: &[String], origins: &[String]) -> Self {
        Self {
            hosts: hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
            origins: origins
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
        }
    }

    /// Whether a request with these headers may be served.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let text = |name: &header::HeaderName| {
            headers.get(name).map(|v| {
                v.to_str().map_err(|_| {
                    ApiError::refused(
                        StatusCode::BAD_REQUEST,
                        "bad_header",
                        format!("the {name} header is not text"),
                    )
                })
            })
        };
        if let Some(host) = text(&header::HOST).transpose()? {
            if !self.host_allowed(host) {
                return Err(ApiError::refused(
                    StatusCode::FORBIDDEN,
                    "host_not_allowed",
                    format!("`Host: {}` is not a name of this gateway; list it in gateway.allowedHosts to serve it", clip(host)),
                ));
            }
        }
        match text(&header::ORIGIN).transpose()? {
            Some(origin) if !self.origins.contains(&origin.to_ascii_lowercase()) => {
                return Err(ApiError::refused(
                    StatusCode::FORBIDDEN,
                    "origin_not_allowed",
                    format!("requests from pages of `{}` are refused; list the origin in gateway.allowedOrigins to allow them", clip(origin)),
                ));
            }
            Some(_) => {}
            None => {
                let site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
                if matches!(site, Some("cross-site" | "same-site")) {
                    return Err(ApiError::refused(
                        StatusCode::FORBIDDEN,
                        "origin_not_allowed",
                        "a cross-site browser request without an allowed Origin is refused",
                    ));
                }
            }
        }
        if let Some(kind) = text(&header::CONTENT_TYPE).transpose()? {
            let kind = kind.to_ascii_lowercase();
            let form = [
                "application/x-www-form-urlencoded",
                "multipart/form-data",
                "text/plain",
            ];
            if form.iter().any(|f| kind.starts_with(f)) {
                return Err(ApiError::refused(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    "send JSON (`Content-Type: application/json`); form bodies are refused",
                ));
            }
        }
        Ok(())
    }

    fn host_allowed(&self, host: &str) -> bool {
        // `name`, `name:port`, `[v6]` or `[v6]:port`.
        let name = match host.strip_prefix('[') {
            Some(rest) => rest.split(']').next().unwrap_or_default(),
            None => host.rsplit_once(':').map_or(host, |(name, _)| name),
        };
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        name == "localhost" || name.parse::<IpAddr>().is_ok() || self.hosts.contains(&name)
    }
}

/// What a refusal quotes of a header: 100 characters at most.
fn clip(text: &str) -> std::borrow::Cow<'_, str> {
    clawhost_agent_core::text::clip(text, 100)
}

/// The middleware: every route, before authentication.
pub(crate) async fn guard(
    State(gw): State<Arc<Gateway>>,
    request: Request,
    next: Next,
) -> Response {
    match gw.web_guard.check(request.headers()) {
        Ok(()) => next.run(request).await,
        Err(e) => e.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn rebound_names_foreign_origins_and_forms_are_refused() {
        let guard = WebGuard::new(
            &["agents.internal".into()],
            &["http://localhost:3000/".into()],
        );
        for ok in [
            &[("host", "127.0.0.1:18789")][..],
            &[("host", "localhost:18789")],
            &[("host", "[::1]:18789")],
            &[("host", "Agents.Internal")],
            &[
                ("host", "10.0.0.5:18789"),
                ("origin", "http://localhost:3000"),
            ],
            &[("host", "127.0.0.1"), ("content-type", "application/json")],
            &[],
        ] {
            assert!(guard.check(&headers(ok)).is_ok(), "{ok:?}");
        }
        for (bad, code) in [
            (
                &[("host", "attacker.example:18789")][..],
                "host_not_allowed",
            ),
            (
                &[("host", "localhost.attacker.example")],
                "host_not_allowed",
            ),
            (&[("host", "127.0.0.1.nip.io")], "host_not_allowed"),
            (
                &[("host", "127.0.0.1"), ("origin", "http://attacker.example")],
                "origin_not_allowed",
            ),
            (&[("origin", "null")], "origin_not_allowed"),
            (&[("sec-fetch-site", "cross-site")], "origin_not_allowed"),
            (
                &[("content-type", "application/x-www-form-urlencoded")],
                "unsupported_media_type",
            ),
            (
                &[("content-type", "text/plain;charset=UTF-8")],
                "unsupported_media_type",
            ),
        ] {
            let err = guard.check(&headers(bad)).unwrap_err();
            assert_eq!(err.body()["error"]["code"], code, "{bad:?}");
        }
    }
}
