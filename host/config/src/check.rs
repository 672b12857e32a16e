//! Checks a parsed configuration for values that type-check but cannot be
//! used: missing directories, unknown hook names, zero limits, bad pins.

use std::path::Path;

use serde_json::Value;

use crate::{ApiKind, Config, HookKind, MAX_APPROVAL_TIMEOUT_MS, MAX_HOOK_TIMEOUT_MS};

/// A value that cannot be used, with its key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}`: {reason}")]
pub struct CheckError {
    /// The key, as a dotted path (e.g. `plugins.paths[0]`).
    pub key: String,
    /// What is wrong.
    pub reason: String,
}

/// Largest memory cap of one plugin, in MiB.
const MAX_MEMORY_MB: u64 = 4096;

fn fail(key: String, reason: impl Into<String>) -> Result<(), CheckError> {
    Err(CheckError {
        key,
        reason: reason.into(),
    })
}

impl Config {
    fn dir_exists(&self, key: String, path: &Path) -> Result<(), CheckError> {
        let resolved = self.resolve(path);
        if resolved.is_dir() {
            Ok(())
        } else if resolved.exists() {
            fail(key, format!("{} is not a directory", resolved.display()))
        } else {
            fail(key, format!("{} does not exist", resolved.display()))
        }
    }

    /// Anthropic's extended thinking: `budget_tokens` at least 1,024 and
    /// below the reply's `max_tokens` (the API refuses the request otherwise).
    fn thinking_budgets(&self) -> Result<(), CheckError> {
        for (id, p) in &self.models.providers {
            if p.api != ApiKind::AnthropicMessages {
                continue;
            }
            for (i, m) in p.models.iter().enumerate() {
                let param = |k: &str| m.params.get(k).or_else(|| p.params.get(k));
                let Some(budget) = param("thinking")
                    .filter(|t| t["type"] == "enabled")
                    .map(|t| t["budget_tokens"].as_u64())
                else {
                    continue;
                };
                let key =
                    format!("models.providers.{id}.models[{i}].params.thinking.budget_tokens");
                let max = param("max_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(m.max_tokens);
                match budget {
                    None => fail(key, "extended thinking needs a number of tokens")?,
                    Some(b) if b < 1024 => fail(key, format!("is {b}; Anthropic needs at least 1024"))?,
                    Some(b) if b >= max => fail(
                        key,
                        format!("is {b}, not below the reply's max_tokens {max}; raise the model's maxTokens"),
                    )?,
                    Some(_) => {}
                }
            }
        }
        Ok(())
    }

    /// Every runtime `fallback` the file sets, with its key.
    fn fallbacks(&self) -> Vec<(String, &str)> {
        let mut found = Vec::new();
        for (id, p) in &self.models.providers {
            let at = format!("models.providers.{id}");
            if let Some(fb) = p.agent_runtime.as_ref().and_then(|r| r.fallback.as_deref()) {
                found.push((format!("{at}.agentRuntime.fallback"), fb));
            }
            for (i, m) in p.models.iter().enumerate() {
                if let Some(fb) = m.agent_runtime.as_ref().and_then(|r| r.fallback.as_deref()) {
                    found.push((format!("{at}.models[{i}].agentRuntime.fallback"), fb));
                }
            }
        }
        let defaults = self.agents.defaults.embedded_harness.as_ref();
        if let Some(fb) = defaults.and_then(|h| h.fallback.as_deref()) {
            found.push(("agents.defaults.embeddedHarness.fallback".into(), fb));
        }
        for (i, a) in self.agents.list.iter().enumerate() {
            if let Some(fb) = a
                .embedded_harness
                .as_ref()
                .and_then(|h| h.fallback.as_deref())
            {
                found.push((format!("agents.list[{i}].embeddedHarness.fallback"), fb));
            }
        }
        found
    }

    /// Check what parsing cannot: that directories exist, hook names are in
    /// the catalog, limits are positive, sha256 pins are well formed and
    /// every runtime fallback is one selection knows.
    pub fn check(&self) -> Result<(), CheckError> {
        self.thinking_budgets()?;
        self.mcp.check()?;
        for (key, fb) in self.fallbacks() {
            if !["openclaw", "pi", "none"].contains(&fb.trim().to_ascii_lowercase().as_str()) {
                fail(
                    key,
                    format!("unknown fallback `{fb}`; use \"openclaw\", \"pi\" or \"none\""),
                )?;
            }
        }
        let plugins = &self.plugins;
        for (key, path) in plugins.package_paths() {
            self.dir_exists(key, path)?;
        }
        let limits = &plugins.limits;
        for (key, value) in [
            ("memoryMb", limits.memory_mb),
            ("callTimeoutMs", limits.call_timeout_ms),
            (
                "maxConsecutiveTraps",
                u64::from(limits.max_consecutive_traps),
            ),
            ("quarantineMs", limits.quarantine_ms),
            ("harnessTurnTimeoutMs", limits.harness_turn_timeout_ms),
            ("maxOutputKb", limits.max_output_kb),
            ("maxLogKbPerCall", limits.max_log_kb_per_call),
            ("maxHandles", u64::from(limits.max_handles)),
            ("maxComponentMb", limits.max_component_mb),
        ] {
            if value == 0 {
                fail(format!("plugins.limits.{key}"), "must be at least 1")?;
            }
        }
        for (key, value) in [
            ("cacheMaxMb", plugins.cache_max_mb),
            ("cacheMaxAgeDays", plugins.cache_max_age_days),
        ] {
            if value == 0 {
                fail(format!("plugins.{key}"), "must be at least 1")?;
            }
        }
        for (id, entry) in &plugins.entries {
            let at = format!("plugins.entries.{id}");
            if let Some(pin) = &entry.sha256 {
                if pin.len() != 64 || !pin.bytes().all(|b| b.is_ascii_hexdigit()) {
                    fail(format!("{at}.sha256"), "must be 64 hex digits")?;
                }
            }
            if entry
                .memory_mb
                .is_some_and(|mb| mb == 0 || mb > MAX_MEMORY_MB)
            {
                fail(
                    format!("{at}.memoryMb"),
                    format!("must be from 1 to {MAX_MEMORY_MB} (MiB)"),
                )?;
            }
            let hooks = &entry.hooks;
            let known = |key: String, hook: &str| {
                if HookKind::from_name(hook).is_some() {
                    Ok(())
                } else {
                    let known: Vec<&str> = HookKind::ALL.iter().map(|k| k.name()).collect();
                    fail(
                        key,
                        format!("unknown hook; known hooks: {}", known.join(", ")),
                    )
                }
            };
            let mut timeouts = vec![(format!("{at}.hooks.timeoutMs"), hooks.timeout_ms)];
            for (hook, ms) in &hooks.timeouts {
                let key = format!("{at}.hooks.timeouts.{hook}");
                known(key.clone(), hook)?;
                if hooks
                    .per_hook
                    .get(hook)
                    .is_some_and(|h| h.timeout_ms.is_some())
                {
                    fail(
                        key.clone(),
                        format!("{at}.hooks.{hook}.timeoutMs sets it too; keep one"),
                    )?;
                }
                timeouts.push((key, Some(*ms)));
            }
            for (hook, settings) in &hooks.per_hook {
                known(format!("{at}.hooks.{hook}"), hook)?;
                timeouts.push((format!("{at}.hooks.{hook}.timeoutMs"), settings.timeout_ms));
            }
            for (key, ms) in timeouts {
                if ms.is_some_and(|ms| ms == 0 || ms > MAX_HOOK_TIMEOUT_MS) {
                    fail(key, format!("must be from 1 to {MAX_HOOK_TIMEOUT_MS} (ms)"))?;
                }
            }
            for (i, grant) in entry.grants.filesystem.iter().enumerate() {
                if !grant.guest_path.starts_with('/') {
                    fail(
                        format!("{at}.grants.filesystem[{i}].guestPath"),
                        format!("`{}` must be an absolute path", grant.guest_path),
                    )?;
                }
                self.dir_exists(
                    format!("{at}.grants.filesystem[{i}].hostPath"),
                    &grant.host_path,
                )?;
            }
        }
        let slots = &plugins.slots;
        if let Some(engine) = &slots.context_engine {
            if engine != "legacy" && !plugins.entries.contains_key(engine) {
                fail(
                    "plugins.slots.contextEngine".into(),
                    format!("`{engine}` is neither `legacy` nor a plugin in plugins.entries"),
                )?;
            }
        }
        if let Some(memory) = slots.memory.as_deref().filter(|m| *m != "none") {
            fail(
                "plugins.slots.memory".into(),
                format!("`{memory}`: clawhost has no memory plugins yet; the only value is `none`"),
            )?;
        }
        let defaults = &self.agents.defaults;
        for (key, value) in [
            (
                "maxToolCallsPerTurn",
                u64::from(defaults.max_tool_calls_per_turn),
            ),
            (
                "maxToolResultKbPerTurn",
                defaults.max_tool_result_kb_per_turn,
            ),
        ] {
            if value == 0 {
                fail(format!("agents.defaults.{key}"), "must be at least 1")?;
            }
        }
        let approval_ms = self.approvals.timeout_ms;
        if approval_ms == 0 || approval_ms > MAX_APPROVAL_TIMEOUT_MS {
            fail(
                "approvals.timeoutMs".into(),
                format!("must be from 1 to {MAX_APPROVAL_TIMEOUT_MS} (ms)"),
            )?;
        }
        for (i, path) in self.resources.packages.iter().enumerate() {
            self.dir_exists(format!("resources.packages[{i}]"), path)?;
        }
        let gateway = &self.gateway.limits;
        for (key, value) in [
            ("maxMessages", gateway.max_messages as u64),
            ("maxRequestKb", gateway.max_request_kb as u64),
            ("headerReadTimeoutMs", gateway.header_read_timeout_ms),
            ("maxConnections", gateway.max_connections as u64),
            ("maxTurnsPerClient", gateway.max_turns_per_client as u64),
        ] {
            if value == 0 {
                fail(format!("gateway.limits.{key}"), "must be at least 1")?;
            }
        }
        for (i, origin) in self.gateway.allowed_origins.iter().enumerate() {
            let rest = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"));
            if rest.is_none_or(|r| r.is_empty() || r.contains(['/', '*', ' '])) {
                fail(
                    format!("gateway.allowedOrigins[{i}]"),
                    format!("`{origin}` is not an origin like http://localhost:3000 (scheme and host, no path, no wildcard)"),
                )?;
            }
        }
        Ok(())
    }
}
