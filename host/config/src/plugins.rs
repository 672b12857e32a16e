//! The `plugins` section: where plugins come from, who may load, what each may touch.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::hooks::{FailPolicy, HookSettings, PluginHooks};
use crate::{HookGate, HookKind};

/// The `plugins` section.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginsConfig {
    /// `false` loads no plugin at all (OpenClaw's `plugins.enabled`).
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Plugin packages: a directory holding `openclaw.plugin.json`, or a
    /// directory of such directories.
    #[serde(default)]
    pub paths: Vec<PathBuf>,
    /// OpenClaw's spelling of the package paths (`plugins.load.paths`),
    /// searched after `paths`.
    #[serde(default)]
    pub load: PluginsLoad,
    /// When set, only these plugin ids load.
    #[serde(default)]
    pub allow: Option<Vec<String>>,
    /// These plugin ids never load (wins over `allow`).
    #[serde(default)]
    pub deny: Vec<String>,
    /// Where compiled components are cached (default: a `clawhost` dir in the
    /// user cache). Created 0700; refused when it is not owned by this user,
    /// is a symlink, or lies inside a plugin path or a filesystem grant.
    #[serde(default)]
    pub cache_dir: Option<PathBuf>,
    /// The key that authenticates cached components (keyed BLAKE3), kept
    /// outside the cache dir (default: `clawhost/component-cache.key` in the
    /// user state dir). Created 0600 on first use.
    #[serde(default)]
    pub cache_key_file: Option<PathBuf>,
    /// Largest total size of the compiled-component cache, in MiB; the
    /// least recently used artifacts go first (default 2048).
    #[serde(default = "default_cache_max_mb")]
    pub cache_max_mb: u64,
    /// Compiled artifacts unused for this many days are removed (default 30).
    #[serde(default = "default_cache_max_age_days")]
    pub cache_max_age_days: u64,
    /// Allow filesystem grants of different plugins to overlap (one inside
    /// another). Off by default: a plugin with write access could otherwise
    /// change what another plugin's grant holds.
    #[serde(default)]
    pub allow_overlapping_grants: bool,
    /// Resource limits for every plugin instance.
    #[serde(default)]
    pub limits: PluginLimits,
    /// Per-plugin settings by plugin id.
    #[serde(default)]
    pub entries: BTreeMap<String, PluginEntry>,
    /// Public keys whose signatures the operator trusts, by name: an ECDSA
    /// P-256 key in PEM (`cosign generate-key-pair`, `openssl ec -pubout`),
    /// inline or in a file. See "Plugins from registries".
    #[serde(default)]
    pub trust: BTreeMap<String, TrustedKeyConfig>,
    /// Every plugin needs a signature by a trusted key (each entry may say
    /// so alone with its `requireSignature`).
    #[serde(default)]
    pub require_signature: bool,
    /// Credentials for OCI registries, by `host[:port]` (`${VAR}` for the
    /// secret); a registry not listed here uses the Docker config file's.
    #[serde(default)]
    pub registries: BTreeMap<String, RegistryLogin>,
    /// Exclusive slots (OpenClaw's `plugins.slots`).
    #[serde(default)]
    pub slots: PluginSlots,
}

/// `plugins.slots`: which plugin fills each exclusive slot.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginSlots {
    /// The plugin that owns compaction (supplies summaries through the
    /// compaction-provider seam): a plugin id from `plugins.entries`, or
    /// `legacy` for the host's own model summary. Unset: every plugin granted
    /// `grants.compaction`, by priority.
    #[serde(default)]
    pub context_engine: Option<String>,
    /// OpenClaw's memory slot. clawhost has no memory plugins yet, so the
    /// only value accepted is `none`.
    #[serde(default)]
    pub memory: Option<String>,
}

impl PluginSlots {
    /// Whether the compaction provider of plugin `id` is the one the
    /// `contextEngine` slot selects; `Err` names the setting that excludes it.
    pub fn compaction_allowed(&self, id: &str) -> Result<(), &'static str> {
        match self.context_engine.as_deref() {
            Some(engine) if engine != id => Err("plugins.slots.contextEngine"),
            _ => Ok(()),
        }
    }
}

/// `plugins.load`: OpenClaw's key for where plugin packages are.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginsLoad {
    /// Plugin packages, as in `plugins.paths`.
    #[serde(default)]
    pub paths: Vec<PathBuf>,
}

