//! Host bindings generated from `wit/plugin.wit` (world `host-view`: every
//! import a plugin may be granted, every export a plugin may provide).

wasmtime::component::bindgen!({
    world: "host-view",
    path: "../../wit",
    imports: {
        "openclaw:plugin/model": async,
        "openclaw:plugin/tools": async,
    },
    exports: { default: async },
});

pub use exports::openclaw::plugin::harness as harness_export;
pub use exports::openclaw::plugin::plugin as plugin_export;
pub use openclaw::plugin::host;
pub use openclaw::plugin::turn_types as turn;
pub use openclaw::plugin::types as wit;
