//! The plugin API version the host speaks, and the check of a component against it.

use wasmtime::component::{types::ComponentItem, Component};
use wasmtime::Engine;

use crate::LoadError;

/// WIT package of the plugin API.
pub const API_PACKAGE: &str = "openclaw:plugin";
/// Version of the plugin API this host implements.
pub const API_VERSION: &str = "0.1.0";

/// Interfaces (without version) every plugin component may import besides WASI.
const HOST_INTERFACES: &[&str] = &["host", "types", "turn-types"];
/// Interfaces only a plugin granted `harness` may import.
const HARNESS_INTERFACES: &[&str] = &["model", "tools"];

fn compatible(version: &str) -> bool {
    // 0.x: the minor is the breaking part (semver); 1.x+: the major.
    let parts = |v: &str| -> Vec<u64> {
        v.split('.')
            .map(|p| p.parse().unwrap_or(u64::MAX))
            .collect()
    };
    let (ours, theirs) = (parts(API_VERSION), parts(version));
    theirs.len() == 3
        && if ours[0] == 0 {
            theirs[0] == 0 && theirs[1] == ours[1]
        } else {
            theirs[0] == ours[0]
        }
}

fn split_versioned(name: &str) -> Option<(&str, &str)> {
    name.rsplit_once('@')
}

/// Check the manifest's `apiVersion` before compiling anything.
pub fn check_manifest(id: &str, api_version: &str) -> Result<(), LoadError> {
    if compatible(api_version) {
        Ok(())
    } else {
        Err(LoadError::ApiVersion {
            id: id.into(),
            found: format!("apiVersion {api_version} in its manifest"),
        })
    }
}

/// Check a compiled component: it must export `openclaw:plugin/plugin` at a
/// compatible version, and import nothing but WASI and the host interfaces
/// (plus `model` and `tools` when the operator granted `harness`).
pub fn check_component(
    id: &str,
    engine: &Engine,
    component: &Component,
    harness_granted: bool,
) -> Result<(), LoadError> {
    let ty = component.component_type();
    let plugin_export = format!("{API_PACKAGE}/plugin");
    let export = ty
        .exports(engine)
        .map(|(name, _)| name.to_string())
        .find(|name| name.starts_with(&format!("{plugin_export}@")) || *name == plugin_export);
    match export {
        None => {
            return Err(LoadError::NotAPlugin {
                id: id.into(),
                reason: format!("the component does not export `{plugin_export}`"),
            })
        }
        Some(name) => {
            let version = split_versioned(&name).map(|(_, v)| v).unwrap_or("(none)");
            if !compatible(version) {
                return Err(LoadError::ApiVersion {
                    id: id.into(),
                    found: format!("a component exporting {name}"),
                });
            }
        }
    }
    for (name, item) in ty.imports(engine) {
        if name.starts_with("wasi:") {
            continue;
        }
        let is = |list: &[&str]| {
            split_versioned(name).is_some_and(|(iface, version)| {
                list.iter().any(|h| iface == format!("{API_PACKAGE}/{h}")) && compatible(version)
            })
        };
        if is(HARNESS_INTERFACES) && !harness_granted {
            return Err(LoadError::Refused {
                id: id.into(),
                rule: format!(
                    "it imports `{name}` (model and tool calls for agent runtimes), which needs `capabilities.harness` in its manifest and plugins.entries.{id}.grants.harness = true"
                ),
            });
        }
        let allowed = is(HOST_INTERFACES) || is(HARNESS_INTERFACES);
        if !allowed || !matches!(item.ty, ComponentItem::ComponentInstance(_)) {
            return Err(LoadError::NotAPlugin {
                id: id.into(),
                reason: format!("it imports `{name}`, which this host does not provide to plugins"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compatibility_follows_semver_for_0x() {
        assert!(compatible("0.1.0"));
        assert!(compatible("0.1.7"));
        assert!(!compatible("0.0.1"));
        assert!(!compatible("0.2.0"));
        assert!(!compatible("1.1.0"));
        assert!(!compatible("garbage"));
        let err = check_manifest("p", "0.2.0").unwrap_err().to_string();
        assert!(
            err.contains("`p`") && err.contains("0.2.0") && err.contains("0.1"),
            "{err}"
        );
    }
}
