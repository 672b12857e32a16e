//! The connection pool and the runtime it lives on. Connections belong to a
//! runtime of their own (two threads), so a store call works from any
//! thread or runtime: a blocking call waits for its answer on a channel, an
//! async one awaits it.

use std::future::Future;
use std::time::Duration;

use clawhost_sessions::SessionError;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

/// The longest a store call (other than waiting for a lane) may take before
/// it fails as unavailable.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A pool of connections to one database, on the store's runtime. Clones
/// share both; the runtime stops when the last clone is dropped.
#[derive(Clone)]
pub(crate) struct Db {
    pub(crate) pool: Pool,
    pub(crate) handle: tokio::runtime::Handle,
    /// The database without secrets, for messages.
    pub(crate) name: String,
    pub(crate) config: tokio_postgres::Config,
    _stop: std::sync::Arc<std::sync::mpsc::SyncSender<()>>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

/// `postgres://user@host:port/db`: where a config points, without secrets.
fn name(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or(""),
        config.get_dbname().unwrap_or("")
    )
}

/// A database error as a session error: the server refused or failed a
/// statement (`Store`), or it cannot be reached (`Unavailable`).
pub(crate) fn db_err(e: tokio_postgres::Error) -> SessionError {
    if let Some(db) = e.as_db_error() {
        // Class 08 (connection), 57P (shutdown, cannot connect now), 53 (resources).
        let code = db.code().code();
        let text = format!("{}: {}", db.severity(), db.message());
        return if code.starts_with("08") || code.starts_with("57P") || code.starts_with("53") {
            SessionError::Unavailable(text)
        } else {
            SessionError::Store(text)
        };
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    SessionError::Unavailable(text)
}

/// A pool error as a session error (every one means: not now).
pub(crate) fn pool_err(e: deadpool_postgres::PoolError) -> SessionError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => db_err(e),
        other => SessionError::Unavailable(other.to_string()),
    }
}

impl Db {
    /// Parse `url` and start the runtime and a pool of at most `size`
    /// connections (none opened yet).
    pub(crate) fn new(url: &str, size: usize) -> Result<Self, SessionError> {
        let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
            SessionError::Store(format!(
                "sessions.store is not a PostgreSQL URL like postgres://user:password@host:5432/db: {e}"
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        config.keepalives_idle(Duration::from_secs(30));
        config.application_name("clawhost");
        let name = name(&config);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("clawhost-store")
            .enable_all()
            .build()
            .map_err(|e| SessionError::Store(format!("starting the store's runtime: {e}")))?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = std::sync::mpsc::sync_channel::<()>(0);
        std::thread::Builder::new()
            .name("clawhost-store".into())
            .spawn(move || {
                let _ = stopped.recv();
                runtime.shutdown_background();
            })
            .map_err(|e| SessionError::Store(format!("starting the store's thread: {e}")))?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(size.max(2))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(Duration::from_secs(10)))
            .create_timeout(Some(Duration::from_secs(5)))
            .recycle_timeout(Some(Duration::from_secs(5)))
            .build()
            .map_err(|e| SessionError::Store(format!("the connection pool: {e}")))?;
        Ok(Self {
            pool,
            handle,
            name,
            config,
            _stop: std::sync::Arc::new(stop),
        })
    }

    /// `e` naming this database: where a connection failed, or whose
    /// answer it is.
    pub(crate) fn at(&self, e: SessionError) -> SessionError {
        match e {
            SessionError::Unavailable(m) => {
                SessionError::Unavailable(format!("connecting to {}: {m}", self.name))
            }
            SessionError::Store(m) => SessionError::Store(format!("{}: {m}", self.name)),
            other => other,
        }
    }

    /// Run `call` on the store's runtime and wait for it, blocking this
    /// thread (any thread, in or out of a runtime).
    pub(crate) fn block<T, F>(&self, call: F) -> Result<T, SessionError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, SessionError>> + Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = tx.send(bounded(call).await);
        });
        rx.recv().unwrap_or_else(|_| Err(stopped()))
    }

    /// Run `call` on the store's runtime; await it from any runtime.
    pub(crate) async fn run<T, F>(&self, call: F) -> Result<T, SessionError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, SessionError>> + Send + 'static,
    {
        self.handle
            .spawn(bounded(call))
            .await
            .unwrap_or_else(|_| Err(stopped()))
    }
}

async fn bounded<T>(
    call: impl Future<Output = Result<T, SessionError>>,
) -> Result<T, SessionError> {
    tokio::time::timeout(CALL_TIMEOUT, call)
        .await
        .unwrap_or_else(|_| {
            Err(SessionError::Unavailable(format!(
                "no answer from the database in {} s",
                CALL_TIMEOUT.as_secs()
            )))
        })
}

fn stopped() -> SessionError {
    SessionError::Unavailable("the store's runtime has stopped".into())
}
