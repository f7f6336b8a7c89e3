//! Client under test for the MCP conformance suite's client scenarios
//! (`scripts/mcp-conformance`). The suite starts a scenario server and runs
//! `conformance_client <server-url>` with `MCP_CONFORMANCE_SCENARIO` set;
//! this connects with Tascer's own client ([`McpManager`]) and does what
//! the scenario expects:
//!
//! * `initialize`: handshake and `tools/list`.
//! * `tools_call`: call `add_numbers` with `{a: 5, b: 3}`.
//! * `sse-retry`: call `test_reconnection` (the server closes the SSE stream
//!   mid-call; the client must reconnect with `Last-Event-ID`).
//! * anything else (`auth/*`, elicitation): handshake, list tools, call the
//!   first tool.
//!
//! Exit code 0 when every step worked.

use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tascer_core::ToolContext;
use tascer_mcp::{McpManager, McpOptions, McpServerConfig, McpStatus};
use tokio_util::sync::CancellationToken;

const SERVER: &str = "conformance";

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!(
            "usage: conformance_client <server-url> (MCP_CONFORMANCE_SCENARIO selects the scenario)"
        );
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let configs = BTreeMap::from([(
        SERVER.to_owned(),
        McpServerConfig::Http {
            url,
            headers: BTreeMap::new(),
        },
    )]);
    let options = McpOptions {
        startup_timeout: Duration::from_secs(20),
        tool_timeout: Duration::from_secs(20),
        ..McpOptions::default()
    };
    let manager = McpManager::connect_with(configs, options).await;
    let status = manager.statuses();
    let Some(status) = status.first() else {
        eprintln!("no server status");
        return ExitCode::FAILURE;
    };
    println!("{scenario}: {}", json!(status));
    if status.status != McpStatus::Connected {
        return ExitCode::FAILURE;
    }
    let call = match scenario.as_str() {
        "initialize" => None,
        "tools_call" => Some(("add_numbers".to_owned(), json!({"a": 5, "b": 3}))),
        "sse-retry" => Some(("test_reconnection".to_owned(), json!({}))),
        _ => status.tools.first().map(|t| (t.clone(), json!({}))),
    };
    let Some((tool, input)) = call else {
        return ExitCode::SUCCESS;
    };
    let full = tascer_mcp::mcp_tool_name(SERVER, &tool);
    let tools = manager.tools().await;
    let Some(t) = tools.iter().find(|t| t.name() == full) else {
        eprintln!("server has no tool {tool}");
        return ExitCode::FAILURE;
    };
    let ctx = ToolContext {
        session_id: "conformance".into(),
        tool_use_id: "call-1".into(),
        cwd: ToolContext::shared_cwd(std::env::temp_dir()),
        env: Arc::new(HashMap::new()),
        cancel: CancellationToken::new(),
        file_access: None,
    };
    let output = t.call(input, &ctx).await;
    println!(
        "{tool}: is_error={} {}",
        output.is_error,
        output.raw.unwrap_or(Value::Null)
    );
    if output.is_error {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
