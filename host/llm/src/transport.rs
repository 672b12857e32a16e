//! HTTP transport shared by the providers: POST with retries (exponential
//! backoff with jitter, honouring `retry-after`), then the SSE stream read
//! with an idle timeout and fed to a provider parser.

use std::time::Duration;

use clawhost_agent_core::{ModelError, ModelErrorKind, ModelResponse, TextSink};
use clawhost_config::RetryConfig;
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use reqwest::header::HeaderMap;
use reqwest::StatusCode;

use crate::auth::Secret;
use crate::providers::{classify, error_fields};
use crate::stream::{Assembler, EventParser, StreamEvent};

/// One request to a provider.
pub struct HttpRequest<'a> {
    /// Provider id (for messages).
    pub provider: &'a str,
    /// Full URL.
    pub url: String,
    /// Headers, auth included.
    pub headers: HeaderMap,
    /// JSON body, serialized once for every attempt.
    pub body: bytes::Bytes,
    /// Retry policy.
    pub retry: &'a RetryConfig,
    /// Idle timeout of the stream (any bytes, keep-alive comments too, reset it).
    pub idle_timeout: Duration,
    /// How long one attempt waits for the response headers.
    pub response_timeout: Duration,
    /// Deadline of the whole request: attempts, backoff and the stream.
    pub request_timeout: Duration,
    /// The credential, so it can be scrubbed from any error text.
    pub secret: Option<&'a Secret>,
}

fn scrub(text: &str, secret: Option<&Secret>) -> String {
    match secret {
        Some(s) if !s.expose().is_empty() => text.replace(s.expose(), "[redacted]"),
        _ => text.to_string(),
    }
}

/// How long the server asked us to wait (`retry-after-ms`, `retry-after` in
/// seconds or as an HTTP date).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return Some(Duration::from_secs_f64(secs.max(0.0)));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

/// Backoff before attempt `attempt + 1` (attempt counts from 1).
pub fn backoff(retry: &RetryConfig, attempt: u32, server_asked: Option<Duration>) -> Duration {
    let max = Duration::from_millis(retry.max_delay_ms);
    if let Some(asked) = server_asked {
        return asked.min(max);
    }
    let exp = retry
        .base_delay_ms
        .saturating_mul(1u64 << (attempt - 1).min(20));
    let full = Duration::from_millis(exp).min(max);
    // "Equal jitter": half fixed, half random, so retries spread but never collapse to 0.
    full / 2 + full.mul_f64(fastrand::f64() / 2.0)
}

/// Statuses worth another attempt, as the official OpenAI and Anthropic SDKs
/// retry them: 408 (request timeout), 409 (lock conflict), 429 and 5xx.
fn retryable(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::REQUEST_TIMEOUT | StatusCode::CONFLICT | StatusCode::TOO_MANY_REQUESTS
    ) || status.is_server_error()
}

/// Why an attempt got no response.
enum Failure {
    /// The connection or the request failed.
    Transport(reqwest::Error),
    /// The server took the request but sent no headers in time.
    NoHeaders,
}