impl Default for PluginsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            paths: Vec::new(),
            load: PluginsLoad::default(),
            allow: None,
            deny: Vec::new(),
            cache_dir: None,
            cache_key_file: None,
            cache_max_mb: default_cache_max_mb(),
            cache_max_age_days: default_cache_max_age_days(),
            allow_overlapping_grants: false,
            limits: PluginLimits::default(),
            entries: BTreeMap::new(),
            trust: BTreeMap::new(),
            require_signature: false,
            registries: BTreeMap::new(),
            slots: PluginSlots::default(),
        }
    }
}

/// A user name and password (or token) for one registry.
#[derive(Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RegistryLogin {
    /// User name.
    pub username: String,
    /// Password or token (write `${VAR}`).
    pub password: String,
}

impl std::fmt::Debug for RegistryLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryLogin")
            .field("username", &self.username)
            .field("password", &"<hidden>")
            .finish()
    }
}

/// A public key the operator trusts: `key` (PEM text) or `keyFile` (a path,
/// relative to the config file's directory).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrustedKeyConfig {
    /// The key, in PEM.
    #[serde(default)]
    pub key: Option<String>,
    /// A file holding the key, in PEM.
    #[serde(default)]
    pub key_file: Option<PathBuf>,
}

impl PluginsConfig {
    /// Whether plugin `id` needs a signature by a trusted key.
    pub fn requires_signature(&self, id: &str) -> bool {
        self.require_signature || self.entries.get(id).is_some_and(|e| e.require_signature)
    }

    /// The trusted keys' PEM texts, by name (`keyFile`s read from `base`).
    pub fn trusted_pems(&self, base: &std::path::Path) -> Result<Vec<(String, String)>, String> {
        self.trust
            .iter()
            .map(|(name, key)| match (&key.key, &key.key_file) {
                (Some(pem), None) => Ok((name.clone(), pem.clone())),
                (None, Some(file)) => std::fs::read_to_string(base.join(file))
                    .map(|pem| (name.clone(), pem))
                    .map_err(|e| format!("plugins.trust.{name}.keyFile {}: {e}", file.display())),
                _ => Err(format!(
                    "plugins.trust.{name}: give `key` or `keyFile`, one of them"
                )),
            })
            .collect()
    }

    /// The largest memory cap any plugin may have, in MiB: the default and
    /// every per-plugin `memoryMb` (it sizes the engine's memory slots).
    pub fn max_memory_mb(&self) -> u64 {
        self.entries
            .values()
            .filter_map(|e| e.memory_mb)
            .fold(self.limits.memory_mb, u64::max)
    }

    /// Every package path with its config key: `plugins.paths[i]`, then
    /// `plugins.load.paths[i]`.
    pub fn package_paths(&self) -> Vec<(String, &PathBuf)> {
        let paths = self.paths.iter().enumerate();
        let load = self.load.paths.iter().enumerate();
        paths
            .map(|(i, p)| (format!("plugins.paths[{i}]"), p))
            .chain(load.map(|(i, p)| (format!("plugins.load.paths[{i}]"), p)))
            .collect()
    }
}

/// Resource limits for plugin instances.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginLimits {
    /// Memory budget per instance, in MiB: every linear memory and table of
    /// the instance counts against it together.
    #[serde(default = "default_memory_mb")]
    pub memory_mb: u64,
    /// Wall-clock deadline of one call into a plugin, in milliseconds.
    #[serde(default = "default_call_timeout_ms")]
    pub call_timeout_ms: u64,
    /// Failed calls in a row (traps, deadlines, memory) after which a
    /// plugin is quarantined: its calls are refused until a backoff passes.
    #[serde(default = "default_max_traps")]
    pub max_consecutive_traps: u32,
    /// The first quarantine's length, in milliseconds; each failed retry
    /// doubles it, up to 10 minutes, and a served call ends it.
    #[serde(default = "default_quarantine_ms")]
    pub quarantine_ms: u64,
    /// Wall-clock deadline of one harness turn (`run-attempt`), which includes
    /// the model and tool calls it makes, in milliseconds.
    #[serde(default = "default_harness_turn_ms")]
    pub harness_turn_timeout_ms: u64,
    /// Largest text one call may hand back (a tool result or error, a hook's
    /// payload), in KiB; larger answers become an error.
    #[serde(default = "default_max_output_kb")]
    pub max_output_kb: u64,
    /// Log bytes (the `log` import, stdout, stderr) one call may emit, in
    /// KiB; the rest is dropped and counted. Every line is also cut at 8 KiB.
    #[serde(default = "default_max_log_kb")]
    pub max_log_kb_per_call: u64,
    /// Handles (open files, directories, streams, pollables) one instance
    /// may hold at once; opening more fails inside the guest.
    #[serde(default = "default_max_handles")]
    pub max_handles: u32,
    /// Largest component file a package may hold, in MiB.
    #[serde(default = "default_max_component_mb")]
    pub max_component_mb: u64,
}

