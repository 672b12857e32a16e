//! The `clawhost gateway` binary itself, over loopback, with the offline
//! scripted model: start-up, SIGHUP reload, SIGTERM drain with a turn in
//! flight, a cancelled hook call then 100 healthy calls, the web's requests
//! refused, a 300,000-message request refused with its memory unchanged,
//! private session files under umask 022, and ids that do not repeat after
//! a restart.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails by panicking

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{plugins, write_config};
use serde_json::{json, Value};

/// A gateway process and where it listens.
struct Gateway {
    child: Child,
    addr: SocketAddr,
}

impl Gateway {
    /// Start `clawhost gateway` on `config` under umask 022, in `dir`.
    fn start(dir: &Path, config: &Path) -> Self {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("umask 022; exec \"$0\" gateway -c \"$1\" --bind 127.0.0.1:0")
            .arg(env!("CARGO_BIN_EXE_clawhost"))
            .arg(config)
            .current_dir(dir)
            .env_remove("CLAWHOST_LOG")
            .env_remove("RUST_LOG")
            .env("XDG_CONFIG_HOME", dir.join("xdg"))
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .parse()
            .unwrap();
        Self { child, addr }
    }

    fn signal(&self, name: &str) {
        let ok = Command::new("kill")
            .args([format!("-{name}"), self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }

    /// Resident memory now, in KiB (from /proc).
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    }

    /// Wait for the process to exit; its status code.
    fn wait(mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the gateway did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request (`Connection: close`): the status and the raw body.
fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = String::new();
    let _ = stream.read_to_string(&mut raw);
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = raw
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

fn json_post(addr: SocketAddr, path: &str, body: &Value) -> (u16, String) {
    request(
        addr,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        &body.to_string(),
    )
}

fn ask(addr: SocketAddr, text: &str) -> (u16, String) {
    json_post(
        addr,
        "/v1/chat/completions",
        &json!({"model": "main", "messages": [{"role": "user", "content": text}]}),
    )
}

/// A config whose scripted model calls `tool` with `arguments` (where
/// `{{user}}` is the user's text), then answers with the result.
fn setup(dir: &Path, tool: &str, arguments: Value) -> std::path::PathBuf {
    std::fs::write(
        dir.join("script.json"),
        json!([{"toolCalls": [{"name": tool, "arguments": arguments}]},
               {"answer": "done: {{results}}"}])
        .to_string(),
    )
    .unwrap();
    let config = json!({
        "models": {"providers": {"s": {"api": "scripted", "script": "script.json", "models": [{"id": "m"}]}}},
        "agents": {"defaults": {"model": "s/m"}},
        "sessions": {"dir": dir.join("sessions")},
        "plugins": {"paths": [plugins()], "allow": ["misbehave"],
                    "limits": {"callTimeoutMs": 5000, "maxConsecutiveTraps": 2}},
        "tools": {"exec": {"allow": ["sleep"]}},
    });
    write_config(dir, config)
}

#[test]
fn sighup_reloads_and_sigterm_drains_the_turn_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let config = setup(dir.path(), "exec", json!({"command": "{{user}}"}));
    let gw = Gateway::start(dir.path(), &config);
    let ready = |gw: &Gateway| -> Value {
        serde_json::from_str(&request(gw.addr, "GET", "/readyz", &[], "").1).unwrap()
    };
    let before = ready(&gw)["generation"].as_u64().unwrap();
    gw.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(20);
    while ready(&gw)["generation"].as_u64().unwrap() == before {
        assert!(Instant::now() < deadline, "SIGHUP did not reload");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A turn that runs `sleep 1`; SIGTERM arrives while it runs.
    let addr = gw.addr;
    let turn = std::thread::spawn(move || ask(addr, "sleep 1"));
    std::thread::sleep(Duration::from_millis(400));
    gw.signal("TERM");
    let (status, body) = turn.join().unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("done: "), "the turn finished: {body}");
    assert_eq!(gw.wait(), Some(0));
}

#[test]
fn a_cancelled_hook_call_leaves_the_plugin_serving_the_next_hundred() {
    let dir = tempfile::tempdir().unwrap();
    let config = setup(dir.path(), "ping", json!({"hook": "{{user}}"}));
    let gw = Gateway::start(dir.path(), &config);
    // Three clients give up while misbehave's before_tool_call spins
    // (more than maxConsecutiveTraps: a cancellation is not a failure).
    for _ in 0..3 {
        let mut stream = TcpStream::connect(gw.addr).unwrap();
        let body =
            json!({"model": "main", "messages": [{"role": "user", "content": "spin"}]}).to_string();
        write!(
            stream,
            "POST /v1/chat/completions HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            gw.addr,
            body.len()
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        drop(stream);
    }
    std::thread::sleep(Duration::from_millis(200));
    for n in 0..100 {
        let (status, body) = ask(gw.addr, "none");
        assert_eq!(status, 200, "call {n}: {body}");
        assert!(body.contains("pong"), "call {n}: {body}");
    }
    let (_, list) = request(gw.addr, "GET", "/v1/plugins", &[], "");
    let list: Value = serde_json::from_str(&list).unwrap();
    let misbehave = &list["data"][0];
    assert_eq!(misbehave["state"], "active", "{list}");
    assert_eq!(misbehave["stats"]["cancelled"], 3, "{list}");
    assert_eq!(misbehave["stats"]["failures"]["timeout"], 0, "{list}");
    let (_, ready) = request(gw.addr, "GET", "/readyz", &[], "");
    assert!(ready.contains("\"quarantined\":[]"), "{ready}");
    // The operator's view of the same counters.
    let out = Command::new(env!("CARGO_BIN_EXE_clawhost"))
        .args([
            "plugins",
            "list",
            "--gateway",
            &format!("http://{}", gw.addr),
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        listed.contains("misbehave") && listed.contains("active") && listed.contains("3 cancelled"),
        "{listed}"
    );
}

#[test]
fn the_webs_requests_and_a_flood_are_refused_and_files_are_private() {
    let dir = tempfile::tempdir().unwrap();
    let config = setup(dir.path(), "ping", json!({"hook": "{{user}}"}));
    let gw = Gateway::start(dir.path(), &config);
    let port = gw.addr.port();
    let rebinding = format!("attacker.example:{port}");
    let (status, body) = request(gw.addr, "GET", "/v1/sessions", &[("Host", &rebinding)], "");
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("host_not_allowed"), "{body}");
    let (status, body) = request(
        gw.addr,
        "POST",
        "/admin/reload",
        &[
            ("Origin", "http://attacker.example"),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        "x=1",
    );
    assert_eq!(status, 403, "{body}");

    // One turn, so there are session files to look at.
    let (status, first) = ask(gw.addr, "none");
    assert_eq!(status, 200, "{first}");
    // 300,000 messages (about 11 MB): refused while parsing, memory unchanged.
    let before = gw.rss_kib();
    let message = json!({"role": "user", "content": "hi"});
    let flood = json!({"model": "main", "messages": vec![message; 300_000]});
    let (status, body) = json_post(gw.addr, "/v1/chat/completions", &flood);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("too_many_messages"), "{body}");
    let after = gw.rss_kib();
    assert!(
        after < before + 16 * 1024,
        "RSS grew from {before} to {after} KiB for a refused request"
    );
    // Session files: 0600 in 0700 directories, though the umask is 022.
    let sessions = dir.path().join("sessions");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&sessions), 0o700);
    assert_eq!(mode(&sessions.join("main")), 0o700);
    for entry in std::fs::read_dir(sessions.join("main")).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }

    // Ids do not repeat after a restart: the same session, continued.
    let session = serde_json::from_str::<Value>(&first).unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let again = |gw: &Gateway| {
        let (status, body) = request(
            gw.addr,
            "POST",
            "/v1/chat/completions",
            &[
                ("Content-Type", "application/json"),
                ("X-Clawhost-Session", &session),
            ],
            &json!({"model": "main", "messages": [{"role": "user", "content": "none"}]})
                .to_string(),
        );
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<Value>(&body).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let one = again(&gw);
    drop(gw);
    let gw = Gateway::start(dir.path(), &config);
    let two = again(&gw);
    assert_ne!(one, two);
}
