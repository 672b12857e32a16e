//! `clawhost plugin new`: a plugin package to start from, in Rust, Python,
//! JavaScript or TypeScript, that builds outside this repository.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clawhost_plugin_runtime::CURRENT_API;

/// The language of a new plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// Rust with clawhost-sdk (wasm32-wasip2).
    Rust,
    /// Python with clawhost-sdk (componentize-py).
    Python,
    /// JavaScript with @clawhost/sdk (jco).
    Js,
    /// TypeScript with @clawhost/sdk (jco).
    Ts,
}

fn manifest(id: &str, lang: &str) -> String {
    format!(
        "{:#}",
        serde_json::json!({
            "id": id,
            "name": id,
            "version": "0.1.0",
            "description": format!("A clawhost plugin in {lang}: a tool and a before_tool_call hook."),
            "apiVersion": CURRENT_API,
            "component": "plugin.wasm",
            "configSchema": {
                "type": "object",
                "additionalProperties": false,
                "properties": { "blockWords": { "type": "array", "items": { "type": "string" } } }
            }
        })
    ) + "\n"
}

fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The files of a new package, relative to its directory.
fn files(lang: Lang, id: &str, sdk: &Path) -> Vec<(&'static str, String)> {
    let tool = id.replace('-', "_");
    let sdk_path = |sub: &str| sdk.join(sub).display().to_string();
    match lang {
        Lang::Rust => {
            let dep = format!("clawhost-sdk = {{ path = {:?} }}", sdk_path("rust"));
            vec![
                (
                    "Cargo.toml",
                    format!(
                        r#"[package]
name = "{id}"
version = "0.1.0"
edition = "2021"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
{dep}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1"

[profile.release]
opt-level = "s"
lto = true
codegen-units = 1
panic = "abort"
strip = true

# A package of its own, not a member of any enclosing workspace.
[workspace]
"#
                    ),
                ),
                (
                    "src/lib.rs",
                    format!(
                        r#"//! {id}: a tool and a before_tool_call hook.

use clawhost_sdk::{{export_plugin, BeforeDecision, BeforeToolCall, Hook, Plugin, Tools}};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {{
    /// What to echo.
    text: String,
}}

#[derive(Default)]
struct MyPlugin;

impl Plugin for MyPlugin {{
    fn tools(&self, tools: &mut Tools<Self>) {{
        tools.add("{tool}_echo", "Echoes the text", |_, p: Echo| Ok::<_, String>(p.text));
    }}

    fn hooks(&self) -> Vec<(Hook, i32)> {{
        vec![(Hook::BeforeToolCall, 10)]
    }}

    fn before_tool_call(&self, event: BeforeToolCall) -> BeforeDecision {{
        let config = clawhost_sdk::config();
        let params = event.params.to_string().to_lowercase();
        for word in config["blockWords"].as_array().into_iter().flatten() {{
            if let Some(word) = word.as_str().filter(|w| params.contains(&w.to_lowercase())) {{
                return BeforeDecision::Block(format!("{id}: parameters mention `{{word}}`"));
            }}
        }}
        BeforeDecision::Allow
    }}
}}

export_plugin!(MyPlugin);
"#
                    ),
                ),
                (
                    "README.md",
                    format!(
                        r#"# {id}

```sh
clawhost plugin build      # builds for wasm32-wasip2 and writes plugin.wasm
clawhost run --plugin . "hello"   # or `clawhost chat --plugin .`: rebuilt on each edit
```

By hand: `rustup target add wasm32-wasip2`, `cargo build --release --target
wasm32-wasip2`, then copy `target/wasm32-wasip2/release/{tool}.wasm` to `plugin.wasm`.

Then `clawhost plugins install .` copies it beside your config and pins it.
"#
                    ),
                ),
            ]
        }
        Lang::Python => {
            let sdk = sdk_path("python");
            vec![
                (
                    "app.py",
                    format!(
                        r#""""{id}: a tool and a before_tool_call hook."""

from typing import Any

from clawhost_sdk import ToolCallEvent, allow, before_tool_call, block, config, tool


@tool(description="Echoes the text.")
def {tool}_echo(text: str) -> str:
    return text


@before_tool_call(priority=10)
def guard(event: ToolCallEvent) -> Any:
    params = str(event.params).lower()
    for word in (config() or {{}}).get("blockWords", []):
        if str(word).lower() in params:
            return block(f"{id}: parameters mention `{{word}}`")
    return allow()
"#
                    ),
                ),
                (
                    "README.md",
                    format!(
                        r#"# {id}

```sh
clawhost plugin build      # componentize-py, with the SDK clawhost carries: writes plugin.wasm
clawhost run --plugin . "hello"   # or `clawhost chat --plugin .`: rebuilt on each edit
```

The SDK is {sdk}: the first build gives it a virtual environment,
`{sdk}/.venv`, with the componentize-py it pins; point your editor's Python
there for completions and `mypy --strict`.

Then `clawhost plugins install .` copies it beside your config and pins it.
"#
                    ),
                ),
            ]
        }
        Lang::Js | Lang::Ts => {
            let ts = lang == Lang::Ts;
            let sdk = sdk_path("js");
            let dep = format!("file:{sdk}");
            let module = if ts { "app.ts" } else { "app.js" };
            let event = if ts {
                "(event: ToolCallEvent)"
            } else {
                "(event)"
            };
            let import_type = if ts {
                "import type { ToolCallEvent } from '@clawhost/sdk';\n"
            } else {
                ""
            };
            let words = if ts {
                "((config()?.blockWords ?? []) as string[])"
            } else {
                "(config()?.blockWords ?? [])"
            };
            let build = format!("clawhost-js build . --module {module}");
            let (scripts, dev) = if ts {
                (
                    serde_json::json!({ "build": build, "typecheck": "tsc -p tsconfig.json" }),
                    serde_json::json!({ "typescript": "5.6.3" }),
                )
            } else {
                (serde_json::json!({ "build": build }), serde_json::json!({}))
            };
            let mut out = vec![
                (
                    if ts { "app.ts" } else { "app.js" },
                    format!(
                        r#"// {id}: a tool and a before_tool_call hook.
import {{ definePlugin, allow, block, config }} from '@clawhost/sdk';
{import_type}
export default definePlugin({{
  tools: {{
    {tool}_echo: {{
      description: 'Echoes the text.',
      parameters: {{ type: 'object', properties: {{ text: {{ type: 'string' }} }}, required: ['text'] }},
      run: ({{ text }}{}) => text,
    }},
  }},
  beforeToolCall: {{
    priority: 10,
    handle{event} {{
      const params = JSON.stringify(event.params).toLowerCase();
      const hit = {words}.find((w) => params.includes(String(w).toLowerCase()));
      return hit ? block(`{id}: parameters mention \`${{hit}}\``) : allow();
    }},
  }},
}});
"#,
                        if ts { ": { text: string }" } else { "" }
                    ),
                ),
                (
                    "package.json",
                    format!(
                        "{:#}",
                        serde_json::json!({
                            "name": id,
                            "version": "0.1.0",
                            "private": true,
                            "type": "module",
                            "scripts": scripts,
                            "dependencies": { "@clawhost/sdk": dep },
                            "devDependencies": dev,
                            "overrides": { "@bytecodealliance/preview2-shim": "0.25.0" }
                        })
                    ) + "\n",
                ),
                (
                    "README.md",
                    format!(
                        r#"# {id}

```sh
clawhost plugin build      # jco, with the SDK clawhost carries: writes plugin.wasm
clawhost run --plugin . "hello"   # or `clawhost chat --plugin .`: rebuilt on each edit
```

`@clawhost/sdk` is `file:{sdk}`: `npm install` links it for your editor's
types (then `plugin build` runs `npm run build`).

Then `clawhost plugins install .` copies it beside your config and pins it.
"#
                    ),
                ),
            ];
            if ts {
                out.push((
                    "tsconfig.json",
                    format!(
                        "{:#}",
                        serde_json::json!({
                            "compilerOptions": { "strict": true, "noEmit": true, "module": "esnext",
                                "moduleResolution": "bundler", "target": "es2022" },
                            "files": ["app.ts"]
                        })
                    ) + "\n",
                ));
            }
            out
        }
    }
}

