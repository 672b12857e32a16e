//! A gateway in the test process on an ephemeral loopback port, its model
//! the fake provider.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clawhost_gateway::Gateway;
use clawhost_runner::AgentHost;
use serde_json::{json, Value};

use crate::fake_provider::FakeProvider;

/// A gateway on an ephemeral loopback port, its config in `dir`.
pub struct Running {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The gateway.
    pub gateway: Arc<Gateway>,
    /// Sends the shutdown signal.
    pub stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// The serving task.
    pub server: tokio::task::JoinHandle<std::io::Result<()>>,
    /// Its config file.
    pub config: PathBuf,
}

impl Running {
    /// The URL of `path` on it.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Stop taking requests, let turns in flight finish.
    pub async fn shutdown(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.server.await.unwrap().unwrap();
    }
}

/// The config a test gateway runs with: the fake provider as the model,
/// sessions in `dir`, plus `extra`'s top-level keys.
pub fn config_json(fake: &FakeProvider, dir: &Path, extra: Value) -> Value {
    let mut config = json!({
        "models": {"providers": {"fake": {
            "api": "openai-completions", "baseUrl": fake.url(), "models": [{"id": "m"}]
        }}},
        "agents": {"defaults": {"model": "fake/m"}},
        "sessions": {"dir": dir.join("sessions")},
        "plugins": {"cacheDir": crate::cache_dir(),
                    "cacheKeyFile": crate::cache_key_file()},
        "tools": {"testFixtures": true},
    });
    if let (Some(c), Some(e)) = (config.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            c.insert(k.clone(), v.clone());
        }
    }
    config
}

/// Start a gateway bound to `bind` with [`config_json`].
pub async fn start(fake: &FakeProvider, dir: &Path, extra: Value, bind: &str) -> Running {
    let config = dir.join("clawhost.json");
    std::fs::write(&config, config_json(fake, dir, extra).to_string()).unwrap();
    let loaded = clawhost_config::Config::load(&config).unwrap();
    let (host, _) = AgentHost::start(loaded, Some(config.clone()))
        .await
        .unwrap();
    let gateway = Gateway::new(Arc::new(host)).unwrap();
    let listener = gateway.listen(Some(bind)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(gateway.clone().serve(listener, async move {
        let _ = stopped.await;
    }));
    Running {
        addr,
        gateway,
        stop: Some(stop),
        server,
        config,
    }
}

/// The gateway as a process of its own (a bench binary run again with
/// `config`): print the address, serve until killed.
pub async fn serve_process(config: &Path) {
    let (host, _) = AgentHost::start(clawhost_config::Config::load(config).unwrap(), None)
        .await
        .unwrap();
    let gateway = Gateway::new(Arc::new(host)).unwrap();
    let listener = gateway.listen(Some("127.0.0.1:0")).await.unwrap();
    println!("{}", listener.local_addr().unwrap());
    gateway
        .serve(listener, std::future::pending())
        .await
        .unwrap();
}

/// The value at `p` (0–1) of sorted latencies.
pub fn percentile(sorted: &[std::time::Duration], p: f64) -> std::time::Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Print `name` with the p50 and p99 of `xs`; the p50.
pub fn summary(name: &str, mut xs: Vec<std::time::Duration>) -> std::time::Duration {
    xs.sort();
    let (p50, p99) = (percentile(&xs, 0.5), percentile(&xs, 0.99));
    println!("{name:<48} p50 {p50:>10.2?}   p99 {p99:>10.2?}");
    p50
}
