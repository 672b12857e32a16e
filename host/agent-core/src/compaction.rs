//! Compaction helpers (where to cut a long history, never between a tool call
//! and its results) and in-memory context pruning of old, oversized tool results.

use crate::{CountTokens, Message, SharedMessage};

/// Tokens counted for one image: about what the providers charge for a
/// large one (Anthropic ≈ width × height / 750, at most ≈ 1,600).
pub const IMAGE_TOKENS: u64 = 1_600;

/// Estimated tokens of a message (≈ 4 bytes per token of its JSON; an image
/// counts [`IMAGE_TOKENS`], not its base64 length).
pub fn message_tokens(message: &Message) -> u64 {
    let images: &[crate::Image] = match message {
        Message::User { images, .. } => images,
        Message::ToolResult(r) => &r.images,
        Message::Assistant { .. } => &[],
    };
    let image_bytes: usize = images.iter().map(crate::Image::stored_len).sum();
    // Counted as written, never built: this runs over the whole history
    // every turn.
    let mut counter = ByteCount(0);
    let bytes = match serde_json::to_writer(&mut counter, message) {
        Ok(()) => counter.0,
        Err(_) => 0,
    };
    (bytes.saturating_sub(image_bytes) as u64).div_ceil(4) + IMAGE_TOKENS * images.len() as u64
}

/// A writer that only counts the bytes written to it.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Estimated tokens of a conversation (a shared message's estimate is
/// computed once).
pub fn estimate_tokens<M: CountTokens>(messages: &[M]) -> u64 {
    messages.iter().map(CountTokens::count_tokens).sum()
}

/// Where to cut `messages` so that about `keep_recent_tokens` of the most
/// recent ones are kept verbatim: the index of the first kept message, or
/// `None` when nothing would be summarized. The cut never falls between an
/// assistant message that calls tools and the results of those calls, and
/// at least the last message is always kept.
pub fn plan_cut<M: CountTokens>(messages: &[M], keep_recent_tokens: u64) -> Option<usize> {
    if messages.len() < 2 {
        return None;
    }
    let mut kept = 0u64;
    let mut cut = messages.len() - 1;
    kept += messages[cut].count_tokens();
    while cut > 0 && kept < keep_recent_tokens {
        cut -= 1;
        kept += messages[cut].count_tokens();
    }
    // A kept tool result needs its call: move the cut back to the assistant
    // message that made the calls.
    while cut > 0 && matches!(messages[cut].borrow(), Message::ToolResult(_)) {
        cut -= 1;
    }
    (cut > 0).then_some(cut)
}

/// Pruning of old tool results, in memory only (the transcript keeps them):
/// oversized text is trimmed and images are dropped for a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pruning {
    /// Tool results longer than this (in characters) are trimmed.
    pub max_tool_result_chars: usize,
    /// Characters kept from the start of a trimmed result.
    pub head_chars: usize,
    /// Characters kept from the end of a trimmed result.
    pub tail_chars: usize,
    /// Tool results after this many of the latest assistant messages are never trimmed.
    pub protect_recent_assistant_turns: usize,
}

impl Default for Pruning {
    fn default() -> Self {
        Self {
            max_tool_result_chars: 8_000,
            head_chars: 2_000,
            tail_chars: 1_000,
            protect_recent_assistant_turns: 3,
        }
    }
}

impl Pruning {
    /// `messages` with old oversized tool results trimmed to head + tail
    /// (new messages); the others are shared.
    pub fn apply(&self, messages: &[SharedMessage]) -> Vec<SharedMessage> {
        self.apply_split(messages, &[])
    }

