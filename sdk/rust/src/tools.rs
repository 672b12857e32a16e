//! Tools with typed parameters: a serde type in, its JSON Schema derived.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::{CallContext, ToolError, ToolSpec};

/// A tool call with untyped parameters (for [`Tools::add_raw`]).
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The tool name.
    pub tool: String,
    /// The model's id for this call.
    pub call_id: String,
    /// Parameters, already validated by the host against the tool's schema.
    pub params: Value,
    /// The run the call belongs to.
    pub context: CallContext,
}

type Handler<P> = Box<dyn Fn(&P, ToolCall) -> Result<Value, ToolError>>;

/// The tools a plugin provides, each with its handler.
pub struct Tools<P> {
    entries: Vec<(ToolSpec, Handler<P>)>,
}

impl<P> Default for Tools<P> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<P: 'static> Tools<P> {
    /// Add a tool whose parameters are `A` (its JSON Schema is derived) and
    /// whose result is any serializable `R`. Parameters that do not
    /// deserialize into `A` give the model an `invalid-params` error.
    pub fn add<A, R, E>(
        &mut self,
        name: &str,
        description: &str,
        handler: impl Fn(&P, A) -> Result<R, E> + 'static,
    ) -> &mut Self
    where
        A: DeserializeOwned + JsonSchema,
        R: Serialize,
        E: Into<ToolError>,
    {
        let schema = serde_json::to_value(schemars::schema_for!(A)).unwrap_or(Value::Null);
        self.add_raw(name, description, schema, move |plugin, call| {
            let args: A = serde_json::from_value(call.params)
                .map_err(|e| ToolError::InvalidParams(e.to_string()))?;
            let result = handler(plugin, args).map_err(Into::into)?;
            serde_json::to_value(result).map_err(|e| ToolError::Failed(e.to_string()))
        })
    }

    /// Add a tool with a hand-written JSON Schema and untyped parameters.
    pub fn add_raw(
        &mut self,
        name: &str,
        description: &str,
        parameters: Value,
        handler: impl Fn(&P, ToolCall) -> Result<Value, ToolError> + 'static,
    ) -> &mut Self {
        let spec = ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: parameters.to_string(),
        };
        self.entries.push((spec, Box::new(handler)));
        self
    }

    pub(crate) fn specs(&self) -> Vec<ToolSpec> {
        self.entries.iter().map(|(s, _)| s.clone()).collect()
    }

    pub(crate) fn call(&self, plugin: &P, call: ToolCall) -> Result<Value, ToolError> {
        match self.entries.iter().find(|(s, _)| s.name == call.tool) {
            Some((_, handler)) => handler(plugin, call),
            None => Err(ToolError::Failed(format!("no tool named `{}`", call.tool))),
        }
    }
}
