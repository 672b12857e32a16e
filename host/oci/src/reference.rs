//! `oci://REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]`, as `plugins install`
//! takes it.

use crate::OciError;

/// A plugin's place in a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `host[:port]`.
    pub registry: String,
    /// `namespace/name`, lower case.
    pub repository: String,
    /// The tag, if one was named.
    pub tag: Option<String>,
    /// `sha256:<64 hex>`, if one was named.
    pub digest: Option<String>,
}

impl Reference {
    /// Parse `oci://…` (the scheme is required: a bare name is a path).
    pub fn parse(text: &str) -> Result<Self, OciError> {
        let bad = |why: &str| OciError::Reference {
            reference: text.to_string(),
            why: why.to_string(),
        };
        let rest = text
            .strip_prefix("oci://")
            .ok_or_else(|| bad("it must start with oci://"))?;
        let (rest, digest) = match rest.split_once('@') {
            Some((rest, digest)) => (rest, Some(digest.to_string())),
            None => (rest, None),
        };
        if let Some(d) = &digest {
            let hex = d
                .strip_prefix("sha256:")
                .ok_or_else(|| bad("a digest is sha256:<64 hex digits>"))?;
            if hex.len() != 64
                || !hex
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            {
                return Err(bad("a digest is sha256:<64 lower-case hex digits>"));
            }
        }
        let (registry, path) = rest
            .split_once('/')
            .ok_or_else(|| bad("it names a registry and a repository: oci://host/name:tag"))?;
        if registry.is_empty()
            || !registry
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
        {
            return Err(bad("the registry is host[:port]"));
        }
        // A tag follows the last `:` after the last `/`.
        let (repository, tag) = match path.rsplit_once(':') {
            Some((repo, tag)) if !tag.contains('/') => (repo, Some(tag.to_string())),
            _ => (path, None),
        };
        let component_ok = |c: &str| {
            !c.is_empty()
                && c.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
                && c.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        };
        if !repository.split('/').all(component_ok) {
            return Err(bad(
                "the repository is lower-case letters, digits and ._- between slashes",
            ));
        }
        if let Some(t) = &tag {
            let ok = !t.is_empty()
                && t.len() <= 128
                && t.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
            if !ok {
                return Err(bad("a tag is up to 128 letters, digits and ._-"));
            }
        }
        if tag.is_none() && digest.is_none() {
            return Err(bad("name a tag (:1.0) or a digest (@sha256:…)"));
        }
        Ok(Self {
            registry: registry.to_string(),
            repository: repository.to_string(),
            tag,
            digest,
        })
    }

    /// What to ask the registry for: the digest when named, else the tag.
    pub fn target(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest")
    }

    /// The same place pinned to `digest`:
    /// `oci://registry/repository[:tag]@digest` (the tag kept, so an update
    /// knows where to look).
    pub fn pinned(&self, digest: &str) -> String {
        match &self.tag {
            Some(tag) => format!("oci://{}/{}:{tag}@{digest}", self.registry, self.repository),
            None => format!("oci://{}/{}@{digest}", self.registry, self.repository),
        }
    }

    /// The same place by its tag alone (what a tag points to now).
    pub fn by_tag(&self) -> Option<Self> {
        Some(Self {
            tag: Some(self.tag.clone()?),
            digest: None,
            ..self.clone()
        })
    }

    /// Whether the registry is this machine (spoken to over plain HTTP).
    pub fn is_loopback(&self) -> bool {
        let host = match self.registry.rsplit_once(':') {
            Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
            _ => self.registry.as_str(),
        };
        matches!(host, "localhost" | "127.0.0.1" | "[::1]")
    }
}

impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "oci://{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_and_bad_ones_say_why() {
        let r = Reference::parse("oci://127.0.0.1:5000/tools/text-tools:1.0").unwrap();
        assert_eq!(r.registry, "127.0.0.1:5000");
        assert_eq!(r.repository, "tools/text-tools");
        assert_eq!(r.tag.as_deref(), Some("1.0"));
        assert!(r.is_loopback());
        let d = format!("sha256:{}", "a".repeat(64));
        let r = Reference::parse(&format!("oci://ghcr.io/me/p@{d}")).unwrap();
        assert_eq!(r.target(), d);
        assert!(!r.is_loopback());
        assert_eq!(r.pinned(&d), format!("oci://ghcr.io/me/p@{d}"));
        assert!(r.by_tag().is_none());
        let both = Reference::parse(&format!("oci://ghcr.io/me/p:1.0@{d}")).unwrap();
        assert_eq!(both.target(), d);
        assert_eq!(both.pinned(&d), format!("oci://ghcr.io/me/p:1.0@{d}"));
        assert_eq!(both.by_tag().unwrap().target(), "1.0");
        for bad in [
            "ghcr.io/me/p:1",
            "oci://ghcr.io",
            "oci://ghcr.io/Me/p:1",
            "oci://ghcr.io/me/p",
            "oci://ghcr.io/me/p@sha256:abc",
            "oci://ghcr.io/me/p:bad tag",
            "oci://gh cr.io/me/p:1",
        ] {
            assert!(Reference::parse(bad).is_err(), "{bad}");
        }
    }
}
