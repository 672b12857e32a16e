//! Glue from the generated WIT exports to the [`Plugin`] trait.

use std::any::Any;
use std::cell::OnceCell;
use std::marker::PhantomData;

use crate::bindings::plugin::exports::openclaw::plugin::{
    compaction_provider as cp, model_hooks as mh, persist_hooks as pe, prepare_hooks as qh,
    prompt_hooks as ph, run_hooks as rh, session_hooks as sh, tool_gate as tg, tool_hooks as th,
    tool_provider as tp, transcript_hooks as xh, turn_hooks as uh,
};
use crate::{
    AfterToolCall, BeforeDecision, BeforeToolCall, Finalize, Hook, Json, Observed, Plugin,
    ResultDecision, ToolCall, ToolError, ToolSpec, Tools, WriteDecision,
};

/// Adapts a [`Plugin`] to the exported WIT interfaces; used by [`crate::export_plugin!`].
pub struct Adapter<P>(PhantomData<P>);

struct State<P> {
    plugin: P,
    tools: Tools<P>,
}

thread_local! {
    /// The one plugin value of this instance (components are single-threaded).
    static STATE: OnceCell<Box<dyn Any>> = const { OnceCell::new() };
}

/// Run `f` on the plugin's state, creating it on first use.
pub(crate) fn with_state<T: Default + 'static, X: 'static, R>(
    make: impl FnOnce(T) -> X,
    f: impl FnOnce(&X) -> R,
) -> R {
    STATE.with(|cell| {
        let state = cell.get_or_init(|| Box::new(make(T::default())));
        f(state
            .downcast_ref::<X>()
            .expect("one plugin type per component"))
    })
}

fn with<P: Plugin, R>(f: impl FnOnce(&State<P>) -> R) -> R {
    with_state(
        |plugin: P| {
            let mut tools = Tools::default();
            plugin.tools(&mut tools);
            State { plugin, tools }
        },
        f,
    )
}

/// The plugin's subscriptions to the hooks `pick` maps into one family.
fn subscribed<P: Plugin, S>(pick: impl Fn(Hook, i32) -> Option<S>) -> Vec<S> {
    with::<P, _>(|s| s.plugin.hooks())
        .into_iter()
        .filter_map(|(h, priority)| pick(h, priority))
        .collect()
}

impl<P: Plugin> tp::Guest for Adapter<P> {
    fn tools() -> Vec<ToolSpec> {
        with::<P, _>(|s| s.tools.specs())
    }

    fn call(call: tp::ToolCall) -> Result<String, ToolError> {
        let params = serde_json::from_str(&call.params).unwrap_or(serde_json::Value::Null);
        let call = ToolCall {
            tool: call.tool,
            call_id: call.call_id,
            params,
            context: call.context,
        };
        with::<P, _>(|s| s.tools.call(&s.plugin, call)).map(|v| v.to_string())
    }
}

impl<P: Plugin> th::Guest for Adapter<P> {
    fn subscriptions() -> Vec<th::Subscription> {
        subscribed::<P, _>(|h, priority| {
            // `before_tool_call` goes through `tool-gate` (0.2.1), which
            // carries approval requests.
            let hook = match h {
                Hook::AfterToolCall => th::ToolHook::AfterToolCall,
                Hook::ToolResult => th::ToolHook::ToolResult,
                _ => return None,
            };
            let tools = with::<P, _>(|s| s.plugin.tool_filter(h));
            Some(th::Subscription {
                hook,
                priority,
                tools,
            })
        })
    }

    fn before_tool_call(e: th::BeforeToolCallEvent) -> th::BeforeToolCallOutcome {
        // Not subscribed here (see `subscriptions`); a host that asks anyway
        // gets the decision without the approval case, which 0.2.0 lacks.
        match before_tool_call::<P>(e) {
            tg::GateOutcome::Allow => th::BeforeToolCallOutcome::Allow,
            tg::GateOutcome::Block(reason) => th::BeforeToolCallOutcome::Block(reason),
            tg::GateOutcome::Rewrite(p) => th::BeforeToolCallOutcome::Rewrite(p),
            tg::GateOutcome::RequireApproval(r) => th::BeforeToolCallOutcome::Block(format!(
                "needs the operator's approval ({}), which this host cannot ask",
                r.title
            )),
        }
    }

