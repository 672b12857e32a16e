//! A turn shown as it happens: reply text as it streams, then tool calls,
//! hook decisions and approvals on lines of their own; or every event as a
//! JSON line (`run --json`).

use std::sync::{Arc, Mutex};

use clawhost_agent_core::{EventSink, TurnEvent};

use crate::transcript::{render_event_with, Theme};

/// How a live turn is printed.
#[derive(Debug, Clone)]
pub enum Format {
    /// Transcript lines with a theme's labels; reply text streams.
    Text(Theme),
    /// One JSON object per event (`{"event": "text_delta", ...}`).
    Json,
}

#[derive(Debug, Default)]
struct State {
    /// A streamed reply's line is open (no newline written yet).
    open_line: bool,
    /// The iteration whose text was streamed, if the latest was.
    streamed: Option<u32>,
    /// The text streamed for that iteration.
    streamed_text: String,
    /// The text of the last reply shown as it streamed (a final answer equal
    /// to it is not printed again; a harness's own answer is).
    shown_answer: Option<String>,
}

/// Prints one turn's events as they come.
#[derive(Debug)]
pub struct LivePrinter {
    format: Format,
    state: Mutex<State>,
}

impl LivePrinter {
    /// An event sink printing in `format`.
    pub fn sink(format: Format) -> EventSink {
        let printer = Arc::new(Self {
            format,
            state: Mutex::default(),
        });
        EventSink::with_listener(move |event| printer.show(event))
    }

    fn show(&self, event: &TurnEvent) {
        let theme = match &self.format {
            Format::Json => {
                if let Ok(line) = serde_json::to_string(event) {
                    crate::print_line(&line);
                }
                return;
            }
            Format::Text(theme) => theme,
        };
        let mut state = clawhost_agent_core::lock(&self.state);
        let out = render(&mut state, event, theme);
        crate::print_part(&clawhost_agent_core::text::terminal_safe(&out));
    }
}

/// What to print for `event`, given what was printed before (`state`):
/// streamed text goes on its open line; anything else ends that line and
/// takes lines of its own.
fn render(state: &mut State, event: &TurnEvent, theme: &Theme) -> String {
    let mut out = String::new();
    if let TurnEvent::TextDelta { iteration, text } = event {
        if !state.open_line {
            out.push_str(&render_event_with(
                &TurnEvent::FinalAnswer {
                    text: String::new(),
                    stop_reason: clawhost_agent_core::StopReason::EndTurn,
                },
                theme,
            ));
            state.open_line = true;
        }
        // Further lines of the reply sit under its first, as in a transcript.
        out.push_str(&text.replace('\n', "\n         "));
        if state.streamed != Some(*iteration) {
            state.streamed_text.clear();
        }
        state.streamed = Some(*iteration);
        state.streamed_text.push_str(text);
        return out;
    }
    if std::mem::take(&mut state.open_line) {
        out.push('\n');
    }
    let line = match event {
        TurnEvent::ModelReply {
            iteration,
            tool_calls,
            usage,
            reasoning,
            ..
        } if state.streamed == Some(*iteration) => {
            state.shown_answer = tool_calls
                .is_empty()
                .then(|| std::mem::take(&mut state.streamed_text));
            render_event_with(
                &TurnEvent::ModelReply {
                    iteration: *iteration,
                    text: String::new(),
                    tool_calls: tool_calls.clone(),
                    usage: *usage,
                    reasoning: reasoning.clone(),
                },
                theme,
            )
        }
        // Streamed already: only a note on how it stopped, if any.
        TurnEvent::FinalAnswer { text, stop_reason }
            if state.shown_answer.as_deref() == Some(text) =>
        {
            crate::transcript::render_stop_note(*stop_reason, theme)
        }
        other => render_event_with(other, theme),
    };
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Ends a streamed line left open by a turn that stopped mid-reply.
pub fn end_open_line(events: &EventSink) {
    if matches!(events.snapshot().last(), Some(TurnEvent::TextDelta { .. })) {
        crate::print_line("");
    }
}

#[cfg(test)]
mod tests {
    use clawhost_agent_core::Usage;

    use super::*;

    fn printed(events: &[TurnEvent]) -> String {
        let mut state = State::default();
        events
            .iter()
            .map(|e| render(&mut state, e, &Theme::default()))
            .collect()
    }

    fn reply(text: &str) -> Vec<TurnEvent> {
        vec![
            TurnEvent::TextDelta {
                iteration: 1,
                text: "all ".into(),
            },
            TurnEvent::TextDelta {
                iteration: 1,
                text: "done".into(),
            },
            TurnEvent::ModelReply {
                iteration: 1,
                text: "all done".into(),
                tool_calls: Vec::new(),
                usage: Usage::default(),
                reasoning: Vec::new(),
            },
            TurnEvent::FinalAnswer {
                text: text.into(),
                stop_reason: clawhost_agent_core::StopReason::EndTurn,
            },
        ]
    }

    #[test]
    fn a_streamed_answer_is_printed_once() {
        assert_eq!(printed(&reply("all done")), "answer › all done\n");
    }

    #[test]
    fn a_cut_off_streamed_answer_is_printed_once_then_marked() {
        let mut events = reply("all done");
        if let Some(TurnEvent::FinalAnswer { stop_reason, .. }) = events.last_mut() {
            *stop_reason = clawhost_agent_core::StopReason::MaxTokens;
        }
        let out = printed(&events);
        assert!(
            out.starts_with(
                "answer › all done\nnote   › cut off at the model's output token limit"
            ),
            "{out}"
        );
        assert_eq!(out.matches("all done").count(), 1, "{out}");
    }

    #[test]
    fn a_harness_answer_other_than_the_streamed_text_is_printed_too() {
        let out = printed(&reply("the plan is done"));
        assert_eq!(out, "answer › all done\nanswer › the plan is done\n");
    }
}
