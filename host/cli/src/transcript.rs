//! Human-readable rendering of turn events and plugin reports.

use clawhost_agent_core::{Message, StopReason, TurnEvent};
use clawhost_plugin_runtime::{LoadReport, PluginState, PluginStatus};
use clawhost_sessions::{Entry, EntryBody};

fn clip(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', "⏎");
    if one_line.chars().count() > max {
        format!("{}…", one_line.chars().take(max).collect::<String>())
    } else {
        one_line
    }
}

/// Labels of the transcript lines, from a resource package theme
/// (`{"labels": {"user": "you", "answer": "bot", ...}}`).
#[derive(Debug, Clone, Default)]
pub struct Theme {
    labels: std::collections::BTreeMap<String, String>,
}

impl Theme {
    /// A theme from its JSON; unknown keys are ignored.
    pub fn from_json(value: &serde_json::Value) -> Self {
        let labels = value["labels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        Self { labels }
    }

    fn label(&self, key: &str) -> String {
        let text = self.labels.get(key).map(String::as_str).unwrap_or(key);
        format!("{text:<7}›")
    }
}

/// `text` after `label`, its further lines indented under the first.
fn labelled(label: &str, text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    std::iter::once(format!("{label} {first}"))
        .chain(lines.map(|line| format!("         {line}")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What to tell the reader about an answer that did not simply end: cut
/// off, refused, or stopped by the provider.
pub fn stop_note(reason: StopReason) -> Option<&'static str> {
    match reason {
        StopReason::EndTurn | StopReason::ToolUse => None,
        StopReason::MaxTokens => Some(
            "cut off at the model's output token limit (raise its maxTokens, or set agents.defaults.onMaxTokens to \"continue\")",
        ),
        StopReason::Refusal => Some("the model declined to answer: this is a refusal"),
        StopReason::Other => Some("the provider stopped the reply (a content filter or another reason)"),
    }
}

/// The note line after an answer that stopped for `reason`, or nothing.
pub fn render_stop_note(reason: StopReason, theme: &Theme) -> String {
    stop_note(reason)
        .map(|note| labelled(&theme.label("note"), note))
        .unwrap_or_default()
}

/// A line of a reply's readable reasoning, if it has some.
fn reasoning_line(label: &str, reasoning: &[clawhost_agent_core::Reasoning]) -> Option<String> {
    let text: Vec<String> = reasoning.iter().map(|r| r.text()).collect();
    let text = text.join(" ");
    let text = text.trim();
    (!text.is_empty()).then(|| format!("{label} (thinking) {}", clip(text, 200)))
}

/// One line (or a few) per event, with the default labels.
pub fn render_event(event: &TurnEvent) -> String {
    render_event_with(event, &Theme::default())
}

/// One line (or a few) per event, with a theme's labels.
pub fn render_event_with(event: &TurnEvent, theme: &Theme) -> String {
    let l = |key: &str| theme.label(key);
    match event {
        TurnEvent::UserMessage { text, images } => {
            format!("{} {text}{}", l("user"), clawhost_agent_core::images_note(images))
        }
        TurnEvent::ModelReply {
            iteration,
            text,
            tool_calls,
            reasoning,
            ..
        } => {
            let mut lines = Vec::new();
            lines.extend(reasoning_line(&l("model"), reasoning));
            if !text.is_empty() && !tool_calls.is_empty() {
                lines.push(format!("{} [{iteration}] {}", l("model"), clip(text, 200)));
            }
            for call in tool_calls {
                lines.push(format!(
                    "{} [{iteration}] calls {} {} ({})",
                    l("model"),
                    call.name,
                    clip(&call.arguments.to_string(), 120),
                    call.id
                ));
            }
            lines.join("\n")
        }
        TurnEvent::HookDecision {
            hook,
            plugin,
            call_id,
            decision,
        } => {
            format!(
                "{}     {hook} [{plugin}] on {call_id}: {}",
                l("hook"),
                clip(decision, 160)
            )
        }
        TurnEvent::Approval {
            plugin,
            call_id,
            tool,
            title,
            decision,
        } => format!(
            "{} approval [{plugin}] for {tool} ({call_id}): {} → {decision}",
            l("ask"),
            clip(title, 120)
        ),
        TurnEvent::ToolResult {
            call_id,
            tool,
            content,
            is_error,
            images,
        } => format!(
            "{}     {tool} ({call_id}) {} {}{}",
            l("tool"),
            if *is_error { "✗" } else { "✓" },
            clip(content, 200),
            clawhost_agent_core::images_note(images)
        ),
        TurnEvent::Compaction { tokens_before, compacted, kept, trigger } => format!(
            "{}     {compacted} messages (~{tokens_before} tokens) summarized, {kept} kept ({trigger})",
            l("compact")
        ),
        TurnEvent::NativeCompaction { phase } => format!(
            "{}     the runtime {} compacting its own context (its summary stays in its thread; every message is kept here)",
            l("compact"),
            match phase {
                clawhost_agent_core::NativeCompaction::Started => "started",
                clawhost_agent_core::NativeCompaction::Completed => "finished",
            }
        ),
        TurnEvent::TextDelta { text, .. } => text.clone(),
        TurnEvent::NativeThread { thread, agent } => {
            format!("{}     {agent}: thread {thread}", l("runtime"))
        }
        TurnEvent::FinalAnswer { text, stop_reason } => match stop_note(*stop_reason) {
            None => labelled(&l("answer"), text),
            Some(_) => format!(
                "{}\n{}",
                labelled(&l("answer"), text),
                render_stop_note(*stop_reason, theme)
            ),
        },
    }
}

/// The lines of one stored session entry, labelled like a live turn.
pub fn render_entry(entry: &Entry) -> String {
    let theme = Theme::default();
    let l = |key: &str| theme.label(key);
    match &entry.body {
        EntryBody::Compaction {
            summary,
            tokens_before,
            ..
        } => format!(
            "{}     earlier context (~{tokens_before} tokens) summarized: {}",
            l("compact"),
            clip(summary, 400)
        ),
        EntryBody::Runtime { runtime, reason } => {
            format!("{}     runtime {runtime} ({reason})", l("session"))
        }
        EntryBody::Custom { custom_type, .. } => {
            format!("{}     custom entry `{custom_type}`", l("session"))
        }
        body => match body.message() {
            Some(Message::User { text, images }) => {
                format!(
                    "{} {text}{}",
                    l("user"),
                    clawhost_agent_core::images_note(images)
                )
            }
            Some(Message::Assistant {
                text,
                tool_calls,
                reasoning,
            }) => {
                let mut lines = Vec::new();
                lines.extend(reasoning_line(&l("model"), reasoning));
                if !text.is_empty() {
                    lines.push(labelled(&l("model"), text));
                }
                for call in tool_calls {
                    lines.push(format!(
                        "{} calls {} {} ({})",
                        l("model"),
                        call.name,
                        clip(&call.arguments.to_string(), 200),
                        call.id
                    ));
                }
                lines.join("\n")
            }
            Some(Message::ToolResult(r)) => format!(
                "{}     {} ({}) {} {}{}",
                l("tool"),
                r.tool,
                r.call_id,
                if r.is_error { "✗" } else { "✓" },
                clip(&r.content, 400),
                clawhost_agent_core::images_note(&r.images)
            ),
            None => String::new(),
        },
    }
}

/// A line for a plugin status.
pub fn render_status(status: &PluginStatus) -> String {
    let mut parts = vec![format!(
        "{} {} (plugin API {})",
        status.id, status.version, status.api
    )];
    match &status.state {
        PluginState::Active => {}
        PluginState::Quarantined {
            reason,
            retry_in_ms,
        } => parts.push(format!(
            "QUARANTINED: {reason}; retried in {} s",
            retry_in_ms.div_ceil(1000)
        )),
    }
    if !status.tools.is_empty() {
        parts.push(format!("tools: {}", status.tools.join(", ")));
    }
    if !status.hooks.is_empty() {
        let hooks: Vec<String> = status
            .hooks
            .iter()
            .map(|(h, p)| format!("{h}@{p}"))
            .collect();
        parts.push(format!("hooks: {}", hooks.join(", ")));
    }
    if !status.withheld.is_empty() {
        let withheld: Vec<String> = status
            .withheld
            .iter()
            .map(|(h, setting)| format!("{h} (needs {setting})"))
            .collect();
        parts.push(format!("withheld: {}", withheld.join(", ")));
    }
    if !status.harnesses.is_empty() {
        parts.push(format!("harnesses: {}", status.harnesses.join(", ")));
    }
    let mut grants: Vec<String> = status
        .grants
        .dirs
        .iter()
        .map(|d| format!("{} ({:?})", d.guest_path, d.access))
        .collect();
    grants.extend(status.grants.env.iter().map(|(k, _)| format!("env {k}")));
    parts.push(if grants.is_empty() {
        "grants: none".into()
    } else {
        format!("grants: {}", grants.join(", "))
    });
    let mark = match status.state {
        PluginState::Active => '✓',
        PluginState::Quarantined { .. } => '⚠',
    };
    let mut line = format!("  {mark} {}", parts.join("  ·  "));
    for unasked in &status.grants.unasked {
        line.push_str(&format!("\n    ⚠ {unasked}"));
    }
    line
}

/// A line for a package that did not load.
pub fn render_refusal(report: &LoadReport) -> Option<String> {
    report.result.as_ref().err().map(|e| format!("  ✗ {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_theme_relabels_lines_and_keeps_defaults_for_the_rest() {
        let theme =
            Theme::from_json(&serde_json::json!({"labels": {"user": "you", "answer": "bot"}}));
        let user = TurnEvent::UserMessage {
            text: "hi".into(),
            images: Vec::new(),
        };
        assert_eq!(render_event_with(&user, &theme), "you    › hi");
        assert_eq!(render_event(&user), "user   › hi");
        let answer = TurnEvent::FinalAnswer {
            text: "a\nb".into(),
            stop_reason: StopReason::EndTurn,
        };
        assert_eq!(render_event_with(&answer, &theme), "bot    › a\n         b");
        let tool = TurnEvent::ToolResult {
            call_id: "c".into(),
            tool: "t".into(),
            content: "x".into(),
            is_error: true,
            images: Vec::new(),
        };
        assert_eq!(render_event_with(&tool, &theme), "tool   ›     t (c) ✗ x");
    }
}
