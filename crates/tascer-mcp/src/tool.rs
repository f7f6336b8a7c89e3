//! A server tool exposed as a [`tascer_core::Tool`].

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;
use tascer_core::{Tool, ToolContext, ToolOutput};

use crate::client::RemoteTool;
use crate::names::mcp_tool_name;
use crate::server::ServerEntry;

/// `mcp__<server>__<tool>`: forwards `call` to `tools/call`.
pub struct McpTool {
    server: Arc<ServerEntry>,
    name: String,
    remote: RemoteTool,
}

impl McpTool {
    pub(crate) fn new(server: Arc<ServerEntry>, remote: RemoteTool) -> Self {
        McpTool {
            name: mcp_tool_name(server.name(), &remote.name),
            server,
            remote,
        }
    }

    /// The server this tool belongs to.
    pub fn server_name(&self) -> &str {
        self.server.name()
    }

    /// The tool's name on its server.
    pub fn remote_name(&self) -> &str {
        &self.remote.name
    }
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.remote.description
    }

    fn input_schema(&self) -> Value {
        self.remote.input_schema.clone()
    }

    fn is_read_only(&self) -> bool {
        self.remote.read_only
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        async move {
            let args = match input {
                Value::Object(map) => Some(map),
                Value::Null => None,
                other => {
                    return ToolOutput::error(format!(
                        "MCP tool input must be a JSON object, got {other}"
                    ));
                }
            };
            tokio::select! {
                out = self.server.call_tool(&self.remote.name, args) => out,
                () = ctx.cancel.cancelled() => ToolOutput::error("MCP tool call interrupted"),
            }
        }
        .boxed()
    }
}
