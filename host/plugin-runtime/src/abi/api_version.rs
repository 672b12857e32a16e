//! Which plugin API version a component was built against, and the check of
//! its imports against what that version (and the operator's grants) allow.

use wasmtime::component::{types::ComponentItem, Component};
use wasmtime::Engine;

use serde::{Deserialize, Serialize};

use crate::abi::ApiVersion;
use crate::LoadError;

/// WIT package of the plugin API.
pub const API_PACKAGE: &str = "openclaw:plugin";

/// The newest release of the plugin API: what `plugin new` writes and the
/// SDKs carry. `tests/api_versions.rs` checks that every other place naming
/// it (the SDKs' versions and constants, the WIT package, the examples'
/// manifests) agrees, so a release changes this and what that test names.
pub const CURRENT_API: &str = "0.2.3";

/// `openclaw:plugin/<interface>@<version>` → (interface, version).
fn ours(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(API_PACKAGE)?.strip_prefix('/')?;
    Some(rest.split_once('@').unwrap_or((rest, "")))
}

fn out_of_range(id: &str, found: String) -> LoadError {
    LoadError::ApiVersion {
        id: id.into(),
        found,
    }
}

/// WASI packages the host links (wasmtime-wasi's WASI 0.2).
const WASI_PROVIDED: [&str; 6] = [
    "wasi:cli/",
    "wasi:clocks/",
    "wasi:filesystem/",
    "wasi:io/",
    "wasi:random/",
    "wasi:sockets/",
];

/// Refuse an import of a package no host version provides (neither ours
/// nor a WASI package the host links).
fn check_provided(id: &str, name: &str) -> Result<(), LoadError> {
    if ours(name).is_some() || WASI_PROVIDED.iter().any(|p| name.starts_with(p)) {
        return Ok(());
    }
    Err(LoadError::UnsupportedImport {
        id: id.into(),
        import: name.into(),
    })
}

