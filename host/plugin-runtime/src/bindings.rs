//! Host bindings generated from `wit/plugin.wit`.

wasmtime::component::bindgen!({
    world: "plugin-world",
    path: "../../wit",
    exports: { default: async },
});

pub use openclaw::plugin::host;
pub use openclaw::plugin::types as wit;
