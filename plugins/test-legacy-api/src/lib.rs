//! Test fixture: exports `openclaw:plugin/plugin@0.0.1`, which the host must refuse.

wit_bindgen::generate!({ world: "legacy", path: "wit" });

struct Legacy;

impl exports::openclaw::plugin::plugin::Guest for Legacy {
    fn register() -> String {
        "legacy".into()
    }
}

export!(Legacy);
