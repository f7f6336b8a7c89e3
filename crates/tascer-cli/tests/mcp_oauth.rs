//! OAuth for HTTP MCP servers, end to end with real processes: a local
//! OAuth-protected MCP server (authorization server endpoints and an rmcp
//! streamable HTTP server behind a bearer check, built here), `tascer mcp
//! login` driven through the loopback redirect by a headless client (`curl`
//! as `$BROWSER`), `tascer run` calling the server's tool with a refreshed
//! token, no token in the ledger, logs or `tascer report`, an unattended
//! run whose token cannot be refreshed failing with a message naming
//! `tascer mcp login`, and `tascer mcp logout`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use parking_lot::Mutex;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use sha2::Digest as _;
use tascer_testkit::{MockServer, Scenario, Turn};

/// Seconds an access token lives. The client refreshes a token with less
/// than 30 s left, so a token is fresh right after login and due for a
/// refresh two seconds later.
const TOKEN_LIFETIME: u64 = 31;
const TOOL_TEXT: &str = "hello from the protected server";

#[derive(Default)]
struct Auth {
    base: String,
    code_challenge: Option<String>,
    codes: HashSet<String>,
    /// Live access tokens and when they expire.
    access: HashMap<String, Instant>,
    refresh: HashSet<String>,
    /// Every token issued (access and refresh).
    issued: Vec<String>,
    /// Access tokens issued by a refresh.
    refreshed: HashSet<String>,
    /// Access tokens presented to /mcp and accepted.
    used: Vec<String>,
    refresh_rejected: bool,
    pkce_verified: u32,
}

type Shared = Arc<Mutex<Auth>>;

/// `a=1&b=2` (URL-encoded) as a map.
fn pairs(encoded: &str) -> HashMap<String, String> {
    reqwest::Url::parse(&format!("http://x/?{encoded}"))
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn token(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

fn issue(auth: &mut Auth, by_refresh: bool) -> Value {
    let (access, refresh) = (token("at"), token("rt"));
    auth.access.insert(
        access.clone(),
        Instant::now() + Duration::from_secs(TOKEN_LIFETIME),
    );
    auth.refresh.insert(refresh.clone());
    auth.issued.push(access.clone());
    auth.issued.push(refresh.clone());
    if by_refresh {
        auth.refreshed.insert(access.clone());
    }
    json!({"access_token": access, "token_type": "Bearer", "expires_in": TOKEN_LIFETIME,
           "refresh_token": refresh, "scope": "mcp"})
}

async fn protected_resource(State(auth): State<Shared>) -> Json<Value> {
    let base = auth.lock().base.clone();
    Json(
        json!({"resource": format!("{base}/mcp"), "authorization_servers": [base],
                "scopes_supported": ["mcp"]}),
    )
}

async fn authorization_server(State(auth): State<Shared>) -> Json<Value> {
    let base = auth.lock().base.clone();
    Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["mcp"]
    }))
}

async fn register(Json(body): Json<Value>) -> (StatusCode, Json<Value>) {
    (
        StatusCode::CREATED,
        Json(
            json!({"client_id": "tascer-test-client", "redirect_uris": body["redirect_uris"],
                    "token_endpoint_auth_method": "none"}),
        ),
    )
}

/// Grants at once (no person here) and redirects to the client's
/// loopback redirect URI.
async fn authorize(State(auth): State<Shared>, RawQuery(query): RawQuery) -> Response {
    let q = pairs(&query.unwrap_or_default());
    assert_eq!(
        q.get("code_challenge_method").map(String::as_str),
        Some("S256")
    );
    let code = token("code");
    {
        let mut auth = auth.lock();
        auth.code_challenge = q.get("code_challenge").cloned();
        auth.codes.insert(code.clone());
    }
    let redirect = &q["redirect_uri"];
    assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
    let state = q.get("state").cloned().unwrap_or_default();
    let mut to = reqwest::Url::parse(redirect).unwrap();
    to.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &state);
    Redirect::to(to.as_str()).into_response()
}