/// Write a new plugin package into `dir` (which must not exist or be empty),
/// depending on the SDKs in `sdk` ([`crate::sdk::sdk_root`]) by path.
pub fn new_plugin(
    dir: &Path,
    lang: Lang,
    id: Option<&str>,
    sdk: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    let id = match id {
        Some(id) => id.to_string(),
        None => dir
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase().replace('_', "-"))
            .unwrap_or_default(),
    };
    if !is_valid_id(&id) {
        bail!("`{id}` is not a plugin id: lowercase letters, digits and `-`, starting with a letter, at most 64 characters (use --id)");
    }
    if dir.exists()
        && dir
            .read_dir()
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        bail!("{} exists and is not empty", dir.display());
    }
    let lang_name = match lang {
        Lang::Rust => "Rust",
        Lang::Python => "Python",
        Lang::Js => "JavaScript",
        Lang::Ts => "TypeScript",
    };
    let mut all = files(lang, &id, sdk);
    all.push(("openclaw.plugin.json", manifest(&id, lang_name)));
    let mut written = Vec::new();
    for (name, text) in all {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked_and_a_non_empty_directory_is_refused() {
        assert!(is_valid_id("my-plugin2"));
        for bad in ["", "My", "2x", "a_b", "a b", &"a".repeat(65)] {
            assert!(!is_valid_id(bad), "{bad}");
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x"), "").unwrap();
        let err = new_plugin(dir.path(), Lang::Rust, Some("p"), Path::new("/sdk")).unwrap_err();
        assert!(err.to_string().contains("not empty"), "{err}");
    }

    #[test]
    fn every_language_gets_a_manifest_and_its_sources() {
        for (lang, file) in [
            (Lang::Rust, "src/lib.rs"),
            (Lang::Python, "app.py"),
            (Lang::Js, "app.js"),
            (Lang::Ts, "app.ts"),
        ] {
            let root = tempfile::tempdir().unwrap();
            let dir = root.path().join("my-plugin");
            new_plugin(&dir, lang, None, Path::new("/opt/sdk")).unwrap();
            let manifest: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(dir.join("openclaw.plugin.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(manifest["id"], "my-plugin");
            assert_eq!(manifest["apiVersion"], CURRENT_API);
            assert!(std::fs::read_to_string(dir.join(file))
                .unwrap()
                .contains("my_plugin_echo"));
            // The SDK by path, never a registry version that does not exist.
            let (deps, wanted) = match lang {
                Lang::Rust => ("Cargo.toml", "clawhost-sdk = { path = \"/opt/sdk/rust\" }"),
                Lang::Python => ("README.md", "/opt/sdk/python/.venv"),
                Lang::Js | Lang::Ts => ("package.json", "\"file:/opt/sdk/js\""),
            };
            let text = std::fs::read_to_string(dir.join(deps)).unwrap();
            assert!(text.contains(wanted), "{lang:?}: {text}");
        }
    }
}
