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
    /// The last reply's text was shown (streamed), so the final answer is too.
    answer_shown: bool,
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
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let TurnEvent::TextDelta { iteration, text } = event {
            let mut out = String::new();
            if !state.open_line {
                out.push_str(&render_event_with(
                    &TurnEvent::FinalAnswer {
                        text: String::new(),
                    },
                    theme,
                ));
                state.open_line = true;
            }
            // Further lines of the reply sit under its first, as in a transcript.
            out.push_str(&text.replace('\n', "\n         "));
            state.streamed = Some(*iteration);
            crate::print_part(&clawhost_agent_core::text::terminal_safe(&out));
            return;
        }
        if std::mem::take(&mut state.open_line) {
            crate::print_line("");
        }
        let line = match event {
            TurnEvent::ModelReply {
                iteration,
                tool_calls,
                usage,
                ..
            } if state.streamed == Some(*iteration) => {
                state.answer_shown = tool_calls.is_empty();
                render_event_with(
                    &TurnEvent::ModelReply {
                        iteration: *iteration,
                        text: String::new(),
                        tool_calls: tool_calls.clone(),
                        usage: *usage,
                    },
                    theme,
                )
            }
            TurnEvent::FinalAnswer { .. } if state.answer_shown => String::new(),
            other => render_event_with(other, theme),
        };
        if !line.is_empty() {
            crate::print_line(&clawhost_agent_core::text::terminal_safe(&line));
        }
    }
}

/// Ends a streamed line left open by a turn that stopped mid-reply.
pub fn end_open_line(events: &EventSink) {
    if matches!(events.snapshot().last(), Some(TurnEvent::TextDelta { .. })) {
        crate::print_line("");
    }
}
