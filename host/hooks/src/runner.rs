//! Runs the handlers subscribed to a hook, in order, with the fail policy.

use std::sync::Arc;

use async_trait::async_trait;
use clawhost_agent_core::{ApprovalRequest, ToolError};
use serde_json::Value;

use crate::catalog::*;
pub use clawhost_config::FailPolicy;

/// Why a handler gave no usable answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HookError {
    /// The handler trapped, timed out or is disabled.
    #[error("{0}")]
    Failed(String),
    /// The handler answered a different hook than it was asked.
    #[error("answered {answered} to a {asked} event")]
    WrongOutcome {
        /// The hook asked.
        asked: HookKind,
        /// The hook it answered.
        answered: HookKind,
    },
}

impl HookError {
    /// Why `answer` to a `asked` event is unusable: its own error, or the
    /// outcome of another hook. Call it only for answers that did not fit.
    pub(crate) fn unusable(asked: HookKind, answer: Result<HookOutcome, HookError>) -> Self {
        match answer {
            Err(e) => e,
            Ok(o) => HookError::WrongOutcome {
                asked,
                answered: o.kind(),
            },
        }
    }
}

/// Something that handles hook events: a plugin, or a host-side handler.
#[async_trait]
pub trait HookHandler: Send + Sync {
    /// Handle one event.
    async fn handle(&self, event: HookEvent<'_>) -> Result<HookOutcome, HookError>;

    /// Tell the handler how the approval its `before_tool_call` asked for
    /// was answered (OpenClaw's `onResolution`); by default there is no one to tell.
    async fn approval_resolved(&self, event: &ApprovalResolvedEvent) -> Result<(), HookError> {
        let _ = event;
        Ok(())
    }
}

/// One handler subscribed to one hook.
#[derive(Clone)]
pub struct HookRegistration {
    /// Owner (plugin id).
    pub plugin_id: String,
    /// The hook.
    pub kind: HookKind,
    /// Higher runs first.
    pub priority: i32,
    /// What a failure of this handler does.
    pub fail_policy: FailPolicy,
    /// For tool hooks: the tools whose calls it receives (`None`: all).
    pub tools: Option<ToolMatcher>,
    /// The handler.
    pub handler: Arc<dyn HookHandler>,
}

/// A tool pattern of a hook subscription that is not a valid glob.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("tool pattern `{pattern}` is not a valid glob: {error}")]
pub struct BadToolPattern {
    /// The pattern.
    pub pattern: String,
    /// Why.
    pub error: globset::Error,
}

/// The tools a tool hook subscribed to: names or globs, without regard to ASCII case.
#[derive(Clone, Debug)]
pub struct ToolMatcher {
    patterns: Vec<String>,
    set: globset::GlobSet,
}

impl ToolMatcher {
    /// A matcher for these names or globs; `None` when the list is empty
    /// (every tool). `Err` names the pattern that is not a valid glob.
    pub fn new(patterns: &[String]) -> Result<Option<Self>, BadToolPattern> {
        if patterns.is_empty() {
            return Ok(None);
        }
        let mut set = globset::GlobSetBuilder::new();
        for p in patterns {
            let glob = globset::GlobBuilder::new(p)
                .case_insensitive(true)
                .literal_separator(false)
                .build()
                .map_err(|error| BadToolPattern {
                    pattern: p.clone(),
                    error,
                })?;
            set.add(glob);
        }
        let set = set.build().map_err(|error| BadToolPattern {
            pattern: patterns.join(", "),
            error,
        })?;
        Ok(Some(Self {
            patterns: patterns.to_vec(),
            set,
        }))
    }