    fn after_tool_call(e: th::AfterToolCallEvent) {
        observe::<P>(Observed::AfterToolCall(after_event(e)))
    }

    fn tool_result(e: th::AfterToolCallEvent) -> th::ToolResultOutcome {
        match with::<P, _>(|s| s.plugin.tool_result(after_event(e))) {
            ResultDecision::Keep => th::ToolResultOutcome::Keep,
            ResultDecision::Replace(r) => th::ToolResultOutcome::Replace(r.map(|v| v.to_string())),
        }
    }
}

fn before_tool_call<P: Plugin>(e: th::BeforeToolCallEvent) -> tg::GateOutcome {
    let event = BeforeToolCall {
        tool: e.tool,
        call_id: e.call_id,
        params: Json::from_text(e.params),
        tool_plugin: e.tool_plugin,
        context: e.context,
    };
    match with::<P, _>(|s| s.plugin.before_tool_call(event)) {
        BeforeDecision::Allow => tg::GateOutcome::Allow,
        BeforeDecision::Block(reason) => tg::GateOutcome::Block(reason),
        BeforeDecision::Rewrite(p) => tg::GateOutcome::Rewrite(p.to_string()),
        BeforeDecision::RequireApproval(r) => tg::GateOutcome::RequireApproval(r),
    }
}

impl<P: Plugin> tg::Guest for Adapter<P> {
    fn subscription() -> Option<tg::GateSubscription> {
        let (_, priority) = with::<P, _>(|s| s.plugin.hooks())
            .into_iter()
            .find(|(h, _)| *h == Hook::BeforeToolCall)?;
        let tools = with::<P, _>(|s| s.plugin.tool_filter(Hook::BeforeToolCall));
        Some(tg::GateSubscription { priority, tools })
    }

    fn before_tool_call(e: th::BeforeToolCallEvent) -> tg::GateOutcome {
        before_tool_call::<P>(e)
    }

    fn approval_resolved(e: tg::ApprovalResolution) {
        with::<P, _>(|s| s.plugin.approval_resolved(e))
    }
}

impl<P: Plugin> pe::Guest for Adapter<P> {
    fn subscriptions() -> Vec<pe::Subscription> {
        subscribed::<P, _>(|h, priority| {
            let hook = match h {
                Hook::ToolResultPersist => pe::PersistHook::ToolResultPersist,
                Hook::BeforeMessageWrite => pe::PersistHook::BeforeMessageWrite,
                _ => return None,
            };
            Some(pe::Subscription { hook, priority })
        })
    }

    fn tool_result_persist(e: pe::ToolResultPersistEvent) -> pe::ToolResultPersistOutcome {
        match with::<P, _>(|s| s.plugin.tool_result_persist(e)) {
            Some(text) => pe::ToolResultPersistOutcome::Replace(text),
            None => pe::ToolResultPersistOutcome::Keep,
        }
    }

    fn before_message_write(e: pe::MessageWriteEvent) -> pe::MessageWriteOutcome {
        match with::<P, _>(|s| s.plugin.before_message_write(e)) {
            WriteDecision::Keep => pe::MessageWriteOutcome::Keep,
            WriteDecision::Replace(m) => pe::MessageWriteOutcome::Replace(m),
            WriteDecision::Block(reason) => pe::MessageWriteOutcome::Block(reason),
        }
    }
}

fn after_event(e: th::AfterToolCallEvent) -> AfterToolCall {
    AfterToolCall {
        tool: e.tool,
        call_id: e.call_id,
        params: Json::from_text(e.params),
        outcome: e.outcome.map(Json::from_text),
        duration_ms: e.duration_ms,
        context: e.context,
    }
}

impl<P: Plugin> ph::Guest for Adapter<P> {
    fn subscriptions() -> Vec<ph::Subscription> {
        subscribed::<P, _>(|h, priority| {
            (h == Hook::BeforePromptBuild).then_some(ph::Subscription {
                hook: ph::PromptHook::BeforePromptBuild,
                priority,
            })
        })
    }