async fn token_endpoint(State(auth): State<Shared>, body: String) -> Response {
    let form = pairs(&body);
    let mut auth = auth.lock();
    let invalid = |e: &str| (StatusCode::BAD_REQUEST, Json(json!({"error": e}))).into_response();
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let code_ok = form.get("code").is_some_and(|c| auth.codes.remove(c));
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(sha2::Sha256::digest(verifier.as_bytes()));
            if !code_ok || auth.code_challenge.as_deref() != Some(challenge.as_str()) {
                return invalid("invalid_grant");
            }
            auth.pkce_verified += 1;
            Json(issue(&mut auth, false)).into_response()
        }
        Some("refresh_token") => {
            let presented = form.get("refresh_token").cloned().unwrap_or_default();
            if auth.refresh_rejected || !auth.refresh.remove(&presented) {
                return invalid("invalid_grant");
            }
            Json(issue(&mut auth, true)).into_response()
        }
        _ => invalid("unsupported_grant_type"),
    }
}

/// Lets a request with a live access token through to the MCP server.
async fn require_token(
    State(auth): State<Shared>,
    headers: HeaderMap,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let base = {
        let mut auth = auth.lock();
        let live = presented
            .as_ref()
            .and_then(|t| auth.access.get(t))
            .is_some_and(|expiry| *expiry > Instant::now());
        if live {
            let used = presented.clone().unwrap();
            auth.used.push(used);
            None
        } else {
            Some(auth.base.clone())
        }
    };
    match base {
        None => next.run(request).await,
        Some(base) => (
            StatusCode::UNAUTHORIZED,
            [(
                header::WWW_AUTHENTICATE,
                format!(
                    "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                ),
            )],
        )
            .into_response(),
    }
}

/// The MCP server behind the token check: one tool, `whoami`.
#[derive(Clone)]
struct Whoami;

impl ServerHandler for Whoami {
    fn get_info(&self) -> ServerConfig {
        let caps: ServerCapabilities = serde_json::from_value(json!({"tools": {}})).unwrap();
        ServerConfig::new(caps).with_server_info(Implementation::new("protected", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(serde_json::from_value(json!({"tools": [{
            "name": "whoami", "description": "Says hello",
            "inputSchema": {"type": "object", "properties": {}}
        }]}))
        .unwrap())
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let result: CallToolResult =
            serde_json::from_value(json!({"content": [{"type": "text", "text": TOOL_TEXT}]}))
                .unwrap();
        Ok(result.into())
    }
}

async fn start_server() -> (Shared, String) {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let auth: Shared = Arc::new(Mutex::new(Auth {
        base: base.clone(),
        ..Auth::default()
    }));
    let mcp = StreamableHttpService::new(
        || Ok(Whoami),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let protected =
        Router::new()
            .nest_service("/mcp", mcp)
            .layer(axum::middleware::from_fn_with_state(
                auth.clone(),
                require_token,
            ));
    let app = Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(protected_resource),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(authorization_server),
        )
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token_endpoint))
        .with_state(auth.clone())
        .merge(protected);
    tokio::spawn(async move { axum::serve(listener, app).await });
    (auth, format!("{base}/mcp"))
}

fn tascer(home: &Path, cwd: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tascer"));
    cmd.env_remove("OPENAI_BASE_URL")
        .env_remove("BROWSER")
        .env("TASCER_HOME", home)
        .env("TASCER_LOG", "debug")
        .current_dir(cwd);
    cmd
}

async fn output(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A `tascer run` whose model calls `mcp__secure__whoami`; returns the
/// process output and what the model was sent after the call.
async fn run_whoami(home: &Path, ws: &Path) -> (Output, String) {
    let model = MockServer::start(
        Scenario::new()
            .turn(Turn::new().with_tool("mcp__secure__whoami", json!({})))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let mut cmd = tascer(home, ws);
    cmd.env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", model.url())
        .args([
            "run",
            "--output-format",
            "json",
            "--allowedTools=mcp__secure__whoami",
            "go",
        ]);
    let out = output(cmd).await;
    let sent = model
        .requests()
        .get(1)
        .map(|r| r.body.to_string())
        .unwrap_or_default();
    (out, sent)
}

/// Every file under `dir` (bytes), except the token files.
fn files_outside_tokens(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == "mcp-auth") {
            continue;
        }
        if path.is_dir() {
            files_outside_tokens(&path, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path.display().to_string(), bytes));
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn login_through_the_loopback_redirect_refresh_and_no_token_leaks() {
    if !Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        tascer_testkit::skip("the headless browser", "curl not found");
        return;
    }
    let (auth, url) = start_server().await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join(".mcp.json"),
        json!({"mcpServers": {"secure": {"type": "http", "url": url}}}).to_string(),
    )
    .unwrap();
    let mut transcripts = Vec::new();

    // Unattended, never logged in: the server fails, naming the command.
    let (out, _) = run_whoami(home.path(), ws.path()).await;
    let t = text(&out);
    assert!(t.contains("run `tascer mcp login secure`"), "{t}");
    transcripts.push(t);

    // Login: curl (the "browser") fetches the authorization URL and follows
    // the redirect to tascer's loopback listener.
    let mut login = tascer(home.path(), ws.path());
    login.env("BROWSER", "curl -fsSL -o /dev/null").args([
        "mcp",
        "login",
        "secure",
        "--timeout",
        "30",
    ]);
    let out = output(login).await;
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("logged in to 'secure' (scopes: mcp); 1 tools"),
        "{t}"
    );
    assert!(t.contains("/authorize?"), "the URL is shown: {t}");
    assert_eq!(auth.lock().pkce_verified, 1);
    transcripts.push(t);
    let token_file = home.path().join("mcp-auth/secure.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // Two seconds on, the access token is due: the run refreshes it and
    // calls the tool with the new one.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (out, sent) = run_whoami(home.path(), ws.path()).await;
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        sent.contains(TOOL_TEXT),
        "the tool result reached the model: {sent}"
    );
    {
        let auth = auth.lock();
        let last = auth.used.last().unwrap();
        assert!(
            auth.refreshed.contains(last),
            "the tool was called with a refreshed token"
        );
    }
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let session = result["session_id"].as_str().unwrap().to_owned();
    transcripts.push(t);

    // The report and everything in the home but the token file: no token.
    for format in ["text", "json"] {
        let mut report = tascer(home.path(), ws.path());
        report.args(["report", &session, "--format", format]);
        let out = output(report).await;
        let t = text(&out);
        assert!(out.status.success(), "{t}");
        assert!(t.contains("mcp__secure__whoami"), "{t}");
        transcripts.push(t);
    }
    let mut files = Vec::new();
    files_outside_tokens(home.path(), &mut files);
    files_outside_tokens(ws.path(), &mut files);
    assert!(files.len() > 1, "the ledger is in the home");
    let issued = auth.lock().issued.clone();
    assert!(issued.len() >= 4, "login and refresh issued tokens");
    let stored = std::fs::read_to_string(&token_file).unwrap();
    assert!(issued.iter().any(|t| stored.contains(t.as_str())));
    for secret in &issued {
        for t in &transcripts {
            assert!(!t.contains(secret.as_str()), "a token in the output: {t}");
        }
        for (path, bytes) in &files {
            let hit = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
            assert!(!hit, "a token in {path}");
        }
    }

    // The refresh token is revoked and the access token expires: an
    // unattended run cannot refresh and names the command to run.
    {
        let mut auth = auth.lock();
        auth.refresh_rejected = true;
        let now = Instant::now();
        for expiry in auth.access.values_mut() {
            *expiry = now;
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (out, sent) = run_whoami(home.path(), ws.path()).await;
    let t = text(&out);
    assert!(t.contains("run `tascer mcp login secure`"), "{t}");
    assert!(!sent.contains(TOOL_TEXT), "{sent}");

    let mut logout = tascer(home.path(), ws.path());
    logout.args(["mcp", "logout", "secure"]);
    let out = output(logout).await;
    assert!(
        text(&out).contains("logged out of 'secure'"),
        "{}",
        text(&out)
    );
    assert!(!token_file.exists());
}
