//! The smallest tool plugin: one tool with typed parameters.
use clawhost_sdk::{export_plugin, Plugin, Tools};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Greet {
    name: String,
}

#[derive(Default)]
struct Hello;
impl Plugin for Hello {
    fn tools(&self, tools: &mut Tools<Self>) {
        tools.add("greet", "Greets someone", |_, p: Greet| {
            Ok::<_, String>(format!("hello, {}", p.name))
        });
    }
}
export_plugin!(Hello);
