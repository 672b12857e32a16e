//! The tool registry: names, origins, and compiled parameter schemas.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use clawhost_agent_core::{RunContext, ToolError, ToolSpec};
use serde_json::Value;

/// Where a tool comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOrigin {
    /// Built into the host.
    Host,
    /// Provided by the plugin with this id.
    Plugin(String),
    /// Provided by the MCP server of this name (`mcp.servers.<name>`).
    Mcp(String),
}

/// A callable tool.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name, description and parameter schema.
    fn spec(&self) -> &ToolSpec;
    /// Who provides it.
    fn origin(&self) -> ToolOrigin;
    /// Run it with validated parameters (shared with the hooks; their JSON
    /// text is made once); the error displays as the model sees it.
    async fn call(
        &self,
        call_id: &str,
        params: clawhost_hooks::SharedJson,
        ctx: &RunContext,
    ) -> Result<Value, ToolError>;
    /// Whether this call needs the operator's approval first (asked on the
    /// dispatch path unless a plugin's hook already had the call approved).
    fn approval(&self, _params: &Value) -> Option<clawhost_agent_core::ApprovalRequest> {
        None
    }
    /// The schema compiled when the tool was checked ([`CheckedTool`]), so
    /// registration does not compile it again; `None` compiles it there.
    fn compiled_schema(&self) -> Option<CompiledSchema> {
        None
    }
}

/// A tool's parameter schema, compiled once and shared by every registry
/// that holds its tool: at its check ([`CheckedTool::check`]), or at its
/// first use when this host compiled it before ([`CheckedTool::remembered`]).
#[derive(Clone)]
pub struct CompiledSchema(Arc<SchemaCell>);

struct SchemaCell {
    schema: Arc<Value>,
    compiled: OnceLock<Result<jsonschema::Validator, jsonschema::ValidationError<'static>>>,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledSchema")
    }
}

impl CompiledSchema {
    /// `spec`'s schema, compiled now.
    fn now(spec: &ToolSpec) -> Result<Self, RegistryError> {
        let schema = Self::deferred(spec);
        schema
            .validator()
            .map_err(|reason| RegistryError::BadSchema {
                name: spec.name.clone(),
                reason: reason.to_string(),
            })?;
        Ok(schema)
    }

    /// `spec`'s schema, compiled at its first use.
    fn deferred(spec: &ToolSpec) -> Self {
        Self(Arc::new(SchemaCell {
            schema: spec.parameters.clone(),
            compiled: OnceLock::new(),
        }))
    }

