//! The name an MCP server's tool is offered under: `mcp__<server>__<tool>`,
//! with a short hash of the server's own name added when that name does
//! not fit (characters outside `[a-zA-Z0-9_-]`, or too long), so two tools
//! never share a name and a tool keeps its name across restarts.

/// Longest tool name the host offers.
const MAX_NAME: usize = 64;

/// Hex digits of the hash added to a name that had to change.
const HASH_HEX: usize = 8;

/// The name `tool` of `server` is offered under.
pub fn offered_name(server: &str, tool: &str) -> String {
    let prefix = format!("mcp__{server}__");
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean == tool && !tool.is_empty() && prefix.len() + tool.len() <= MAX_NAME {
        return prefix + tool;
    }
    let hash = blake3::hash(tool.as_bytes()).to_hex();
    let room = MAX_NAME.saturating_sub(prefix.len() + 1 + HASH_HEX);
    let kept: String = clean.chars().take(room).collect();
    format!("{prefix}{kept}_{}", &hash[..HASH_HEX])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fitting_name_is_kept_and_any_other_is_hashed_apart() {
        assert_eq!(offered_name("files", "read"), "mcp__files__read");
        let dotted = offered_name("files", "read.file");
        let slashed = offered_name("files", "read/file");
        assert!(dotted.starts_with("mcp__files__read_file_"), "{dotted}");
        assert_ne!(dotted, slashed, "two names that clean alike stay apart");
        assert_eq!(dotted, offered_name("files", "read.file"), "stable");
        let long = "x".repeat(100);
        let name = offered_name("a-long-server-name", &long);
        assert_eq!(name.len(), MAX_NAME);
        assert_ne!(name, offered_name("a-long-server-name", &"x".repeat(101)));
        assert!(offered_name("s", "").starts_with("mcp__s___"));
        for name in [dotted, slashed, name] {
            assert!(name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        }
    }
}
