//! The built-in turn loop (runtime `openclaw`): user message → model → tool
//! calls → tool results → model … until a final answer or the iteration bound.

use std::sync::Arc;

use crate::{
    BudgetedTools, Message, ModelClient, ModelError, ModelRequest, RunContext, SharedMessage,
    StopReason, ToolExecutor, ToolResultMessage, TurnBudget, TurnEvent, Usage, UserInput,
};

/// What the loop sends when it continues an answer cut off at the output
/// token limit (`agents.defaults.onMaxTokens: "continue"`).
pub const CONTINUE_PROMPT: &str =
    "Your previous reply was cut off at the output token limit. Continue exactly where it stopped, without repeating anything.";

/// Why a turn did not produce an answer.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// The model call failed.
    #[error("model call failed: {0}")]
    Model(ModelError),
    /// The model kept calling tools past the bound.
    #[error("no final answer after {0} model calls (agent.maxIterations)")]
    MaxIterations(u32),
    /// The turn spent its tool budget (calls or result bytes).
    #[error("turn stopped: {0}")]
    ToolBudget(String),
}

impl From<ModelError> for TurnError {
    fn from(e: ModelError) -> Self {
        TurnError::Model(e)
    }
}

/// The result of a turn.
#[derive(Debug, Clone)]
pub struct TurnOutcome {
    /// Messages the turn added (user message first), for the transcript.
    pub new_messages: Vec<Message>,
    /// The final answer.
    pub answer: String,
    /// Model calls made.
    pub iterations: u32,
    /// Token usage summed over the turn.
    pub usage: Usage,
    /// Why the model's last reply stopped: `EndTurn` for a whole answer,
    /// `MaxTokens` for one cut off at the output token limit, `Refusal`
    /// when the answer is the model declining.
    pub stop_reason: StopReason,
}

/// The agent loop: owns no state between turns.
#[derive(Clone)]
pub struct TurnLoop {
    model: Arc<dyn ModelClient>,
    tools: Arc<dyn ToolExecutor>,
    max_iterations: u32,
    system: Option<String>,
    pruning: Option<crate::Pruning>,
    budget: TurnBudget,
    continue_cut_off: bool,
}

impl TurnLoop {
    /// A loop over a model and a tool executor, bounded to `max_iterations` model calls.
    pub fn new(
        model: Arc<dyn ModelClient>,
        tools: Arc<dyn ToolExecutor>,
        max_iterations: u32,
    ) -> Self {
        Self {
            model,
            tools,
            max_iterations: max_iterations.max(1),
            system: None,
            pruning: None,
            budget: TurnBudget::default(),
            continue_cut_off: false,
        }
    }

    /// Continue an answer cut off at the output token limit with another
    /// model call ([`CONTINUE_PROMPT`]), within the iteration bound, instead
    /// of reporting it cut off.
    pub fn with_continue_on_max_tokens(mut self, on: bool) -> Self {
        self.continue_cut_off = on;
        self
    }

    /// Bound the tool calls and tool-result bytes of each turn.
    pub fn with_budget(mut self, budget: TurnBudget) -> Self {
        self.budget = budget;
        self
    }

    /// Prune old oversized tool results from what the model sees (in memory only).
    pub fn with_pruning(mut self, pruning: crate::Pruning) -> Self {
        self.pruning = Some(pruning);
        self
    }

    /// Set the system prompt.
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Run one turn on top of `history`. Tool failures become error results the
    /// model sees; only a failed model call or the iteration bound end the turn early.
    pub async fn run(
        &self,
        ctx: &RunContext,
        history: &[SharedMessage],
        user_text: &str,
    ) -> Result<TurnOutcome, TurnError> {
        self.run_with_context(ctx, history, &UserInput::from(user_text), user_text)
            .await
    }