fn default_max_log_kb() -> u64 {
    256
}
fn default_max_handles() -> u32 {
    128
}
fn default_max_component_mb() -> u64 {
    128
}

fn default_max_output_kb() -> u64 {
    1024
}

fn default_harness_turn_ms() -> u64 {
    600_000
}

fn default_memory_mb() -> u64 {
    64
}
fn default_call_timeout_ms() -> u64 {
    5_000
}
fn default_max_traps() -> u32 {
    3
}
fn default_quarantine_ms() -> u64 {
    10_000
}

impl Default for PluginLimits {
    fn default() -> Self {
        Self {
            memory_mb: default_memory_mb(),
            call_timeout_ms: default_call_timeout_ms(),
            max_consecutive_traps: default_max_traps(),
            quarantine_ms: default_quarantine_ms(),
            harness_turn_timeout_ms: default_harness_turn_ms(),
            max_output_kb: default_max_output_kb(),
            max_log_kb_per_call: default_max_log_kb(),
            max_handles: default_max_handles(),
            max_component_mb: default_max_component_mb(),
        }
    }
}

/// Operator settings for one plugin.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginEntry {
    /// `false` skips the plugin without treating it as refused.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Expected sha256 (hex) of the component file; a mismatch refuses the plugin.
    #[serde(default)]
    pub sha256: Option<String>,
    /// This plugin needs a signature by a trusted key (`plugins.trust`),
    /// checked at install and at every load.
    #[serde(default)]
    pub require_signature: bool,
    /// Where `plugins install` fetched the plugin: `oci://registry/repository@sha256:…`,
    /// pinned to the manifest's digest (informational: the package beside the
    /// config is what loads).
    #[serde(default)]
    pub source: Option<String>,
    /// The plugin's own configuration, handed to it through the `config` import.
    #[serde(default)]
    pub config: serde_json::Value,
    /// Capabilities the operator allows this plugin.
    #[serde(default)]
    pub grants: PluginGrants,
    /// Fail policy of all this plugin's hooks (default: per hook, see
    /// [`PluginEntry::fail_policy_for`]).
    #[serde(default)]
    pub fail_policy: Option<FailPolicy>,
    /// Hook settings: per hook name (e.g. `before_tool_call`), and OpenClaw's
    /// `timeoutMs`, `timeouts`, `allowConversationAccess`, `allowPromptInjection`.
    #[serde(default)]
    pub hooks: PluginHooks,
    /// Memory cap of this plugin's instance in MiB, instead of
    /// `plugins.limits.memoryMb` (a Python component needs more than a Rust one).
    #[serde(default)]
    pub memory_mb: Option<u64>,
    /// The agent must not run without this plugin (a guard): when it is
    /// refused or missing, the runner does not start.
    #[serde(default)]
    pub required: bool,
    /// Built-in tools (`read`, `exec` …) this plugin's tools of the same
    /// name replace; without it such a tool of the plugin is not offered.
    #[serde(default)]
    pub replace_builtins: Vec<String>,
}

impl PluginEntry {
    /// The fail policy of `hook` for this plugin: the hook's own setting, else
    /// the plugin's, else the hook's default ([`HookKind::default_fail_policy`]).
    pub fn fail_policy_for(&self, hook: HookKind) -> FailPolicy {
        self.hook_settings(hook)
            .and_then(|h| h.fail_policy)
            .or(self.fail_policy)
            .unwrap_or_else(|| hook.default_fail_policy())
    }

    /// The priority the operator pinned for `hook`, overriding the plugin's own.
    pub fn priority_for(&self, hook: HookKind) -> Option<i32> {
        self.hook_settings(hook).and_then(|h| h.priority)
    }

