use std::fs;

use super::*;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn names(paths: &[PathBuf], root: &Path) -> Vec<String> {
    let root = root.canonicalize().unwrap();
    paths
        .iter()
        .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
        .collect()
}

#[test]
fn declared_globs_and_conventional_fallbacks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "package.json",
        r#"{"name": "pack", "openclaw": {"skills": ["docs/skills/*.md", "extra.md"], "themes": "look/**/*.json"}}"#,
    );
    write(root, "docs/skills/a.md", "skill a");
    write(root, "docs/skills/b.txt", "not a match");
    write(root, "extra.md", "extra skill");
    write(root, "skills/ignored.md", "not used: skills are declared");
    write(root, "look/dark/t.json", "{}");
    write(root, "prompts/review.md", "Review {{file}}");
    write(root, "prompts/nested/fix.md", "Fix it");
    write(root, "extensions/tool/openclaw.plugin.json", "{}");
    write(root, "extensions/not-a-plugin/readme.md", "");
    let pkg = discover(root).unwrap();
    assert_eq!(pkg.name, "pack");
    assert_eq!(names(&pkg.skills, root), ["docs/skills/a.md", "extra.md"]);
    assert_eq!(names(&pkg.themes, root), ["look/dark/t.json"]);
    assert_eq!(
        names(&pkg.prompts, root),
        ["prompts/nested/fix.md", "prompts/review.md"]
    );
    assert_eq!(names(&pkg.extensions, root), ["extensions/tool"]);

    let loaded = Resources::load(&[root.to_path_buf()]).unwrap();
    assert!(loaded.skills_prompt().contains("## a\nskill a"));
    assert_eq!(loaded.prompts[1].text, "Review {{file}}");
}

#[test]
fn without_package_json_every_type_falls_back() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "skills/s.md", "x");
    write(dir.path(), "themes/t.json", "{\"accent\": \"red\"}");
    let loaded = Resources::load(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(loaded.skills.len(), 1);
    assert_eq!(loaded.themes[0].1["accent"], "red");
}

#[test]
fn escaping_paths_and_globs_are_refused() {
    for pattern in ["../outside/*.md", "/etc/*", "skills/../../x.md", "~/.ssh/*"] {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "package.json",
            &format!(r#"{{"openclaw": {{"skills": ["{pattern}"]}}}}"#),
        );
        let err = discover(dir.path()).unwrap_err();
        assert!(
            matches!(err, ResourceError::Escape { .. }),
            "{pattern}: {err}"
        );
        assert!(
            err.to_string().contains("escapes the package root"),
            "{err}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_package_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.md", "secret");
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("skills")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.md"),
        dir.path().join("skills/leak.md"),
    )
    .unwrap();
    write(
        dir.path(),
        "package.json",
        r#"{"openclaw": {"skills": ["skills/*.md"]}}"#,
    );
    assert!(matches!(
        discover(dir.path()),
        Err(ResourceError::Escape { .. })
    ));
}

#[test]
fn bad_globs_and_wrong_types_name_the_file_and_key() {
    for (manifest, says) in [
        (
            r#"{"openclaw": {"skills": ["skills/*.md", "skills/[oops"]}}"#,
            "package.json: `openclaw.skills[1]` is not a valid glob",
        ),
        (
            r#"{"openclaw": {"prompts": 7}}"#,
            "openclaw.prompts must be a string or a list of strings",
        ),
        (
            r#"{"openclaw": {"themes": [1]}}"#,
            "openclaw.themes entries must be strings",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "package.json", manifest);
        let err = discover(dir.path()).unwrap_err().to_string();
        assert!(err.contains(says), "{manifest}: {err}");
        let root = dir.path().canonicalize().unwrap();
        assert!(err.contains(&root.display().to_string()), "{err}");
    }
}

#[test]
fn a_star_stays_in_one_path_part_and_extensions_are_package_dirs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "package.json",
        r#"{"name": "pack", "openclaw": {"extensions": ["ext/*"], "skills": ["docs/*.md", "deep/**/*.md"]}}"#,
    );
    write(root, "ext/a/openclaw.plugin.json", "{}");
    write(root, "ext/a/plugin.wasm", "");
    write(root, "ext/readme.md", "not a package");
    write(root, "docs/top.md", "top");
    write(root, "docs/nested/under.md", "not matched by `*`");
    write(root, "deep/x/y/z.md", "matched by `**`");
    let pkg = discover(root).unwrap();
    assert_eq!(names(&pkg.extensions, root), ["ext/a"]);
    assert_eq!(names(&pkg.skills, root), ["deep/x/y/z.md", "docs/top.md"]);
}
