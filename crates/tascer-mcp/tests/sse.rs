//! The legacy HTTP+SSE client transport (MCP 2024-11-05): against the
//! reference `server-everything` in SSE mode, and against tiny local HTTP
//! stubs for the failure modes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tascer_core::Tool;
use tascer_mcp::{McpManager, McpOptions, McpServerConfig, McpStatus};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use common::{ctx, reference_server};

fn find(tools: &[Arc<dyn Tool>], name: &str) -> Arc<dyn Tool> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .cloned()
        .unwrap_or_else(|| {
            let names: Vec<_> = tools.iter().map(|t| t.name().to_owned()).collect();
            panic!("no tool {name} in {names:?}")
        })
}

fn sse(url: String) -> McpServerConfig {
    McpServerConfig::Sse {
        url,
        headers: BTreeMap::from([("X-Test".to_owned(), "sse-1".to_owned())]),
        permissions: Default::default(),
    }
}

fn opts(startup_timeout: Duration) -> McpOptions {
    McpOptions {
        startup_timeout,
        tool_timeout: Duration::from_secs(10),
        ..McpOptions::default()
    }
}

/// A local port nothing listens on (bound, then released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Kills the child when the test ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `node <script> sse` listening on `port` (waits until it accepts).
async fn start_everything_sse(script: &Path, port: u16) -> KillOnDrop {
    let child = KillOnDrop(
        std::process::Command::new("node")
            .arg(script)
            .arg("sse")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "sse server did not come up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    child
}

#[tokio::test]
async fn everything_over_sse_tools_resources_and_restart() {
    let Some(script) = reference_server(
        "server-everything",
        "everything_over_sse_tools_resources_and_restart",
    ) else {
        return;
    };
    let port = free_port();
    let child = start_everything_sse(&script, port).await;
    let url = format!("http://127.0.0.1:{port}/sse");
    let mgr = McpManager::connect_with(
        BTreeMap::from([("old".to_owned(), sse(url.clone()))]),
        opts(Duration::from_secs(20)),
    )
    .await;
    let statuses = mgr.statuses();
    assert_eq!(statuses[0].status, McpStatus::Connected, "{statuses:?}");
    assert!(
        statuses[0].tools.iter().any(|t| t == "echo"),
        "{statuses:?}"
    );
    assert!(statuses[0].server_info.as_ref().unwrap()["name"].is_string());

    let tools = mgr.tools().await;
    let echo = find(&tools, "mcp__old__echo");
    let out = echo.call(json!({"message": "over sse"}), &ctx()).await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.content.to_text().contains("over sse"), "{out:?}");

    let out = find(&tools, "ListMcpResourcesTool")
        .call(json!({"server": "old"}), &ctx())
        .await;
    assert!(!out.is_error, "{out:?}");
    let uri = out.raw.unwrap()[0]["uri"].as_str().unwrap().to_owned();
    let out = find(&tools, "ReadMcpResourceTool")
        .call(json!({"server": "old", "uri": uri}), &ctx())
        .await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.raw.unwrap()["contents"][0]["text"].is_string());

    // Bad arguments: an error result, the connection survives.
    let out = echo.call(json!({"nope": 1}), &ctx()).await;
    assert!(out.is_error, "{out:?}");
    let health = mgr.health().await;
    assert!(health[0].1.is_ok(), "{health:?}");

    // The server dies: the next call fails, naming the server…
    drop(child);
    let out = echo.call(json!({"message": "gone"}), &ctx()).await;
    assert!(out.is_error, "{out:?}");
    assert!(out.content.to_text().contains("'old'"), "{out:?}");
    assert_eq!(mgr.statuses()[0].status, McpStatus::Failed);

    // …and once it is back, the next use reconnects.
    let _child = start_everything_sse(&script, port).await;
    let out = echo.call(json!({"message": "back again"}), &ctx()).await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.content.to_text().contains("back again"), "{out:?}");
    assert_eq!(mgr.statuses()[0].status, McpStatus::Connected);
}