    /// The validator, compiled now if it was deferred; `Err` says why the
    /// schema does not compile.
    pub(crate) fn validator(
        &self,
    ) -> Result<&jsonschema::Validator, &jsonschema::ValidationError<'static>> {
        self.0
            .compiled
            .get_or_init(|| jsonschema::validator_for(&self.0.schema))
            .as_ref()
    }

    /// Whether two handles share one schema (and so one compilation).
    pub fn shares(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A tool spec whose name and schema were checked, with the compiled schema.
#[derive(Debug, Clone)]
pub struct CheckedTool {
    /// The spec.
    pub spec: ToolSpec,
    /// Its parameter schema, compiled.
    pub schema: CompiledSchema,
}

impl CheckedTool {
    /// Check `spec`'s name and compile its schema.
    pub fn check(spec: ToolSpec) -> Result<Self, RegistryError> {
        let schema = compile_schema(&spec)?;
        Ok(Self { spec, schema })
    }

    /// Check `spec`'s name and the top of its schema, and leave the schema's
    /// compilation to its first use: for a spec this host checked in full
    /// before (a plugin's registration remembered under the cache's MAC), so
    /// a start does not compile every tool's schema again.
    pub fn remembered(spec: ToolSpec) -> Result<Self, RegistryError> {
        check_spec(&spec)?;
        let schema = CompiledSchema::deferred(&spec);
        Ok(Self { spec, schema })
    }
}

/// Why a tool could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// Two tools share a name.
    #[error("tool `{name}` from {new:?} clashes with the one from {existing:?}")]
    Duplicate {
        /// Tool name.
        name: String,
        /// Who registered it first.
        existing: ToolOrigin,
        /// Who tried again.
        new: ToolOrigin,
    },
    /// The name is not `[a-zA-Z0-9_-]{1,64}`.
    #[error("tool name `{0}` is invalid: use 1–64 characters of [a-zA-Z0-9_-]")]
    BadName(String),
    /// The description or schema is over the operator's limit (both are sent
    /// with every model request).
    #[error("tool `{name}`: {what} is {size}, over the limit of {limit} ({key})")]
    TooLarge {
        /// Tool name.
        name: String,
        /// `description` or `parameter schema`.
        what: &'static str,
        /// Its size, with unit.
        size: String,
        /// The limit, with unit.
        limit: String,
        /// The config key of the limit.
        key: &'static str,
    },
    /// The parameter schema is not a valid JSON Schema object.
    #[error("tool `{name}` has an invalid parameter schema: {reason}")]
    BadSchema {
        /// Tool name.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

pub(crate) struct Entry {
    pub tool: Arc<dyn Tool>,
    pub schema: CompiledSchema,
}

/// Size limits on what a tool sends with every model request.
#[derive(Debug, Clone, Copy)]
pub struct ToolLimits {
    /// Longest description, in characters.
    pub max_description_chars: usize,
    /// Largest parameter schema, in bytes of JSON.
    pub max_schema_bytes: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        let c = clawhost_config::ToolsConfig::default();
        Self::from_config(&c)
    }
}

impl ToolLimits {
    /// The limits of the `tools` config section.
    pub fn from_config(config: &clawhost_config::ToolsConfig) -> Self {
        Self {
            max_description_chars: config.max_description_chars,
            max_schema_bytes: config.max_schema_kb.saturating_mul(1024),
        }
    }

    fn check(&self, spec: &ToolSpec) -> Result<(), RegistryError> {
        let chars = spec.description.chars().count();
        if chars > self.max_description_chars {
            return Err(RegistryError::TooLarge {
                name: spec.name.clone(),
                what: "description",
                size: format!("{chars} characters"),
                limit: format!("{} characters", self.max_description_chars),
                key: "tools.maxDescriptionChars",
            });
        }
        let bytes = serde_json::to_string(&spec.parameters).map_or(0, |t| t.len());
        if bytes > self.max_schema_bytes {
            return Err(RegistryError::TooLarge {
                name: spec.name.clone(),
                what: "parameter schema",
                size: format!("{bytes} bytes"),
                limit: format!("{} bytes", self.max_schema_bytes),
                key: "tools.maxSchemaKb",
            });
        }
        Ok(())
    }
}

/// Registered tools by name, each with its compiled schema. Names are
/// unique without regard to ASCII case, so a deny list cannot be slipped by
/// a name that differs only in case.
#[derive(Default)]
pub struct ToolRegistry {
    pub(crate) tools: BTreeMap<String, Entry>,
    limits: ToolLimits,
}

/// Check a tool's name and the top of its schema (cheap; done at every
/// registration).
fn check_spec(spec: &ToolSpec) -> Result<(), RegistryError> {
    let name_ok = !spec.name.is_empty()
        && spec.name.len() <= 64
        && spec
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !name_ok {
        return Err(RegistryError::BadName(spec.name.clone()));
    }
    if spec.parameters.get("type").and_then(Value::as_str) != Some("object") {
        return Err(RegistryError::BadSchema {
            name: spec.name.clone(),
            reason: "the top level must be `\"type\": \"object\"`".into(),
        });
    }
    Ok(())
}

/// Check a tool name and compile its schema; shared by registration and plugin loading.
pub fn compile_schema(spec: &ToolSpec) -> Result<CompiledSchema, RegistryError> {
    check_spec(spec)?;
    CompiledSchema::now(spec)
}

impl ToolRegistry {
    /// An empty registry with the default size limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty registry with these size limits.
    pub fn with_limits(limits: ToolLimits) -> Self {
        Self {
            tools: BTreeMap::new(),
            limits,
        }
    }

    fn clash(&self, name: &str) -> Option<&Entry> {
        self.tools
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, e)| e)
    }

    /// Add a tool; names are unique (ignoring ASCII case) across host and plugins.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        self.register_all(vec![tool])
    }

    /// Add several tools (one plugin's) all or none: if any is refused, none
    /// is added.
    pub fn register_all(&mut self, tools: Vec<Arc<dyn Tool>>) -> Result<(), RegistryError> {
        self.add(tools, false)
    }

    /// Add one of the host's built-in tools. Its schema is the host's own:
    /// only the top of it is checked now, and it compiles at the tool's
    /// first call, so a start does not compile every built-in schema (a
    /// test compiles each one).
    pub fn register_builtin(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        self.add(vec![tool], true)
    }

    /// Add `tools` all or none; `defer`: a schema the tool does not bring
    /// compiled compiles at first use.
    fn add(&mut self, tools: Vec<Arc<dyn Tool>>, defer: bool) -> Result<(), RegistryError> {
        let mut ready: Vec<(String, Entry)> = Vec::with_capacity(tools.len());
        for tool in tools {
            let spec = tool.spec();
            let earlier = ready
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(&spec.name))
                .map(|(_, e)| e);
            if let Some(existing) = self.clash(&spec.name).or(earlier) {
                return Err(RegistryError::Duplicate {
                    name: spec.name.clone(),
                    existing: existing.tool.origin(),
                    new: tool.origin(),
                });
            }
            self.limits.check(spec)?;
            let schema = match tool.compiled_schema() {
                Some(schema) => {
                    check_spec(spec)?;
                    schema
                }
                None if defer => {
                    check_spec(spec)?;
                    CompiledSchema::deferred(spec)
                }
                None => compile_schema(spec)?,
            };
            ready.push((spec.name.clone(), Entry { tool, schema }));
        }
        self.tools.extend(ready);
        Ok(())
    }

    /// Specs of every tool, by name.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.values().map(|e| e.tool.spec().clone()).collect()
    }

    /// Names of every tool.
    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;
    use clawhost_agent_core::RunContext;
    use serde_json::json;

    use super::*;

    /// A tool that brings its schema compiled, as plugin tools do.
    struct Precompiled(CheckedTool);

    #[async_trait]
    impl Tool for Precompiled {
        fn spec(&self) -> &ToolSpec {
            &self.0.spec
        }
        fn origin(&self) -> ToolOrigin {
            ToolOrigin::Plugin("p".into())
        }
        async fn call(
            &self,
            _: &str,
            params: clawhost_hooks::SharedJson,
            _: &RunContext,
        ) -> Result<Value, ToolError> {
            Ok(params.into_value())
        }
        fn compiled_schema(&self) -> Option<CompiledSchema> {
            Some(self.0.schema.clone())
        }
    }

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: "d".into(),
            parameters: json!({"type": "object"}).into(),
        }
    }

    #[test]
    fn a_remembered_schema_compiles_at_first_use_and_a_bad_one_says_so() {
        let good = CheckedTool::remembered(spec("t")).unwrap();
        assert!(good.schema.0.compiled.get().is_none(), "not compiled yet");
        assert!(good.schema.validator().is_ok());
        let mut bad = spec("u");
        bad.parameters =
            json!({"type": "object", "properties": {"x": {"type": "no-such-type"}}}).into();
        assert!(matches!(
            CheckedTool::check(bad.clone()),
            Err(RegistryError::BadSchema { .. })
        ));
        let remembered = CheckedTool::remembered(bad).unwrap();
        assert!(remembered.schema.validator().is_err());
        // Names and the top of the schema are still checked at once.
        assert!(CheckedTool::remembered(spec("bad name")).is_err());
    }

    #[test]
    fn a_compiled_schema_is_shared_not_compiled_again_and_names_are_still_checked() {
        let checked = CheckedTool::check(spec("t")).unwrap();
        let mut registry = ToolRegistry::new();
        registry
            .register(Arc::new(Precompiled(checked.clone())))
            .unwrap();
        assert!(registry.tools["t"].schema.shares(&checked.schema));
        // A spec renamed after its check is checked again at registration.
        let mut renamed = checked;
        renamed.spec.name = "bad name".into();
        assert!(matches!(
            registry.register(Arc::new(Precompiled(renamed))),
            Err(RegistryError::BadName(_))
        ));
    }
}
