//! `before_prompt_build` and `agent_turn_prepare`, merged as OpenClaw's
//! SDK documents them.

use crate::catalog::*;
use crate::runner::{HookDecisionRecord, HookError, HookRunner};

/// The prompt after `before_prompt_build`.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltPrompt {
    /// System prompt the model is sent.
    pub system: Option<String>,
    /// The user message as the model is sent it (with the hooks' context);
    /// what is stored is the user's own text.
    pub prompt: String,
    /// What each handler decided.
    pub decisions: Vec<HookDecisionRecord>,
    /// Set when a handler with fail policy `block` failed: the turn must not go on.
    pub blocked: Option<String>,
}

/// The present, non-empty texts joined with a blank line; `None` if none is.
fn join_present<const N: usize>(texts: [Option<String>; N]) -> Option<String> {
    let parts: Vec<String> = texts
        .into_iter()
        .flatten()
        .filter(|t| !t.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

impl HookRunner {
    /// The edits of `kind`'s handlers, by descending priority, and what
    /// each decided; `Err` when one whose fail policy is `block` failed.
    async fn prompt_edits(
        &self,
        event: HookEvent<'_>,
        decisions: &mut Vec<HookDecisionRecord>,
    ) -> Result<Vec<PromptEdit>, String> {
        let kind = event.kind();
        let mut edits = Vec::new();
        for reg in self.handlers(kind) {
            let answer = match reg.handler.handle(event).await {
                Ok(HookOutcome::BeforePromptBuild(edit)) if kind == HookKind::BeforePromptBuild => {
                    Ok(edit)
                }
                Ok(HookOutcome::AgentTurnPrepare(edit)) if kind == HookKind::AgentTurnPrepare => {
                    Ok(edit)
                }
                other => Err(HookError::unusable(kind, other)),
            };
            let error = match answer {
                Ok(edit) => {
                    let decision = if edit.is_some() { "edit" } else { "keep" };
                    decisions.push(Self::record(kind, &reg.plugin_id, decision.into()));
                    edits.extend(edit);
                    continue;
                }
                Err(error) => error,
            };
            if let Some(reason) = reg.failure(&error, decisions) {
                return Err(reason);
            }
        }
        Ok(edits)
    }

    /// Run `agent_turn_prepare` (before `before_prompt_build`, on any
    /// runtime): each handler sees the user's message; their context pieces
    /// are joined around it with a blank line, in priority order. The
    /// system prompt is not touched (`system` is `None`).
    pub async fn agent_turn_prepare(&self, event: &AgentRunEvent) -> BuiltPrompt {
        let mut decisions = Vec::new();
        let (edits, blocked) = match self
            .prompt_edits(HookEvent::AgentTurnPrepare(event), &mut decisions)
            .await
        {
            Ok(edits) => (edits, None),
            Err(reason) => (Vec::new(), Some(reason)),
        };
        BuiltPrompt {
            system: None,
            prompt: around(&edits, event.prompt.clone()),
            decisions,
            blocked,
        }
    }

    /// Run `before_prompt_build` as OpenClaw's SDK documents it: handlers
    /// by descending priority, each seeing the original prompt; context
    /// pieces (`prepend_context`, `append_context`, and the system-context
    /// pair) are joined with a blank line in priority order; the
    /// highest-priority `system_prompt` wins. The result carries the text the
    /// model is sent; the caller stores the user's own text. A failing
    /// handler is skipped, unless its fail policy is `block`.
    pub async fn before_prompt_build(&self, event: BeforePromptBuildEvent) -> BuiltPrompt {
        let mut decisions = Vec::new();
        let (edits, blocked) = match self
            .prompt_edits(HookEvent::BeforePromptBuild(&event), &mut decisions)
            .await
        {
            Ok(edits) => (edits, None),
            Err(reason) => (Vec::new(), Some(reason)),
        };
        let system_prompt = edits
            .iter()
            .find_map(|e| e.system_prompt.clone())
            .or(event.system);
        let system = join_present([
            pieces(&edits, |e| &e.prepend_system_context),
            system_prompt,
            pieces(&edits, |e| &e.append_system_context),
        ]);
        BuiltPrompt {
            system,
            prompt: around(&edits, event.prompt),
            decisions,
            blocked,
        }
    }
}

/// One field of every edit, the non-blank ones joined with a blank line.
fn pieces(edits: &[PromptEdit], pick: fn(&PromptEdit) -> &Option<String>) -> Option<String> {
    let parts: Vec<&str> = edits
        .iter()
        .filter_map(|e| pick(e).as_deref())
        .filter(|p| !p.trim().is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// `prompt` with the edits' prepended and appended context around it.
fn around(edits: &[PromptEdit], prompt: String) -> String {
    join_present([
        pieces(edits, |e| &e.prepend_context),
        Some(prompt),
        pieces(edits, |e| &e.append_context),
    ])
    .unwrap_or_default()
}
