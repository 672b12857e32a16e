//! `before_prompt_build`, merged as OpenClaw's SDK documents it.

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
    /// Run `before_prompt_build` as OpenClaw's SDK documents it: handlers
    /// by descending priority, each seeing the original prompt; context
    /// pieces (`prepend_context`, `append_context`, and the system-context
    /// pair) are joined with a blank line in priority order; the
    /// highest-priority `system_prompt` wins. The result carries the text the
    /// model is sent; the caller stores the user's own text. A failing
    /// handler is skipped, unless its fail policy is `block`.
    pub async fn before_prompt_build(&self, event: BeforePromptBuildEvent) -> BuiltPrompt {
        let mut decisions = Vec::new();
        let mut blocked = None;
        let mut edits: Vec<PromptEdit> = Vec::new();
        for reg in self.handlers(HookKind::BeforePromptBuild) {
            let asked = HookEvent::BeforePromptBuild(&event);
            let error = match reg.handler.handle(asked).await {
                Ok(HookOutcome::BeforePromptBuild(edit)) => {
                    let decision = if edit.is_some() { "edit" } else { "keep" };
                    decisions.push(Self::record(
                        HookKind::BeforePromptBuild,
                        &reg.plugin_id,
                        decision.into(),
                    ));
                    edits.extend(edit);
                    continue;
                }
                other => HookError::unusable(HookKind::BeforePromptBuild, other),
            };
            if let Some(reason) = reg.failure(&error, &mut decisions) {
                blocked = Some(reason);
                break;
            }
        }
        let pieces = |pick: fn(&PromptEdit) -> &Option<String>| -> Option<String> {
            let parts: Vec<&str> = edits
                .iter()
                .filter_map(|e| pick(e).as_deref())
                .filter(|p| !p.trim().is_empty())
                .collect();
            (!parts.is_empty()).then(|| parts.join("\n\n"))
        };
        let system_prompt = edits
            .iter()
            .find_map(|e| e.system_prompt.clone())
            .or(event.system);
        let system = join_present([
            pieces(|e| &e.prepend_system_context),
            system_prompt,
            pieces(|e| &e.append_system_context),
        ]);
        let prompt = join_present([
            pieces(|e| &e.prepend_context),
            Some(event.prompt),
            pieces(|e| &e.append_context),
        ])
        .unwrap_or_default();
        BuiltPrompt {
            system,
            prompt,
            decisions,
            blocked,
        }
    }
}
