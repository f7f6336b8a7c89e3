//! Streamable HTTP serving: rmcp's `StreamableHttpService` mounted at
//! `/mcp` on an axum router.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::handler::Handler;
use super::{McpServerSpec, ServeError};

/// A running streamable-HTTP MCP server (endpoint `http://<addr>/mcp`).
///
/// Sessions are stateful (`Mcp-Session-Id`), SSE responses carry priming
/// events with a `retry` hint, and the `Host` header must name a loopback
/// host (or the bound address), which protects local servers against DNS
/// rebinding.
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<Result<(), std::io::Error>>,
}

impl HttpServer {
    /// Binds `addr` (port 0 picks a free port) and starts serving `spec`.
    pub async fn bind(spec: McpServerSpec, addr: SocketAddr) -> Result<HttpServer, ServeError> {
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
        let router = axum::Router::new().nest_service("/mcp", service);
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
