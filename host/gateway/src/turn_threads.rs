//! The threads gateway turns run on. Each runs a current-thread runtime with
//! a model connection pool of its own, so a turn, its model stream and its
//! tool calls stay on one thread: no streamed chunk wakes another thread
//! (the gateway bench measures the difference). HTTP is served on the main
//! runtime; a turn's events reach its response through a channel.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One thread and the turns it is running.
struct TurnThread {
    jobs: mpsc::UnboundedSender<Job>,
    running: Arc<AtomicUsize>,
}

/// Threads that run turns; a new turn goes to the one running the fewest.
/// The threads end when this is dropped, after the turns they were given.
pub struct TurnThreads {
    threads: Vec<TurnThread>,
}

impl TurnThreads {
    /// `count` threads (at least one), each with its own runtime and model
    /// connection pool.
    pub fn new(count: usize) -> std::io::Result<Self> {
        let threads = (0..count.max(1))
            .map(|i| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                let client = clawhost_llm::http_client::new_client().map_err(std::io::Error::other)?;
                let (jobs, mut queue) = mpsc::unbounded_channel::<Job>();
                std::thread::Builder::new()
                    .name(format!("clawhost-turn-{i}"))
                    .spawn(move || {
                        runtime.block_on(async move {
                            let mut running = tokio::task::JoinSet::new();
                            loop {
                                tokio::select! {
                                    job = queue.recv() => match job {
                                        Some(job) => {
                                            running.spawn(clawhost_llm::http_client::with_client(client.clone(), job));
                                        }
                                        None => break,
                                    },
                                    Some(_) = running.join_next(), if !running.is_empty() => {}
                                }
                            }
                            while running.join_next().await.is_some() {}
                        });
                    })?;
                Ok(TurnThread {
                    jobs,
                    running: Arc::default(),
                })
            })
            .collect::<std::io::Result<_>>()?;
        Ok(Self { threads })
    }

    /// One thread per core.
    pub fn per_core() -> std::io::Result<Self> {
        Self::new(std::thread::available_parallelism().map_or(1, usize::from))
    }

    /// Run `turn` on the thread running the fewest turns.
    pub fn spawn(&self, turn: impl Future<Output = ()> + Send + 'static) {
        let Some(thread) = self
            .threads
            .iter()
            .min_by_key(|t| t.running.load(Ordering::Relaxed))
        else {
            // No turn thread (none was asked for): the caller's runtime.
            tokio::spawn(turn);
            return;
        };
        let running = thread.running.clone();
        running.fetch_add(1, Ordering::Relaxed);
        let job = Box::pin(async move {
            let _done = Done(running);
            turn.await;
        });
        // The thread outlives its sender: the job is always taken.
        let _ = thread.jobs.send(job);
    }
}

#[cfg(test)]
impl TurnThreads {
    /// How many turns each thread is running.
    fn running(&self) -> Vec<usize> {
        self.threads
            .iter()
            .map(|t| t.running.load(Ordering::Relaxed))
            .collect()
    }
}

/// Counts a turn as finished when dropped (also when its task is dropped).
struct Done(Arc<AtomicUsize>);

impl Drop for Done {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::sync::oneshot;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_turn_stays_on_one_thread_and_new_turns_go_to_the_least_busy() {
        let threads = TurnThreads::new(2).unwrap();
        // A long turn that records every thread it ran on.
        let (release, released) = oneshot::channel::<()>();
        let (long_tx, long_rx) = oneshot::channel();
        threads.spawn(async move {
            let mut seen = vec![std::thread::current().name().map(String::from)];
            // Work spawned by the turn and timers it waits on stay there too.
            let inner = tokio::spawn(async { std::thread::current().name().map(String::from) });
            seen.push(inner.await.unwrap());
            tokio::time::sleep(Duration::from_millis(5)).await;
            seen.push(std::thread::current().name().map(String::from));
            let _ = released.await;
            seen.push(std::thread::current().name().map(String::from));
            let _ = long_tx.send(seen);
        });
        // While it runs, the next turns go to the other thread.
        let mut short = Vec::new();
        for _ in 0..3 {
            let (tx, rx) = oneshot::channel();
            threads.spawn(async move {
                let _ = tx.send(std::thread::current().name().map(String::from));
            });
            short.push(rx.await.unwrap());
            // A turn answers before its count is lowered; wait for that,
            // or the next turn may see a tie with the long turn's thread.
            while threads.running().iter().sum::<usize>() > 1 {
                tokio::task::yield_now().await;
            }
        }
        release.send(()).unwrap();
        let seen = long_rx.await.unwrap();
        let long_thread = seen[0].clone().unwrap();
        assert!(long_thread.starts_with("clawhost-turn-"), "{seen:?}");
        assert!(
            seen.iter().all(|t| t.as_deref() == Some(&long_thread)),
            "{seen:?}"
        );
        for s in &short {
            let s = s.as_deref().unwrap();
            assert!(
                s.starts_with("clawhost-turn-") && s != long_thread,
                "{short:?} vs {long_thread}"
            );
        }
    }

    #[tokio::test]
    async fn dropping_the_threads_lets_the_turns_they_were_given_finish() {
        let threads = TurnThreads::new(1).unwrap();
        let (tx, rx) = oneshot::channel();
        threads.spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let _ = tx.send("finished");
        });
        drop(threads);
        assert_eq!(rx.await.unwrap(), "finished");
    }
}
