//! Error type of this crate.

use std::time::Duration;

/// What can go wrong while configuring or talking to MCP servers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The `mcpServers` configuration could not be read or parsed.
    #[error("invalid MCP config: {0}")]
    Config(String),
    /// The transport type is not supported by this client.
    #[error("MCP server '{server}': {message}")]
    Unsupported {
        /// Server name.
        server: String,
        /// Why it is not supported.
        message: String,
    },
    /// Connecting (spawn, HTTP, handshake) failed.
    #[error("MCP server '{server}' failed to connect: {message}")]
    Connect {
        /// Server name.
        server: String,
        /// Underlying error.
        message: String,
    },
    /// The server did not finish starting in time.
    #[error("MCP server '{server}' did not start within {}s", timeout.as_secs_f64())]
    StartupTimeout {
        /// Server name.
        server: String,
        /// The startup timeout that elapsed.
        timeout: Duration,
    },
    /// A request did not complete in time.
    #[error("MCP server '{server}': {method} timed out after {}s", timeout.as_secs_f64())]
    Timeout {
        /// Server name.
        server: String,
        /// The JSON-RPC method.
        method: String,
        /// The timeout that elapsed.
        timeout: Duration,
    },
    /// The connection is gone (process exited, stream closed).
    #[error("MCP server '{server}' is not connected: {message}")]
    Disconnected {
        /// Server name.
        server: String,
        /// Why.
        message: String,
    },
    /// The server answered a request with an error.
    #[error("MCP server '{server}': {method} failed: {message}")]
    Request {
        /// Server name.
        server: String,
        /// The JSON-RPC method.
        method: String,
        /// The error message.
        message: String,
    },
    /// Logging in to the server (OAuth) failed or is needed.
    #[error("MCP server '{server}': {message}")]
    Auth {
        /// Server name.
        server: String,
        /// What went wrong (never a token).
        message: String,
    },
    /// No server with that name is configured.
    #[error("no MCP server named '{0}'")]
    UnknownServer(String),
    /// A `/mcp__<server>__<prompt>` command names no prompt of the server.
    #[error("unknown MCP prompt /{command}: {available}")]
    UnknownPrompt {
        /// The command, without its `/`.
        command: String,
        /// The server's prompts (or that it has none).
        available: String,
    },
    /// The words after a prompt command do not fit its arguments.
    #[error("/{command}: {message}")]
    PromptArguments {
        /// The command, without its `/`.
        command: String,
        /// What does not fit, with the prompt's argument list.
        message: String,
    },
}