    /// [`Pruning::apply`] to `earlier` followed by `later` (the history is
    /// not joined to the turn's messages first).
    pub fn apply_split(
        &self,
        earlier: &[SharedMessage],
        later: &[SharedMessage],
    ) -> Vec<SharedMessage> {
        let all = || earlier.iter().chain(later);
        let mut assistants_seen = 0;
        let mut protect_from = None;
        for (back, m) in all().rev().enumerate() {
            if matches!(**m, Message::Assistant { .. }) {
                assistants_seen += 1;
                if assistants_seen == self.protect_recent_assistant_turns {
                    protect_from = Some(earlier.len() + later.len() - 1 - back);
                    break;
                }
            }
        }
        let Some(protect_from) = protect_from else {
            return all().cloned().collect();
        };
        // More bytes than the limit is needed for more characters: most
        // results are ruled out without counting characters.
        let oversized = |text: &str| {
            text.len() > self.max_tool_result_chars
                && text.chars().count() > self.max_tool_result_chars
        };
        all()
            .enumerate()
            .map(|(i, m)| match &**m {
                Message::ToolResult(r)
                    if i < protect_from && (!r.images.is_empty() || oversized(&r.content)) =>
                {
                    let mut r = r.clone();
                    if oversized(&r.content) {
                        let chars: Vec<char> = r.content.chars().collect();
                        let head: String =
                            chars[..self.head_chars.min(chars.len())].iter().collect();
                        let tail: String = chars[chars.len().saturating_sub(self.tail_chars)..]
                            .iter()
                            .collect();
                        let dropped = chars.len() - head.chars().count() - tail.chars().count();
                        r.content = format!("{head}\n[… {dropped} characters pruned …]\n{tail}");
                    }
                    if !r.images.is_empty() {
                        r.content
                            .push_str(&format!("\n[{} image(s) pruned]", r.images.len()));
                        r.images.clear();
                    }
                    SharedMessage::from(Message::ToolResult(r))
                }
                _ => m.clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ToolCallRequest, ToolResultMessage};

    fn call(id: &str) -> Message {
        Message::tool_calls(vec![ToolCallRequest {
            id: id.into(),
            name: "t".into(),
            arguments: serde_json::json!({}),
        }])
    }

    fn result(id: &str, content: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            call_id: id.into(),
            tool: "t".into(),
            content: content.into(),
            is_error: false,
            images: Vec::new(),
        })
    }

    #[test]
    fn the_cut_moves_back_over_tool_results() {
        let msgs = vec![
            Message::user("a".repeat(400)),
            call("c1"),
            result("c1", &"x".repeat(400)),
            Message::assistant("done"),
        ];
        assert_eq!(plan_cut(&msgs, 5), Some(3));
        // Keeping a little more would start at the tool result; the cut moves to its call.
        assert_eq!(plan_cut(&msgs, 10), Some(1));
        assert_eq!(plan_cut(&msgs, 100_000), None);
    }

    #[test]
    fn pruning_trims_old_results_and_protects_recent_turns() {
        let big = "y".repeat(100);
        let msgs = vec![
            Message::user("q"),
            call("c1"),
            result("c1", &big),
            Message::assistant("a1"),
            call("c2"),
            result("c2", &big),
            Message::assistant("a2"),
        ]
        .into_iter()
        .map(SharedMessage::from)
        .collect::<Vec<_>>();
        let p = Pruning {
            max_tool_result_chars: 50,
            head_chars: 5,
            tail_chars: 5,
            protect_recent_assistant_turns: 2,
        };
        let out = p.apply(&msgs);
        let Message::ToolResult(old) = &*out[2] else {
            panic!()
        };
        assert!(
            old.content.starts_with("yyyyy\n[… 90 characters pruned …]"),
            "{}",
            old.content
        );
        assert!(
            SharedMessage::ptr_eq(&out[5], &msgs[5]),
            "results after the protected turns stay whole, and shared"
        );
        assert_eq!(
            p.apply(&msgs[..3]),
            msgs[..3].to_vec(),
            "too few turns: nothing pruned"
        );
    }

