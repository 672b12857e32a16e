//! Harness (agent runtime) contracts, and the host-side mirror through which a
//! plugin harness drives its turn: every model call goes through the host's
//! model client and every tool call through the host's tool executor, and the
//! host records the turn from what it observed.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::{
    BudgetedTools, Message, ModelClient, ModelError, ModelErrorKind, ModelRequest, ModelResponse,
    RunContext, SharedMessage, TextSink, ToolCallRequest, ToolExecutor, ToolOutput,
    ToolResultMessage, ToolSpec, TurnBudget, TurnEvent, TurnOutcome, Usage,
};

/// The provider route a turn would take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Provider id.
    pub provider: String,
    /// Model id.
    pub model: String,
    /// Wire API.
    pub api: clawhost_config::ApiKind,
    /// Effective base URL.
    pub base_url: String,
    /// Whether the operator authored request params/headers for this route.
    pub authored_overrides: bool,
}

/// A harness's claim on a route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Supported, with a priority (higher wins) and a reason.
    Supported {
        /// Priority among supporting harnesses.
        priority: i32,
        /// Why.
        reason: String,
    },
    /// Not supported.
    Unsupported(String),
}

/// What a harness gets to run one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedTurn {
    /// Agent id.
    pub agent_id: String,
    /// Session id.
    pub session_id: Option<String>,
    /// Model reference.
    pub model_ref: String,
    /// System prompt.
    pub system: Option<String>,
    /// Conversation so far (shared with the session's history).
    pub history: Vec<SharedMessage>,
    /// The new user message.
    pub user_text: String,
    /// Tools on offer.
    pub tools: Vec<ToolSpec>,
    /// Upper bound of model calls.
    pub max_iterations: u32,
    /// The native runtime's thread this session continues, if one was
    /// recorded ([`TurnEvent::NativeThread`]).
    pub native_thread: Option<String>,
}

/// Why a harness's turn failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HarnessError {
    /// A model call failed and the harness gave up; the host may act on
    /// the kind (e.g. compact and retry after a context overflow).
    #[error("{0}")]
    Model(ModelError),
    /// Anything else.
    #[error("{0}")]
    Failed(String),
}

/// The host stopped a harness's turn: it called a tool again after the
/// turn's tool budget was spent and the refusal said so.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "the harness called a tool again after its turn's budget was spent ({0}); the turn was stopped"
)]
pub struct TurnStopped(pub String);

/// Where a native runtime's own compaction is (API 0.2.3 `native-turn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NativeCompaction {
    /// It began compacting its context.
    Started,
    /// It finished.
    Completed,
}

/// Who hears that a native runtime compacts its own context (the host's
/// `before_compaction` / `after_compaction`).
#[async_trait]
pub trait CompactionObserver: Send + Sync {
    /// `phase` of the runtime's compaction; `turn` holds what the mirror
    /// recorded of the turn so far.
    async fn native_compaction(&self, phase: NativeCompaction, turn: &[Message]);
}

/// Where a turn's own tools are served over MCP (API 0.2.3 `native-turn`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEndpoint {
    /// A Streamable HTTP URL on loopback.
    pub url: String,
    /// The bearer token every request must carry.
    pub token: String,
}

/// Serves a turn's tools to its native runtime over MCP.
pub trait ToolEndpoints: Send + Sync {
    /// Serve `turn`'s tools (each call through [`TurnServices::call_tool`])
    /// until the returned guard is dropped.
    fn open(
        &self,
        turn: std::sync::Weak<dyn TurnServices>,
    ) -> Result<(ToolEndpoint, Box<dyn Send + Sync>), String>;
}

/// Host services a harness drives its turn through.
#[async_trait]
pub trait TurnServices: Send + Sync {
    /// Call the turn's model; `text_sink` receives the reply text as it streams.
    async fn complete(
        &self,
        system: Option<String>,
        messages: Vec<Message>,
        tools: Vec<ToolSpec>,
        text_sink: Option<TextSink>,
    ) -> Result<ModelResponse, ModelError>;
    /// Run a tool call through the host's dispatch path. Once the turn's
    /// budget is spent, one call is refused with an error result and the
    /// next stops the turn.
    async fn call_tool(&self, call: ToolCallRequest) -> Result<ToolOutput, TurnStopped>;
    /// The tools on offer.
    fn tools(&self) -> Vec<ToolSpec>;
    /// The error of the turn's last model call, if that call failed.
    fn last_model_error(&self) -> Option<ModelError>;