#[tokio::test]
async fn nothing_listening_fails_clearly() {
    let url = format!("http://127.0.0.1:{}/sse", free_port());
    let start = Instant::now();
    let mgr = McpManager::connect_with(
        BTreeMap::from([("down".to_owned(), sse(url.clone()))]),
        opts(Duration::from_secs(10)),
    )
    .await;
    assert!(start.elapsed() < Duration::from_secs(5));
    let s = &mgr.statuses()[0];
    assert_eq!(s.status, McpStatus::Failed, "{s:?}");
    let err = s.error.as_deref().unwrap();
    assert!(err.contains("MCP server 'down'"), "{err}");
    assert!(err.contains(&format!("cannot connect to {url}")), "{err}");
    assert!(err.to_lowercase().contains("refused"), "{err}");
    assert!(mgr.health().await[0].1.is_err());
}

/// One HTTP request as the stub saw it.
#[derive(Debug, Clone)]
struct Seen {
    head: String,
    body: String,
}

impl Seen {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    }
}

/// A tiny HTTP/1.1 server: answers every GET with `get_response` and then
/// holds the connection open; answers every POST with `post_response`
/// (`202 Accepted` by default). Records all requests.
struct Stub {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Stub {
    async fn start(get_response: &'static str) -> Stub {
        Self::with_post(get_response, ACCEPTED).await
    }

    async fn with_post(get_response: &'static str, post_response: &'static str) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        let task = tokio::spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            while let Ok((socket, _)) = listener.accept().await {
                conns.spawn(serve_conn(socket, get_response, post_response, log.clone()));
            }
        });
        Stub { port, seen, task }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/sse", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

const ACCEPTED: &str = "HTTP/1.1 202 Accepted\r\nContent-Length: 8\r\n\r\nAccepted";

async fn serve_conn(
    mut socket: TcpStream,
    get_response: &str,
    post_response: &str,
    log: Arc<Mutex<Vec<Seen>>>,
) {
    let mut buf = Vec::new();
    loop {
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let mut seen = Seen {
            head,
            body: String::new(),
        };
        let len: usize = seen
            .header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let mut chunk = [0u8; 4096];
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        seen.body = String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
        buf.drain(..head_end + len);
        let is_get = seen.head.starts_with("GET ");
        log.lock().unwrap().push(seen);
        if is_get {
            let _ = socket.write_all(get_response.as_bytes()).await;
            // Hold the stream open until the client goes away.
            let mut sink = [0u8; 64];
            while let Ok(n) = socket.read(&mut sink).await {
                if n == 0 {
                    break;
                }
            }
            return;
        }
        if socket.write_all(post_response.as_bytes()).await.is_err() {
            return;
        }
    }
}

const SSE_HEAD: &str =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n";

#[tokio::test]
async fn no_endpoint_event_fails_after_startup_timeout() {
    // 200 with an event stream, but only a comment and an unrelated event.
    let stub = Stub::start(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n: hello\n\nevent: ping\ndata: x\n\n",
    )
    .await;
    let start = Instant::now();
    let mgr = McpManager::connect_with(
        BTreeMap::from([("mute".to_owned(), sse(stub.url()))]),
        opts(Duration::from_millis(500)),
    )
    .await;
    let elapsed = start.elapsed();
    assert!(elapsed >= Duration::from_millis(500), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    let s = &mgr.statuses()[0];
    assert_eq!(s.status, McpStatus::Failed, "{s:?}");
    let err = s.error.as_deref().unwrap();
    assert!(
        err.contains("MCP server 'mute'") && err.contains("did not start within 0.5s"),
        "{err}"
    );
    // The GET carried the configured header and asked for an event stream.
    let seen = stub.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].head.starts_with("GET /sse "), "{seen:?}");
    assert_eq!(seen[0].header("x-test").as_deref(), Some("sse-1"));
    assert_eq!(
        seen[0].header("accept").as_deref(),
        Some("text/event-stream")
    );
}

