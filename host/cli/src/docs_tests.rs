//! The commands and configs the docs show are real: every `clawhost` line
//! of a `sh` block in the README and the book parses as this binary's
//! command line, and every JSON or JSON5 block that is a config parses as a
//! config (unknown keys are refused, so a renamed key fails here). The
//! README's quick start is also run as it stands (`tests/quickstart.rs`).

use clap::Parser;

use super::Cli;

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `(file, info string, body)` of every fenced block of the README and the book.
fn blocks() -> Vec<(String, String, String)> {
    let root = root();
    let mut files = vec![root.join("README.md")];
    let mut chapters: Vec<_> = std::fs::read_dir(root.join("docs/src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    files.extend(chapters);
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut open: Option<(String, String)> = None;
        for line in text.lines() {
            match (&mut open, line.strip_prefix("```")) {
                (None, Some(info)) => open = Some((info.trim().to_string(), String::new())),
                (Some(_), Some(_)) => {
                    let (info, body) = open.take().unwrap();
                    out.push((file.display().to_string(), info, body));
                }
                (Some((_, body)), None) => {
                    body.push_str(line);
                    body.push('\n');
                }
                (None, None) => {}
            }
        }
    }
    out
}

/// A shell line's words: quotes kept together, a `#` comment, a `>`
/// redirection and `[`/`]` (optional parts in a synopsis) dropped.
fn words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quote, mut started) = (Vec::new(), String::new(), None, false);
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, '#' | '>') if !started => break,
            (None, '[' | ']') => {}
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

#[test]
fn every_clawhost_command_in_the_docs_parses() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for (file, info, body) in blocks() {
        if info != "sh" {
            continue;
        }
        for line in body.lines() {
            // `git diff | clawhost run -`: the clawhost part.
            let Some(at) = line
                .find("clawhost ")
                .filter(|at| *at == 0 || line[..*at].trim_end().ends_with('|'))
            else {
                continue;
            };
            let words = words(&line[at..]);
            checked += 1;
            if let Err(e) = Cli::try_parse_from(&words) {
                let first = e.to_string().lines().next().unwrap_or_default().to_string();
                problems.push(format!("{file}: `{}`: {first}", line.trim()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked >= 20, "only {checked} commands found");
}

#[test]
fn every_config_in_the_docs_parses() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut problems = Vec::new();
    for (file, info, body) in blocks() {
        // An MCP client's entry for `clawhost mcp serve` is the client's
        // config, not ours (`tests/mcp_serve.rs` runs it).
        if !matches!(info.as_str(), "json" | "json5")
            || !body.trim_start().starts_with('{')
            || body.contains("\"mcpServers\"")
        {
            continue;
        }
        checked += 1;
        let parsed =
            clawhost_config::Config::from_text_with_env(&body, dir.path(), &|_| Some("x".into()));
        if let Err(e) = parsed {
            problems.push(format!("{file} ({info} block {checked}): {e}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked >= 3, "only {checked} configs found");
}

#[test]
fn shell_words_split_as_sh_would() {
    assert_eq!(
        words(r#"clawhost run --plugin hello "Echo 'hi there'" # comment"#),
        ["clawhost", "run", "--plugin", "hello", "Echo 'hi there'"]
    );
    assert_eq!(
        words("clawhost models -c c.json [--json] > out"),
        ["clawhost", "models", "-c", "c.json", "--json"]
    );
    // What the command check would refuse.
    assert!(Cli::try_parse_from(words("clawhost run --no-such-flag hi")).is_err());
    assert!(Cli::try_parse_from(words("clawhost run --json hi")).is_ok());
}
