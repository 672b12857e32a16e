//! A host that also offers a newer API surface still serves 0.2 binaries.
//!
//! The surface here is a test-only `openclaw:plugin@0.3.0` that grows 0.2 the
//! way the compatibility policy allows a later version to: one more hook
//! family and one more host function. It is linked beside every served
//! version, and a 0.2 component built from `plugins/policy-guard` must still
//! be recognised as 0.2, link, register and run its hook unchanged.

use std::sync::Arc;

use clawhost_hooks::{
    BeforeToolCallEvent, BeforeToolCallOutcome, CallContext, HookEvent, HookKind, HookOutcome,
};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::WasiCtxBuilder;

use super::{Answer, ApiVersion, Indices, Request};
use crate::logs::PluginLogs;
use crate::state::{MemoryCap, PluginState};

mod next {
    wasmtime::component::bindgen!({
        inline: "
            package openclaw:plugin@0.3.0;

            interface host {
                enum level { trace, debug, info, warn, error }
                log: func(level: level, message: string);
                config: func() -> string;
                /// New in the test-only 0.3.
                host-time-ms: func() -> u64;
            }

            /// New in the test-only 0.3: a hook family 0.2 does not have.
            interface message-hooks {
                record message-event { text: string }
                subscriptions: func() -> list<u32>;
                message-received: func(event: message-event);
            }

            world next {
                import host;
                export message-hooks;
            }
        ",
        exports: { default: async },
    });
}

impl next::openclaw::plugin::host::Host for PluginState {
    fn log(&mut self, _level: next::openclaw::plugin::host::Level, message: String) {
        self.logs
            .push(crate::logs::LogSource::Log(crate::LogLevel::Info), message);
    }

    fn config(&mut self) -> String {
        self.config_json.to_string()
    }

    fn host_time_ms(&mut self) -> u64 {
        0
    }
}

fn policy_guard_component() -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/plugins/policy-guard/plugin.wasm");
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; build the plugins first (plugins/build.sh)",
            path.display()
        )
    })
}

#[tokio::test]
async fn a_0_2_component_loads_and_runs_when_the_host_also_offers_0_3() {
    let mut config = Config::new();
    config.wasm_component_model(true);
    let engine = Engine::new(&config).unwrap();
    let mut linker: Linker<PluginState> = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).unwrap();
    super::add_to_linker(&mut linker).unwrap();
    next::openclaw::plugin::host::add_to_linker::<PluginState, HasSelf<PluginState>>(
        &mut linker,
        |s| s,
    )
    .unwrap();

    let component = Component::new(&engine, policy_guard_component()).unwrap();
    let facts = crate::api_version::ComponentFacts::of(&engine, &component, ApiVersion::V0_2);
    let api = crate::api_version::check_component("policy-guard", &facts, ApiVersion::V0_2, false)
        .unwrap();
    assert_eq!(api, ApiVersion::V0_2);
    let pre = linker.instantiate_pre(&component).unwrap();
    let indices = Indices::new(api, &pre).unwrap();
    // The newer family is simply not there for a 0.2 component.
    assert!(next::exports::openclaw::plugin::message_hooks::GuestIndices::new(&pre).is_err());

    let logs = PluginLogs::new("policy-guard", 1 << 20);
    let state = PluginState::new(
        WasiCtxBuilder::new().build(),
        MemoryCap::new(64 << 20),
        64,
        logs,
        Arc::from(r#"{"blockTools":["echo"]}"#),
    );
    let mut store = Store::new(&engine, state);
    let instance = pre.instantiate_async(&mut store).await.unwrap();
    let guest = indices.load(&mut store, &instance).unwrap();

    let declared = match guest
        .call(&mut store, Request::Register)
        .await
        .unwrap()
        .answer
    {
        Answer::Declared(d) => d,
        _ => panic!("register answers with a declaration"),
    };
    assert_eq!(declared.hooks, vec![(HookKind::BeforeToolCall, 100)]);

    let event = BeforeToolCallEvent {
        tool: "echo".into(),
        call_id: "c1".into(),
        params: serde_json::json!({"text": "hi"}).into(),
        tool_plugin: None,
        context: CallContext {
            agent_id: "main".into(),
            session_id: None,
            model_ref: "scripted/test".into(),
        },
    };
    let outcome = match guest
        .call(
            &mut store,
            Request::Hook(HookEvent::BeforeToolCall(&event), None),
        )
        .await
        .unwrap()
        .answer
    {
        Answer::Hook(o) => o.unwrap(),
        _ => panic!("a hook answers with an outcome"),
    };
    assert_eq!(
        outcome,
        HookOutcome::BeforeToolCall(BeforeToolCallOutcome::Block(
            "policy-guard: tool `echo` is blocked by operator policy".into()
        ))
    );
}