#[tokio::test]
async fn posts_go_to_the_endpoint_with_the_headers() {
    // The endpoint arrives; the stub accepts POSTs but never answers on the
    // stream, so the handshake times out; the POST is what we look at.
    let response: &'static str = Box::leak(
        format!("{SSE_HEAD}event: endpoint\ndata: /messages?sessionId=abc\n\n").into_boxed_str(),
    );
    let stub = Stub::start(response).await;
    let mgr = McpManager::connect_with(
        BTreeMap::from([("quiet".to_owned(), sse(stub.url()))]),
        opts(Duration::from_millis(1500)),
    )
    .await;
    let s = &mgr.statuses()[0];
    assert_eq!(s.status, McpStatus::Failed, "{s:?}");
    let seen = stub.seen();
    let post = seen
        .iter()
        .find(|r| r.head.starts_with("POST "))
        .unwrap_or_else(|| panic!("no POST in {seen:?}"));
    assert!(
        post.head.starts_with("POST /messages?sessionId=abc "),
        "{post:?}"
    );
    assert_eq!(post.header("x-test").as_deref(), Some("sse-1"));
    assert_eq!(
        post.header("content-type").as_deref(),
        Some("application/json")
    );
    let body: serde_json::Value = serde_json::from_str(&post.body).unwrap();
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["method"], "initialize");
    assert_eq!(body["params"]["clientInfo"]["name"], "tascer");
}

#[tokio::test]
async fn bad_answers_fail_clearly() {
    let not_found =
        Stub::start("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nno such!\n").await;
    let json = Stub::start(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    )
    .await;
    let cross = Stub::start(Box::leak(
        format!("{SSE_HEAD}event: endpoint\ndata: http://evil.example/messages\n\n")
            .into_boxed_str(),
    ))
    .await;
    let closed = Stub::start("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 8\r\n\r\n: bye\n\n\n").await;
    let rejected = Stub::with_post(
        Box::leak(format!("{SSE_HEAD}event: endpoint\ndata: /messages\n\n").into_boxed_str()),
        "HTTP/1.1 404 Not Found\r\nContent-Length: 16\r\n\r\nunknown session\n",
    )
    .await;
    let configs = BTreeMap::from([
        ("notfound".to_owned(), sse(not_found.url())),
        ("rejected".to_owned(), sse(rejected.url())),
        ("json".to_owned(), sse(json.url())),
        ("cross".to_owned(), sse(cross.url())),
        ("closed".to_owned(), sse(closed.url())),
        (
            "badurl".to_owned(),
            McpServerConfig::Sse {
                url: "localhost:1234/sse".into(),
                headers: BTreeMap::new(),
                permissions: Default::default(),
            },
        ),
        (
            "badheader".to_owned(),
            McpServerConfig::Sse {
                url: not_found.url(),
                headers: BTreeMap::from([("Bad Header".to_owned(), "x".to_owned())]),
                permissions: Default::default(),
            },
        ),
    ]);
    let start = Instant::now();
    let mgr = McpManager::connect_with(configs, opts(Duration::from_secs(10))).await;
    assert!(start.elapsed() < Duration::from_secs(5), "not fail-fast");
    let statuses = mgr.statuses();
    assert_eq!(statuses.len(), 7);
    for s in &statuses {
        assert_eq!(s.status, McpStatus::Failed, "{s:?}");
        let err = s.error.as_deref().unwrap();
        assert!(err.contains(&format!("MCP server '{}'", s.name)), "{err}");
        match s.name.as_str() {
            "notfound" => assert!(
                err.contains(&format!(
                    "GET {} returned 404 Not Found: no such!",
                    not_found.url()
                )),
                "{err}"
            ),
            "json" => assert!(
                err.contains(&json.url()) && err.contains("not text/event-stream"),
                "{err}"
            ),
            "cross" => assert!(
                err.contains(&cross.url())
                    && err.contains("http://evil.example/messages")
                    && err.contains("another origin"),
                "{err}"
            ),
            "closed" => assert!(
                err.contains(&closed.url()) && err.contains("before sending an `endpoint` event"),
                "{err}"
            ),
            "rejected" => assert!(
                err.contains(&format!(
                    "POST http://127.0.0.1:{}/messages returned 404 Not Found: unknown session",
                    rejected.port
                )),
                "{err}"
            ),
            "badurl" => assert!(err.contains("invalid SSE URL"), "{err}"),
            "badheader" => assert!(err.contains("bad header name"), "{err}"),
            other => panic!("unexpected {other}"),
        }
    }
    // Nothing was ever POSTed to the foreign origin (or anywhere).
    assert!(
        cross.seen().iter().all(|r| r.head.starts_with("GET ")),
        "{:?}",
        cross.seen()
    );
}
