//! The per-turn tool budget: how many tool calls one turn may make and how
//! much tool-result text it may collect, for the built-in loop and for
//! harness plugins alike (both call tools through [`BudgetedTools`]).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::{RunContext, ToolCallRequest, ToolExecutor, ToolOutput, ToolSpec};

/// Limits of one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnBudget {
    /// Tool calls one turn may make (`agents.defaults.maxToolCallsPerTurn`).
    pub max_tool_calls: u32,
    /// Tool-result bytes one turn may collect (`agents.defaults.maxToolResultKbPerTurn`).
    pub max_result_bytes: u64,
}

impl Default for TurnBudget {
    fn default() -> Self {
        Self {
            max_tool_calls: 64,
            max_result_bytes: 4096 << 10,
        }
    }
}

/// A tool executor that spends one turn's budget. Once it is spent, calls
/// are not run (they get an error result) and [`BudgetedTools::exhausted`]
/// says why, so the turn can end with a clear error.
pub struct BudgetedTools {
    inner: Arc<dyn ToolExecutor>,
    budget: TurnBudget,
    calls: AtomicU32,
    result_bytes: AtomicU64,
    exhausted: Mutex<Option<String>>,
}

impl BudgetedTools {
    /// A fresh budget over `inner` for one turn.
    pub fn new(inner: Arc<dyn ToolExecutor>, budget: TurnBudget) -> Self {
        Self {
            inner,
            budget,
            calls: AtomicU32::new(0),
            result_bytes: AtomicU64::new(0),
            exhausted: Mutex::new(None),
        }
    }

    /// Why the budget is spent, once it is.
    pub fn exhausted(&self) -> Option<String> {
        crate::lock(&self.exhausted).clone()
    }

    fn spend(&self, reason: String) -> ToolOutput {
        let mut slot = crate::lock(&self.exhausted);
        let reason = slot.get_or_insert(reason).clone();
        ToolOutput {
            content: format!("tool call not run: {reason}"),
            is_error: true,
            images: Vec::new(),
        }
    }
}

#[async_trait]
impl ToolExecutor for BudgetedTools {
    fn specs(&self, ctx: &RunContext) -> Vec<ToolSpec> {
        self.inner.specs(ctx)
    }

    async fn gate(
        &self,
        call: &ToolCallRequest,
        ctx: &RunContext,
    ) -> Result<serde_json::Value, crate::Refused> {
        self.inner.gate(call, ctx).await
    }

    async fn execute(&self, call: &ToolCallRequest, ctx: &RunContext) -> ToolOutput {
        if self.exhausted().is_some() {
            return self.spend(String::new());
        }
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        if n > self.budget.max_tool_calls {
            return self.spend(format!(
                "the turn reached its limit of {} tool calls (agents.defaults.maxToolCallsPerTurn)",
                self.budget.max_tool_calls
            ));
        }
        let output = self.inner.execute(call, ctx).await;
        // Images count as the base64 text they are stored and sent as.
        let bytes = (output.content.len()
            + output
                .images
                .iter()
                .map(crate::Image::stored_len)
                .sum::<usize>()) as u64;
        let total = self.result_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if total > self.budget.max_result_bytes {
            return self.spend(format!(
                "the turn's tool results reached {total} bytes, over its limit of {} KiB (agents.defaults.maxToolResultKbPerTurn)",
                self.budget.max_result_bytes >> 10
            ));
        }
        output
    }
}
