//! The transport to a Streamable HTTP MCP server.

use std::collections::{BTreeMap, HashMap};

use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;

/// A transport to `url` sending `headers`; responses over `max_bytes` are
/// refused.
pub(crate) fn transport(
    url: &str,
    headers: &BTreeMap<String, String>,
    max_bytes: usize,
) -> Result<
    StreamableHttpClientTransport<
        impl rmcp::transport::streamable_http_client::StreamableHttpClient,
    >,
    String,
> {
    // reqwest 0.13 (the SDK's) takes the process's TLS provider; install
    // ring's once (an error means one is installed already).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let name = http::HeaderName::try_from(name.as_str())
            .map_err(|e| format!("header `{name}`: {e}"))?;
        let value = http::HeaderValue::try_from(value.as_str())
            .map_err(|e| format!("header `{name}`: {e}"))?;
        custom.insert(name, value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(custom)
        .max_json_response_size(max_bytes)
        .max_sse_event_size(max_bytes);
    Ok(StreamableHttpClientTransport::from_config(config))
}
