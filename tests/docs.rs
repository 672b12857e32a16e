//! The docs hold together: every chapter of `docs/src` is in the book's
//! `SUMMARY.md`, and every relative link of the README, CONTRIBUTING.md and
//! the book (and every `{{#include}}`) reaches a file, and a heading when it
//! names one; the README's runtime contract answers for every hook and
//! names the versions the tests pin. `mdbook build docs` renders what this
//! checks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The targets of the Markdown links `[text](target)` in `text`, outside
/// code blocks and code spans.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans hold no links.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// GitHub's and mdBook's anchor of a heading: lower case, spaces to `-`,
/// punctuation but `-` and `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// Why `target`, linked from `from`, does not resolve.
fn broken(from: &Path, target: &str) -> Option<String> {
    if target.starts_with("http://") || target.starts_with("https://") {
        return None;
    }
    let (file, anchor) = match target.split_once('#') {
        Some((file, anchor)) => (file, Some(anchor)),
        None => (target, None),
    };
    let path = if file.is_empty() {
        from.to_path_buf()
    } else {
        from.parent().unwrap().join(file)
    };
    if !path.exists() {
        return Some(format!("{} does not exist", path.display()));
    }
    let anchor = anchor?;
    let text = std::fs::read_to_string(&path).unwrap();
    (!anchors(&text).contains(anchor))
        .then(|| format!("{} has no heading #{anchor}", path.display()))
}

#[test]
fn every_chapter_is_in_the_summary_and_every_link_resolves() {
    let root = root();
    let src = root.join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().collect();
    let chapters: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != "SUMMARY.md")
        .collect();
    assert_eq!(listed, chapters, "docs/src/SUMMARY.md lists every chapter");

    let mut files = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    files.extend(chapters.iter().map(|c| src.join(c)));
    files.push(src.join("SUMMARY.md"));
    let mut problems = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for target in links(&text) {
            if let Some(why) = broken(file, &target) {
                problems.push(format!("{}: [..]({target}): {why}", file.display()));
            }
        }
        for include in text.split("{{#include ").skip(1) {
            let target = include.split("}}").next().unwrap().trim();
            if let Some(why) = broken(file, target) {
                problems.push(format!("{}: include {target}: {why}", file.display()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_link_checker_finds_a_broken_link_and_a_missing_heading() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("a.md");
    std::fs::write(&page, "# Title\n\n## The `x` part\n").unwrap();
    assert_eq!(
        links("see [a](a.md#title) and `[b](no.md)`"),
        ["a.md#title"]
    );
    assert_eq!(broken(&page, "a.md#title"), None);
    assert_eq!(broken(&page, "#the-x-part"), None);
    assert!(broken(&page, "a.md#nope").is_some());
    assert!(broken(&page, "b.md").is_some());
}

/// The README's runtime contract (the `runtime-contract` table and the
/// paragraph before it) says for every hook of the hook table what it does
/// on each runtime, and names the agent versions the tests drive.
#[test]
fn the_runtime_contract_answers_for_every_hook_and_the_pinned_agents() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (before, after) = readme
        .split_once("<!-- runtime-contract -->")
        .expect("the README has the runtime-contract table");
    let table: String = after
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| l.starts_with('|'))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(table.lines().count() > 5, "{table}");
    for kind in clawhost_hooks::HookKind::ALL {
        let name = format!("`{}`", kind.name());
        assert!(
            table.contains(&name),
            "the runtime contract does not say where {name} fires"
        );
    }
    let intro = before.trim_end().rsplit("\n\n").next().unwrap();
    for pin in [
        clawhost_tests::npm::CODEX,
        clawhost_tests::npm::CODEX_ACP,
        clawhost_tests::npm::CLAUDE_ACP,
        clawhost_tests::npm::GEMINI,
    ] {
        let (package, version) = pin.rsplit_once('@').unwrap();
        assert!(
            intro.contains(&format!("`{package}`"))
                || intro.contains(package.rsplit('/').next().unwrap()),
            "the contract does not name {package}: {intro}"
        );
        assert!(
            intro.contains(version),
            "the contract does not name {pin}: {intro}"
        );
    }
}