    /// The deadline of one call of `hook`, in milliseconds: the hook's own
    /// (`hooks.<hook>.timeoutMs` or `hooks.timeouts.<hook>`), else the
    /// plugin's (`hooks.timeoutMs`), else the hook's default (30 s for
    /// `agent_end`); `None` means the plugin call deadline
    /// (`plugins.limits.callTimeoutMs`).
    pub fn timeout_ms_for(&self, hook: HookKind) -> Option<u64> {
        self.hook_settings(hook)
            .and_then(|h| h.timeout_ms)
            .or_else(|| self.hooks.timeouts.get(hook.name()).copied())
            .or(self.hooks.timeout_ms)
            .or(hook.default_deadline_ms())
    }

    /// Whether `hook` may be delivered to this plugin, by its
    /// [`HookGate`]: the hooks that see the conversation need
    /// `hooks.allowConversationAccess`, the prompt-mutating one must not be
    /// turned off by `hooks.allowPromptInjection: false`, the tool-result
    /// middleware needs `grants.toolResults`, the compaction-provider seam
    /// `grants.compaction`, `resolve_exec_env` a `grants.execEnv` name.
    /// `Err` names the setting that withholds it.
    pub fn hook_allowed(&self, hook: HookKind) -> Result<(), &'static str> {
        let allowed = match hook.gate() {
            HookGate::Open => true,
            HookGate::ConversationAccess => self.hooks.allow_conversation_access,
            HookGate::PromptInjection => self.hooks.allow_prompt_injection,
            HookGate::ToolResults => self.grants.tool_results,
            HookGate::Compaction => self.grants.compaction,
            HookGate::ExecEnv => !self.grants.exec_env.is_empty(),
        };
        match hook.gate().setting() {
            Some(setting) if !allowed => Err(setting),
            _ => Ok(()),
        }
    }

    fn hook_settings(&self, hook: HookKind) -> Option<&HookSettings> {
        self.hooks.per_hook.get(hook.name())
    }
}

fn default_cache_max_mb() -> u64 {
    2048
}

fn default_cache_max_age_days() -> u64 {
    30
}

fn default_true() -> bool {
    true
}

impl Default for PluginEntry {
    fn default() -> Self {
        Self {
            enabled: true,
            sha256: None,
            require_signature: false,
            source: None,
            config: serde_json::Value::Null,
            grants: PluginGrants::default(),
            fail_policy: None,
            hooks: PluginHooks::default(),
            memory_mb: None,
            required: false,
            replace_builtins: Vec::new(),
        }
    }
}

/// Capabilities an operator allows one plugin. The effective grant is this ∩
/// what the plugin's manifest asks for.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginGrants {
    /// Host directories the plugin may see.
    #[serde(default)]
    pub filesystem: Vec<FsGrant>,
    /// Environment variables the plugin may read.
    #[serde(default)]
    pub env: Vec<EnvGrant>,
    /// May act as an agent runtime: imports `openclaw:plugin/model` (model
    /// calls through the host) and `openclaw:plugin/tools` (tool calls through
    /// the host's dispatch path).
    #[serde(default)]
    pub harness: bool,
    /// May replace the tool results the model sees (the `tool_result`
    /// middleware hook).
    #[serde(default)]
    pub tool_results: bool,
    /// May supply compaction summaries (the compaction-provider seam).
    #[serde(default)]
    pub compaction: bool,
    /// Processes a harness plugin may start, by the name it opens them with
    /// (API 0.2.2 `native-runtime`): the operator names the command, never
    /// the plugin.
    #[serde(default)]
    pub processes: BTreeMap<String, ProcessGrant>,
    /// Environment variables the plugin's `resolve_exec_env` hook may set
    /// for the host's `exec` commands: names, or prefixes ending in `*`
    /// (`THREADLINE_*`). Loader and shell start-up variables (`LD_*`,
    /// `BASH_ENV`, ...) and those the host sets are never set by a plugin.
    #[serde(default)]
    pub exec_env: Vec<String>,
}

/// A process the operator lets a harness plugin start (e.g. the Codex
/// app-server, an ACP agent), spoken to a line at a time over its stdio.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProcessGrant {
    /// The program: a path (relative to the config file's directory when it
    /// holds a `/`) or a name looked up on `PATH`. No shell runs it.
    pub command: String,
    /// Its arguments, passed as they are.
    #[serde(default)]
    pub args: Vec<String>,
    /// Its whole environment (nothing else of the host's is passed): a name
    /// passes the host's value (e.g. the provider's key variable), `{name,
    /// value}` sets one. `PATH` is passed when not listed.
    #[serde(default)]
    pub env: Vec<EnvGrant>,
    /// Its working directory (relative to the config file's directory).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
}