    // What a harness bridging a native runtime (one that runs its own model
    // loop: Codex, an ACP agent) reports, so the host sees the turn.

    /// Whether the native runtime may run its own call (policy,
    /// `before_tool_call`, approvals, as for the host tool of that name);
    /// `Ok` holds the arguments to run with.
    async fn gate_native(&self, call: ToolCallRequest)
        -> Result<serde_json::Value, crate::Refused>;
    /// Reply text as it streams.
    fn stream_text(&self, delta: &str);
    /// The runtime's reply: its text and the tool calls it made.
    fn record_reply(&self, text: String, tool_calls: Vec<ToolCallRequest>);
    /// The result of a tool call the runtime ran itself.
    fn record_tool_result(&self, result: ToolResultMessage);
    /// The runtime's thread stored on the session.
    fn native_thread(&self) -> Option<String>;
    /// Store the runtime's thread on the session, with its name and version.
    fn set_native_thread(&self, thread: String, agent: String);
    /// The native runtime compacts its own context: the host's compaction
    /// hooks hear of it; the mirror keeps every message.
    async fn native_compaction(&self, phase: NativeCompaction);
    /// An MCP endpoint of this turn's tools, served while the turn runs.
    fn tool_endpoint(self: Arc<Self>) -> Result<ToolEndpoint, String>;
    /// A native runtime's process was opened: if the run is aborted, the
    /// host waits up to `grace` for the harness to stop the runtime's own
    /// turn (`turn/interrupt`, `session/cancel`) before dropping it. The
    /// token is cancelled when the run is aborted.
    fn stop_signal(&self, grace: std::time::Duration) -> tokio_util::sync::CancellationToken {
        let _ = grace;
        tokio_util::sync::CancellationToken::new()
    }
}

/// An agent runtime provided by a plugin.
#[async_trait]
pub trait Harness: Send + Sync {
    /// Runtime id.
    fn id(&self) -> &str;
    /// How it executes, for status (e.g. "wasm plugin `plan-act`").
    fn execution(&self) -> String;
    /// Whether it can run turns on `route`.
    async fn supports(&self, route: &Route) -> Support;
    /// Run one turn through `services`; `Ok` is the final answer.
    async fn run_attempt(
        &self,
        turn: PreparedTurn,
        services: Arc<dyn TurnServices>,
    ) -> Result<String, HarnessError>;
    /// Forget a session's state.
    async fn reset(&self, session_id: &str);
    /// Release resources.
    async fn dispose(&self);
}

/// The host's [`TurnServices`]: bounds model calls, dispatches tools, emits
/// run events and records the turn's messages as the host saw them.
pub struct TurnMirror {
    model: Arc<dyn ModelClient>,
    tools: BudgetedTools,
    ctx: RunContext,
    max_iterations: u32,
    iterations: AtomicU32,
    messages: Mutex<Vec<Message>>,
    usage: Mutex<Usage>,
    last_error: Mutex<Option<ModelError>>,
    /// Why the last model reply stopped.
    last_stop: Mutex<Option<crate::StopReason>>,
    /// Images and reasoning the harness cannot carry.
    restorer: Mutex<crate::restore::Restorer>,
    /// The native runtime's thread (as stored, then as last reported).
    native_thread: Mutex<Option<String>>,
    /// Replies of a native runtime recorded so far (its "iterations").
    native_replies: AtomicU32,
    /// Who hears of the native runtime's own compactions.
    compaction: Option<Arc<dyn CompactionObserver>>,
    /// Who serves the turn's tools over MCP, and what keeps it serving.
    endpoints: Option<Arc<dyn ToolEndpoints>>,
    endpoint: Mutex<Option<(ToolEndpoint, Box<dyn Send + Sync>)>>,
}

impl TurnMirror {
    /// A mirror for one turn of `turn`; records the user's input first.
    /// The images and reasoning of the turn's history and input, which the
    /// harness does not see, are put back into the messages it sends.
    pub fn new(
        model: Arc<dyn ModelClient>,
        tools: Arc<dyn ToolExecutor>,
        ctx: RunContext,
        (max_iterations, budget): (u32, TurnBudget),
        turn: &PreparedTurn,
        user: &crate::UserInput,
    ) -> Self {
        let mut restorer = crate::restore::Restorer::default();
        turn.history.iter().for_each(|m| restorer.learn(m));
        restorer.learn_prompt(&turn.user_text, &user.images);
        restorer.learn(&user.message());
        ctx.events.emit(TurnEvent::UserMessage {
            text: user.text.clone(),
            images: user.images.clone(),
        });
        Self {
            model,
            tools: BudgetedTools::new(tools, budget),
            ctx,
            max_iterations: max_iterations.max(1),
            iterations: AtomicU32::new(0),
            messages: Mutex::new(vec![user.message()]),
            usage: Mutex::default(),
            last_error: Mutex::default(),
            last_stop: Mutex::default(),
            restorer: Mutex::new(restorer),
            native_thread: Mutex::new(turn.native_thread.clone()),
            native_replies: AtomicU32::new(0),
            compaction: None,
            endpoints: None,
            endpoint: Mutex::default(),
        }
    }

