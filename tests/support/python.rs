//! Python for the tests that drive clawhost with official Python libraries
//! (the OpenAI client, the Prometheus parser, the MCP SDK, oras): their pinned versions are
//! fetched from PyPI once into `target/test-python` and found there, so
//! `cargo test --workspace` needs no pip step of its own.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The Python packages the tests use, pinned.
pub const PACKAGES: [&str; 4] = [
    "openai==1.99.9",
    "prometheus-client==0.21.1",
    "mcp==2.3.0",
    "oras==0.2.43",
];

/// The directory holding [`PACKAGES`], installed on first use.
pub fn site() -> &'static PathBuf {
    static SITE: OnceLock<PathBuf> = OnceLock::new();
    SITE.get_or_init(|| {
        let root = clawhost::build::repo_root()
            .join("target")
            .join("test-python");
        let stamp = root.join(format!("installed-{}", PACKAGES.join("+")));
        if !stamp.exists() {
            let out = std::process::Command::new("python3")
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--target",
                ])
                .arg(&root)
                .args(PACKAGES)
                .output()
                .expect("python3 runs (the tests drive clawhost with Python clients)");
            assert!(
                out.status.success(),
                "installing {PACKAGES:?} into {} failed: {}",
                root.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::write(&stamp, "").expect("the install stamp is written");
        }
        root
    })
}

/// `python3` with [`PACKAGES`] importable.
pub fn command() -> std::process::Command {
    let mut cmd = std::process::Command::new("python3");
    cmd.env("PYTHONPATH", site());
    cmd
}

/// The `mcp.servers` entry of a stdio server: `python3 <script> <args>`
/// with [`PACKAGES`] importable (the script under `tests/fixtures/mcp`).
pub fn mcp_stdio(script: &str, args: &[&str], extra: serde_json::Value) -> serde_json::Value {
    let path = clawhost::build::repo_root()
        .join("tests/fixtures/mcp")
        .join(script);
    let mut all = vec![path.to_string_lossy().into_owned()];
    all.extend(args.iter().map(|a| a.to_string()));
    let mut entry = serde_json::json!({
        "command": "python3",
        "args": all,
        "env": {"PYTHONPATH": site().to_string_lossy()},
    });
    if let (Some(entry), serde_json::Value::Object(extra)) = (entry.as_object_mut(), extra) {
        for (k, v) in extra {
            if k == "env" {
                if let (Some(env), serde_json::Value::Object(more)) =
                    (entry["env"].as_object_mut(), v)
                {
                    env.extend(more);
                }
            } else {
                entry.insert(k, v);
            }
        }
    }
    entry
}

/// An MCP server of `tests/fixtures/mcp/tools_server.py` over Streamable
/// HTTP on a free loopback port, killed when dropped.
pub struct HttpMcpServer {
    child: std::process::Child,
    /// Its endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpMcpServer {
    /// Start it and wait until it accepts connections.
    pub async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let script = clawhost::build::repo_root().join("tests/fixtures/mcp/tools_server.py");
        let child = command()
            .arg(script)
            .args(["http", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the HTTP MCP server starts");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the HTTP MCP server listens"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpMcpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