/// Refuse, before compiling, a component whose top-level imports name
/// something no host version provides (a compile of a 12–20 MB component
/// takes seconds; the refusal explains how to build without the import).
/// What an import of ours may be is checked after compiling
/// ([`check_component`]); a binary that does not parse is left to the compiler.
pub fn precheck_imports(id: &str, bytes: &[u8]) -> Result<(), LoadError> {
    use wasmparser::{Parser, Payload};
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        let Ok(payload) = payload else { return Ok(()) };
        match payload {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(reader) if depth == 0 => {
                for import in reader {
                    let Ok(import) = import else { return Ok(()) };
                    check_provided(id, import.name.name)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Check the manifest's `apiVersion` before compiling anything.
pub fn check_manifest(id: &str, api_version: &str) -> Result<ApiVersion, LoadError> {
    ApiVersion::of(api_version)
        .ok_or_else(|| out_of_range(id, format!("apiVersion {api_version} in its manifest")))
}

/// What the load checks of a compiled component, by name: the interfaces it
/// exports, the ones it imports (each with whether it is an instance) and
/// whether it exports a harness. A remembered declaration keeps them, so a
/// warm start runs the same checks (against the grants of that start)
/// without loading the component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ComponentFacts {
    /// Every exported name (e.g. `openclaw:plugin/tool-hooks@0.2.1`), then
    /// every imported one, end to end: one string, not one per name (a warm
    /// start decodes these for every plugin).
    names: String,
    /// Where each export's name ends in `names`.
    export_ends: Vec<u32>,
    /// Where each import's name ends, with whether it is an instance.
    import_ends: Vec<(u32, bool)>,
    /// Whether it exports the harness interface of the API version its
    /// manifest declares.
    pub harness: bool,
}

impl ComponentFacts {
    /// The facts of `component`, whose manifest declares `manifest_version`.
    pub(crate) fn of(engine: &Engine, component: &Component, manifest_version: ApiVersion) -> Self {
        let ty = component.component_type();
        Self::from_names(
            ty.exports(engine).map(|(n, _)| n),
            ty.imports(engine)
                .map(|(n, item)| (n, matches!(item.ty, ComponentItem::ComponentInstance(_)))),
            crate::abi::exports_harness(manifest_version, component),
        )
    }

    /// Facts from names: exports, then imports with whether each is an instance.
    pub(crate) fn from_names<'a>(
        exports: impl IntoIterator<Item = &'a str>,
        imports: impl IntoIterator<Item = (&'a str, bool)>,
        harness: bool,
    ) -> Self {
        let mut names = String::new();
        // Past 4 GiB of names (beyond any component size limit) an end
        // saturates: those names read as empty, and an empty import is refused.
        let mut end = |name: &str| {
            names.push_str(name);
            u32::try_from(names.len()).unwrap_or(u32::MAX)
        };
        let export_ends = exports.into_iter().map(&mut end).collect();
        let import_ends = imports
            .into_iter()
            .map(|(name, instance)| (end(name), instance))
            .collect();
        Self {
            names,
            export_ends,
            import_ends,
            harness,
        }
    }

    /// Whether every name lies within `names` on character boundaries, in
    /// order (what a decoded record must hold before it is used).
    pub(crate) fn is_well_formed(&self) -> bool {
        let ends = self
            .export_ends
            .iter()
            .chain(self.import_ends.iter().map(|(end, _)| end));
        let mut start = 0;
        ends.into_iter().all(|&end| {
            let ok = self.names.get(start..end as usize).is_some();
            start = end as usize;
            ok
        })
    }

    /// Exported names, in order.
    pub(crate) fn exports(&self) -> impl Iterator<Item = &str> {
        self.slices(0, self.export_ends.iter().copied())
    }

    /// Imported names, in order, each with whether it is an instance.
    pub(crate) fn imports(&self) -> impl Iterator<Item = (&str, bool)> {
        let start = self.export_ends.last().copied().unwrap_or(0);
        self.slices(start, self.import_ends.iter().map(|(end, _)| *end))
            .zip(self.import_ends.iter().map(|(_, instance)| *instance))
    }

    /// The names between consecutive ends, from `start`. A name out of
    /// bounds reads as empty (a decoded record is checked with
    /// [`Self::is_well_formed`] first).
    fn slices(&self, start: u32, ends: impl Iterator<Item = u32>) -> impl Iterator<Item = &str> {
        ends.scan(start, |start, end| {
            let name = self.names.get(*start as usize..end as usize).unwrap_or("");
            *start = end;
            Some(name)
        })
    }
}

/// The API version a compiled component targets, from the interfaces it
/// exports (all of one version); its imports must be WASI packages the host
/// links or interfaces of that version (the harness ones only when `harness_granted`), and the
/// version must be the one its manifest declares.
pub(crate) fn check_component(
    id: &str,
    facts: &ComponentFacts,
    manifest_version: ApiVersion,
    harness_granted: bool,
) -> Result<ApiVersion, LoadError> {
    let mut versions: Vec<(&str, &str)> = Vec::new();
    for name in facts.exports() {
        if let Some((_, version)) = ours(name) {
            versions.push((name, version));
        }
    }
    let Some(&(first, version)) = versions.first() else {
        return Err(LoadError::NotAPlugin {
            id: id.into(),
            reason: format!("the component exports no `{API_PACKAGE}` interface"),
        });
    };
    if let Some((other, _)) = versions.iter().find(|(_, v)| *v != version) {
        return Err(LoadError::NotAPlugin {
            id: id.into(),
            reason: format!("it exports interfaces of two API versions ({first} and {other})"),
        });
    }
    let api = ApiVersion::of(version)
        .ok_or_else(|| out_of_range(id, format!("a component exporting {first}")))?;
    if api != manifest_version {
        return Err(LoadError::NotAPlugin {
            id: id.into(),
            reason: format!(
                "its manifest declares apiVersion {manifest_version} but the component is built against {api} ({first})"
            ),
        });
    }
    let (host, harness_only) = api.imports();
    for (name, instance) in facts.imports() {
        // Again here: a component from the compiled cache skipped the precheck.
        check_provided(id, name)?;
        if name.starts_with("wasi:") {
            continue;
        }
        let iface =
            ours(name).and_then(|(iface, v)| (ApiVersion::of(v) == Some(api)).then_some(iface));
        if iface.is_some_and(|i| harness_only.contains(&i)) && !harness_granted {
            return Err(LoadError::Refused {
                id: id.into(),
                rule: format!(
                    "it imports `{name}` (model and tool calls for agent runtimes), which needs `capabilities.harness` in its manifest and plugins.entries.{id}.grants.harness = true"
                ),
            });
        }
        let allowed = iface.is_some_and(|i| host.contains(&i) || harness_only.contains(&i));
        if !allowed || !instance {
            return Err(LoadError::NotAPlugin {
                id: id.into(),
                reason: format!("it imports `{name}`, which this host does not provide to plugins"),
            });
        }
    }
    Ok(api)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unprovided_import_is_refused_before_compiling_with_a_fix() {
        let with_import = |name: &str| {
            wat::parse_str(format!(r#"(component (import "{name}" (instance)))"#)).unwrap()
        };
        let err = precheck_imports("p", &with_import("wasi:http/types@0.2.3"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("imports `wasi:http/types@0.2.3`") && err.contains("clawhost-js build"),
            "{err}"
        );
        assert!(precheck_imports("p", &with_import("acme:secret/door")).is_err());
        for fine in ["wasi:io/streams@0.2.6", "openclaw:plugin/host@0.2.1"] {
            assert!(precheck_imports("p", &with_import(fine)).is_ok(), "{fine}");
        }
        // Imports of nested modules and components are not the component's own.
        let nested = wat::parse_str(
            r#"(component (component (import "wasi:http/types@0.2.3" (instance))))"#,
        )
        .unwrap();
        assert!(precheck_imports("p", &nested).is_ok());
    }

    #[test]
    fn a_compiled_component_with_an_unprovided_import_is_refused_too() {
        // What a component from the compiled cache (which skipped the
        // precheck) meets: the same refusal, with the same fix.
        let mut config = wasmtime::Config::new();
        config.wasm_component_model(true);
        let engine = Engine::new(&config).unwrap();
        let bytes = wat::parse_str(
            r#"(component
                (import "wasi:http/types@0.2.3" (instance))
                (core module $m)
                (core instance $i (instantiate $m))
                (instance $e)
                (export "openclaw:plugin/tool-provider@0.2.1" (instance $e)))"#,
        )
        .unwrap();
        let component = Component::new(&engine, bytes).unwrap();
        let facts = ComponentFacts::of(&engine, &component, ApiVersion::V0_2);
        let err = check_component("p", &facts, ApiVersion::V0_2, false).unwrap_err();
        assert!(
            matches!(&err, LoadError::UnsupportedImport { import, .. } if import == "wasi:http/types@0.2.3"),
            "{err}"
        );
        assert!(err.to_string().contains("clawhost-js build"), "{err}");
    }

    #[test]
    fn facts_give_back_each_name_and_refuse_ends_that_do_not_fit() {
        let facts = ComponentFacts::from_names(
            ["openclaw:plugin/tool-hooks@0.2.1", "é"],
            [("wasi:io/streams@0.2.6", true), ("", false), ("x", false)],
            false,
        );
        assert!(facts.is_well_formed());
        let exports: Vec<&str> = facts.exports().collect();
        assert_eq!(exports, ["openclaw:plugin/tool-hooks@0.2.1", "é"]);
        let imports: Vec<(&str, bool)> = facts.imports().collect();
        assert_eq!(
            imports,
            [("wasi:io/streams@0.2.6", true), ("", false), ("x", false)]
        );
        // What a record could hold that no load wrote: an end past the
        // names, one inside a character, one before the name's start.
        let past = ComponentFacts {
            import_ends: vec![(999, true)],
            ..facts.clone()
        };
        let inside = ComponentFacts {
            export_ends: vec![32, 33],
            ..facts.clone()
        };
        let backwards = ComponentFacts {
            export_ends: vec![32, 10],
            ..facts
        };
        for bad in [past, inside, backwards] {
            assert!(!bad.is_well_formed(), "{bad:?}");
        }
    }

    #[test]
    fn versions_follow_semver_for_0x() {
        assert_eq!(ApiVersion::of("0.1.0"), Some(ApiVersion::V0_1));
        assert_eq!(ApiVersion::of("0.1.7"), Some(ApiVersion::V0_1));
        assert_eq!(ApiVersion::of("0.2.3"), Some(ApiVersion::V0_2));
        for bad in [
            "0.0.1", "0.3.0", "1.1.0", "garbage", "0.2", "0.2.x", "0.2.0.1",
        ] {
            assert_eq!(ApiVersion::of(bad), None, "{bad}");
        }
        let err = check_manifest("p", "0.3.0").unwrap_err().to_string();
        assert!(
            err.contains("`p`")
                && err.contains("0.3.0")
                && err.contains("0.1")
                && err.contains("0.2"),
            "{err}"
        );
    }
}