    /// Serve the turn's tools over MCP with `endpoints` when a native
    /// runtime asks ([`TurnServices::tool_endpoint`]).
    pub fn with_tool_endpoints(mut self, endpoints: Arc<dyn ToolEndpoints>) -> Self {
        self.endpoints = Some(endpoints);
        self
    }

    /// Tell `observer` when the native runtime compacts its own context.
    pub fn with_compaction_observer(mut self, observer: Arc<dyn CompactionObserver>) -> Self {
        self.compaction = Some(observer);
        self
    }

    fn record(&self, message: Message) {
        crate::lock(&self.restorer).learn(&message);
        crate::lock(&self.messages).push(message);
    }

    /// Why the turn's tool budget is spent, once it is.
    pub fn budget_spent(&self) -> Option<String> {
        self.tools.exhausted()
    }

    /// Close the turn with the harness's answer: the recorded messages, plus
    /// the answer as an assistant message unless the last reply already said
    /// it. A turn that spent its tool budget ends with that error instead.
    pub fn finish(&self, answer: String) -> Result<TurnOutcome, crate::TurnError> {
        if let Some(reason) = self.tools.exhausted() {
            return Err(crate::TurnError::ToolBudget(reason));
        }
        let mut messages = crate::lock(&self.messages).clone();
        let said = matches!(messages.last(), Some(Message::Assistant { text, tool_calls, .. }) if *text == answer && tool_calls.is_empty());
        if !said {
            messages.push(Message::assistant(answer.clone()));
        }
        // The model's stop reason holds when the answer is its last reply;
        // an answer the harness composed itself is whole.
        let stop_reason = match *crate::lock(&self.last_stop) {
            Some(reason) if said => reason,
            _ => crate::StopReason::EndTurn,
        };
        self.ctx.events.emit(TurnEvent::FinalAnswer {
            text: answer.clone(),
            stop_reason,
        });
        Ok(TurnOutcome {
            new_messages: messages,
            answer,
            iterations: self.iterations.load(Ordering::Relaxed),
            usage: *crate::lock(&self.usage),
            stop_reason,
        })
    }
}

#[async_trait]
impl TurnServices for TurnMirror {
    async fn complete(
        &self,
        system: Option<String>,
        messages: Vec<Message>,
        tools: Vec<ToolSpec>,
        text_sink: Option<TextSink>,
    ) -> Result<ModelResponse, ModelError> {
        let result = self.model_call(system, messages, tools, text_sink).await;
        *crate::lock(&self.last_error) = result.as_ref().err().cloned();
        *crate::lock(&self.last_stop) = result.as_ref().ok().map(|r| r.stop_reason);
        result
    }

