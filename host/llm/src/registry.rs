//! The model/provider registry built from config, and the model client over it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use clawhost_agent_core::{
    Message, ModelClient, ModelError, ModelErrorKind, ModelRequest, ModelResponse,
};
use clawhost_config::{ApiKind, Config, ModelConfig, ProviderConfig};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;

use crate::auth::AuthTemplate;
use crate::providers::{anthropic, openai_completions, openai_responses};
use crate::stream::EventParser;
use crate::transport::{stream_completion, HttpRequest};
use crate::{ModelRef, ScriptedModel};

/// Why a registry could not be built from config.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("models.providers.{provider}: {reason}")]
pub struct RegistryError {
    /// Provider id.
    pub provider: String,
    /// What is wrong.
    pub reason: String,
}

/// A provider ready to serve requests.
#[derive(Debug)]
pub struct ProviderEntry {
    /// Provider id.
    pub id: String,
    /// Its configuration.
    pub config: ProviderConfig,
    /// Its discovered auth.
    pub auth: AuthTemplate,
    scripted: Option<ScriptedModel>,
}

impl ProviderEntry {
    /// The effective base URL (the API's official one when not configured).
    pub fn base_url(&self) -> String {
        let default = match self.config.api {
            ApiKind::OpenaiCompletions | ApiKind::OpenaiResponses => "https://api.openai.com/v1",
            ApiKind::AnthropicMessages => "https://api.anthropic.com",
            ApiKind::Scripted => "",
        };
        self.config
            .base_url
            .as_deref()
            .unwrap_or(default)
            .trim_end_matches('/')
            .to_string()
    }
}

/// A model as listed in the catalog.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogEntry {
    /// `provider/model`.
    pub model_ref: String,
    /// Wire API name.
    pub api: String,
    /// Context window in tokens.
    pub context_window: u64,
    /// Output token limit.
    pub max_tokens: u64,
    /// Input kinds.
    pub input: Vec<String>,
    /// Whether the provider's credential is available.
    pub auth_ready: bool,
}

/// Providers by id, with one shared HTTP client (connection pool).
#[derive(Debug)]
pub struct ModelRegistry {
    providers: BTreeMap<String, Arc<ProviderEntry>>,
    http: reqwest::Client,
}

fn scripted_default() -> Result<ProviderConfig, RegistryError> {
    serde_json::from_value(serde_json::json!({"api": "scripted", "models": [{"id": "demo"}]}))
        .map_err(|e| RegistryError {
            provider: "scripted".into(),
            reason: e.to_string(),
        })
}

impl ModelRegistry {
    /// Build from `models.providers` (plus the built-in `scripted` provider),
    /// discovering auth from the environment now.
    pub fn build(config: &Config) -> Result<Self, RegistryError> {
        let mut providers = BTreeMap::new();
        let mut configured = config.models.providers.clone();
        if !configured.contains_key("scripted") {
            configured.insert("scripted".into(), scripted_default()?);
        }
        // A built-in provider an agent names needs no entry of its own.
        for model_ref in config.agents.model_refs() {
            if let Ok(r) = ModelRef::parse(&model_ref) {
                if let Some(builtin) = clawhost_config::builtin_provider(&r.provider) {
                    configured.entry(r.provider).or_insert(builtin);
                }
            }
        }
        for (id, pc) in configured {
            let bad = |reason: String| RegistryError {
                provider: id.clone(),
                reason,
            };
            if id.is_empty() || id.contains('/') {
                return Err(bad(
                    "a provider id must be non-empty and contain no `/`".into()
                ));
            }
            let scripted = match (pc.api, &pc.script) {
                (ApiKind::Scripted, Some(path)) => {
                    let path = config.resolve(path);
                    let text = std::fs::read_to_string(&path)
                        .map_err(|e| bad(format!("script {}: {e}", path.display())))?;
                    Some(
                        ScriptedModel::from_json(&text)
                            .map_err(|e| bad(format!("script {}: {e}", path.display())))?,
                    )
                }
                (ApiKind::Scripted, None) => Some(ScriptedModel::demo()),
                _ => None,
            };
            if let Some(url) = &pc.base_url {
                let parsed =
                    reqwest::Url::parse(url).map_err(|e| bad(format!("baseUrl `{url}`: {e}")))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(bad(format!("baseUrl `{url}` must be http or https")));
                }
            }
            for (name, value) in &pc.headers {
                HeaderName::try_from(name.as_str())
                    .map_err(|e| bad(format!("header `{name}`: {e}")))?;
                HeaderValue::try_from(value.as_str())
                    .map_err(|e| bad(format!("header `{name}`: {e}")))?;
            }
            let mut seen = std::collections::BTreeSet::new();
            for m in &pc.models {
                if !seen.insert(&m.id) {
                    return Err(bad(format!("model `{}` is listed twice", m.id)));
                }
            }
            let auth = AuthTemplate::discover(&id, &pc);
            providers.insert(
                id.clone(),
                Arc::new(ProviderEntry {
                    id,
                    config: pc,
                    auth,
                    scripted,
                }),
            );
        }
        let http = crate::http_client::new_client().map_err(|e| RegistryError {
            provider: "(http)".into(),
            reason: e.to_string(),
        })?;
        Ok(Self { providers, http })
    }

    /// A provider by id.
    pub fn provider(&self, id: &str) -> Option<&Arc<ProviderEntry>> {
        self.providers.get(id)
    }

    /// Auth templates of every provider.
    pub fn auth_templates(&self) -> Vec<AuthTemplate> {
        self.providers.values().map(|p| p.auth.clone()).collect()
    }

    /// Resolve a model ref to its provider and model settings (an unlisted
    /// model id gets default limits).
    pub fn resolve(
        &self,
        model_ref: &str,
    ) -> Result<(Arc<ProviderEntry>, ModelConfig), ModelError> {
        let r = ModelRef::parse(model_ref)
            .map_err(|e| ModelError::new(ModelErrorKind::UnknownModel, e.to_string()))?;
        let provider = self.providers.get(&r.provider).ok_or_else(|| {
            ModelError::new(
                ModelErrorKind::UnknownModel,
                format!(
                    "no provider `{}` is configured (models.providers) and it is not a built-in one ({})",
                    r.provider,
                    clawhost_config::BUILTIN_PROVIDERS.join(", ")
                ),
            )
        })?;
        let model = match provider.config.models.iter().find(|m| m.id == r.model) {
            Some(model) => model.clone(),
            // An unlisted model of a listed provider: the defaults.
            None => serde_json::from_value(serde_json::json!({"id": r.model}))
                .map_err(|e| ModelError::new(ModelErrorKind::UnknownModel, e.to_string()))?,
        };
        Ok((provider.clone(), model))
    }

    /// The projected catalog: every listed model of every provider.
    pub fn catalog(&self) -> Vec<CatalogEntry> {
        self.providers
            .values()
            .flat_map(|p| {
                p.config.models.iter().map(move |m| CatalogEntry {
                    model_ref: format!("{}/{}", p.id, m.id),
                    api: p.config.api.name().into(),
                    context_window: m.context_window,
                    max_tokens: m.max_tokens,
                    input: m.input.clone(),
                    auth_ready: p.auth.ready(),
                })
            })
            .collect()
    }
}