    /// [`TurnLoop::run`] of a user's input, sending the model `sent_text`
    /// (the user's text with context hooks added) while the turn records the
    /// input as it was.
    pub async fn run_with_context(
        &self,
        ctx: &RunContext,
        history: &[SharedMessage],
        user: &UserInput,
        sent_text: &str,
    ) -> Result<TurnOutcome, TurnError> {
        // The turn's own messages; the history is only read. Each request
        // shares both (it holds pointers, not copies).
        let mut messages = vec![SharedMessage::from(user.message_with_text(sent_text))];
        ctx.events.emit(TurnEvent::UserMessage {
            text: user.text.clone(),
            images: user.images.clone(),
        });
        let budget = BudgetedTools::new(self.tools.clone(), self.budget);
        let tools = self.tools.specs(ctx);
        let mut usage = Usage::default();
        // The parts of an answer continued after a cut-off, joined at the end.
        let mut continued = String::new();
        for iteration in 1..=self.max_iterations {
            let request = ModelRequest {
                model_ref: ctx.model_ref.clone(),
                system: self.system.clone(),
                messages: match &self.pruning {
                    Some(p) => p.apply_split(history, &messages),
                    None => history.iter().chain(&messages).cloned().collect(),
                },
                tools: tools.clone(),
                text_sink: Some(ctx.events.text_sink(iteration, None)),
            };
            let reply = self.model.complete(request).await?;
            usage.add(reply.usage);
            ctx.events.emit(TurnEvent::ModelReply {
                iteration,
                text: reply.text.clone(),
                tool_calls: reply.tool_calls.clone(),
                usage: reply.usage,
                reasoning: reply.reasoning.clone(),
            });
            if reply.tool_calls.is_empty() {
                let cut_off = reply.stop_reason == StopReason::MaxTokens;
                continued.push_str(&reply.text);
                messages.push(SharedMessage::from(Message::Assistant {
                    text: reply.text,
                    tool_calls: Vec::new(),
                    reasoning: reply.reasoning,
                }));
                if cut_off && self.continue_cut_off && iteration < self.max_iterations {
                    messages.push(SharedMessage::from(Message::user(CONTINUE_PROMPT)));
                    continue;
                }
                let answer = std::mem::take(&mut continued);
                ctx.events.emit(TurnEvent::FinalAnswer {
                    text: answer.clone(),
                    stop_reason: reply.stop_reason,
                });
                return Ok(TurnOutcome {
                    new_messages: {
                        messages[0] = SharedMessage::from(user.message());
                        // The requests are gone, so these are usually the
                        // last holders (a model that kept a request costs a copy).
                        messages
                            .into_iter()
                            .map(SharedMessage::into_inner)
                            .collect()
                    },
                    answer,
                    iterations: iteration,
                    usage,
                    stop_reason: reply.stop_reason,
                });
            }
            // The calls are read from the message that records them (one
            // copy of them, in the event above, not two).
            let asked = SharedMessage::from(Message::Assistant {
                text: reply.text,
                tool_calls: reply.tool_calls,
                reasoning: reply.reasoning,
            });
            messages.push(asked.clone());
            for call in asked.requested_calls() {
                let output = budget.execute(call, ctx).await;
                ctx.events.emit(TurnEvent::ToolResult {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    content: output.content.clone(),
                    is_error: output.is_error,
                    images: output.images.clone(),
                });
                messages.push(SharedMessage::from(Message::ToolResult(
                    ToolResultMessage {
                        call_id: call.id.clone(),
                        tool: call.name.clone(),
                        content: output.content,
                        is_error: output.is_error,
                        images: output.images,
                    },
                )));
            }
            if let Some(reason) = budget.exhausted() {
                return Err(TurnError::ToolBudget(reason));
            }
        }
        Err(TurnError::MaxIterations(self.max_iterations))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use async_trait::async_trait;

    use super::*;
    use crate::{ModelResponse, StopReason, ToolCallRequest, ToolOutput, ToolSpec};

    struct Replies(Mutex<Vec<ModelResponse>>, Mutex<Vec<ModelRequest>>);

    #[async_trait]
    impl ModelClient for Replies {
        async fn complete(&self, request: ModelRequest) -> Result<ModelResponse, ModelError> {
            self.1.lock().unwrap().push(request);
            Ok(self.0.lock().unwrap().remove(0))
        }
    }

    struct Upper;

    #[async_trait]
    impl ToolExecutor for Upper {
        fn specs(&self, _ctx: &RunContext) -> Vec<ToolSpec> {
            vec![ToolSpec {
                name: "upper".into(),
                description: "uppercase".into(),
                parameters: serde_json::json!({"type": "object"}).into(),
            }]
        }
        async fn execute(&self, call: &ToolCallRequest, _ctx: &RunContext) -> ToolOutput {
            ToolOutput {
                content: call.arguments["s"].as_str().unwrap_or("").to_uppercase(),
                is_error: false,
                images: Vec::new(),
            }
        }
    }

    fn reply(text: &str, calls: Vec<ToolCallRequest>) -> ModelResponse {
        ModelResponse {
            text: text.into(),
            stop_reason: if calls.is_empty() {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            },
            tool_calls: calls,
            usage: Usage {
                input_tokens: 10,
                output_tokens: 2,
                ..Usage::default()
            },
            reasoning: Vec::new(),
        }
    }

    fn call(id: &str) -> ToolCallRequest {
        ToolCallRequest {
            id: id.into(),
            name: "upper".into(),
            arguments: serde_json::json!({"s": "hi"}),
        }
    }

    #[tokio::test]
    async fn tool_results_reach_the_model_and_the_answer_ends_the_turn() {
        let model = Arc::new(Replies(
            Mutex::new(vec![
                reply("", vec![call("c1")]),
                reply("it says HI", vec![]),
            ]),
            Mutex::default(),
        ));
        let turn = TurnLoop::new(model.clone(), Arc::new(Upper), 4);
        let ctx = RunContext::new("main", "scripted/demo");
        let out = turn.run(&ctx, &[], "shout hi").await.unwrap();
        assert_eq!(out.answer, "it says HI");
        assert_eq!(out.iterations, 2);
        assert_eq!(out.usage.input_tokens, 20);
        assert_eq!(out.new_messages.len(), 4);
        let second = &model.1.lock().unwrap()[1];
        assert!(
            matches!(&*second.messages[2], Message::ToolResult(r) if r.content == "HI" && r.call_id == "c1")
        );
        assert!(
            matches!(ctx.events.snapshot().last(), Some(TurnEvent::FinalAnswer { text, .. }) if text == "it says HI")
        );
    }

    #[tokio::test]
    async fn a_turn_that_spends_its_tool_budget_ends_with_a_clear_error() {
        let calls: Vec<_> = (0..10).map(|i| call(&format!("c{i}"))).collect();
        let turn = TurnLoop::new(
            Arc::new(Replies(
                Mutex::new(vec![reply("", calls), reply("done", vec![])]),
                Mutex::default(),
            )),
            Arc::new(Upper),
            4,
        )
        .with_budget(TurnBudget {
            max_tool_calls: 3,
            max_result_bytes: 1 << 20,
        });
        let ctx = RunContext::new("main", "m/x");
        let err = turn.run(&ctx, &[], "many").await.unwrap_err();
        assert!(
            matches!(&err, TurnError::ToolBudget(r) if r.contains("maxToolCallsPerTurn")),
            "{err}"
        );
        let results: Vec<_> = ctx
            .events
            .snapshot()
            .into_iter()
            .filter_map(|e| match e {
                TurnEvent::ToolResult { is_error, .. } => Some(is_error),
                _ => None,
            })
            .collect();
        assert_eq!(results.len(), 10, "every call gets a result");
        assert_eq!(results.iter().filter(|e| !**e).count(), 3);

        let turn = TurnLoop::new(
            Arc::new(Replies(
                Mutex::new(vec![reply("", vec![call("a"), call("b")])]),
                Mutex::default(),
            )),
            Arc::new(Upper),
            4,
        )
        .with_budget(TurnBudget {
            max_tool_calls: 10,
            max_result_bytes: 3,
        });
        let err = turn.run(&ctx, &[], "big").await.unwrap_err();
        assert!(
            matches!(&err, TurnError::ToolBudget(r) if r.contains("maxToolResultKbPerTurn")),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_model_that_never_stops_calling_tools_hits_the_bound() {
        let replies = (0..3)
            .map(|i| reply("", vec![call(&format!("c{i}"))]))
            .collect();
        let turn = TurnLoop::new(
            Arc::new(Replies(Mutex::new(replies), Mutex::default())),
            Arc::new(Upper),
            3,
        );
        let err = turn
            .run(&RunContext::new("main", "m/x"), &[], "loop")
            .await
            .unwrap_err();
        assert!(matches!(err, TurnError::MaxIterations(3)));
    }
}
