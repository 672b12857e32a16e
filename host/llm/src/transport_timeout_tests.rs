//! The transport's clocks against raw loopback servers: no headers, silence,
//! keep-alive comments, and the whole-request deadline.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clawhost_agent_core::ModelErrorKind;
use clawhost_config::RetryConfig;
use reqwest::header::HeaderMap;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::{stream_completion, HttpRequest};
use crate::providers::openai_completions::Parser;

const HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
const ANSWER: &[u8] = b"data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\n\
data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
data: [DONE]\n\n";

/// Read one HTTP request (headers and a `content-length` body) off `socket`,
/// so answering does not race the client's writing.
async fn read_request(socket: &mut tokio::net::TcpStream) {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let Ok(n) = socket.read(&mut buf).await else {
            return;
        };
        if n == 0 {
            return;
        }
        data.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&data).to_ascii_lowercase();
        if let Some(end) = text.find("\r\n\r\n") {
            let length: usize = text
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if data.len() >= end + 4 + length {
                return;
            }
        }
    }
}

/// A server whose every connection is handled by `serve` (after its request
/// is read); returns its URL
/// and how many connections it accepted.
async fn server<F, Fut>(serve: F) -> (String, Arc<AtomicUsize>)
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/v1/chat/completions",
        listener.local_addr().unwrap()
    );
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    let serve = Arc::new(serve);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            let serve = serve.clone();
            tokio::spawn(async move {
                let mut socket = socket;
                read_request(&mut socket).await;
                serve(socket).await
            });
        }
    });
    (url, accepted)
}

async fn call(
    url: String,
    idle_ms: u64,
    response_ms: u64,
    request_ms: u64,
) -> Result<String, clawhost_agent_core::ModelError> {
    let retry = RetryConfig {
        max_attempts: 2,
        base_delay_ms: 1,
        max_delay_ms: 1,
    };
    let req = HttpRequest {
        provider: "fake",
        url,
        headers: HeaderMap::new(),
        body: bytes::Bytes::from_static(br#"{"model":"m"}"#),
        retry: &retry,
        idle_timeout: Duration::from_millis(idle_ms),
        response_timeout: Duration::from_millis(response_ms),
        request_timeout: Duration::from_millis(request_ms),
        secret: None,
    };
    let mut parser = Parser::default();
    let reply = stream_completion(&reqwest::Client::new(), req, &mut parser, None).await?;
    Ok(reply.text)
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_retried() {
    let (url, accepted) = server(|socket| async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(socket);
    })
    .await;
    let err = call(url, 10_000, 150, 10_000).await.unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Timeout);
    assert!(
        err.message.contains("no response within 150 ms")
            && err.message.contains("after 2 attempts"),
        "{}",
        err.message
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn keep_alive_comments_keep_a_stream_alive_and_silence_does_not() {
    let (url, _) = server(|mut socket| async move {
        let _ = socket.write_all(HEAD).await;
        for _ in 0..6 {
            tokio::time::sleep(Duration::from_millis(60)).await;
            let _ = socket.write_all(b": PROCESSING\n\n").await;
        }
        let _ = socket.write_all(ANSWER).await;
    })
    .await;
    // 360 ms of comments, 150 ms idle timeout: alive, and no content from them.
    assert_eq!(call(url, 150, 5_000, 10_000).await.unwrap(), "hi");

    let (url, _) = server(|mut socket| async move {
        let _ = socket.write_all(HEAD).await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        let _ = socket.write_all(ANSWER).await;
    })
    .await;
    let err = call(url, 150, 5_000, 10_000).await.unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Timeout);
    assert!(
        err.message.contains("sent nothing for 150 ms"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn the_whole_request_has_a_deadline() {
    let (url, _) = server(|mut socket| async move {
        let _ = socket.write_all(HEAD).await;
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            if socket.write_all(b": PROCESSING\n\n").await.is_err() {
                return;
            }
        }
    })
    .await;
    let started = std::time::Instant::now();
    let err = call(url, 1_000, 5_000, 300).await.unwrap_err();
    assert_eq!(err.kind, ModelErrorKind::Timeout);
    assert!(
        err.message.contains("deadline of 300 ms"),
        "{}",
        err.message
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}
