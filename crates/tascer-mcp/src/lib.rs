//! MCP client for Tascer.
//!
//! * [`parse_mcp_config`] reads Claude Code's `{"mcpServers": {...}}`.
//! * [`McpManager::connect_all`] connects every server concurrently and
//!   reports `{name, status, ...}` per server ([`McpManager::statuses`]).
//! * [`McpManager::tools`] exposes each server tool as a
//!   [`tascer_core::Tool`] named `mcp__<server>__<tool>`, plus
//!   `ListMcpResourcesTool` / `ReadMcpResourceTool`.
//! * [`McpManager::prompts`]: the servers' prompts, run as slash commands
//!   `/mcp__<server>__<prompt> args` by [`McpManager::run_prompt_command`];
//!   [`McpManager::take_resource_updates`]: what subscribed resources
//!   changed.
//! * [`SdkServer`] declares in-process tools; [`McpTunnel`] reaches
//!   servers that live in an SDK host (`mcp_message` of the stream-json
//!   protocol), managed like any other server.
//! * [`oauth`]: OAuth 2.1 for HTTP servers (discovery, registration,
//!   PKCE through a loopback redirect, refresh, step-up), tokens stored per
//!   server with mode 0600.
//! * [`load_mcp_servers`] merges `.mcp.json`, the settings files'
//!   `mcpServers` and `--mcp-config` values.
//! * The server side: [`McpServerSpec`] describes tools, resources and
//!   prompts; [`serve_stdio`] and [`HttpServer`] serve it
//!   ([`conformance_spec`] is the conformance suite's fixture server).
//!
//! All `rmcp` usage lives in the private `client` module (client side) and
//! the private modules of `serve` (server side).

mod client;
mod config;
mod config_write;
mod elicit;
mod error;
mod manager;
mod names;
pub mod oauth;
mod output;
mod prompts;
mod resources;
mod sampling;
mod sdk;
mod serve;
mod server;
mod sse;
mod status;
mod tool;
mod tool_permissions;
mod tunnel;

pub use client::RemoteTool;
pub use config::{
    McpConfigFile, McpServerConfig, McpServerSource, denied_by_server_config, load_mcp_servers,
    load_mcp_servers_with_sources, parse_mcp_config, parse_mcp_config_str,
};
pub use config_write::{McpScope, add_mcp_server, remove_mcp_server};
pub use elicit::{ElicitationRequest, ElicitationResponse, Elicitor, apply_defaults};
pub use error::McpError;
pub use manager::{
    DEFAULT_HEALTH_INTERVAL, DEFAULT_MAX_RESTARTS, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT,
    McpManager, McpOptions,
};
pub use names::{mcp_tool_name, sanitize_name};
pub use output::call_result_to_output;
pub use prompts::{
    McpPrompt, McpPromptArgument, messages_to_text, prompt_command, split_arguments,
};
pub use resources::{ListMcpResourcesTool, ReadMcpResourceTool, ResourceUpdate};
pub use sampling::{Sampler, SamplingMessage, SamplingRequest, SamplingResponse};
pub use sdk::{SdkServer, SdkTool, expand_schema};
pub use serve::{
    BoxFuture, HttpServer, McpServerSpec, PromptArg, ServeError, ServeToolResult, ServedPrompt,
    ServedResource, ServedResourceTemplate, ServedTool, ToolCallContext, conformance_spec,
    serve_stdio,
};
pub use status::{McpServerStatus, McpStatus};
pub use tool::McpTool;
pub use tool_permissions::McpToolPermissions;
pub use tunnel::McpTunnel;