    fn before_prompt_build(e: ph::BeforePromptBuildEvent) -> ph::BeforePromptBuildOutcome {
        match with::<P, _>(|s| s.plugin.before_prompt_build(e)) {
            Some(edit) => ph::BeforePromptBuildOutcome::Edit(edit),
            None => ph::BeforePromptBuildOutcome::Keep,
        }
    }
}

fn observe<P: Plugin>(event: Observed) {
    with::<P, _>(|s| s.plugin.observe(event))
}

/// The 0.2.0 summary form of the model hooks: the SDK subscribes to
/// `llm_input` / `llm_output` through `run-hooks` (0.2.1), in full, so the
/// host never calls these.
impl<P: Plugin> mh::Guest for Adapter<P> {
    fn subscriptions() -> Vec<mh::Subscription> {
        Vec::new()
    }

    fn llm_input(_e: mh::LlmInputEvent) {}

    fn llm_output(_e: mh::LlmOutputEvent) {}
}

impl<P: Plugin> rh::Guest for Adapter<P> {
    fn subscriptions() -> Vec<rh::Subscription> {
        subscribed::<P, _>(|h, priority| {
            let hook = match h {
                Hook::BeforeModelResolve => rh::RunHook::BeforeModelResolve,
                Hook::BeforeAgentStart => rh::RunHook::BeforeAgentStart,
                Hook::LlmInput => rh::RunHook::LlmInput,
                Hook::LlmOutput => rh::RunHook::LlmOutput,
                Hook::ModelCallStarted => rh::RunHook::ModelCallStarted,
                Hook::ModelCallEnded => rh::RunHook::ModelCallEnded,
                _ => return None,
            };
            Some(rh::Subscription { hook, priority })
        })
    }

    fn before_model_resolve(e: rh::ModelResolveEvent) -> rh::ModelResolveOutcome {
        match with::<P, _>(|s| s.plugin.before_model_resolve(e)) {
            Some(o) => rh::ModelResolveOutcome::Override(o),
            None => rh::ModelResolveOutcome::Keep,
        }
    }

    fn before_agent_start(e: rh::AgentStartEvent) -> rh::AgentStartOutcome {
        match with::<P, _>(|s| s.plugin.before_agent_start(e)) {
            Ok(()) => rh::AgentStartOutcome::Allow,
            Err(reason) => rh::AgentStartOutcome::Block(reason),
        }
    }

    fn llm_input(e: rh::LlmInputEvent) {
        observe::<P>(Observed::LlmInput(e))
    }

    fn llm_output(e: rh::LlmOutputEvent) {
        observe::<P>(Observed::LlmOutput(e))
    }

    fn model_call_started(e: rh::ModelCall) {
        observe::<P>(Observed::ModelCallStarted(e))
    }

    fn model_call_ended(e: rh::ModelCallEndedEvent) {
        observe::<P>(Observed::ModelCallEnded(e))
    }
}

impl<P: Plugin> cp::Guest for Adapter<P> {
    fn offer() -> Option<i32> {
        with::<P, _>(|s| s.plugin.compaction_priority())
    }

    fn summarize(e: xh::BeforeCompactionEvent) -> Option<String> {
        with::<P, _>(|s| s.plugin.summarize(e))
    }
}

impl<P: Plugin> sh::Guest for Adapter<P> {
    fn subscriptions() -> Vec<sh::Subscription> {
        subscribed::<P, _>(|h, priority| {
            let hook = match h {
                Hook::SessionStart => sh::SessionHook::SessionStart,
                Hook::SessionEnd => sh::SessionHook::SessionEnd,
                Hook::AgentEnd => sh::SessionHook::AgentEnd,
                Hook::BeforeReset => sh::SessionHook::BeforeReset,
                _ => return None,
            };
            Some(sh::Subscription { hook, priority })
        })
    }

    fn session_start(e: sh::SessionStartEvent) {
        observe::<P>(Observed::SessionStart(e))
    }