    /// Whether calls of `tool` are received.
    pub fn matches(&self, tool: &str) -> bool {
        self.set.is_match(tool)
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

impl HookRegistration {
    /// A registration with the default fail policy of its hook.
    pub fn new(
        plugin_id: impl Into<String>,
        kind: HookKind,
        priority: i32,
        handler: Arc<dyn HookHandler>,
    ) -> Self {
        Self {
            plugin_id: plugin_id.into(),
            kind,
            priority,
            fail_policy: kind.default_fail_policy(),
            tools: None,
            handler,
        }
    }

    /// The same registration, receiving only calls of the tools `tools` matches.
    pub fn with_tools(mut self, tools: Option<ToolMatcher>) -> Self {
        self.tools = tools;
        self
    }

    /// Whether this handler receives a call of `tool`.
    pub fn receives(&self, tool: &str) -> bool {
        self.tools.as_ref().is_none_or(|m| m.matches(tool))
    }

    /// The same registration with another fail policy.
    pub fn with_fail_policy(mut self, policy: FailPolicy) -> Self {
        self.fail_policy = policy;
        self
    }

    /// Record a failure of this handler in `decisions`; the reason it
    /// blocks, if its policy is `block`.
    pub(crate) fn failure(
        &self,
        error: &HookError,
        decisions: &mut Vec<HookDecisionRecord>,
    ) -> Option<String> {
        decisions.push(HookRunner::record(
            self.kind,
            &self.plugin_id,
            failed(error, self.fail_policy),
        ));
        self.blocks(error)
    }

    /// The reason a failure of this handler blocks, if its policy is `block`.
    pub(crate) fn blocks(&self, error: &dyn std::fmt::Display) -> Option<String> {
        (self.fail_policy == FailPolicy::Block).then(|| {
            format!(
                "{} hook of plugin `{}` failed ({error}); its fail policy is block",
                self.kind.name(),
                self.plugin_id
            )
        })
    }
}

/// How a failed handler's decision is recorded.
pub(crate) fn failed(error: &dyn std::fmt::Display, policy: FailPolicy) -> String {
    match policy {
        FailPolicy::Block => format!("failed: {error}"),
        FailPolicy::Ignore => format!("failed: {error}; ignored"),
    }
}

/// What one handler decided, for transcripts and status.
#[derive(Debug, Clone, PartialEq)]
pub struct HookDecisionRecord {
    /// Hook.
    pub hook: HookKind,
    /// Plugin id.
    pub plugin_id: String,
    /// The decision in words.
    pub decision: String,
}

/// Result of running `before_tool_call`.
#[derive(Debug, Clone, PartialEq)]
pub struct BeforeToolCallResult {
    /// `Ok(params)` to go on with, or `Err(reason)` when blocked.
    pub verdict: Result<crate::SharedJson, Blocked>,
    /// What each handler decided, in order.
    pub decisions: Vec<HookDecisionRecord>,
    /// `(plugin id, request)`: the call may go on only once the operator
    /// approves (never set with a block).
    pub approval: Option<(String, ApprovalRequest)>,
}

/// Add `why` to the last decision recorded.
fn note(decisions: &mut [HookDecisionRecord], why: &str) {
    if let Some(last) = decisions.last_mut() {
        last.decision = format!("{} ({why})", last.decision);
    }
}

/// Result of running the `tool_result` middleware.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultRun {
    /// The event, its outcome now the result the model will see.
    pub event: AfterToolCallEvent,
    /// What each handler decided, in order.
    pub decisions: Vec<HookDecisionRecord>,
}

/// What one `before_tool_call` answer means for the call.
enum Step {
    Allow,
    Rewrite(Value),
    Ask(ApprovalRequest),
    /// Failed with fail policy `ignore`.
    Skip,
    Block(String),
}

/// The registered handlers of every hook, each list sorted by descending priority.
#[derive(Clone, Default)]
pub struct HookRunner {
    registrations: Vec<HookRegistration>,
    /// Observe-only hooks fired without waiting, still running.
    pub(crate) detached: Arc<std::sync::Mutex<tokio::task::JoinSet<()>>>,
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 120 {
        format!("{}…", text.chars().take(120).collect::<String>())
    } else {
        text
    }
}

impl HookRunner {
    /// A runner over these registrations. Handlers of equal priority keep
    /// the order they are given in (load order; OpenClaw keeps registration
    /// order).
    pub fn new(mut registrations: Vec<HookRegistration>) -> Self {
        // A stable sort: ties keep their places.
        registrations.sort_by_key(|r| std::cmp::Reverse(r.priority));
        Self {
            registrations,
            detached: Arc::default(),
        }
    }

    /// Handlers of one hook, in the order they run.
    pub fn handlers(&self, kind: HookKind) -> impl Iterator<Item = &HookRegistration> {
        self.registrations.iter().filter(move |r| r.kind == kind)
    }

