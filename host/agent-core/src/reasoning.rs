//! The model's reasoning, as the provider returned it.
//!
//! Reasoning is kept in the transcript exactly as it came, because the
//! providers check it when it is sent back: Anthropic rejects a request that
//! continues a tool call without the `thinking` block (and its signature)
//! that preceded the call, and OpenAI's Responses API continues a reasoning
//! model's thought only from its own `reasoning` items. A block is only ever
//! sent back to the model that produced it: another model (even of the same
//! provider) could not verify a signature or decrypt an encrypted item, and
//! would refuse the request.

use serde::{Deserialize, Serialize};

/// One piece of a reply's reasoning, with the model that produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reasoning {
    /// The model (`provider/model`, as the request named it) that produced
    /// it; it is sent back to that model only.
    pub model_ref: String,
    /// What the provider sent.
    #[serde(flatten)]
    pub block: ReasoningBlock,
}

/// A piece of reasoning as a provider sent it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReasoningBlock {
    /// An Anthropic `thinking` block.
    Thinking {
        /// The (summarized) thinking text.
        thinking: String,
        /// The signature the API verifies when the block is sent back.
        signature: String,
    },
    /// An Anthropic `redacted_thinking` block: encrypted, sent back as is.
    RedactedThinking {
        /// The encrypted thinking.
        data: String,
    },
    /// An OpenAI Responses `reasoning` output item, kept whole: its id,
    /// summary and, with `store: false`, its `encrypted_content`.
    ResponsesItem {
        /// The item as the API sent it.
        item: serde_json::Value,
    },
    /// Reasoning text a Chat Completions provider streamed (DeepSeek's
    /// `reasoning_content`, OpenRouter's `reasoning`): shown and stored,
    /// never sent back (that API has no field for it, and DeepSeek refuses
    /// it in a request).
    Text {
        /// The reasoning text.
        text: String,
    },
}

impl Reasoning {
    /// `block`, produced by `model_ref`.
    pub fn new(model_ref: impl Into<String>, block: ReasoningBlock) -> Self {
        Self {
            model_ref: model_ref.into(),
            block,
        }
    }

    /// The readable reasoning text, if any (for display; never sent).
    pub fn text(&self) -> String {
        match &self.block {
            ReasoningBlock::Thinking { thinking, .. } => thinking.clone(),
            ReasoningBlock::RedactedThinking { .. } => String::new(),
            ReasoningBlock::Text { text } => text.clone(),
            ReasoningBlock::ResponsesItem { item } => ["summary", "content"]
                .iter()
                .flat_map(|key| item[key].as_array().into_iter().flatten())
                .filter_map(|part| part["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}