    fn session_end(e: sh::SessionEndEvent) {
        observe::<P>(Observed::SessionEnd(e))
    }

    fn agent_end(e: sh::AgentEndEvent) {
        observe::<P>(Observed::AgentEnd(e))
    }

    fn before_reset(e: sh::BeforeResetEvent) {
        observe::<P>(Observed::BeforeReset(e))
    }
}

impl<P: Plugin> xh::Guest for Adapter<P> {
    fn subscriptions() -> Vec<xh::Subscription> {
        subscribed::<P, _>(|h, priority| {
            let hook = match h {
                Hook::BeforeCompaction => xh::TranscriptHook::BeforeCompaction,
                Hook::AfterCompaction => xh::TranscriptHook::AfterCompaction,
                _ => return None,
            };
            Some(xh::Subscription { hook, priority })
        })
    }

    fn before_compaction(e: xh::BeforeCompactionEvent) -> xh::BeforeCompactionOutcome {
        // Observe-only; summaries come through `compaction-provider`.
        observe::<P>(Observed::BeforeCompaction(e));
        xh::BeforeCompactionOutcome::Proceed
    }

    fn after_compaction(e: xh::AfterCompactionEvent) {
        observe::<P>(Observed::AfterCompaction(e))
    }
}

impl<P: Plugin> uh::Guest for Adapter<P> {
    fn subscriptions() -> Vec<uh::Subscription> {
        subscribed::<P, _>(|h, priority| {
            let hook = match h {
                Hook::BeforeAgentRun => uh::TurnHook::BeforeAgentRun,
                Hook::BeforeAgentReply => uh::TurnHook::BeforeAgentReply,
                Hook::BeforeAgentFinalize => uh::TurnHook::BeforeAgentFinalize,
                _ => return None,
            };
            Some(uh::Subscription { hook, priority })
        })
    }

    fn before_agent_run(e: uh::TurnEvent) -> uh::RunOutcome {
        match with::<P, _>(|s| s.plugin.before_agent_run(e)) {
            Ok(()) => uh::RunOutcome::Allow,
            Err(reason) => uh::RunOutcome::Block(reason),
        }
    }

    fn before_agent_reply(e: uh::TurnEvent) -> uh::ReplyOutcome {
        match with::<P, _>(|s| s.plugin.before_agent_reply(e)) {
            Some(reply) => uh::ReplyOutcome::Reply(reply),
            None => uh::ReplyOutcome::Pass,
        }
    }

    fn before_agent_finalize(e: uh::FinalizeEvent) -> uh::FinalizeOutcome {
        match with::<P, _>(|s| s.plugin.before_agent_finalize(e)) {
            Finalize::Proceed => uh::FinalizeOutcome::Proceed,
            Finalize::Revise(reason) => uh::FinalizeOutcome::Revise(reason),
            Finalize::Finalize => uh::FinalizeOutcome::Finalize,
        }
    }
}

impl<P: Plugin> qh::Guest for Adapter<P> {
    fn subscriptions() -> Vec<qh::Subscription> {
        subscribed::<P, _>(|h, priority| {
            let hook = match h {
                Hook::AgentTurnPrepare => qh::PrepareHook::AgentTurnPrepare,
                Hook::ResolveExecEnv => qh::PrepareHook::ResolveExecEnv,
                _ => return None,
            };
            Some(qh::Subscription { hook, priority })
        })
    }

    fn agent_turn_prepare(e: qh::TurnEvent) -> Option<qh::TurnContext> {
        // The same turn event as the `turn-hooks` family's.
        let event = uh::TurnEvent {
            session_id: e.session_id,
            agent_id: e.agent_id,
            runtime: e.runtime,
            model_ref: e.model_ref,
            prompt: e.prompt,
        };
        with::<P, _>(|s| s.plugin.agent_turn_prepare(event))
    }

    fn resolve_exec_env(e: qh::ExecEvent) -> Vec<qh::EnvVar> {
        with::<P, _>(|s| s.plugin.resolve_exec_env(e))
            .into_iter()
            .map(|(name, value)| qh::EnvVar { name, value })
            .collect()
    }
}
