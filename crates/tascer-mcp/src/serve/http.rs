//! Streamable HTTP serving: rmcp's `StreamableHttpService` mounted at
//! `/mcp` on an axum router.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use subtle::ConstantTimeEq as _;
use tokio_util::sync::CancellationToken;

use super::handler::Handler;
use super::{McpServerSpec, ServeError};

/// A running streamable-HTTP MCP server (endpoint `http://<addr>/mcp`).
///
/// Sessions are stateful (`Mcp-Session-Id`), SSE responses carry priming
/// events with a `retry` hint, and the `Host` header must name a loopback
/// host (or the bound address), which protects local servers against DNS
/// rebinding. With a bearer token ([`HttpServer::bind_with_token`]) every
/// request must carry `Authorization: Bearer <token>`; others get HTTP 401.
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<Result<(), std::io::Error>>,
}

impl HttpServer {
    /// Binds `addr` (port 0 picks a free port) and starts serving `spec`,
    /// without authentication: for loopback addresses.
    pub async fn bind(spec: McpServerSpec, addr: SocketAddr) -> Result<HttpServer, ServeError> {
        Self::bind_with_token(spec, addr, None).await
    }

    /// [`bind`](Self::bind), and when `token` is given, requires it as a
    /// bearer token on every request (compared in constant time).
    pub async fn bind_with_token(
        spec: McpServerSpec,
        addr: SocketAddr,
        token: Option<String>,
    ) -> Result<HttpServer, ServeError> {
        if token.as_deref().is_some_and(str::is_empty) {
            return Err(ServeError::Bind {
                addr: addr.to_string(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "the bearer token is empty",
                ),
            });
        }
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind {
                addr: addr.to_string(),
                source,
            })?;
        let local = listener.local_addr().map_err(|source| ServeError::Bind {
            addr: addr.to_string(),
            source,
        })?;
        let cancel = CancellationToken::new();
        let mut hosts = vec![
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            "::1".to_owned(),
            "[::1]".to_owned(),
        ];
        if !local.ip().is_unspecified() && !local.ip().is_loopback() {
            hosts.push(local.ip().to_string());
        }
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_cancellation_token(cancel.child_token());
        let spec = Arc::new(spec);
        let service = StreamableHttpService::new(
            move || Ok(Handler::new(spec.clone())),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let mut router = axum::Router::new().nest_service("/mcp", service);
        if let Some(token) = token {
            let token: Arc<str> = token.into();
            router = router.layer(axum::middleware::from_fn(move |request, next| {
                require_bearer(Arc::clone(&token), request, next)
            }));
        }
        let shutdown = cancel.clone();
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async move { shutdown.cancelled().await })
                .await
        });
        Ok(HttpServer {
            addr: local,
            cancel,
            task,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<addr>/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops accepting requests and ends open sessions.
    pub fn shutdown(&self) {
        self.cancel.cancel();
    }

    /// Waits until the server stops (after [`Self::shutdown`] or an I/O error).
    pub async fn wait(self) -> Result<(), ServeError> {
        match self.task.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(ServeError::Transport(e.to_string())),
            Err(e) => Err(ServeError::Transport(e.to_string())),
        }
    }
}

/// Lets a request through only with `Authorization: Bearer <token>`.
async fn require_bearer(
    token: Arc<str>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let presented = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if presented.is_some_and(|p| bool::from(p.as_bytes().ct_eq(token.as_bytes()))) {
        return next.run(request).await;
    }
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32001, "message": "Unauthorized: a valid bearer token is required"},
    });
    let mut response = axum::response::Response::new(axum::body::Body::from(body.to_string()));
    *response.status_mut() = axum::http::StatusCode::UNAUTHORIZED;
    let headers = response.headers_mut();
    headers.insert(
        axum::http::header::WWW_AUTHENTICATE,
        axum::http::HeaderValue::from_static("Bearer"),
    );
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}