    /// Run `before_tool_call` as OpenClaw's SDK documents it: every handler
    /// sees the call's original parameters; the call goes on with the
    /// parameters of the last (lowest-priority) handler that returned some,
    /// whole (`next.params ?? acc.params`); a block is terminal (lower-priority handlers
    /// do not run); a failing handler blocks unless its fail policy is
    /// `ignore`.
    ///
    /// Beyond OpenClaw: when the final parameters differ from what a handler
    /// approved (the originals, or its own rewrite), that handler is asked
    /// again with the final parameters and must allow them (or rewrite them
    /// to themselves), so a lower-priority hook
    /// cannot slip a call past a policy hook.
    pub async fn before_tool_call(&self, event: BeforeToolCallEvent) -> BeforeToolCallResult {
        let mut decisions = Vec::new();
        // Every handler sees the same, original event; nothing is copied
        // unless a handler rewrites.
        let (tool, original) = (&event.tool, &event.params);
        // Handlers that answered, with what each approved (`None`: the originals).
        let mut approved: Vec<(&HookRegistration, Option<Value>)> = Vec::new();
        let mut last: Option<Value> = None;
        // The first approval request; it freezes the parameters.
        let mut approval: Option<(String, ApprovalRequest)> = None;
        for reg in self
            .handlers(HookKind::BeforeToolCall)
            .filter(|r| r.receives(tool))
        {
            let answer = reg.handler.handle(HookEvent::BeforeToolCall(&event)).await;
            match self.before_step(reg, answer, &mut decisions) {
                Step::Allow => approved.push((reg, None)),
                Step::Rewrite(_) if approval.is_some() => {
                    note(
                        &mut decisions,
                        "ignored: the parameters are frozen by an approval request",
                    );
                    approved.push((reg, None));
                }
                Step::Rewrite(params) => {
                    approved.push((reg, Some(params.clone())));
                    last = Some(params);
                }
                Step::Ask(_) if approval.is_some() => {
                    note(&mut decisions, "ignored: an earlier handler asked first");
                    approved.push((reg, None));
                }
                Step::Ask(request) => {
                    approval = Some((reg.plugin_id.clone(), request));
                    approved.push((reg, None));
                }
                Step::Skip => {}
                Step::Block(reason) => {
                    return BeforeToolCallResult {
                        verdict: Err(Blocked(reason)),
                        decisions,
                        approval: None,
                    }
                }
            }
        }
        let last = match last {
            Some(last) if *original != last => last,
            _ => {
                return BeforeToolCallResult {
                    verdict: Ok(event.params),
                    decisions,
                    approval,
                };
            }
        };
        let mut event = event;
        event.params = crate::SharedJson::new(last);
        for (reg, seen) in approved {
            if seen.as_ref() == Some(event.params.value()) {
                continue;
            }
            let answer = reg.handler.handle(HookEvent::BeforeToolCall(&event)).await;
            let verdict = match self.before_step(reg, answer, &mut decisions) {
                // An approval request on the final parameters is the one
                // already pending (or, from another plugin, one too many).
                Step::Allow | Step::Skip | Step::Ask(_) => continue,
                Step::Rewrite(params) if *event.params.value() == params => continue,
                Step::Rewrite(_) => format!(
                    "plugin `{}` approved the call before other hooks changed its parameters, and would change them again",
                    reg.plugin_id
                ),
                Step::Block(reason) => reason,
            };
            if let Some(last) = decisions.last_mut() {
                last.decision = format!("re-check after rewrite: {}", last.decision);
            }
            return BeforeToolCallResult {
                verdict: Err(Blocked(verdict)),
                decisions,
                approval: None,
            };
        }
        BeforeToolCallResult {
            verdict: Ok(event.params),
            decisions,
            approval,
        }
    }

    /// Tell the plugin that asked for an approval how it was answered
    /// (OpenClaw's `onResolution`). Observe-only: a failure is logged.
    pub async fn approval_resolved(&self, plugin_id: &str, event: ApprovalResolvedEvent) {
        let Some(reg) = self
            .handlers(HookKind::BeforeToolCall)
            .find(|r| r.plugin_id == plugin_id)
        else {
            return;
        };
        if let Err(error) = reg.handler.approval_resolved(&event).await {
            tracing::warn!(plugin = plugin_id, %error, "approval resolution not delivered");
        }
    }

    /// One `before_tool_call` answer, recorded in `decisions`.
    fn before_step(
        &self,
        reg: &HookRegistration,
        answer: Result<HookOutcome, HookError>,
        decisions: &mut Vec<HookDecisionRecord>,
    ) -> Step {
        let mut record = |decision: String| {
            decisions.push(HookDecisionRecord {
                hook: HookKind::BeforeToolCall,
                plugin_id: reg.plugin_id.clone(),
                decision,
            })
        };
        match answer {
            Ok(HookOutcome::BeforeToolCall(BeforeToolCallOutcome::Allow)) => {
                record("allow".into());
                Step::Allow
            }
            Ok(HookOutcome::BeforeToolCall(BeforeToolCallOutcome::Rewrite(params))) => {
                record(format!("rewrite: {}", short(&params)));
                Step::Rewrite(params)
            }
            Ok(HookOutcome::BeforeToolCall(BeforeToolCallOutcome::Block(reason))) => {
                record(format!("block: {reason}"));
                Step::Block(reason)
            }
            Ok(HookOutcome::BeforeToolCall(BeforeToolCallOutcome::RequireApproval(request))) => {
                record(format!(
                    "require approval ({}): {}",
                    request.severity.as_str(),
                    request.title
                ));
                Step::Ask(request)
            }
            other => {
                let error = HookError::unusable(HookKind::BeforeToolCall, other);
                record(failed(&error, reg.fail_policy));
                match reg.blocks(&error) {
                    Some(reason) => Step::Block(reason),
                    None => Step::Skip,
                }
            }
        }
    }