fn headers(provider: &ProviderEntry) -> Result<HeaderMap, ModelError> {
    let mut map = HeaderMap::new();
    let secret = provider.auth.secret.as_ref();
    if !provider.auth.ready() {
        return Err(ModelError::new(
            ModelErrorKind::Auth,
            format!(
                "provider `{}` has no credential: {}",
                provider.id,
                provider.auth.describe()
            ),
        ));
    }
    let invalid = |_| {
        ModelError::new(
            ModelErrorKind::Auth,
            format!(
                "provider `{}`: the API key is not a valid header value",
                provider.id
            ),
        )
    };
    match provider.config.api {
        ApiKind::AnthropicMessages => {
            if let Some(s) = secret {
                let mut v = HeaderValue::from_str(s.expose()).map_err(invalid)?;
                v.set_sensitive(true);
                map.insert("x-api-key", v);
            }
            map.insert(
                "anthropic-version",
                HeaderValue::from_static(anthropic::API_VERSION),
            );
        }
        _ => {
            if let Some(s) = secret {
                let mut v =
                    HeaderValue::from_str(&format!("Bearer {}", s.expose())).map_err(invalid)?;
                v.set_sensitive(true);
                map.insert(reqwest::header::AUTHORIZATION, v);
            }
        }
    }
    map.insert(
        reqwest::header::ACCEPT,
        HeaderValue::from_static("text/event-stream"),
    );
    for (k, v) in &provider.config.headers {
        if let (Ok(k), Ok(v)) = (
            HeaderName::try_from(k.as_str()),
            HeaderValue::try_from(v.as_str()),
        ) {
            map.insert(k, v);
        }
    }
    Ok(map)
}

/// `request` for a model that takes no images (its `input` lacks
/// `"image"`): each image becomes a note saying so. The transcript keeps
/// the images; a later model that takes them sees them.
fn without_images(mut request: ModelRequest) -> ModelRequest {
    let note = |n: usize| {
        format!(
            "[{n} image(s) omitted: {} does not take images]",
            request.model_ref
        )
    };
    for m in &mut request.messages {
        let has_images = match &**m {
            Message::User { images, .. } => !images.is_empty(),
            Message::ToolResult(r) => !r.images.is_empty(),
            Message::Assistant { .. } => false,
        };
        if !has_images {
            continue; // shared with the history: left as it is
        }
        match m.make_mut() {
            Message::User { text, images } if !images.is_empty() => {
                let note = note(std::mem::take(images).len());
                *text = if text.is_empty() {
                    note
                } else {
                    format!("{text}\n{note}")
                };
            }
            Message::ToolResult(r) if !r.images.is_empty() => {
                let note = note(std::mem::take(&mut r.images).len());
                r.content = format!("{}\n{note}", r.content);
            }
            _ => {}
        }
    }
    request
}