    async fn call_tool(&self, call: ToolCallRequest) -> Result<ToolOutput, TurnStopped> {
        // The call that spent the budget got (and recorded) the refusal;
        // calling on stops the turn and records nothing more.
        if let Some(reason) = self.tools.exhausted() {
            return Err(TurnStopped(reason));
        }
        let output = self.tools.execute(&call, &self.ctx).await;
        self.ctx.events.emit(TurnEvent::ToolResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            content: output.content.clone(),
            is_error: output.is_error,
            images: output.images.clone(),
        });
        self.record(Message::ToolResult(ToolResultMessage {
            call_id: call.id,
            tool: call.name,
            content: output.content.clone(),
            is_error: output.is_error,
            images: output.images.clone(),
        }));
        Ok(output)
    }

    fn tools(&self) -> Vec<ToolSpec> {
        self.tools.specs(&self.ctx)
    }

    fn last_model_error(&self) -> Option<ModelError> {
        crate::lock(&self.last_error).clone()
    }

    async fn gate_native(
        &self,
        call: ToolCallRequest,
    ) -> Result<serde_json::Value, crate::Refused> {
        let verdict = self.tools.gate(&call, &self.ctx).await;
        if let Err(refusal) = &verdict {
            tracing::info!(tool = %call.name, %refusal, "a native tool call was refused");
        }
        verdict
    }

    fn stream_text(&self, delta: &str) {
        let iteration = self.native_replies.load(Ordering::Relaxed) + 1;
        self.ctx.events.emit(TurnEvent::TextDelta {
            iteration,
            text: delta.to_string(),
        });
    }

    fn record_reply(&self, text: String, tool_calls: Vec<ToolCallRequest>) {
        let iteration = self.native_replies.fetch_add(1, Ordering::Relaxed) + 1;
        self.iterations.fetch_max(iteration, Ordering::Relaxed);
        self.ctx.events.emit(TurnEvent::ModelReply {
            iteration,
            text: text.clone(),
            tool_calls: tool_calls.clone(),
            usage: Usage::default(),
            reasoning: Vec::new(),
        });
        self.record(Message::Assistant {
            text,
            tool_calls,
            reasoning: Vec::new(),
        });
    }

    fn record_tool_result(&self, result: ToolResultMessage) {
        self.ctx.events.emit(TurnEvent::ToolResult {
            call_id: result.call_id.clone(),
            tool: result.tool.clone(),
            content: result.content.clone(),
            is_error: result.is_error,
            images: result.images.clone(),
        });
        self.record(Message::ToolResult(result));
    }

    fn native_thread(&self) -> Option<String> {
        crate::lock(&self.native_thread).clone()
    }

    fn stop_signal(&self, grace: std::time::Duration) -> tokio_util::sync::CancellationToken {
        self.ctx.allow_stop_grace(grace);
        self.ctx.cancel.clone()
    }

    async fn native_compaction(&self, phase: NativeCompaction) {
        self.ctx.events.emit(TurnEvent::NativeCompaction { phase });
        if let Some(observer) = &self.compaction {
            let turn = crate::lock(&self.messages).clone();
            observer.native_compaction(phase, &turn).await;
        }
    }

    fn tool_endpoint(self: Arc<Self>) -> Result<ToolEndpoint, String> {
        let mut served = crate::lock(&self.endpoint);
        if let Some((endpoint, _)) = &*served {
            return Ok(endpoint.clone());
        }
        let endpoints = self
            .endpoints
            .as_ref()
            .ok_or("this host serves no MCP endpoint of a turn's tools")?;
        let me: Arc<dyn TurnServices> = self.clone();
        let (endpoint, guard) = endpoints.open(Arc::downgrade(&me))?;
        *served = Some((endpoint.clone(), guard));
        Ok(endpoint)
    }

    fn set_native_thread(&self, thread: String, agent: String) {
        let mut stored = crate::lock(&self.native_thread);
        if stored.as_deref() != Some(thread.as_str()) {
            *stored = Some(thread.clone());
            self.ctx
                .events
                .emit(TurnEvent::NativeThread { thread, agent });
        }
    }
}

impl TurnMirror {
    async fn model_call(
        &self,
        system: Option<String>,
        mut messages: Vec<Message>,
        tools: Vec<ToolSpec>,
        text_sink: Option<TextSink>,
    ) -> Result<ModelResponse, ModelError> {
        crate::lock(&self.restorer).restore(&mut messages);
        let iteration = self.iterations.fetch_add(1, Ordering::Relaxed) + 1;
        if iteration > self.max_iterations {
            return Err(ModelError::new(
                ModelErrorKind::Other,
                format!(
                    "the harness exceeded the bound of {} model calls per turn",
                    self.max_iterations
                ),
            ));
        }
        let reply = self
            .model
            .complete(ModelRequest {
                model_ref: self.ctx.model_ref.clone(),
                system,
                messages: messages.into_iter().map(SharedMessage::from).collect(),
                tools,
                text_sink: Some(self.ctx.events.text_sink(iteration, text_sink)),
            })
            .await?;
        {
            let mut usage = crate::lock(&self.usage);
            usage.add(reply.usage);
        }
        self.ctx.events.emit(TurnEvent::ModelReply {
            iteration,
            text: reply.text.clone(),
            tool_calls: reply.tool_calls.clone(),
            usage: reply.usage,
            reasoning: reply.reasoning.clone(),
        });
        self.record(Message::Assistant {
            text: reply.text.clone(),
            tool_calls: reply.tool_calls.clone(),
            reasoning: reply.reasoning.clone(),
        });
        Ok(reply)
    }
}