    #[test]
    fn images_count_as_image_tokens_and_old_ones_are_pruned() {
        let png = crate::Image::from_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
        let huge = crate::Image::Base64 {
            media_type: "image/png".into(),
            data: "A".repeat(1_000_000),
        };
        let with_image = |image: crate::Image| {
            Message::ToolResult(ToolResultMessage {
                images: vec![image],
                ..match result("c1", "shot") {
                    Message::ToolResult(r) => r,
                    other => panic!("result() built {other:?}"),
                }
            })
        };
        let small = message_tokens(&with_image(png.clone()));
        assert_eq!(
            small,
            message_tokens(&with_image(huge)),
            "size of the base64 does not count"
        );
        assert!(
            (IMAGE_TOKENS..IMAGE_TOKENS + 100).contains(&small),
            "{small}"
        );
        let msgs = vec![
            call("c1"),
            with_image(png),
            Message::assistant("a1"),
            Message::assistant("a2"),
        ]
        .into_iter()
        .map(SharedMessage::from)
        .collect::<Vec<_>>();
        let p = Pruning {
            protect_recent_assistant_turns: 2,
            ..Pruning::default()
        };
        let Message::ToolResult(old) = &*p.apply(&msgs)[1] else {
            panic!()
        };
        assert!(old.images.is_empty());
        assert_eq!(old.content, "shot\n[1 image(s) pruned]");
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;
    use crate::{ToolCallRequest, ToolResultMessage};

    /// A random but well-formed transcript: user messages, answers, and
    /// assistant messages calling 1–3 tools followed by their results.
    fn transcript() -> impl Strategy<Value = Vec<Message>> {
        let block = prop_oneof![
            (1usize..200).prop_map(|n| vec![Message::user("u".repeat(n))]),
            (1usize..200).prop_map(|n| vec![Message::assistant("a".repeat(n))]),
            (1usize..4, 1usize..300).prop_map(|(calls, n)| {
                let ids: Vec<String> = (0..calls).map(|i| format!("c{i}-{n}")).collect();
                let mut out = vec![Message::tool_calls(
                    ids.iter()
                        .map(|id| ToolCallRequest {
                            id: id.clone(),
                            name: "t".into(),
                            arguments: serde_json::json!({}),
                        })
                        .collect(),
                )];
                out.extend(ids.iter().map(|id| {
                    Message::ToolResult(ToolResultMessage {
                        call_id: id.clone(),
                        tool: "t".into(),
                        content: "r".repeat(n),
                        is_error: false,
                        images: Vec::new(),
                    })
                }));
                out
            }),
        ];
        proptest::collection::vec(block, 1..30).prop_map(|blocks| {
            // Make call ids unique across the transcript.
            let mut msgs = blocks.concat();
            let mut next = 0;
            let mut last_ids: Vec<String> = Vec::new();
            for m in &mut msgs {
                match m {
                    Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                        last_ids.clear();
                        for c in tool_calls.iter_mut() {
                            next += 1;
                            c.id = format!("call{next}");
                            last_ids.push(c.id.clone());
                        }
                    }
                    Message::ToolResult(r) => r.call_id = last_ids.remove(0),
                    _ => {}
                }
            }
            msgs
        })
    }

    proptest! {
        #[test]
        fn a_cut_never_separates_a_tool_call_from_its_results(msgs in transcript(), keep in 0u64..2000) {
            if let Some(cut) = plan_cut(&msgs, keep) {
                prop_assert!(cut > 0 && cut < msgs.len());
                let called_before: Vec<&str> = msgs[..cut].iter().flat_map(|m| match m {
                    Message::Assistant { tool_calls, .. } => tool_calls.iter().map(|c| c.id.as_str()).collect(),
                    _ => vec![],
                }).collect();
                let answered_after: Vec<&str> = msgs[cut..].iter().filter_map(|m| match m {
                    Message::ToolResult(r) => Some(r.call_id.as_str()),
                    _ => None,
                }).collect();
                for id in answered_after {
                    prop_assert!(!called_before.contains(&id), "result {id} kept but its call summarized (cut {cut})");
                }
                prop_assert!(!matches!(msgs[cut], Message::ToolResult(_)));
            }
        }
    }
}
