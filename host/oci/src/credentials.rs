//! Registry credentials: the operator's, or the ones `docker login` (and
//! oras, podman, wkg) keep in the Docker config file.

use base64::Engine;
use serde_json::Value;

/// A user name and password (or token) for one registry.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// User name.
    pub username: String,
    /// Password or token.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<hidden>")
            .finish()
    }
}

impl Credentials {
    /// The credentials for `registry` in the Docker config file
    /// (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`):
    /// `auths.<registry>.auth` (base64 `user:password`) or its
    /// `username`/`password`. Credential helpers are not run.
    pub fn from_docker_config(registry: &str) -> Option<Self> {
        let path = match std::env::var_os("DOCKER_CONFIG") {
            Some(dir) => std::path::PathBuf::from(dir).join("config.json"),
            None => std::path::PathBuf::from(std::env::var_os("HOME")?)
                .join(".docker")
                .join("config.json"),
        };
        let doc: Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
        Self::from_docker_auths(&doc, registry)
    }

    /// The entry for `registry` in a Docker config document.
    fn from_docker_auths(doc: &Value, registry: &str) -> Option<Self> {
        let auths = doc["auths"].as_object()?;
        let entry = auths.get(registry).or_else(|| {
            auths
                .iter()
                .find(|(key, _)| {
                    key.trim_start_matches("https://")
                        .trim_start_matches("http://")
                        .trim_end_matches('/')
                        == registry
                })
                .map(|(_, v)| v)
        })?;
        if let Some(auth) = entry["auth"].as_str() {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(auth)
                .ok()?;
            let text = String::from_utf8(decoded).ok()?;
            let (username, password) = text.split_once(':')?;
            return Some(Self {
                username: username.into(),
                password: password.into(),
            });
        }
        Some(Self {
            username: entry["username"].as_str()?.into(),
            password: entry["password"].as_str()?.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn docker_config_entries_are_read_and_never_printed() {
        let auth = base64::engine::general_purpose::STANDARD.encode("me:s3cret");
        let doc = json!({"auths": {
            "https://registry.example/": {"auth": auth},
            "other.example": {"username": "u", "password": "p"}
        }});
        let c = Credentials::from_docker_auths(&doc, "registry.example").unwrap();
        assert_eq!((c.username.as_str(), c.password.as_str()), ("me", "s3cret"));
        assert!(!format!("{c:?}").contains("s3cret"));
        let c = Credentials::from_docker_auths(&doc, "other.example").unwrap();
        assert_eq!(c.password, "p");
        assert!(Credentials::from_docker_auths(&doc, "nowhere.example").is_none());
    }
}
