//! Credentials: where a provider's key comes from, discovered into templates.

use clawhost_config::ProviderConfig;

/// A credential. Its `Debug` never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wrap a value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// Where a provider's credential comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthSource {
    /// No credential configured (local OpenAI-compatible servers, scripted).
    None,
    /// The `apiKey` field of the config.
    Config,
    /// An environment variable.
    Env(String),
}

/// A provider's discovered auth: source, and the credential if present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthTemplate {
    /// Provider id.
    pub provider: String,
    /// Where the key comes from.
    pub source: AuthSource,
    /// The key, when the source had one at discovery time.
    pub secret: Option<Secret>,
}

impl AuthTemplate {
    /// Discover a provider's auth (reads the environment).
    pub fn discover(provider: &str, config: &ProviderConfig) -> Self {
        let (source, secret) = if let Some(var) = &config.api_key_env {
            (
                AuthSource::Env(var.clone()),
                std::env::var(var)
                    .ok()
                    .filter(|v| !v.is_empty())
                    .map(Secret::new),
            )
        } else if let Some(key) = &config.api_key {
            (AuthSource::Config, Some(Secret::new(key.clone())))
        } else {
            (AuthSource::None, None)
        };
        Self {
            provider: provider.into(),
            source,
            secret,
        }
    }

    /// Whether requests can be authenticated (or need no credential).
    pub fn ready(&self) -> bool {
        self.source == AuthSource::None || self.secret.is_some()
    }

    /// A human description without the secret.
    pub fn describe(&self) -> String {
        match (&self.source, &self.secret) {
            (AuthSource::None, _) => "no credential".into(),
            (AuthSource::Config, _) => "api key from config".into(),
            (AuthSource::Env(v), Some(_)) => format!("api key from ${v}"),
            (AuthSource::Env(v), None) => format!("missing: ${v} is not set"),
        }
    }
}
