//! The HTTP client (connection pool) model requests go through: the
//! registry's shared one, or the one a turn thread set for the turns it runs,
//! so that a turn's model stream is driven by the thread the turn runs on.

use std::future::Future;
use std::time::Duration;

tokio::task_local! {
    static THREAD_CLIENT: reqwest::Client;
}

/// A new client with the host's settings and a connection pool of its own.
pub fn new_client() -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
}

/// Run `task` with its model requests sent through `client`. A thread that
/// runs turns on a runtime of its own gives them its own client: hyper drives
/// a connection on the runtime that opened it, so with a pool per thread a
/// turn's stream never wakes another thread.
pub async fn with_client<F: Future>(client: reqwest::Client, task: F) -> F::Output {
    THREAD_CLIENT.scope(client, task).await
}

/// The client set by [`with_client`] for the running task, else `shared`.
pub(crate) fn current_or(shared: &reqwest::Client) -> reqwest::Client {
    THREAD_CLIENT
        .try_with(reqwest::Client::clone)
        .unwrap_or_else(|_| shared.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_task_uses_the_client_it_was_given_and_others_the_shared_one() {
        // Clients have no identity to compare: their user agents tell them
        // apart (their debug form lists it).
        let client = |agent: &str| {
            reqwest::Client::builder()
                .user_agent(agent)
                .build()
                .unwrap()
        };
        let agent_of = |c: reqwest::Client| {
            let shown = format!("{c:?}");
            ["shared-pool", "thread-pool"]
                .into_iter()
                .find(|a| shown.contains(a))
        };
        let shared = client("shared-pool");
        assert_eq!(agent_of(current_or(&shared)), Some("shared-pool"));
        let inside = with_client(client("thread-pool"), async {
            agent_of(current_or(&shared))
        });
        assert_eq!(inside.await, Some("thread-pool"));
        let spawned = tokio::spawn(async move { agent_of(current_or(&shared)) });
        assert_eq!(spawned.await.unwrap(), Some("shared-pool"));
    }
}