async fn send(
    client: &reqwest::Client,
    req: &HttpRequest<'_>,
) -> Result<reqwest::Response, ModelError> {
    let attempts = req.retry.max_attempts.max(1);
    let mut attempt = 1;
    loop {
        let sent = tokio::time::timeout(
            req.response_timeout,
            client
                .post(&req.url)
                .headers(req.headers.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(req.body.clone())
                .send(),
        )
        .await;
        let sent = match sent {
            Ok(sent) => sent.map_err(Failure::Transport),
            Err(_) => Err(Failure::NoHeaders),
        };
        let (error, asked) = match sent {
            Ok(resp) if resp.status().is_success() => return Ok(resp),
            Ok(resp) => {
                let status = resp.status();
                let asked = retry_after(resp.headers());
                let text = resp.text().await.unwrap_or_default();
                let parsed = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
                let (code, message) = if parsed.is_object() {
                    error_fields(&parsed)
                } else {
                    (String::new(), text.chars().take(500).collect())
                };
                let kind = classify(&code, &message, Some(status.as_u16()));
                let error = ModelError::new(
                    kind,
                    scrub(
                        &format!("provider `{}` answered {status}: {message}", req.provider),
                        req.secret,
                    ),
                );
                if !retryable(status) {
                    return Err(error);
                }
                (error, asked)
            }
            Err(Failure::NoHeaders) => (
                ModelError::new(
                    ModelErrorKind::Timeout,
                    format!(
                        "provider `{}` sent no response within {} ms",
                        req.provider,
                        req.response_timeout.as_millis()
                    ),
                ),
                None,
            ),
            Err(Failure::Transport(e)) => {
                let kind = if e.is_timeout() {
                    ModelErrorKind::Timeout
                } else {
                    ModelErrorKind::Unavailable
                };
                (
                    ModelError::new(
                        kind,
                        scrub(
                            &format!("provider `{}` unreachable: {e}", req.provider),
                            req.secret,
                        ),
                    ),
                    None,
                )
            }
        };
        if attempt >= attempts {
            return Err(ModelError::new(
                error.kind,
                format!("{} (after {attempt} attempts)", error.message),
            ));
        }
        let wait = backoff(req.retry, attempt, asked);
        tracing::warn!(provider = req.provider, attempt, wait_ms = wait.as_millis() as u64, error = %error.message, "retrying model request");
        tokio::time::sleep(wait).await;
        attempt += 1;
    }
}

/// Read an SSE byte stream through a parser into a complete reply.
pub async fn read_stream<S, B, E>(
    bytes: S,
    parser: &mut dyn EventParser,
    idle_timeout: Duration,
    provider: &str,
    text_sink: Option<&TextSink>,
) -> Result<ModelResponse, ModelError>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
{
    // The idle timer runs on bytes, not events: an SSE comment line
    // (`: PROCESSING`, a keep-alive) yields no event but proves the server
    // is alive.
    let last_bytes = std::sync::Arc::new(std::sync::Mutex::new(tokio::time::Instant::now()));
    let seen = last_bytes.clone();
    let bytes = bytes.inspect(move |_| {
        *clawhost_agent_core::lock(&seen) = tokio::time::Instant::now();
    });
    let mut events = bytes.eventsource();
    let mut assembler = Assembler::default();
    loop {
        let deadline = *clawhost_agent_core::lock(&last_bytes) + idle_timeout;
        let next = match tokio::time::timeout_at(deadline, events.next()).await {
            Ok(next) => next,
            // Bytes came meanwhile (a comment): wait on from them.
            Err(_) if *clawhost_agent_core::lock(&last_bytes) + idle_timeout > deadline => continue,
            Err(_) => {
                return Err(ModelError::new(
                    ModelErrorKind::Timeout,
                    format!(
                        "provider `{provider}` sent nothing for {} ms; stream abandoned",
                        idle_timeout.as_millis()
                    ),
                ))
            }
        };
        match next {
            None => break,
            Some(Ok(event)) => {
                for e in parser.parse(&event.event, &event.data)? {
                    if let (Some(sink), StreamEvent::TextDelta(text)) = (text_sink, &e) {
                        sink.send(text);
                    }
                    assembler.push(e);
                }
                if parser.done() {
                    break;
                }
            }
            Some(Err(e)) => {
                return Err(ModelError::new(
                    ModelErrorKind::Protocol,
                    format!("provider `{provider}` stream broke: {e}"),
                ))
            }
        }
    }
    assembler.finish()
}

/// Send a request and read its streamed reply.
pub async fn stream_completion(
    client: &reqwest::Client,
    req: HttpRequest<'_>,
    parser: &mut dyn EventParser,
    text_sink: Option<&TextSink>,
) -> Result<ModelResponse, ModelError> {
    let whole = async {
        let resp = send(client, &req).await?;
        read_stream(
            resp.bytes_stream(),
            parser,
            req.idle_timeout,
            req.provider,
            text_sink,
        )
        .await
        .map_err(|e| ModelError::new(e.kind, scrub(&e.message, req.secret)))
    };
    tokio::time::timeout(req.request_timeout, whole)
        .await
        .unwrap_or_else(|_| {
            Err(ModelError::new(
                ModelErrorKind::Timeout,
                format!(
                    "provider `{}`: the request ran past its deadline of {} ms (requestTimeoutMs)",
                    req.provider,
                    req.request_timeout.as_millis()
                ),
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn the_statuses_the_official_sdks_retry_are_retried() {
        for code in [408, 409, 429, 500, 502, 503, 529] {
            assert!(retryable(StatusCode::from_u16(code).unwrap()), "{code}");
        }
        for code in [400, 401, 403, 404, 413, 422] {
            assert!(!retryable(StatusCode::from_u16(code).unwrap()), "{code}");
        }
    }

    #[test]
    fn retry_after_forms_are_understood() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
    }

    #[test]
    fn backoff_grows_is_capped_and_jittered() {
        let r = RetryConfig {
            max_attempts: 5,
            base_delay_ms: 100,
            max_delay_ms: 1000,
        };
        for _ in 0..50 {
            let first = backoff(&r, 1, None);
            assert!(
                first >= Duration::from_millis(50) && first <= Duration::from_millis(100),
                "{first:?}"
            );
            let fifth = backoff(&r, 5, None);
            assert!(
                fifth >= Duration::from_millis(500) && fifth <= Duration::from_millis(1000),
                "{fifth:?}"
            );
        }
        assert_eq!(
            backoff(&r, 1, Some(Duration::from_secs(60))),
            Duration::from_millis(1000)
        );
    }
}

#[cfg(test)]
#[path = "transport_timeout_tests.rs"]
mod timeout_tests;
