//! What a plugin harness cannot carry, kept on the host's side.
//!
//! A plugin harness sees messages through its API version's types, which
//! have no images and no provider reasoning: those stay with the host, and
//! the messages a harness hands back for a model call get them again, matched
//! by what the harness does carry (a user message's text, a tool result's
//! call id, a reply's tool call ids or text). So a plugin harness cannot read
//! or forge a thinking signature, yet Anthropic still gets its thinking
//! blocks back after a tool call.

use std::collections::HashMap;

use crate::{Image, Message, Reasoning};

/// The images and reasoning of the messages a turn knows, by their keys.
/// Only messages that have some are indexed.
#[derive(Debug, Default)]
pub(crate) struct Restorer {
    user_images: HashMap<String, Vec<Image>>,
    result_images: HashMap<String, Vec<Image>>,
    reasoning: HashMap<String, Vec<Reasoning>>,
}

/// The key of a reply: its first tool call's id, else its text.
fn reply_key(text: &str, calls: &[crate::ToolCallRequest]) -> String {
    match calls.first() {
        Some(call) => format!("call:{}", call.id),
        None => format!("text:{text}"),
    }
}

impl Restorer {
    /// Remember what `message` carries beyond the harness's view.
    pub(crate) fn learn(&mut self, message: &Message) {
        match message {
            Message::User { text, images } if !images.is_empty() => {
                self.user_images.insert(text.clone(), images.clone());
            }
            Message::ToolResult(r) if !r.images.is_empty() => {
                self.result_images
                    .insert(r.call_id.clone(), r.images.clone());
            }
            Message::Assistant {
                text,
                tool_calls,
                reasoning,
            } if !reasoning.is_empty() => {
                self.reasoning
                    .insert(reply_key(text, tool_calls), reasoning.clone());
            }
            _ => {}
        }
    }

    /// Remember the images of the user's message under the text the
    /// harness was given for it (the prompt with hook context).
    pub(crate) fn learn_prompt(&mut self, prompt: &str, images: &[Image]) {
        if !images.is_empty() {
            self.user_images.insert(prompt.to_string(), images.to_vec());
        }
    }

    /// Give `messages` back what the harness could not carry.
    pub(crate) fn restore(&self, messages: &mut [Message]) {
        for m in messages {
            match m {
                Message::User { text, images } if images.is_empty() => {
                    if let Some(known) = self.user_images.get(text.as_str()) {
                        images.clone_from(known);
                    }
                }
                Message::ToolResult(r) if r.images.is_empty() => {
                    if let Some(known) = self.result_images.get(&r.call_id) {
                        r.images.clone_from(known);
                    }
                }
                Message::Assistant {
                    text,
                    tool_calls,
                    reasoning,
                } if reasoning.is_empty() => {
                    if let Some(known) = self.reasoning.get(&reply_key(text, tool_calls)) {
                        reasoning.clone_from(known);
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolCallRequest;

    #[test]
    fn what_a_harness_dropped_comes_back_by_key() {
        let call = ToolCallRequest {
            id: "c1".into(),
            name: "t".into(),
            arguments: serde_json::json!({}),
        };
        let thinking = Reasoning::new(
            "claude/m",
            crate::ReasoningBlock::Thinking {
                thinking: "hmm".into(),
                signature: "sig".into(),
            },
        );
        let image = Image::Url {
            url: "https://example.com/a.png".into(),
        };
        let mut r = Restorer::default();
        r.learn(&Message::Assistant {
            text: String::new(),
            tool_calls: vec![call.clone()],
            reasoning: vec![thinking.clone()],
        });
        r.learn_prompt("look [context]", std::slice::from_ref(&image));
        let mut seen = vec![
            Message::user("look [context]"),
            Message::tool_calls(vec![call]),
            Message::user("other"),
        ];
        r.restore(&mut seen);
        assert!(matches!(&seen[0], Message::User { images, .. } if images == &[image]));
        assert!(
            matches!(&seen[1], Message::Assistant { reasoning, .. } if reasoning == &[thinking])
        );
        assert_eq!(seen[2], Message::user("other"));
    }
}