    /// Run the `tool_result` middleware: each handler sees the result left
    /// by the one before and may replace it. A failing handler withholds the
    /// result (it may have been a redaction), replacing it with an error,
    /// unless its fail policy is `ignore`.
    pub async fn tool_result(&self, event: AfterToolCallEvent) -> ToolResultRun {
        let mut decisions = Vec::new();
        let mut event = event;
        let regs: Vec<&HookRegistration> = self
            .handlers(HookKind::ToolResult)
            .filter(|r| r.receives(&event.tool))
            .collect();
        for reg in regs {
            let answer = reg.handler.handle(HookEvent::ToolResult(&event)).await;
            let record = |decision: String| HookDecisionRecord {
                hook: HookKind::ToolResult,
                plugin_id: reg.plugin_id.clone(),
                decision,
            };
            match answer {
                Ok(HookOutcome::ToolResult(ToolResultOutcome::Keep)) => {
                    decisions.push(record("keep".into()));
                }
                Ok(HookOutcome::ToolResult(ToolResultOutcome::Replace(outcome))) => {
                    let shown = match &outcome {
                        Ok(v) => short(v),
                        Err(e) => format!("error: {e}"),
                    };
                    decisions.push(record(format!("replace: {shown}")));
                    event.outcome = outcome.map(crate::SharedJson::new);
                }
                other => {
                    let error = HookError::unusable(HookKind::ToolResult, other);
                    decisions.push(record(failed(&error, reg.fail_policy)));
                    if let Some(reason) = reg.blocks(&error) {
                        event.outcome =
                            Err(ToolError::Failed(format!("result withheld: {reason}")));
                        break;
                    }
                }
            }
        }
        ToolResultRun { event, decisions }
    }

    /// Run `after_tool_call`: observe-only, handlers of the tool run
    /// concurrently; their answers and failures never change the result.
    /// The event is handed back.
    pub async fn after_tool_call(
        &self,
        event: AfterToolCallEvent,
    ) -> (AfterToolCallEvent, Observed) {
        let observed = self
            .observe_where(HookEvent::AfterToolCall(&event), |r| {
                r.receives(&event.tool)
            })
            .await;
        (event, observed)
    }
}

/// What the handlers of an observe-only hook did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Observed {
    /// What each handler decided.
    pub decisions: Vec<HookDecisionRecord>,
}

/// Result of asking the compaction providers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompactionHookResult {
    /// `(plugin id, summary)` of the first handler that supplied one.
    pub summary: Option<(String, String)>,
    /// What each handler decided.
    pub decisions: Vec<HookDecisionRecord>,
    /// Set when a handler with fail policy `block` failed: do not compact.
    pub blocked: Option<String>,
}

impl HookRunner {
    pub(crate) fn record(kind: HookKind, plugin: &str, decision: String) -> HookDecisionRecord {
        HookDecisionRecord {
            hook: kind,
            plugin_id: plugin.into(),
            decision,
        }
    }

    /// Run an observe-only hook: every handler concurrently. A failure is
    /// logged and recorded and changes nothing: an observe-only hook can never
    /// block, whatever its fail policy.
    pub async fn observe(&self, event: HookEvent<'_>) -> Observed {
        self.observe_where(event, |_| true).await
    }

    /// [`HookRunner::observe`], for the handlers `pick` selects.
    async fn observe_where(
        &self,
        event: HookEvent<'_>,
        pick: impl Fn(&HookRegistration) -> bool,
    ) -> Observed {
        let kind = event.kind();
        debug_assert!(kind.observe_only());
        let runs = self.handlers(kind).filter(|r| pick(r)).map(|reg| async move {
            let error = match reg.handler.handle(event).await {
                Ok(answer) if answer.kind() == kind => {
                    return Self::record(kind, &reg.plugin_id, "observed".into())
                }
                other => HookError::unusable(kind, other),
            };
            let decision = format!("failed: {error}; observe-only, nothing blocked");
            tracing::warn!(hook = kind.name(), plugin = %reg.plugin_id, %decision, "observe-only hook failed");
            Self::record(kind, &reg.plugin_id, decision)
        });
        Observed {
            decisions: futures::future::join_all(runs).await,
        }
    }
}

#[cfg(test)]
#[path = "runner_tests.rs"]
mod tests;
