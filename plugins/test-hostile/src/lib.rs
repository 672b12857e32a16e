//! Test fixture: a deliberately hostile plugin, written against the raw WIT
//! bindings so it can hand the host what the SDK never would (invalid JSON,
//! invalid UTF-8, megabytes of output). Not an example to copy.
//!
//! Tools: `bad_json`, `bad_utf8`, `huge` (`{"mb": n}`), `recurse`,
//! `connect` (`{"addr": "127.0.0.1:port"}`).
//! `before_tool_call` misbehaves when the call's params hold
//! `"hostile": "sleep" | "bad_rewrite" | "wrong_kind" | "huge_block"`;
//! `after_tool_call` traps when they hold `"hostile_after": "trap"`.
//! Observe hooks trap when the plugin config lists them in `"trapOn"`.

wit_bindgen::generate!({ world: "plugin-world", path: "../../wit/v0.1" });

use exports::openclaw::plugin::plugin::Guest;
use openclaw::plugin::host;
use openclaw::plugin::types::{
    AfterToolCallOutcome, BeforeToolCallOutcome, HookEvent, HookKind, HookOutcome,
    HookSubscription, Registration, ToolCall, ToolDef,
};
use serde_json::{json, Value};

struct Hostile;

fn tool(name: &str, description: &str, props: Value) -> ToolDef {
    ToolDef {
        name: name.into(),
        description: description.into(),
        parameters: json!({ "type": "object", "properties": props }).to_string(),
    }
}

/// Recurses until the wasm call stack is exhausted. The call goes through an
/// opaque function pointer so the compiler cannot turn it into a loop.
fn depth(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let next: fn(u64) -> u64 = std::hint::black_box(depth);
    next(n - 1) + 1
}

/// Dials `addr` over WASI sockets (`wasi:sockets/tcp`), as any guest would.
fn connect(addr: std::net::SocketAddrV4) -> Result<(), String> {
    use wasi::sockets::network::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress};
    let network = wasi::sockets::instance_network::instance_network();
    let socket = wasi::sockets::tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4)
        .map_err(|e| format!("create socket: {e:?}"))?;
    let [a, b, c, d] = addr.ip().octets();
    let remote = IpSocketAddress::Ipv4(Ipv4SocketAddress {
        port: addr.port(),
        address: (a, b, c, d),
    });
    socket
        .start_connect(&network, remote)
        .map_err(|e| format!("start connect: {e:?}"))?;
    socket.subscribe().block();
    socket
        .finish_connect()
        .map(drop)
        .map_err(|e| format!("finish connect: {e:?}"))
}

fn trap_on(hook: &str) -> bool {
    let config: Value = serde_json::from_str(&host::config()).unwrap_or(Value::Null);
    config["trapOn"]
        .as_array()
        .is_some_and(|hooks| hooks.iter().any(|h| h == hook))
}

fn params(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

impl Guest for Hostile {
    fn register() -> Registration {
        let sub = |hook, priority| HookSubscription { hook, priority };
        Registration {
            id: "hostile".into(),
            version: "0.1.0".into(),
            tools: vec![
                tool("bad_json", "Returns a result that is not JSON.", json!({})),
                tool("bad_utf8", "Returns bytes that are not UTF-8.", json!({})),
                tool(
                    "huge",
                    "Returns `mb` megabytes.",
                    json!({ "mb": { "type": "integer" } }),
                ),
                tool("recurse", "Recurses without bound.", json!({})),
                tool(
                    "connect",
                    "Opens a TCP connection.",
                    json!({ "addr": { "type": "string" } }),
                ),
            ],
            hooks: vec![
                sub(HookKind::BeforeToolCall, 900),
                sub(HookKind::AfterToolCall, 900),
                sub(HookKind::LlmInput, 0),
                sub(HookKind::AgentEnd, 0),
            ],
            harnesses: vec![],
        }
    }

    fn call_tool(call: ToolCall) -> Result<String, String> {
        let p = params(&call.params);
        match call.tool.as_str() {
            "bad_json" => Ok("{\"unterminated\": [1, 2".into()),
            // SAFETY: deliberately not UTF-8; the host must refuse it at the boundary.
            "bad_utf8" => Ok(unsafe { String::from_utf8_unchecked(vec![b'"', 0xff, 0xfe, b'"']) }),
            "huge" => {
                let mb = p["mb"].as_u64().unwrap_or(4) as usize;
                Ok(format!("\"{}\"", "x".repeat(mb << 20)))
            }
            "recurse" => Ok(depth(std::hint::black_box(u64::MAX)).to_string()),
            "connect" => {
                let addr = p["addr"].as_str().unwrap_or("127.0.0.1:9");
                let addr: std::net::SocketAddrV4 =
                    addr.parse().map_err(|e| format!("address `{addr}`: {e}"))?;
                connect(addr)
                    .map(|()| json!({ "connected": true }).to_string())
                    .map_err(|e| format!("connect {addr}: {e}"))
            }
            other => Err(format!("unknown tool `{other}`")),
        }
    }

    fn handle_hook(event: HookEvent) -> HookOutcome {
        match event {
            HookEvent::BeforeToolCall(e) => match params(&e.params)["hostile"].as_str() {
                Some("sleep") => {
                    std::thread::sleep(std::time::Duration::from_secs(30));
                    HookOutcome::BeforeToolCall(BeforeToolCallOutcome::Allow)
                }
                Some("bad_rewrite") => {
                    HookOutcome::BeforeToolCall(BeforeToolCallOutcome::Rewrite("{oops".into()))
                }
                Some("wrong_kind") => HookOutcome::Observed,
                Some("huge_block") => {
                    HookOutcome::BeforeToolCall(BeforeToolCallOutcome::Block("x".repeat(2 << 20)))
                }
                _ => HookOutcome::BeforeToolCall(BeforeToolCallOutcome::Allow),
            },
            HookEvent::AfterToolCall(e) => {
                if params(&e.params)["hostile_after"] == "trap" {
                    // A raw `unreachable` trap (no panic machinery).
                    #[cfg(target_arch = "wasm32")]
                    core::arch::wasm32::unreachable();
                    #[cfg(not(target_arch = "wasm32"))]
                    std::process::abort();
                }
                HookOutcome::AfterToolCall(AfterToolCallOutcome::Keep)
            }
            HookEvent::LlmInput(_) if trap_on("llm_input") => panic!("llm_input trap requested"),
            HookEvent::AgentEnd(_) if trap_on("agent_end") => panic!("agent_end trap requested"),
            _ => HookOutcome::Observed,
        }
    }
}

export!(Hostile);
