//! Human-readable rendering of turn events and plugin reports.

use clawhost_agent_core::TurnEvent;
use clawhost_plugin_runtime::{LoadReport, PluginState, PluginStatus};

fn clip(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', "⏎");
    if one_line.chars().count() > max {
        format!("{}…", one_line.chars().take(max).collect::<String>())
    } else {
        one_line
    }
}

/// One line (or a few) per event.
pub fn render_event(event: &TurnEvent) -> String {
    match event {
        TurnEvent::UserMessage { text } => format!("user   › {text}"),
        TurnEvent::ModelReply {
            iteration,
            text,
            tool_calls,
            ..
        } => {
            let mut lines = Vec::new();
            if !text.is_empty() && !tool_calls.is_empty() {
                lines.push(format!("model  › [{iteration}] {}", clip(text, 200)));
            }
            for call in tool_calls {
                lines.push(format!(
                    "model  › [{iteration}] calls {} {} ({})",
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
                "hook   ›     {hook} [{plugin}] on {call_id}: {}",
                clip(decision, 160)
            )
        }
        TurnEvent::ToolResult {
            call_id,
            tool,
            content,
            is_error,
        } => format!(
            "tool   ›     {tool} ({call_id}) {} {}",
            if *is_error { "✗" } else { "✓" },
            clip(content, 200)
        ),
        TurnEvent::Compaction { tokens_before, compacted, kept, trigger } => format!(
            "compact›     {compacted} messages (~{tokens_before} tokens) summarized, {kept} kept ({trigger})"
        ),
        TurnEvent::FinalAnswer { text } => {
            let mut lines = text.lines();
            let first = lines.next().unwrap_or_default();
            std::iter::once(format!("answer › {first}"))
                .chain(lines.map(|l| format!("         {l}")))
                .collect::<Vec<_>>()
                .join("\n")
        }
    }
}

/// A line for a plugin status.
pub fn render_status(status: &PluginStatus) -> String {
    let mut parts = vec![format!("{} {}", status.id, status.version)];
    match &status.state {
        PluginState::Active => {}
        PluginState::Disabled(reason) => parts.push(format!("DISABLED: {reason}")),
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
    format!("  ✓ {}", parts.join("  ·  "))
}

/// A line for a package that did not load.
pub fn render_refusal(report: &LoadReport) -> Option<String> {
    report.result.as_ref().err().map(|e| format!("  ✗ {e}"))
}
