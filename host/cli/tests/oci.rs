//! `clawhost plugins install oci://…` against a real registry (Debian's
//! `docker-registry`, the CNCF distribution registry, on a loopback port)
//! holding plugins pushed by an independent client (the `oras` Python
//! package), and against a registry that misbehaves on purpose.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails by panicking

mod common;
#[path = "../../../tests/support/python.rs"]
#[allow(dead_code)]
mod python;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A process killed when dropped (a failed check must not leave it running).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free loopback port (bound, then released for the registry to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Wait until `addr` accepts connections.
fn wait_for(addr: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {addr}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Debian's `docker-registry` serving `dir` on a loopback port: its
/// `host:port`.
fn registry(dir: &Path) -> (Running, String) {
    registry_with(dir, "")
}

/// The same, with `auth` (YAML under `auth:`, empty for none).
fn registry_with(dir: &Path, auth: &str) -> (Running, String) {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let config = dir.join("registry.yml");
    let auth = if auth.is_empty() {
        String::new()
    } else {
        format!("auth:\n{auth}")
    };
    std::fs::write(
        &config,
        format!(
            "version: 0.1\nlog: {{level: error}}\nstorage:\n  filesystem: {{rootdirectory: {}}}\n{auth}http:\n  addr: {addr}\n",
            dir.join("storage").display()
        ),
    )
    .unwrap();
    let child = Command::new("docker-registry")
        .arg("serve")
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("docker-registry runs (Debian's `docker-registry` package; .ci/run installs it)");
    let running = Running(child);
    wait_for(&addr);
    (running, addr)
}

/// Push `wasm` as `reference` (`host:port/repo:tag`) with the `oras` Python
/// package: the Wasm artifact layout, `layers` media types (one
/// `application/wasm` for a plugin), and `manifest` as the plugin
/// annotation when given.
fn oras_push(reference: &str, wasm: &Path, layers: &[&str], manifest: Option<&Value>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), "{}").unwrap();
    let mut files = Vec::new();
    for (i, media) in layers.iter().enumerate() {
        let name = format!("layer{i}.wasm");
        std::fs::copy(wasm, dir.path().join(&name)).unwrap();
        files.push(format!("{name}:{media}"));
    }
    let annotations = match manifest {
        Some(m) => json!({"org.openclaw.plugin.manifest": m.to_string()}),
        None => json!({}),
    };
    let script = format!(
        r#"
import json, oras.client
c = oras.client.OrasClient(hostname={host:?}, insecure=True)
r = c.push({reference:?}, files=json.loads({files:?}),
           manifest_config="config.json:application/vnd.wasm.config.v0+json",
           manifest_annotations=json.loads({annotations:?}), disable_path_validation=True)
assert r.status_code == 201, r.text
"#,
        host = reference.split('/').next().unwrap(),
        files = serde_json::to_string(&files).unwrap(),
        annotations = annotations.to_string(),
    );
    let out = python::command()
        .arg("-c")
        .arg(script)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "oras push failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A config in `dir` whose scripted model calls `word_count`.
fn config(dir: &Path) -> PathBuf {
    common::scripted_config(
        dir,
        json!([
            {"toolCalls": [{"name": "word_count", "arguments": {"text": "one two three"}}]},
            {"answer": "counted: {{results}}"}
        ]),
    )
}

/// `clawhost --config <config> plugins install <args>`.
fn install(dir: &Path, config: &Path, args: &[&str]) -> (bool, String, String) {
    common::outcome(
        common::clawhost(dir)
            .arg("--config")
            .arg(config)
            .args(["plugins", "install"])
            .args(args),
    )
}

/// The plugin built from `plugins/text-tools`: its component and manifest.
fn text_tools() -> (PathBuf, Value) {
    let dir = common::plugins().join("text-tools");
    let manifest =
        serde_json::from_slice(&std::fs::read(dir.join("openclaw.plugin.json")).unwrap()).unwrap();
    (dir.join("plugin.wasm"), manifest)
}

#[test]
fn a_plugin_pushed_by_oras_installs_pinned_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (_registry, host) = registry(dir.path());
    let (wasm, manifest) = text_tools();
    oras_push(
        &format!("{host}/tools/text-tools:1.0"),
        &wasm,
        &["application/wasm"],
        Some(&manifest),
    );
    let config = config(dir.path());
    let (ok, out, err) = install(
        dir.path(),
        &config,
        &[&format!("oci://{host}/tools/text-tools:1.0")],
    );
    assert!(ok, "{out}{err}");
    let written: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    let entry = &written["plugins"]["entries"]["text-tools"];
    let source = entry["source"].as_str().unwrap();
    let prefix = format!("oci://{host}/tools/text-tools:1.0@sha256:");
    assert!(source.starts_with(&prefix), "{source}");
    let bytes = std::fs::read(&wasm).unwrap();
    assert_eq!(entry["sha256"], clawhost_plugin_runtime::sha256_hex(&bytes));

    // It runs: the scripted model calls its tool.
    let (ok, out, err) = common::outcome(
        common::clawhost(dir.path())
            .arg("--config")
            .arg(&config)
            .args(["run", "count"]),
    );
    assert!(ok, "{out}{err}");
    assert!(out.contains(r#""words":3"#), "{out}{err}");

    // The pinned digest installs the same bytes into another config.
    let other = tempfile::tempdir().unwrap();
    let other_config = self::config(other.path());
    let (ok, out, err) = install(other.path(), &other_config, &[source]);
    assert!(ok, "{out}{err}");
    let installed = std::fs::read(other.path().join("plugins/text-tools/plugin.wasm")).unwrap();
    assert_eq!(installed, bytes);

    // A digest the registry does not hold is not found; nothing changes.
    let before = std::fs::read(&other_config).unwrap();
    let missing = format!("{prefix}{}", "0".repeat(64));
    let (ok, _, err) = install(other.path(), &other_config, &[&missing, "--force"]);
    assert!(!ok && err.contains("not found"), "{err}");
    assert_eq!(std::fs::read(&other_config).unwrap(), before);
}

#[test]
fn artifacts_that_are_not_one_wasm_component_are_refused_and_nothing_is_installed() {
    let dir = tempfile::tempdir().unwrap();
    let (_registry, host) = registry(dir.path());
    let (wasm, manifest) = text_tools();
    oras_push(
        &format!("{host}/bad/two:1"),
        &wasm,
        &["application/wasm", "application/wasm"],
        Some(&manifest),
    );
    oras_push(
        &format!("{host}/bad/media:1"),
        &wasm,
        &["application/vnd.oci.image.layer.v1.tar"],
        Some(&manifest),
    );
    oras_push(
        &format!("{host}/bad/bare:1"),
        &wasm,
        &["application/wasm"],
        None,
    );
    let config = config(dir.path());
    let before = std::fs::read(&config).unwrap();
    for (repo, says) in [
        ("bad/two", "2 layers"),
        ("bad/media", "application/vnd.oci.image.layer.v1.tar"),
        ("bad/bare", "org.openclaw.plugin.manifest"),
    ] {
        let (ok, _, err) = install(dir.path(), &config, &[&format!("oci://{host}/{repo}:1")]);
        assert!(!ok && err.contains(says), "{repo}: {err}");
        assert_eq!(std::fs::read(&config).unwrap(), before, "{repo}");
        assert!(!dir.path().join("plugins").join("text-tools").exists());
    }
}

/// [`tests/fixtures/oci/fake_registry.py`] in `mode`: its `host:port`.
fn fake_registry(dir: &Path, mode: &str) -> (Running, String) {
    let script = clawhost::build::repo_root().join("tests/fixtures/oci/fake_registry.py");
    let port_file = dir.join(format!("{mode}.port"));
    let child = Command::new("python3")
        .arg(script)
        .arg(mode)
        .arg(&port_file)
        .spawn()
        .unwrap();
    let running = Running(child);
    let deadline = Instant::now() + Duration::from_secs(20);
    let port = loop {
        if let Ok(port) = std::fs::read_to_string(&port_file) {
            if !port.is_empty() {
                break port;
            }
        }
        assert!(Instant::now() < deadline, "the fake registry did not start");
        std::thread::sleep(Duration::from_millis(50));
    };
    (running, format!("127.0.0.1:{port}"))
}

#[test]
fn a_hostile_registry_is_bounded_timed_out_and_kept_to_its_host() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let before = std::fs::read(&config).unwrap();
    for (mode, says) in [
        // Refused from the declared size, before a byte of it is read.
        ("huge", "over the limit"),
        // Declared small, sent endlessly: reading stops at the declared size.
        ("endless", "over the limit"),
        ("stall", "stalled"),
        ("redirect", "redirected to another host"),
        // Bytes that are not the ones the manifest's digest names.
        ("tampered", "the content's digest is"),
        // A signature artifact listing more signatures than are read.
        ("signatures", "at most 16 are read"),
    ] {
        let (_fake, host) = fake_registry(dir.path(), mode);
        let started = Instant::now();
        let (ok, _, err) = install(
            dir.path(),
            &config,
            &[&format!("oci://{host}/p/huge:1"), "--registry-timeout", "2"],
        );
        assert!(!ok && err.contains(says), "{mode}: {err}");
        assert!(started.elapsed() < Duration::from_secs(30), "{mode}");
        assert_eq!(std::fs::read(&config).unwrap(), before, "{mode}");
    }
}

/// `clawhost plugin publish DIR TARGET`: its stdout.
fn publish(dir: &Path, package: &Path, target: &str) -> String {
    let (ok, out, err) = common::outcome(
        common::clawhost(dir)
            .args(["plugin", "publish"])
            .arg(package)
            .arg(target),
    );
    assert!(ok, "{out}{err}");
    out
}

#[test]
fn a_published_plugin_is_pulled_back_by_oras_and_updates_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (_registry, host) = registry(dir.path());
    let package = common::plugins().join("text-tools");
    let target = format!("oci://{host}/tools/text-tools:1");
    let out = publish(dir.path(), &package, &target);
    let first = out
        .lines()
        .find(|l| l.starts_with(&format!("oci://{host}/tools/text-tools:1@sha256:")))
        .unwrap_or_else(|| panic!("the pinned reference: {out}"))
        .to_string();

    // The independent client pulls the component back byte for byte.
    let pulled = tempfile::tempdir().unwrap();
    let script = format!(
        "import oras.client\nc = oras.client.OrasClient(hostname={h:?}, insecure=True)\nprint(c.pull(target={t:?}, outdir={o:?}))",
        h = host,
        t = format!("{host}/tools/text-tools:1"),
        o = pulled.path().to_string_lossy(),
    );
    let out = python::command().arg("-c").arg(script).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(pulled.path().join("plugin.wasm")).unwrap(),
        std::fs::read(package.join("plugin.wasm")).unwrap()
    );

    // Installed by tag, pinned to the first digest (the tag kept).
    let config = config(dir.path());
    let (ok, out, err) = install(dir.path(), &config, &[&target]);
    assert!(ok, "{out}{err}");
    let source = |config: &Path| {
        let written: Value = serde_json::from_slice(&std::fs::read(config).unwrap()).unwrap();
        written["plugins"]["entries"]["text-tools"]["source"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(source(&config), first);

    // The tag moves (a new version of the package is published to it):
    // nothing installed moves with it.
    let next = tempfile::tempdir().unwrap();
    for f in ["openclaw.plugin.json", "plugin.wasm"] {
        std::fs::copy(package.join(f), next.path().join(f)).unwrap();
    }
    let mut manifest: Value =
        serde_json::from_slice(&std::fs::read(next.path().join("openclaw.plugin.json")).unwrap())
            .unwrap();
    manifest["version"] = json!("0.1.1");
    std::fs::write(
        next.path().join("openclaw.plugin.json"),
        manifest.to_string(),
    )
    .unwrap();
    publish(dir.path(), next.path(), &target);
    let (ok, _, err) = install(dir.path(), &config, &[&target]);
    assert!(!ok && err.contains("already installed"), "{err}");
    assert_eq!(source(&config), first);

    // `plugins update` moves it when asked, and then has nothing to do.
    let update = || {
        common::outcome(
            common::clawhost(dir.path())
                .arg("--config")
                .arg(&config)
                .args(["plugins", "update", "text-tools"]),
        )
    };
    let (ok, out, err) = update();
    assert!(ok, "{out}{err}");
    let moved = source(&config);
    assert_ne!(moved, first);
    assert!(out.contains("text-tools 0.1.1"), "{out}");
    let (ok, out, err) = update();
    assert!(ok && out.contains("up to date"), "{out}{err}");
    assert_eq!(source(&config), moved);
}

/// An ECDSA P-256 key pair made by openssl in `dir`: (private, public) PEM paths.
fn keypair(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let private = dir.join(format!("{name}.key"));
    let public = dir.join(format!("{name}.pub"));
    for args in [
        vec![
            "ecparam",
            "-name",
            "prime256v1",
            "-genkey",
            "-noout",
            "-out",
        ],
        vec!["ec", "-pubout", "-in"],
    ] {
        let mut cmd = Command::new("openssl");
        cmd.args(&args);
        if args[0] == "ecparam" {
            cmd.arg(&private);
        } else {
            cmd.arg(&private).arg("-out").arg(&public);
        }
        let out = cmd.output().expect("openssl runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (private, public)
}

/// Sign what `host/repo:tag` points to with `key` (openssl, stored as
/// cosign stores it; `extra`: the capabilities JSON and/or `--tamper`).
fn sign(host: &str, repo: &str, tag: &str, key: &Path, extra: &[&str]) {
    let script = clawhost::build::repo_root().join("tests/fixtures/oci/sign.py");
    let out = python::command()
        .arg(script)
        .args([host, repo, tag])
        .arg(key)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "signing failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A config in a new directory under `dir` trusting `public` as `acme` and
/// requiring signatures.
fn signed_config(dir: &Path, name: &str, public: &Path) -> (PathBuf, PathBuf) {
    let home = dir.join(name);
    std::fs::create_dir_all(&home).unwrap();
    let config = config(&home);
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    doc["plugins"]["trust"] = json!({"acme": {"keyFile": public}});
    doc["plugins"]["requireSignature"] = json!(true);
    std::fs::write(&config, doc.to_string()).unwrap();
    (home, config)
}

#[test]
fn signatures_made_by_openssl_bind_what_a_plugin_may_be_granted() {
    let dir = tempfile::tempdir().unwrap();
    let (_registry, host) = registry(dir.path());
    let (wasm, manifest) = text_tools();
    let (key, public) = keypair(dir.path(), "acme");
    let (stranger, _) = keypair(dir.path(), "stranger");
    let notes = r#"{"filesystem": [{"guestPath": "/notes", "access": "read-only"}]}"#;
    let push = |repo: &str, manifest: &Value| {
        oras_push(
            &format!("{host}/{repo}:1"),
            &wasm,
            &["application/wasm"],
            Some(manifest),
        );
    };
    for repo in [
        "tools/signed",
        "tools/unsigned",
        "tools/stranger",
        "tools/tampered",
    ] {
        push(repo, &manifest);
    }
    sign(&host, "tools/signed", "1", &key, &[notes]);
    sign(&host, "tools/stranger", "1", &stranger, &[notes]);
    sign(&host, "tools/tampered", "1", &key, &[notes, "--tamper"]);
    let reference = |repo: &str| format!("oci://{host}/{repo}:1");

    // Signed by the trusted key, granted within what was signed: installs.
    let (home, config) = signed_config(dir.path(), "good", &public);
    std::fs::create_dir_all(home.join("notes")).unwrap();
    let mount = format!("/notes={}", home.join("notes").display());
    let (ok, out, err) = install(
        &home,
        &config,
        &[&reference("tools/signed"), "--fs", &mount],
    );
    assert!(ok, "{out}{err}");
    assert!(out.contains("signed by `acme`"), "{out}");
    assert!(home.join("plugins/text-tools/signature.json").is_file());
    // `plugins inspect` shows where it came from, who signed it, and what.
    let (ok, out, err) =
        common::outcome(common::clawhost(&home).arg("--config").arg(&config).args([
            "plugins",
            "inspect",
            "text-tools",
            "--json",
        ]));
    assert!(ok, "{out}{err}");
    let detail: Value = serde_json::from_str(&out).unwrap();
    let provenance = &detail["provenance"];
    assert!(
        provenance["source"]
            .as_str()
            .unwrap()
            .starts_with(&format!("oci://{host}/tools/signed:1@sha256:")),
        "{provenance}"
    );
    assert_eq!(provenance["signature"]["signer"], "acme", "{provenance}");
    assert_eq!(
        provenance["signature"]["capabilities"]["filesystem"][0]["guestPath"],
        "/notes"
    );

    // A grant beyond it, added later by hand, is refused at load.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    doc["plugins"]["entries"]["text-tools"]["grants"]["env"] = json!(["HOME"]);
    std::fs::write(&config, doc.to_string()).unwrap();
    let (_, out, err) = common::outcome(
        common::clawhost(&home)
            .arg("--config")
            .arg(&config)
            .args(["plugins", "list"]),
    );
    assert!(
        format!("{out}{err}").contains("beyond what its publisher signed"),
        "{out}{err}"
    );

    // Each of these is refused at install, and nothing is installed.
    for (name, source, extra, says) in [
        (
            "beyond",
            "tools/signed",
            vec!["--env", "HOME"],
            "beyond what its publisher signed",
        ),
        ("unsigned", "tools/unsigned", vec![], "signature"),
        ("stranger", "tools/stranger", vec![], "no trusted key"),
        ("tampered", "tools/tampered", vec![], "no trusted key"),
    ] {
        let (home, config) = signed_config(dir.path(), name, &public);
        let before = std::fs::read(&config).unwrap();
        let mut args = vec![reference(source)];
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, out, err) = install(&home, &config, &args);
        assert!(!ok && err.contains(says), "{name}: {out}{err}");
        assert_eq!(std::fs::read(&config).unwrap(), before, "{name}");
        assert!(!home.join("plugins/text-tools").exists(), "{name}");
    }

    // The signed tag moves to a new, unsigned manifest: refused.
    let mut moved = manifest.clone();
    moved["version"] = json!("0.1.1");
    push("tools/signed", &moved);
    let (home, config) = signed_config(dir.path(), "moved", &public);
    let (ok, out, err) = install(&home, &config, &[&reference("tools/signed")]);
    assert!(!ok && err.contains("signature"), "{out}{err}");
}

#[test]
fn the_readme_registry_commands_publish_sign_install_and_run() {
    let readme = std::fs::read_to_string(clawhost::build::repo_root().join("README.md")).unwrap();
    let block = readme
        .split_once("<!-- registry-commands -->")
        .and_then(|(_, after)| after.split_once("```sh\n"))
        .and_then(|(_, after)| after.split_once("```"))
        .map(|(block, _)| block)
        .expect("the README has the registry-commands block");
    let lines: Vec<&str> = block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines.len(), 4, "{block}");

    let dir = tempfile::tempdir().unwrap();
    let (_registry, host) = registry(dir.path());
    let (key, public) = keypair(dir.path(), "acme");
    let (home, config) = signed_config(dir.path(), "operator", &public);
    let local = |line: &str| {
        line.replace("registry.example", &host).replace(
            "./text-tools",
            &common::plugins().join("text-tools").to_string_lossy(),
        )
    };
    let clawhost_args = |line: &str| -> Vec<String> {
        let line = local(line);
        let rest = line.strip_prefix("clawhost ").expect("a clawhost command");
        // The run's message is quoted in the README.
        match rest.split_once(" \"") {
            Some((head, quoted)) => {
                let mut args: Vec<String> = head.split_whitespace().map(String::from).collect();
                args.push(quoted.trim_end_matches('"').to_string());
                args
            }
            None => rest.split_whitespace().map(String::from).collect(),
        }
    };
    let run = |args: &[String]| {
        common::outcome(
            common::clawhost(&home)
                .arg("--config")
                .arg(&config)
                .args(args),
        )
    };

    // 1. publish.
    let (ok, out, err) = run(&clawhost_args(lines[0]));
    assert!(ok, "{out}{err}");
    // 2. sign: cosign is not installable here; the same signature, made
    // by openssl and stored as cosign stores it, with the README's
    // capabilities.
    let caps = lines[1]
        .split_once("org.openclaw.capabilities='")
        .and_then(|(_, rest)| rest.split_once('\''))
        .map(|(caps, _)| caps)
        .expect("the sign line declares capabilities");
    let repo_tag = clawhost_args(lines[2]).last().unwrap().clone();
    let (repo, tag) = repo_tag
        .trim_start_matches(&format!("oci://{host}/"))
        .split_once(':')
        .unwrap();
    sign(&host, repo, tag, &key, &[caps]);
    // 3. install: the signature is checked.
    let (ok, out, err) = run(&clawhost_args(lines[2]));
    assert!(ok && out.contains("signed by `acme`"), "{out}{err}");
    // 4. run: the scripted model calls the installed plugin's tool.
    let (ok, out, err) = run(&clawhost_args(lines[3]));
    assert!(ok && out.contains(r#""words":3"#), "{out}{err}");
}

#[test]
fn a_registry_that_asks_for_a_login_gets_the_configured_or_docker_credentials() {
    let dir = tempfile::tempdir().unwrap();
    // htpasswd (bcrypt, as the registry wants it) for me / s3cret.
    let hash = Command::new("python3")
        .args([
            "-W",
            "ignore",
            "-c",
            "import crypt; print(crypt.crypt('s3cret', crypt.mksalt(crypt.METHOD_BLOWFISH)))",
        ])
        .output()
        .unwrap();
    assert!(hash.status.success());
    let htpasswd = dir.path().join("htpasswd");
    std::fs::write(
        &htpasswd,
        format!("me:{}", String::from_utf8_lossy(&hash.stdout)),
    )
    .unwrap();
    let (_registry, host) = registry_with(
        dir.path(),
        &format!(
            "  htpasswd:\n    realm: clawhost-test\n    path: {}\n",
            htpasswd.display()
        ),
    );
    // The publisher logs in as docker does: the Docker config file.
    let docker = dir.path().join("docker");
    std::fs::create_dir_all(&docker).unwrap();
    let auth = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, "me:s3cret");
    std::fs::write(
        docker.join("config.json"),
        json!({"auths": {host.clone(): {"auth": auth}}}).to_string(),
    )
    .unwrap();
    let target = format!("oci://{host}/tools/text-tools:1");
    let (ok, out, err) = common::outcome(
        common::clawhost(dir.path())
            .env("DOCKER_CONFIG", &docker)
            .args(["plugin", "publish"])
            .arg(common::plugins().join("text-tools"))
            .arg(&target),
    );
    assert!(ok, "{out}{err}");

    // Without credentials: refused, and said why.
    let config = config(dir.path());
    let (ok, _, err) = install(dir.path(), &config, &[&target]);
    assert!(!ok && err.contains("user name and password"), "{err}");
    // The operator's login, its secret from the environment.
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    doc["plugins"]["registries"] =
        json!({host.clone(): {"username": "me", "password": "${REGISTRY_PASSWORD}"}});
    std::fs::write(&config, doc.to_string()).unwrap();
    let login = |password: &str| {
        common::outcome(
            common::clawhost(dir.path())
                .env("REGISTRY_PASSWORD", password)
                .arg("--config")
                .arg(&config)
                .args(["plugins", "install", &target]),
        )
    };
    let (ok, _, err) = login("wrong");
    assert!(!ok && err.contains("refused the credentials"), "{err}");
    let (ok, out, err) = login("s3cret");
    assert!(ok, "{out}{err}");
}