/// A host directory mounted into a plugin.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FsGrant {
    /// Path the plugin sees (absolute, e.g. `/notes`).
    pub guest_path: String,
    /// Host directory behind it (relative to the config file's directory).
    pub host_path: PathBuf,
    /// Most access allowed.
    #[serde(default)]
    pub access: Access,
}

/// Filesystem access level.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Read files and list directories.
    #[default]
    ReadOnly,
    /// Also create, write and remove.
    ReadWrite,
}

/// An environment variable a plugin may read.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum EnvGrant {
    /// Pass the host's value of this variable (if set).
    Inherit(String),
    /// Set this variable to a fixed value.
    Fixed {
        /// Variable name.
        name: String,
        /// Value.
        value: String,
    },
}

impl EnvGrant {
    /// The variable name.
    pub fn name(&self) -> &str {
        match self {
            EnvGrant::Inherit(name) => name,
            EnvGrant::Fixed { name, .. } => name,
        }
    }

    /// The variable and its value: the host's for a name (`None` when the
    /// host has none), the given one for `{name, value}`.
    pub fn resolve(&self) -> Option<(String, String)> {
        match self {
            EnvGrant::Inherit(name) => std::env::var(name).ok().map(|v| (name.clone(), v)),
            EnvGrant::Fixed { name, value } => Some((name.clone(), value.clone())),
        }
    }
}

impl ProcessGrant {
    /// The program to start: a relative path (one holding a `/`) resolves
    /// against `base_dir`, the config file's directory; a bare name is left
    /// for `PATH`.
    pub fn program(&self, base_dir: &std::path::Path) -> PathBuf {
        program(&self.command, base_dir)
    }
}

/// A configured program: a relative path (one holding a `/`) resolves
/// against `base_dir`, the config file's directory; a bare name is left for
/// `PATH`. Granted processes and MCP servers name theirs this way.
pub(crate) fn program(command: &str, base_dir: &std::path::Path) -> PathBuf {
    if command.contains('/') {
        base_dir.join(command)
    } else {
        PathBuf::from(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(hooks: serde_json::Value) -> PluginEntry {
        serde_json::from_value(serde_json::json!({ "hooks": hooks })).unwrap()
    }

    fn kind(name: &str) -> HookKind {
        HookKind::from_name(name).unwrap()
    }

    #[test]
    fn a_hook_deadline_comes_from_the_narrowest_setting() {
        let e = entry(serde_json::json!({
            "timeoutMs": 3000,
            "timeouts": {"llm_input": 2000},
            "before_tool_call": {"timeoutMs": 1000}
        }));
        assert_eq!(e.timeout_ms_for(kind("before_tool_call")), Some(1000));
        assert_eq!(e.timeout_ms_for(kind("llm_input")), Some(2000));
        assert_eq!(e.timeout_ms_for(kind("session_start")), Some(3000));
        assert_eq!(e.timeout_ms_for(kind("agent_end")), Some(3000));
        // Unset: agent_end gets OpenClaw's 30 s, the rest the call deadline.
        let e = entry(serde_json::json!({}));
        assert_eq!(e.timeout_ms_for(kind("agent_end")), Some(30_000));
        assert_eq!(e.timeout_ms_for(kind("before_tool_call")), None);
    }

    #[test]
    fn conversation_hooks_need_access_and_prompt_injection_can_be_turned_off() {
        let e = entry(serde_json::json!({}));
        assert_eq!(
            e.hook_allowed(kind("llm_input")),
            Err("hooks.allowConversationAccess")
        );
        assert_eq!(e.hook_allowed(kind("before_prompt_build")), Ok(()));
        assert_eq!(e.hook_allowed(kind("before_tool_call")), Ok(()));
        let e = entry(
            serde_json::json!({"allowConversationAccess": true, "allowPromptInjection": false}),
        );
        assert_eq!(e.hook_allowed(kind("agent_end")), Ok(()));
        assert_eq!(
            e.hook_allowed(kind("before_prompt_build")),
            Err("hooks.allowPromptInjection")
        );
    }
}