#[async_trait]
impl ModelClient for ModelRegistry {
    async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
        let (provider, model) = self.resolve(&request.model_ref)?;
        if let Some(script) = &provider.scripted {
            return script.complete(request).await;
        }
        let params = [&provider.config.params, &model.params];
        // One reply per request: several choices would interleave in one stream.
        if let Some(n) = params.iter().rev().find_map(|p| p.get("n")) {
            if n.as_u64() != Some(1) {
                return Err(ModelError::new(
                    ModelErrorKind::BadRequest,
                    format!(
                        "`{}`: params.n is {n}; clawhost asks for one reply per request (remove `n`)",
                        request.model_ref
                    ),
                ));
            }
        }
        let request = if model.input.iter().any(|i| i == "image") {
            request
        } else {
            without_images(request)
        };
        let base = provider.base_url();
        let (url, body, mut parser): (String, serde_json::Result<Vec<u8>>, Box<dyn EventParser>) =
            match provider.config.api {
                ApiKind::OpenaiCompletions => (
                    format!("{base}/chat/completions"),
                    openai_completions::body(&request, &model.id, &params).to_bytes(),
                    Box::<openai_completions::Parser>::default(),
                ),
                ApiKind::OpenaiResponses => (
                    format!("{base}/responses"),
                    openai_responses::body(&request, &model.id, &params).to_bytes(),
                    Box::<openai_responses::Parser>::default(),
                ),
                ApiKind::AnthropicMessages => (
                    format!("{base}/v1/messages"),
                    anthropic::body(&request, &model.id, model.max_tokens, &params).to_bytes(),
                    Box::<anthropic::Parser>::default(),
                ),
                ApiKind::Scripted => {
                    return Err(ModelError::new(
                        ModelErrorKind::BadRequest,
                        format!(
                            "`{}`: a scripted provider without a script",
                            request.model_ref
                        ),
                    ))
                }
            };
        let body = body.map_err(|e| {
            ModelError::new(ModelErrorKind::BadRequest, format!("request body: {e}"))
        })?;
        let req = HttpRequest {
            provider: &provider.id,
            url,
            headers: headers(&provider)?,
            body: body.into(),
            retry: &provider.config.retry,
            idle_timeout: Duration::from_millis(provider.config.stream_idle_timeout_ms.max(1)),
            response_timeout: Duration::from_millis(provider.config.response_timeout_ms.max(1)),
            request_timeout: Duration::from_millis(provider.config.request_timeout_ms.max(1)),
            secret: provider.auth.secret.as_ref(),
        };
        let mut reply = stream_completion(
            &crate::http_client::current_or(&self.http),
            req,
            parser.as_mut(),
            request.text_sink.as_ref(),
        )
        .await?;
        for r in &mut reply.reasoning {
            r.model_ref.clone_from(&request.model_ref);
        }
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: &str) -> Config {
        Config::from_text_with_env(json, std::path::Path::new("."), &|name| {
            (name == "KEY").then(|| "sk-test".to_string())
        })
        .unwrap()
    }

    #[test]
    fn a_built_in_provider_needs_only_its_name() {
        let registry = ModelRegistry::build(&config(
            r#"{agents: {defaults: {model: "anthropic/claude-sonnet-4-5"}}}"#,
        ))
        .unwrap();
        let (provider, model) = registry.resolve("anthropic/claude-sonnet-4-5").unwrap();
        assert_eq!(provider.config.api, ApiKind::AnthropicMessages);
        assert_eq!(
            provider.config.base_url.as_deref(),
            Some("https://api.anthropic.com")
        );
        assert_eq!(
            provider.config.api_key_env.as_deref(),
            Some("ANTHROPIC_API_KEY")
        );
        assert_eq!(model.context_window, 200_000);
        // Named by no agent and not configured: not there, and the error
        // lists the built-in ids.
        let err = registry.resolve("openai/gpt-5").unwrap_err();
        assert!(err.message.contains("openai, anthropic"), "{}", err.message);
        // A partial entry: its key, the built-in's API and endpoint.
        let registry = ModelRegistry::build(&config(
            r#"{models: {providers: {openai: {apiKey: "${KEY}"}}}}"#,
        ))
        .unwrap();
        let (provider, _) = registry.resolve("openai/gpt-4.1").unwrap();
        assert_eq!(provider.config.api, ApiKind::OpenaiResponses);
        assert!(provider.auth.ready());
        assert!(registry
            .catalog()
            .iter()
            .any(|e| e.model_ref == "openai/gpt-5"));
    }

    #[tokio::test]
    async fn n_above_one_is_refused_before_sending() {
        let registry = ModelRegistry::build(&config(
            r#"{models: {providers: {openai: {apiKey: "${KEY}", params: {n: 2}}}}}"#,
        ))
        .unwrap();
        let request = ModelRequest {
            model_ref: "openai/gpt-5".into(),
            system: None,
            messages: vec![],
            tools: vec![],
            text_sink: None,
        };
        let err = registry.complete(request).await.unwrap_err();
        assert_eq!(err.kind, ModelErrorKind::BadRequest);
        assert!(err.message.contains("params.n is 2"), "{}", err.message);
    }
}
