//! MCP servers reached through a message tunnel instead of a process or a
//! URL: the host of an SDK (the Claude Agent SDK's in-process servers,
//! `{"type": "sdk", "name": …}`) carries each JSON-RPC message to the
//! server and hands back its reply (the `mcp_message` control request of
//! the stream-json protocol, claude-compat §8.3).
//!
//! [`McpTunnel`] is what the host implements; [`TunnelTransport`] turns it
//! into an rmcp [`Transport`], so rmcp drives the usual handshake
//! (`initialize`, `notifications/initialized`), `tools/list` and
//! `tools/call` over it, and the server is managed like any other (startup
//! timeout, tool timeout, restarts, statuses).

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// Carries JSON-RPC messages to MCP servers that live in another process
/// (an SDK host) and brings back their replies.
pub trait McpTunnel: Send + Sync {
    /// Delivers `message` (a JSON-RPC request or notification) to the
    /// server named `server` and returns the server's reply: the JSON-RPC
    /// response for a request, an acknowledgement (ignored) for a
    /// notification. `Err` when the message could not be delivered (the
    /// tunnel is closed); the text says why.
    fn exchange(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, String>>;
}

/// Why a message could not go through the tunnel.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TunnelError {
    /// The message could not be encoded.
    #[error("cannot encode the message: {0}")]
    Encode(#[from] serde_json::Error),
    /// The tunnel refused or lost the message.
    #[error("{0}")]
    Closed(String),
}

/// An rmcp client transport over an [`McpTunnel`]: each request's reply is
/// queued for [`receive`](Transport::receive); replies to notifications
/// are dropped.
pub(crate) struct TunnelTransport {
    server: String,
    tunnel: Arc<dyn McpTunnel>,
    replies: UnboundedSender<ServerJsonRpcMessage>,
    incoming: UnboundedReceiver<ServerJsonRpcMessage>,
}

impl TunnelTransport {
    /// A transport to `server` through `tunnel`.
    pub(crate) fn new(server: &str, tunnel: Arc<dyn McpTunnel>) -> Self {
        let (replies, incoming) = unbounded_channel();
        TunnelTransport {
            server: server.to_string(),
            tunnel,
            replies,
            incoming,
        }
    }
}

/// True for a JSON-RPC request (it has both a method and an id), the only
/// kind of message whose reply means anything.
fn is_request(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_some_and(|id| !id.is_null())
}

impl Transport<RoleClient> for TunnelTransport {
    type Error = TunnelError;

    fn name() -> Cow<'static, str> {
        "TunnelTransport".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), TunnelError>> + Send + 'static {
        let tunnel = Arc::clone(&self.tunnel);
        let server = self.server.clone();
        let replies = self.replies.clone();
        let message = serde_json::to_value(&item);
        async move {
            let message = message?;
            let request = is_request(&message);
            let reply = tunnel
                .exchange(&server, message)
                .await
                .map_err(TunnelError::Closed)?;
            if request {
                match serde_json::from_value::<ServerJsonRpcMessage>(reply) {
                    Ok(reply) => {
                        // The receiver lives as long as the connection.
                        let _ = replies.send(reply);
                    }
                    Err(e) => tracing::warn!(
                        server = %server,
                        error = %e,
                        "MCP tunnel: ignoring a reply that is not JSON-RPC"
                    ),
                }
            }
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        self.incoming.recv().await
    }

    fn close(&mut self) -> impl Future<Output = Result<(), TunnelError>> + Send {
        self.incoming.close();
        std::future::ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::{McpManager, McpOptions, McpServerConfig, McpStatus};

    /// A tiny MCP server behind the tunnel: answers the handshake, lists
    /// one tool and adds numbers; records every message it got.
    #[derive(Default)]
    struct Adder {
        seen: Mutex<Vec<Value>>,
    }

    impl McpTunnel for Adder {
        fn exchange(
            &self,
            server: &str,
            message: Value,
        ) -> BoxFuture<'static, Result<Value, String>> {
            self.seen.lock().unwrap().push(message.clone());
            let id = message["id"].clone();
            let reply = match (server, message["method"].as_str()) {
                ("closed", _) => Err("Stream closed".to_string()),
                (_, Some("initialize")) => Ok(json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": server, "version": "1.0.0"}}})),
                (_, Some("tools/list")) => Ok(json!({"jsonrpc": "2.0", "id": id, "result": {
                    "tools": [{"name": "add", "description": "Adds",
                               "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}]}})),
                (_, Some("tools/call")) => {
                    let args = &message["params"]["arguments"];
                    let sum = args["a"].as_f64().unwrap() + args["b"].as_f64().unwrap();
                    Ok(json!({"jsonrpc": "2.0", "id": id, "result": {
                        "content": [{"type": "text", "text": sum.to_string()}], "isError": false}}))
                }
                // A notification's acknowledgement, shaped like the TS SDK's.
                _ => Ok(json!({"jsonrpc": "2.0", "result": {}, "id": 0})),
            };
            Box::pin(std::future::ready(reply))
        }
    }

    fn manager_options(tunnel: Arc<dyn McpTunnel>) -> McpOptions {
        McpOptions {
            tunnel: Some(tunnel),
            ..McpOptions::default()
        }
    }

    #[tokio::test]
    async fn a_tunnelled_server_handshakes_lists_and_calls_its_tools() {
        let adder = Arc::new(Adder::default());
        let configs = [(
            "calc".to_string(),
            McpServerConfig::Sdk {
                name: "calc".into(),
            },
        )]
        .into_iter()
        .collect();
        let manager = McpManager::connect_with(configs, manager_options(adder.clone())).await;
        let status = &manager.statuses()[0];
        assert_eq!(status.status, McpStatus::Connected, "{status:?}");
        assert_eq!(status.tools, vec!["add".to_string()]);

        let tools = manager.tools_snapshot();
        let add = tools
            .iter()
            .find(|t| t.name() == "mcp__calc__add")
            .expect("the tunnelled tool is offered under its MCP name");
        let ctx = tascer_core::ToolContext {
            session_id: "s".into(),
            tool_use_id: "t".into(),
            cwd: tascer_core::ToolContext::shared_cwd(std::env::temp_dir()),
            env: Arc::default(),
            cancel: tokio_util::sync::CancellationToken::new(),
            file_access: None,
        };
        let out = add.call(json!({"a": 2, "b": 3}), &ctx).await;
        assert!(!out.is_error, "{out:?}");
        assert_eq!(out.content.to_text(), "5");

        let methods: Vec<String> = adder
            .seen
            .lock()
            .unwrap()
            .iter()
            .map(|m| m["method"].as_str().unwrap_or_default().to_string())
            .collect();
        assert_eq!(
            methods,
            [
                "initialize",
                "notifications/initialized",
                "tools/list",
                "tools/call"
            ]
        );
    }

    #[tokio::test]
    async fn a_closed_tunnel_is_a_failed_server_with_the_reason() {
        let configs = [(
            "closed".to_string(),
            McpServerConfig::Sdk {
                name: "closed".into(),
            },
        )]
        .into_iter()
        .collect();
        let manager =
            McpManager::connect_with(configs, manager_options(Arc::new(Adder::default()))).await;
        let status = &manager.statuses()[0];
        assert_eq!(status.status, McpStatus::Failed);
        assert!(
            status
                .error
                .as_deref()
                .unwrap_or_default()
                .contains("Stream closed"),
            "{status:?}"
        );
    }
}
