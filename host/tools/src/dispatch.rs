//! The one dispatch path every tool call takes.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use clawhost_agent_core::text::clip;
use clawhost_agent_core::{
    ApprovalRequest, Refused, RunContext, Severity, TimeoutBehavior, ToolCallRequest, ToolExecutor,
    ToolOutput, ToolSpec, TurnEvent,
};
use clawhost_config::ApprovalsConfig;
use clawhost_hooks::{
    AfterToolCallEvent, ApprovalResolvedEvent, BeforeToolCallEvent, CallContext,
    HookDecisionRecord, HookRunner, SharedJson,
};
use serde_json::Value;

use crate::approvals::ApprovalMemory;
use crate::registry::Entry;
use crate::{CompiledSchema, ToolOrigin, ToolPolicy, ToolRegistry};

/// Runs tool calls: policy → schema validation → `before_tool_call` hooks
/// (re-validating rewritten parameters) → tool → `tool_result` middleware →
/// `after_tool_call` observers.
/// Every refusal or failure becomes an error result, never a panic.
pub struct ToolDispatcher {
    registry: ToolRegistry,
    policy: ToolPolicy,
    hooks: Arc<HookRunner>,
    approvals: ApprovalMemory,
}

/// Who asks for the approvals host tools request ([`crate::Tool::approval`]).
pub const HOST_APPROVER: &str = "clawhost";

/// Longest piece of a model's or plugin's input an error repeats.
const ERROR_ECHO_CHARS: usize = 200;

fn validation_error(schema: &CompiledSchema, params: &Value) -> Option<String> {
    let validator = match schema.validator() {
        Ok(validator) => validator,
        Err(reason) => {
            return Some(format!(
                "the tool's parameter schema does not compile: {reason}"
            ))
        }
    };
    // A validation message quotes the offending value; a megabyte argument
    // must not come back to the model (and the transcript) in the error.
    let problems: Vec<String> = validator
        .iter_errors(params)
        .take(8)
        .map(|e| {
            let at = e.instance_path().to_string();
            let text = clip(&e.to_string(), ERROR_ECHO_CHARS).into_owned();
            if at.is_empty() {
                text
            } else {
                format!("{}: {text}", clip(&at, ERROR_ECHO_CHARS))
            }
        })
        .collect();
    (!problems.is_empty()).then(|| problems.join("; "))
}

fn error(content: String) -> ToolOutput {
    ToolOutput {
        content,
        is_error: true,
        images: Vec::new(),
    }
}

/// The operator's question about a native runtime's call that no host tool
/// judges.
fn native_approval(call: &ToolCallRequest, params: &Value) -> ApprovalRequest {
    ApprovalRequest {
        title: format!(
            "let the agent runtime run its own `{}`",
            clip(&call.name, ERROR_ECHO_CHARS)
        ),
        description: clip(&params.to_string(), ERROR_ECHO_CHARS).into_owned(),
        severity: Severity::Warning,
        timeout_ms: None,
        timeout_behavior: TimeoutBehavior::Deny,
    }
}

/// Report hook decisions as run events (`call_id` empty for hooks not tied to a call).
pub fn report_hook_decisions(ctx: &RunContext, call_id: &str, decisions: Vec<HookDecisionRecord>) {
    for d in decisions {
        ctx.events.emit(TurnEvent::HookDecision {
            hook: d.hook,
            plugin: d.plugin_id,
            call_id: call_id.into(),
            decision: d.decision,
        });
    }
}

impl ToolDispatcher {
    /// A dispatcher over registered tools, a policy and the hook runner.
    pub fn new(registry: ToolRegistry, policy: ToolPolicy, hooks: Arc<HookRunner>) -> Self {
        Self {
            registry,
            policy,
            hooks,
            approvals: ApprovalMemory::new(ApprovalsConfig::default()),
        }
    }

    /// The same dispatcher, with these approval settings.
    pub fn with_approvals(mut self, config: ApprovalsConfig) -> Self {
        self.approvals = ApprovalMemory::new(config);
        self
    }

    /// Forget the `allow-always` answers given in a session (it ended or was reset).
    pub fn forget_approvals(&self, session_id: &str) {
        self.approvals.forget(session_id);
    }
}

#[async_trait]
impl ToolExecutor for ToolDispatcher {
    fn specs(&self, ctx: &RunContext) -> Vec<ToolSpec> {
        let policy = self.policy.for_agent(&ctx.agent_id);
        self.registry
            .tools
            .values()
            .filter(|e| policy.check(&e.tool.spec().name, &e.tool.origin()).is_ok())
            .map(|e| e.tool.spec().clone())
            .collect()
    }

    async fn execute(&self, call: &ToolCallRequest, ctx: &RunContext) -> ToolOutput {
        use tracing::Instrument;
        let span = tracing::info_span!("tool_call", tool = %clip(&call.name, ERROR_ECHO_CHARS));
        self.execute_traced(call, ctx).instrument(span).await
    }

