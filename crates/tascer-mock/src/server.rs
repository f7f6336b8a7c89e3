//! The HTTP server: routes, request recording, turn selection and fault
//! bookkeeping.

use std::collections::{BTreeMap, HashMap};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::reply::{Reply, Wire};
use crate::request::{RecordedRequest, RequestInfo};
use crate::scenario::Scenario;
use crate::turn::{FaultKind, Turn};
use crate::{anthropic, openai};

/// Model name reported when neither the request nor the scenario names one.
pub const DEFAULT_MODEL: &str = "mock-model";

/// Shared server state.
struct Shared {
    scenario: Scenario,
    requests: Mutex<Vec<RecordedRequest>>,
    /// When each recorded request arrived, in the same order.
    arrivals: Mutex<Vec<Instant>>,
    /// Per (conversation key, turn index): how many times each fault of the
    /// turn has been served.
    served_faults: Mutex<HashMap<(u64, usize), Vec<u32>>>,
}

impl Shared {
    /// The turn to play for a history with `index` assistant messages, or
    /// `None` for the "no more turns" answer.
    fn turn(&self, first_prompt: &str, index: usize) -> Option<&Turn> {
        let (turns, loop_last) = self.scenario.turns_for(first_prompt);
        match turns.get(index) {
            Some(t) => Some(t),
            None if loop_last => turns.last(),
            None => None,
        }
    }

    /// Consumes and returns the next fault due for this attempt, if any.
    fn take_fault(&self, key: u64, index: usize, turn: &Turn, model: &str) -> Option<FaultKind> {
        if turn.faults.is_empty() {
            return None;
        }
        let mut map = self.served_faults.lock();
        let served = map
            .entry((key, index))
            .or_insert_with(|| vec![0; turn.faults.len()]);
        for (fault, count) in turn.faults.iter().zip(served.iter_mut()) {
            if *count < fault.times && fault.applies_to(model) {
                *count += 1;
                return Some(fault.kind.clone());
            }
        }
        None
    }

    fn record(
        &self,
        method: &Method,
        path: &str,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Option<Value> {
        let parsed: Option<Value> = serde_json::from_slice(body).ok();
        let mut map: BTreeMap<String, String> = BTreeMap::new();
        for (name, value) in headers {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            map.entry(name.as_str().to_ascii_lowercase())
                .and_modify(|v| {
                    v.push_str(", ");
                    v.push_str(&value);
                })
                .or_insert(value);
        }
        // Both pushed under the requests' lock, so the two lists keep one
        // order when requests arrive at once.
        let mut requests = self.requests.lock();
        self.arrivals.lock().push(Instant::now());
        requests.push(RecordedRequest {
            method: method.to_string(),
            path: path.to_string(),
            body: parsed
                .clone()
                .unwrap_or_else(|| Value::String(String::from_utf8_lossy(body).into_owned())),
            headers: map,
        });
        parsed
    }
}

fn bad_request(wire: Wire, message: &str) -> Response {
    match wire {
        Wire::Anthropic => anthropic::error(400, "invalid_request_error", message, None),
        Wire::OpenAi => openai::error(400, "invalid_request_error", None, message, None),
    }
}

async fn handle(
    shared: &Shared,
    wire: Wire,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path();
    let Some(json) = shared.record(&Method::POST, path, headers, &body) else {
        return bad_request(wire, "request body is not valid JSON");
    };
    let info = match RequestInfo::parse(wire, path, &json, body.len()) {
        Ok(info) => info,
        Err(message) => return bad_request(wire, &message),
    };
    let model = info
        .model
        .clone()
        .or_else(|| shared.scenario.model.clone())
        .unwrap_or_else(|| DEFAULT_MODEL.to_string());
    let turn = shared
        .scenario
        .routed_turn(&json)
        .or_else(|| shared.turn(&info.first_user_text, info.turn_index));
    let reply = Reply::build(
        wire,
        turn,
        info.turn_index,
        model.clone(),
        info.size,
        &info.system_text,
    );
    if let Some(turn) = turn
        && let Some(fault) = shared.take_fault(info.conversation_key, info.turn_index, turn, &model)
    {
        return match wire {
            Wire::Anthropic => anthropic::fault(&fault, &reply, info.stream).await,
            Wire::OpenAi => openai::fault(&fault, &reply, info.stream).await,
        };
    }
    if let Some(turn) = turn
        && turn.latency_ms > 0
    {
        tokio::time::sleep(std::time::Duration::from_millis(turn.latency_ms)).await;
    }
    match wire {
        Wire::Anthropic => anthropic::respond(&reply, info.stream),
        Wire::OpenAi => openai::respond(&reply, info.stream, info.include_usage),
    }
}

async fn anthropic_route(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(&shared, Wire::Anthropic, &uri, &headers, body).await
}

async fn openai_route(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(&shared, Wire::OpenAi, &uri, &headers, body).await
}

/// Any other request: recorded, answered 404 (as the Anthropic API
/// answers an unknown path).
async fn other_route(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    shared.record(&method, uri.path(), &headers, &body);
    anthropic::error(
        404,
        "not_found_error",
        &format!("mock: no route for {method} {}", uri.path()),
        None,
    )
}

async fn requests_route(State(shared): State<Arc<Shared>>) -> axum::Json<Vec<RecordedRequest>> {
    axum::Json(shared.requests.lock().clone())
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/messages", post(anthropic_route))
        .route("/v1/chat/completions", post(openai_route))
        .route("/_mock/requests", get(requests_route))
        .route("/_mock/health", get(|| async { "ok" }))
        .fallback(other_route)
        .layer(DefaultBodyLimit::disable())
        .with_state(shared)
}

async fn serve(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    stop: oneshot::Receiver<()>,
) {
    let shutdown = async move {
        // Either an explicit signal or the sender being dropped stops us.
        let _ = stop.await;
    };
    // Small SSE frames must not wait for Nagle's algorithm (~40 ms each).
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    // Errors here mean the listener failed; there is nobody to report to.
    let _ = axum::serve(listener, router(shared))
        .with_graceful_shutdown(shutdown)
        .await;
}

/// A running mock model server. Dropping it (or calling
/// [`shutdown`](MockServer::shutdown)) stops accepting connections.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

fn loopback() -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
}

