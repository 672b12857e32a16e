//! A throwaway PostgreSQL cluster from Debian's `postgresql` package, on a
//! temporary directory and a free loopback port (no system service): the
//! server the scale-out tests share their sessions through. As root the
//! server runs as the package's `postgres` user (it refuses root).

use std::os::unix::process::CommandExt;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The login the cluster is made with.
pub const USER: &str = "clawhost";
/// Its password (scram-sha-256 over TCP).
pub const PASSWORD: &str = "s3cret-for-tests";

/// A running cluster; stopped and removed when dropped.
pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// Its loopback port.
    pub port: u16,
    server: Option<Child>,
}

/// The newest `/usr/lib/postgresql/<version>/bin`.
fn bin_dir() -> PathBuf {
    let mut dirs: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is installed (Debian's postgresql package; .ci/run installs it)")
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            Some((version, e.path().join("bin")))
        })
        .filter(|(_, bin)| bin.join("postgres").is_file())
        .collect();
    dirs.sort();
    dirs.pop()
        .expect("a PostgreSQL server under /usr/lib/postgresql")
        .1
}

/// The `postgres` user's uid and gid, when this process is root.
fn run_as() -> Option<(u32, u32)> {
    if !rustix::process::geteuid().is_root() {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    let line = passwd
        .lines()
        .find(|l| l.starts_with("postgres:"))
        .expect("the postgres user of Debian's postgresql package");
    let fields: Vec<&str> = line.split(':').collect();
    Some((fields[2].parse().unwrap(), fields[3].parse().unwrap()))
}

/// `program`, as the `postgres` user when this process is root.
fn command(program: &Path) -> Command {
    let mut c = Command::new(program);
    if let Some((uid, gid)) = run_as() {
        c.uid(uid).gid(gid);
    }
    c
}

/// Give `path` to the `postgres` user when this process is root.
fn hand_over(path: &Path) {
    if let Some((uid, gid)) = run_as() {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Postgres {
    /// Make a cluster (login [`USER`]/[`PASSWORD`]) and start it.
    pub fn start() -> Self {
        let bin = bin_dir();
        let dir = tempfile::Builder::new()
            .prefix("clawhost-pg")
            .tempdir()
            .unwrap();
        hand_over(dir.path());
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        hand_over(&pwfile);
        let out = command(&bin.join("initdb"))
            .arg("-D")
            .arg(dir.path().join("data"))
            .args([
                "-U",
                USER,
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--no-sync",
            ])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut pg = Self {
            dir,
            bin,
            port: free_port(),
            server: None,
        };
        pg.run();
        pg
    }

    /// `postgres://clawhost:…@127.0.0.1:<port>/postgres`.
    pub fn url(&self) -> String {
        format!(
            "postgres://{USER}:{PASSWORD}@127.0.0.1:{}/postgres",
            self.port
        )
    }

    /// Start the server (again) on the same data and port; wait until it
    /// accepts connections.
    pub fn run(&mut self) {
        let log = std::fs::File::create(self.dir.path().join("server.log")).unwrap();
        hand_over(&self.dir.path().join("server.log"));
        let server = command(&self.bin.join("postgres"))
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args([
                "-p",
                &self.port.to_string(),
                "-c",
                "listen_addresses=127.0.0.1",
            ])
            .arg("-c")
            .arg(format!(
                "unix_socket_directories={}",
                self.dir.path().display()
            ))
            .args(["-c", "max_connections=200"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.server = Some(server);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-q"])
                .status()
                .unwrap();
            if ready.success() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "PostgreSQL did not start: {}",
                std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stop the server (fast shutdown: clients are disconnected).
    pub fn stop(&mut self) {
        if let Some(mut server) = self.server.take() {
            let _ = rustix::process::kill_process(
                rustix::process::Pid::from_child(&server),
                rustix::process::Signal::INT,
            );
            let _ = server.wait();
        }
    }

    /// Run SQL as the cluster's login; the rows' first column as text.
    pub async fn query(&self, sql: &str) -> Result<Vec<Option<String>>, tokio_postgres::Error> {
        let (client, connection) =
            tokio_postgres::connect(&self.url(), tokio_postgres::NoTls).await?;
        let driver = tokio::spawn(connection);
        let rows = client.simple_query(sql).await?;
        drop(client);
        let _ = driver.await;
        Ok(rows
            .iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).map(str::to_string)),
                _ => None,
            })
            .collect())
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}
