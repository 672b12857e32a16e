//! Model references: `provider/model`, split at the first `/`.

/// A parsed model reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    /// Provider id.
    pub provider: String,
    /// Model id (may itself contain `/`, e.g. `openrouter/meta-llama/llama-3`).
    pub model: String,
}

/// A text that is not `provider/model`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("model ref `{0}` is not of the form provider/model")]
pub struct BadModelRef(pub String);

impl ModelRef {
    /// Parse `provider/model`.
    pub fn parse(text: &str) -> Result<Self, BadModelRef> {
        match text.split_once('/') {
            Some((p, m)) if !p.trim().is_empty() && !m.trim().is_empty() => Ok(Self {
                provider: p.trim().to_string(),
                model: m.trim().to_string(),
            }),
            _ => Err(BadModelRef(text.into())),
        }
    }
}

impl std::fmt::Display for ModelRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.provider, self.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_the_first_slash() {
        let r = ModelRef::parse("openrouter/meta-llama/llama-3").unwrap();
        assert_eq!(
            (r.provider.as_str(), r.model.as_str()),
            ("openrouter", "meta-llama/llama-3")
        );
        assert!(ModelRef::parse("gpt-4").is_err());
        assert!(ModelRef::parse("/x").is_err());
        assert!(ModelRef::parse("x/").is_err());
    }
}