fn shared(scenario: Scenario) -> Arc<Shared> {
    Arc::new(Shared {
        scenario,
        requests: Mutex::new(Vec::new()),
        arrivals: Mutex::new(Vec::new()),
        served_faults: Mutex::new(HashMap::new()),
    })
}

impl MockServer {
    /// Starts the server on `127.0.0.1` with a free port, as a task on the
    /// current tokio runtime.
    pub async fn start(scenario: Scenario) -> std::io::Result<MockServer> {
        Self::start_on(loopback(), scenario).await
    }

    /// Starts the server on `addr` as a task on the current tokio runtime.
    pub async fn start_on(addr: SocketAddr, scenario: Scenario) -> std::io::Result<MockServer> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared = shared(scenario);
        let (tx, rx) = oneshot::channel();
        tokio::spawn(serve(listener, shared.clone(), rx));
        Ok(MockServer {
            addr,
            shared,
            stop: Some(tx),
        })
    }

    /// Starts the server on `127.0.0.1` with a free port, on its own thread
    /// and runtime. Use this from synchronous tests (for example ones that
    /// run a CLI with `std::process::Command`).
    pub fn start_blocking(scenario: Scenario) -> std::io::Result<MockServer> {
        Self::start_blocking_on(loopback(), scenario)
    }

    /// Starts the server on `addr`, on its own thread and runtime.
    pub fn start_blocking_on(addr: SocketAddr, scenario: Scenario) -> std::io::Result<MockServer> {
        let std_listener = std::net::TcpListener::bind(addr)?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let shared = shared(scenario);
        let (tx, rx) = oneshot::channel();
        let task_shared = shared.clone();
        std::thread::Builder::new()
            .name("tascer-mock".into())
            .spawn(move || {
                runtime.block_on(async move {
                    if let Ok(listener) = tokio::net::TcpListener::from_std(std_listener) {
                        serve(listener, task_shared, rx).await;
                    }
                });
            })?;
        Ok(MockServer {
            addr,
            shared,
            stop: Some(tx),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://HOST:PORT` — the Anthropic base URL (`ANTHROPIC_BASE_URL`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://HOST:PORT/v1` — the OpenAI base URL (`OPENAI_BASE_URL`).
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// All model requests received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().clone()
    }

    /// When each request of [`requests`](Self::requests) arrived, in the
    /// same order (for timing a client from the server's side: the gap
    /// between two model requests is the client's own time between them).
    pub fn arrivals(&self) -> Vec<Instant> {
        self.shared.arrivals.lock().clone()
    }

    /// Forgets the recorded requests (fault bookkeeping is kept).
    pub fn clear_requests(&self) {
        let mut requests = self.shared.requests.lock();
        self.shared.arrivals.lock().clear();
        requests.clear();
    }

    /// The scenario being played.
    pub fn scenario(&self) -> &Scenario {
        &self.shared.scenario
    }

    /// Stops the server (same as dropping it). In-flight responses finish.
    pub fn shutdown(self) {
        drop(self);
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
