//! `gateway`: where `clawhost gateway` listens, who may call it, and how
//! much one client or request may take.

use serde::Deserialize;

/// `clawhost gateway` settings.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayConfig {
    /// Address to listen on (default `127.0.0.1:18789`). Any address other
    /// than loopback requires `auth.token`.
    #[serde(default = "default_gateway_bind")]
    pub bind: String,
    /// Client authentication.
    #[serde(default)]
    pub auth: GatewayAuth,
    /// The longest a gateway turn may run, in seconds (then it is aborted).
    #[serde(default = "default_gateway_turn_timeout")]
    pub turn_timeout_secs: u64,
    /// Host names (besides `localhost` and IP addresses) a request's `Host`
    /// header may carry; any other name is refused, so a web page that
    /// rebinds its own name to this address (DNS rebinding) gets nothing.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`) whose browser pages may call the
    /// gateway; a request from any other `Origin` is refused.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// How much one request, connection or client may take.
    #[serde(default)]
    pub limits: GatewayLimits,
}

/// Bounds on what one request, connection or client may take.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayLimits {
    /// Messages (or `input` items) one request may carry (default 2048,
    /// OpenAI's own limit).
    #[serde(default = "default_max_messages")]
    pub max_messages: usize,
    /// Bytes one request body may hold, in KiB (default 32 MiB: a
    /// conversation with a few images at their 5 MiB limit).
    #[serde(default = "default_max_request_kb")]
    pub max_request_kb: usize,
    /// Time a client has to send a request's headers, in milliseconds.
    #[serde(default = "default_header_read_ms")]
    pub header_read_timeout_ms: u64,
    /// Connections open at once; more wait to be accepted.
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// Turns one client (one IP address) may run at once (default 256: a
    /// service behind one address may well run a hundred sessions at once,
    /// as the gateway bench does).
    #[serde(default = "default_max_turns_per_client")]
    pub max_turns_per_client: usize,
}

impl Default for GatewayLimits {
    fn default() -> Self {
        Self {
            max_messages: default_max_messages(),
            max_request_kb: default_max_request_kb(),
            header_read_timeout_ms: default_header_read_ms(),
            max_connections: default_max_connections(),
            max_turns_per_client: default_max_turns_per_client(),
        }
    }
}

fn default_max_messages() -> usize {
    2048
}
fn default_max_request_kb() -> usize {
    32 << 10
}
fn default_header_read_ms() -> u64 {
    10_000
}
fn default_max_connections() -> usize {
    1024
}
fn default_max_turns_per_client() -> usize {
    256
}

impl Default for GatewayConfig {
    fn default() -> Self {
        Self {
            bind: default_gateway_bind(),
            auth: GatewayAuth::default(),
            turn_timeout_secs: default_gateway_turn_timeout(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            limits: GatewayLimits::default(),
        }
    }
}

fn default_gateway_bind() -> String {
    "127.0.0.1:18789".into()
}

fn default_gateway_turn_timeout() -> u64 {
    600
}

/// How gateway clients authenticate.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GatewayAuth {
    /// The bearer token every request must carry (`Authorization: Bearer
    /// <token>`); write `${CLAWHOST_GATEWAY_TOKEN}` to keep it out of the file.
    #[serde(default)]
    pub token: Option<String>,
}
