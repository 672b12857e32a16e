//! The distribution API (`/v2/<name>/manifests|blobs/…`: reads, and
//! monolithic uploads): plain
//! HTTP only to this machine, a stalled registry timed out, credentials
//! sent to the registry's own host only, and a redirect to another host
//! refused unless it fetches a blob over HTTPS (blobs are checked against
//! their digests; reqwest drops the credentials on the way).

use std::time::Duration;

use base64::Engine;
use reqwest::header::{HeaderMap, ACCEPT, AUTHORIZATION, WWW_AUTHENTICATE};
use reqwest::{Response, StatusCode};

use crate::{Credentials, OciError, Reference};

/// Most redirects followed for one request.
const MAX_REDIRECTS: usize = 5;

/// One registry, for one reference.
pub(crate) struct Registry {
    http: reqwest::Client,
    base: String,
    registry: String,
    repository: String,
    credentials: Option<Credentials>,
    /// `Authorization` that the registry accepted (after a challenge).
    authorization: tokio::sync::Mutex<Option<String>>,
}

impl Registry {
    pub(crate) fn new(
        reference: &Reference,
        credentials: Option<Credentials>,
        timeout: Duration,
    ) -> Result<Self, OciError> {
        let scheme = if reference.is_loopback() {
            "http"
        } else {
            "https"
        };
        let home = reference.registry.clone();
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > MAX_REDIRECTS {
                return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
            }
            let url = attempt.url();
            let host = match (url.host_str(), url.port()) {
                (Some(h), Some(p)) => format!("{h}:{p}"),
                (Some(h), None) => h.to_string(),
                (None, _) => String::new(),
            };
            let for_blob = attempt
                .previous()
                .first()
                .is_some_and(|first| first.path().contains("/blobs/"));
            if host == home || (for_blob && url.scheme() == "https") {
                attempt.follow()
            } else {
                let to = url.to_string();
                attempt.error(format!("the registry redirected to another host ({to})"))
            }
        });
        let http = reqwest::Client::builder()
            .redirect(policy)
            .connect_timeout(timeout)
            .read_timeout(timeout)
            .user_agent(concat!("clawhost/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| OciError::Registry {
                registry: reference.registry.clone(),
                why: e.to_string(),
            })?;
        Ok(Self {
            http,
            base: format!("{scheme}://{}", reference.registry),
            registry: reference.registry.clone(),
            repository: reference.repository.clone(),
            credentials,
            authorization: tokio::sync::Mutex::new(None),
        })
    }

    fn failed(&self, why: impl std::fmt::Display) -> OciError {
        OciError::Registry {
            registry: self.registry.clone(),
            why: why.to_string(),
        }
    }

    /// `GET /v2/<repository>/<kind>/<target>` accepting `accept`, answering
    /// one authentication challenge; a successful response.
    pub(crate) async fn get(
        &self,
        kind: &str,
        target: &str,
        accept: &str,
    ) -> Result<Response, OciError> {
        let url = self.url(kind, target);
        let what = format!("{kind} {target}");
        self.send(
            reqwest::Method::GET,
            &url,
            &[(ACCEPT.as_str(), accept)],
            None,
            &what,
        )
        .await
    }

    /// `https://registry/v2/<repository>/<kind>/<target>`.
    fn url(&self, kind: &str, target: &str) -> String {
        format!("{}/v2/{}/{kind}/{target}", self.base, self.repository)
    }

    /// Whether the registry holds the blob `digest` already.
    pub(crate) async fn has_blob(&self, digest: &str) -> Result<bool, OciError> {
        let url = self.url("blobs", digest);
        let what = format!("blob {digest}");
        match self
            .send(reqwest::Method::HEAD, &url, &[], None, &what)
            .await
        {
            Ok(_) => Ok(true),
            Err(OciError::NotFound { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Upload `body` as the blob `digest` (one monolithic upload).
    pub(crate) async fn put_blob(&self, digest: &str, body: bytes::Bytes) -> Result<(), OciError> {
        let what = format!("upload of {digest}");
        let start = self.url("blobs", "uploads/");
        let started = self
            .send(
                reqwest::Method::POST,
                &start,
                &[],
                Some(bytes::Bytes::new()),
                &what,
            )
            .await?;
        let location = started
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| self.failed("an upload without a Location"))?;
        let mut url = if location.starts_with('/') {
            format!("{}{location}", self.base)
        } else {
            location.to_string()
        };
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str("digest=");
        url.push_str(digest);
        let octets = [("content-type", "application/octet-stream")];
        self.send(reqwest::Method::PUT, &url, &octets, Some(body), &what)
            .await?;
        Ok(())
    }

    /// Store `manifest` (an OCI image manifest) under `tag`.
    pub(crate) async fn put_manifest(
        &self,
        tag: &str,
        manifest: bytes::Bytes,
    ) -> Result<(), OciError> {
        let url = self.url("manifests", tag);
        let kind = [("content-type", crate::OCI_MANIFEST)];
        let what = format!("manifest {tag}");
        self.send(reqwest::Method::PUT, &url, &kind, Some(manifest), &what)
            .await?;
        Ok(())
    }

    /// One request, answering one authentication challenge; a successful
    /// response.
    async fn send(
        &self,
        method: reqwest::Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<bytes::Bytes>,
        what: &str,
    ) -> Result<Response, OciError> {
        let mut retried = false;
        loop {
            let mut request = self.http.request(method.clone(), url);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            if let Some(body) = &body {
                request = request.body(body.clone());
            }
            if let Some(auth) = self.authorization.lock().await.clone() {
                request = request.header(AUTHORIZATION, auth);
            }
            let response = request
                .send()
                .await
                .map_err(|e| self.failed(describe(&e)))?;
            match response.status() {
                StatusCode::UNAUTHORIZED if !retried => {
                    retried = true;
                    let auth = self.answer_challenge(response.headers()).await?;
                    *self.authorization.lock().await = Some(auth);
                }
                StatusCode::UNAUTHORIZED => {
                    return Err(OciError::Unauthorized {
                        registry: self.registry.clone(),
                        why: "the registry refused the credentials".into(),
                    })
                }
                StatusCode::NOT_FOUND => {
                    return Err(OciError::NotFound {
                        what: format!("{what} in {}/{}", self.registry, self.repository),
                    })
                }
                status if !status.is_success() => {
                    return Err(self.failed(format!("{what}: HTTP {status}")))
                }
                _ => return Ok(response),
            }
        }
    }

    /// The `Authorization` a 401's `WWW-Authenticate` asks for: Basic with
    /// the credentials, or a Bearer token from the realm it names.
    async fn answer_challenge(&self, headers: &HeaderMap) -> Result<String, OciError> {
        let challenge = headers
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let basic = self.credentials.as_ref().map(|c| {
            let pair = format!("{}:{}", c.username, c.password);
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            )
        });
        let (scheme, params) = challenge.split_once(' ').unwrap_or((&challenge, ""));
        match scheme.to_ascii_lowercase().as_str() {
            "basic" => basic.ok_or_else(|| OciError::Unauthorized {
                registry: self.registry.clone(),
                why: "it asks for a user name and password (docker login, or plugins.registries)"
                    .into(),
            }),
            "bearer" => {
                let field = |name: &str| challenge_field(params, name);
                let realm = field("realm")
                    .ok_or_else(|| self.failed("a Bearer challenge without a realm"))?;
                // The credentials go to the token service: never in clear
                // beyond a registry on this machine.
                if !realm.starts_with("https://") && !self.base.starts_with("http://") {
                    return Err(self.failed(format!(
                        "its token service ({realm}) is not HTTPS; the credentials are not sent"
                    )));
                }
                let mut request = self.http.get(&realm);
                let mut query = Vec::new();
                if let Some(service) = field("service") {
                    query.push(("service", service));
                }
                let scope = field("scope")
                    .unwrap_or_else(|| format!("repository:{}:pull", self.repository));
                query.push(("scope", scope));
                request = request.query(&query);
                if let Some(basic) = basic {
                    request = request.header(AUTHORIZATION, basic);
                }
                let answer = request
                    .send()
                    .await
                    .map_err(|e| self.failed(describe(&e)))?;
                if !answer.status().is_success() {
                    return Err(OciError::Unauthorized {
                        registry: self.registry.clone(),
                        why: format!("its token service answered HTTP {}", answer.status()),
                    });
                }
                let body: serde_json::Value = answer
                    .json()
                    .await
                    .map_err(|e| self.failed(format!("its token service: {e}")))?;
                let token = body["token"]
                    .as_str()
                    .or(body["access_token"].as_str())
                    .ok_or_else(|| self.failed("its token service gave no token"))?;
                Ok(format!("Bearer {token}"))
            }
            _ => Err(OciError::Unauthorized {
                registry: self.registry.clone(),
                why: format!("an authentication scheme clawhost does not speak: {challenge}"),
            }),
        }
    }
}

/// `name="value"` from a challenge's parameters.
fn challenge_field(params: &str, name: &str) -> Option<String> {
    let start = params.find(&format!("{name}=\""))? + name.len() + 2;
    let end = params[start..].find('"')? + start;
    Some(params[start..end].to_string())
}

/// A transport error, with the redirect refusal or timeout said plainly.
fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        return "no answer in time (the registry stalled)".into();
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::challenge_field;

    #[test]
    fn challenge_fields_are_read() {
        let p =
            r#"realm="https://auth.example/token",service="registry",scope="repository:a/b:pull""#;
        assert_eq!(
            challenge_field(p, "realm").unwrap(),
            "https://auth.example/token"
        );
        assert_eq!(challenge_field(p, "service").unwrap(), "registry");
        assert_eq!(challenge_field(p, "scope").unwrap(), "repository:a/b:pull");
        assert!(challenge_field(p, "nothing").is_none());
    }
}
