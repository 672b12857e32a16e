//! A local fake model provider on 127.0.0.1 that replays scripted replies:
//! SSE streams in the providers' real wire formats (optionally split at
//! arbitrary byte boundaries, optionally stalling), or HTTP errors.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use futures::StreamExt;
use serde_json::Value;

/// One scripted reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A `text/event-stream` body sent as these byte chunks.
    Sse {
        /// Chunks, sent in order (a chunk may end inside a UTF-8 sequence).
        chunks: Vec<Vec<u8>>,
        /// After this many chunks, stop sending without closing.
        stall_after: Option<usize>,
    },
    /// Another reply, sent only once the gate is opened (`Notify::notify_one`).
    Held(Box<Reply>, Arc<tokio::sync::Notify>),
    /// A plain HTTP response.
    Status {
        /// Status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// Body.
        body: String,
    },
}

impl Reply {
    /// SSE events, each sent as its own chunk.
    pub fn sse(events: Vec<String>) -> Self {
        Reply::Sse {
            chunks: events.into_iter().map(String::into_bytes).collect(),
            stall_after: None,
        }
    }

    /// SSE events re-cut into chunks of `size` bytes, splitting lines and JSON mid-way.
    pub fn sse_split(events: Vec<String>, size: usize) -> Self {
        let all = events.concat().into_bytes();
        let chunks = all.chunks(size).map(<[u8]>::to_vec).collect();
        Reply::Sse {
            chunks,
            stall_after: None,
        }
    }

    /// SSE events, stalling (connection open, nothing sent) after `n` of them.
    pub fn sse_stalling(events: Vec<String>, n: usize) -> Self {
        Reply::Sse {
            chunks: events.into_iter().map(String::into_bytes).collect(),
            stall_after: Some(n),
        }
    }

    /// An HTTP error with a JSON body.
    pub fn status(status: u16, body: Value) -> Self {
        Reply::Status {
            status,
            headers: vec![],
            body: body.to_string(),
        }
    }

    /// Add a header to a [`Reply::Status`].
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let Reply::Status { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }
}

/// A request the fake received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Path.
    pub path: String,
    /// Headers.
    pub headers: HeaderMap,
    /// JSON body.
    pub body: Value,
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    /// The reply to every request that offers no tools, if set.
    untooled: Mutex<Option<Reply>>,
    requests: Mutex<Vec<Recorded>>,
}

/// The running fake.
pub struct FakeProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let path = request.uri().path().to_string();
    let headers = request.headers().clone();
    let bytes = axum::body::to_bytes(request.into_body(), 16 << 20)
        .await
        .unwrap_or_default();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let side = if offers_tools {
        None
    } else {
        shared.untooled.lock().unwrap().clone()
    };
    shared.requests.lock().unwrap().push(Recorded {
        path,
        headers,
        body,
    });
    let mut reply = side.or_else(|| shared.replies.lock().unwrap().pop_front());
    if let Some(Reply::Held(inner, gate)) = reply {
        gate.notified().await;
        reply = Some(*inner);
    }
    match reply {
        Some(Reply::Held(..)) => unreachable!("held replies are unwrapped above"),
        None => Response::builder()
            .status(500)
            .body(Body::from("fake provider: no scripted reply left"))
            .unwrap(),
        Some(Reply::Status {
            status,
            headers,
            body,
        }) => {
            let mut b = Response::builder()
                .status(StatusCode::from_u16(status).unwrap())
                .header("content-type", "application/json");
            for (k, v) in headers {
                b = b.header(k, v);
            }
            b.body(Body::from(body)).unwrap()
        }
        Some(Reply::Sse {
            chunks,
            stall_after,
        }) => {
            let n = stall_after.unwrap_or(chunks.len()).min(chunks.len());
            let head = futures::stream::iter(
                chunks
                    .into_iter()
                    .take(n)
                    .map(|c| Ok::<_, Infallible>(Bytes::from(c))),
            );
            let body = if stall_after.is_some() {
                Body::from_stream(head.chain(futures::stream::pending()))
            } else {
                Body::from_stream(head)
            };
            Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(body)
                .unwrap()
        }
    }
}

impl FakeProvider {
    /// Start on an ephemeral port of 127.0.0.1.
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            addr,
            shared,
            server,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queue replies, served in order.
    pub fn push(&self, reply: Reply) -> &Self {
        self.shared.replies.lock().unwrap().push_back(reply);
        self
    }

    /// Answer every request that offers the model no tools with `reply`
    /// (an agent's side requests, such as a session title), leaving the
    /// queue to the turn's own requests.
    pub fn answer_untooled(&self, reply: Reply) -> &Self {
        *self.shared.untooled.lock().unwrap() = Some(reply);
        self
    }

    /// Requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// Time for a test to wait on the fake, bounded.
    pub const PATIENCE: Duration = Duration::from_secs(10);
}