    async fn gate(&self, call: &ToolCallRequest, ctx: &RunContext) -> Result<Value, Refused> {
        let entry = self.registry.tools.get(&call.name);
        let admitted = self
            .admit(call, ctx, Caller::Native(entry))
            .await
            .map_err(Refused)?;
        Ok(admitted.params.into_value())
    }
}

/// Whose call is admitted.
enum Caller<'a> {
    /// A host tool's: its arguments are checked against its schema.
    Tool(&'a Entry),
    /// A native runtime's own call, judged as the host tool of its name (if
    /// there is one); its arguments are the runtime's, not the tool's.
    Native(Option<&'a Entry>),
}

/// A call let through: the arguments as asked and as they run (a hook may
/// have rewritten them), and whose run it is.
struct Admitted {
    asked: SharedJson,
    params: SharedJson,
    context: CallContext,
}

impl ToolDispatcher {
    async fn execute_traced(&self, call: &ToolCallRequest, ctx: &RunContext) -> ToolOutput {
        let Some(entry) = self.registry.tools.get(&call.name) else {
            return error(format!(
                "unknown tool `{}`",
                clip(&call.name, ERROR_ECHO_CHARS)
            ));
        };
        let Admitted {
            asked,
            params,
            context,
        } = match self.admit(call, ctx, Caller::Tool(entry)).await {
            Ok(admitted) => admitted,
            Err(refusal) => return error(refusal),
        };
        if params != asked {
            if let Some(problem) = validation_error(&entry.schema, &params) {
                return error(format!(
                    "a before_tool_call hook rewrote the arguments of `{}` into invalid ones: {problem}",
                    call.name
                ));
            }
        }
        let started = Instant::now();
        let outcome = entry
            .tool
            .call(&call.id, params.clone(), ctx)
            .await
            .map(SharedJson::new);
        let duration_ms = started.elapsed().as_millis() as u64;
        let event = AfterToolCallEvent {
            tool: call.name.clone(),
            call_id: call.id.clone(),
            params,
            outcome,
            duration_ms,
            context,
        };
        // The granted middleware may replace the result; then the observers
        // see the result as the model will.
        let middleware = self.hooks.tool_result(event).await;
        report_hook_decisions(ctx, &call.id, middleware.decisions);
        let (event, observed) = self.hooks.after_tool_call(middleware.event).await;
        report_hook_decisions(ctx, &call.id, observed.decisions);
        match event.outcome {
            Ok(value) => crate::content::tool_output(&call.name, value),
            Err(e) => error(e.to_string()),
        }
    }

    /// What every call passes before it runs, a host tool's or a native
    /// runtime's own: tool policy, `before_tool_call`, then one approval (a
    /// plugin's request, else the host tool's own: `exec` asks unless the
    /// operator allowlisted the command). A host tool's call is checked
    /// against its schema after the policy. `Err` is the refusal, in words.
    async fn admit(
        &self,
        call: &ToolCallRequest,
        ctx: &RunContext,
        caller: Caller<'_>,
    ) -> Result<Admitted, String> {
        let (entry, schema) = match caller {
            Caller::Tool(entry) => (Some(entry), Some(&entry.schema)),
            Caller::Native(entry) => (entry, None),
        };
        let origin = entry.map_or(ToolOrigin::Host, |e| e.tool.origin());
        self.policy
            .for_agent(&ctx.agent_id)
            .check(&call.name, &origin)
            .map_err(|denial| denial.to_string())?;
        if let Some(problem) = schema.and_then(|s| validation_error(s, &call.arguments)) {
            return Err(format!("invalid arguments for `{}`: {problem}", call.name));
        }
        let context = CallContext {
            agent_id: ctx.agent_id.clone(),
            session_id: ctx.session_id.clone(),
            model_ref: ctx.model_ref.clone(),
        };
        // One copy of the arguments, shared from here on (hooks, tool,
        // after-hooks); a rewrite makes a new one.
        let asked = SharedJson::new(call.arguments.clone());
        let before = self
            .hooks
            .before_tool_call(BeforeToolCallEvent {
                tool: call.name.clone(),
                call_id: call.id.clone(),
                params: asked.clone(),
                tool_plugin: match &origin {
                    ToolOrigin::Plugin(id) => Some(id.clone()),
                    ToolOrigin::Host | ToolOrigin::Mcp(_) => None,
                },
                context: context.clone(),
            })
            .await;
        report_hook_decisions(ctx, &call.id, before.decisions);
        let params = before
            .verdict
            .map_err(|reason| format!("tool call blocked: {reason}"))?;
        let approval = match (before.approval, entry) {
            (Some(asked), _) => Some(asked),
            (None, Some(e)) => e
                .tool
                .approval(&params)
                .map(|request| (HOST_APPROVER.to_string(), request)),
            // A native runtime's call with no host tool of its name to judge
            // it is always asked about (fail closed).
            (None, None) => Some((HOST_APPROVER.to_string(), native_approval(call, &params))),
        };
        if let Some((asker, request)) = approval {
            let pending = self.approvals.pending(asker, call, &params, ctx, request);
            let decision = self.approvals.ask(&pending, ctx).await;
            if pending.plugin_id != HOST_APPROVER {
                self.hooks
                    .approval_resolved(
                        &pending.plugin_id,
                        ApprovalResolvedEvent {
                            tool: call.name.clone(),
                            call_id: call.id.clone(),
                            decision,
                            context: context.clone(),
                        },
                    )
                    .await;
            }
            if !decision.allows(pending.request.timeout_behavior) {
                let who = if pending.plugin_id == HOST_APPROVER {
                    "the host".to_string()
                } else {
                    format!("plugin `{}`", pending.plugin_id)
                };
                return Err(format!(
                    "tool call blocked: {who} asked for approval ({}) and the answer was {}",
                    clip(&pending.request.title, ERROR_ECHO_CHARS),
                    decision.as_str()
                ));
            }
        }
        Ok(Admitted {
            asked,
            params,
            context,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::EchoTool;

    fn dispatcher(deny: &[&str]) -> ToolDispatcher {
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(EchoTool::default())).unwrap();
        let policy = ToolPolicy::from_config(&clawhost_config::ToolsConfig {
            allow: None,
            deny: deny.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        });
        ToolDispatcher::new(registry, policy, Arc::new(HookRunner::default()))
    }

    fn call(args: Value) -> ToolCallRequest {
        ToolCallRequest {
            id: "c1".into(),
            name: "echo".into(),
            arguments: args,
        }
    }

    #[tokio::test]
    async fn valid_call_runs_and_invalid_arguments_become_an_error_result() {
        let d = dispatcher(&[]);
        let ctx = RunContext::new("a", "m/x");
        let ok = d.execute(&call(json!({"text": "hi"})), &ctx).await;
        assert_eq!(
            ok,
            ToolOutput {
                content: r#"{"text":"hi"}"#.into(),
                is_error: false,
                images: Vec::new(),
            }
        );
        let bad = d.execute(&call(json!({"text": 5})), &ctx).await;
        assert!(
            bad.is_error && bad.content.contains("invalid arguments"),
            "{bad:?}"
        );
        let extra = d.execute(&call(json!({"text": "x", "y": 1})), &ctx).await;
        assert!(extra.is_error, "{extra:?}");
        let unknown = d
            .execute(
                &ToolCallRequest {
                    name: "nope".into(),
                    ..call(json!({}))
                },
                &ctx,
            )
            .await;
        assert!(unknown.is_error && unknown.content.contains("unknown tool"));
    }

    #[tokio::test]
    async fn policy_refuses_before_anything_runs_and_hides_the_tool() {
        let d = dispatcher(&["echo"]);
        let out = d
            .execute(&call(json!({"text": "hi"})), &RunContext::new("a", "m/x"))
            .await;
        assert!(
            out.is_error && out.content.contains("tools.deny"),
            "{out:?}"
        );
        assert!(d.specs(&RunContext::new("a", "m")).is_empty());
    }

    #[tokio::test]
    async fn errors_never_echo_a_huge_argument() {
        let d = dispatcher(&[]);
        let ctx = RunContext::new("a", "m/x");
        let huge = "x".repeat(1 << 20);
        let out = d
            .execute(&call(json!({"text": 5, "extra": huge})), &ctx)
            .await;
        assert!(
            out.is_error && out.content.len() < 2_000,
            "{}",
            out.content.len()
        );
        let out = d
            .execute(
                &ToolCallRequest {
                    name: huge.clone(),
                    ..call(json!({}))
                },
                &ctx,
            )
            .await;
        assert!(
            out.is_error && out.content.len() < 1_000,
            "{}",
            out.content.len()
        );
    }

    #[test]
    fn names_differing_only_in_case_clash_and_oversized_specs_are_refused() {
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(EchoTool::default())).unwrap();
        let shouty = EchoTool::named("ECHO");
        let err = registry.register(Arc::new(shouty)).unwrap_err();
        assert!(
            matches!(err, crate::RegistryError::Duplicate { .. }),
            "{err}"
        );
        let mut registry = ToolRegistry::with_limits(crate::ToolLimits {
            max_description_chars: 10,
            max_schema_bytes: 1024,
        });
        let err = registry
            .register(Arc::new(EchoTool::default()))
            .unwrap_err();
        assert!(
            err.to_string().contains("tools.maxDescriptionChars"),
            "{err}"
        );
        assert!(registry.names().is_empty());
    }

    #[test]
    fn duplicate_and_badly_named_tools_are_refused() {
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(EchoTool::default())).unwrap();
        let err = registry
            .register(Arc::new(EchoTool::default()))
            .unwrap_err();
        assert!(err.to_string().contains("clashes"));
        let spec = ToolSpec {
            name: "bad name".into(),
            description: String::new(),
            parameters: json!({"type":"object"}).into(),
        };
        assert!(matches!(
            crate::registry::compile_schema(&spec),
            Err(crate::RegistryError::BadName(_))
        ));
    }
}
