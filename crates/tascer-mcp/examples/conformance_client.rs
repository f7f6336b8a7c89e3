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
//! * `auth/*`: the same client logs in with OAuth ([`tascer_mcp::oauth`]):
//!   a headless browser follows the authorization server's redirect to the
//!   client's loopback listener. `MCP_CONFORMANCE_CONTEXT` carries the
//!   pre-registered client (`client_id`, `client_secret`, private key) of
//!   the scenarios that need one; the others use the suite's client ID
//!   metadata document URL, else dynamic registration.
//! * `elicitation-*`: an [`Elicitor`] that accepts with no fields (as the
//!   suite's own client does); Tascer's client fills in the schema's
//!   defaults (SEP-1034).
//! * anything else: handshake, list tools, call the first tool.
//!
//! Exit code 0 when every step worked.

use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tascer_core::ToolContext;
use tascer_mcp::oauth::{HeadlessBrowser, OAuthConfig, OAuthGrant, OAuthOptions};
use tascer_mcp::{
    ElicitationRequest, ElicitationResponse, Elicitor, McpManager, McpOptions, McpServerConfig,
    McpStatus,
};
use tokio_util::sync::CancellationToken;

const SERVER: &str = "conformance";
/// The client ID metadata document URL the suite's authorization servers
/// accept.
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Accepts every question with no fields of its own.
struct AcceptEmpty;

impl Elicitor for AcceptEmpty {
    fn elicit(
        &self,
        _request: ElicitationRequest,
    ) -> futures::future::BoxFuture<'_, ElicitationResponse> {
        Box::pin(async { ElicitationResponse::Accept(serde_json::Map::new()) })
    }
}

/// The OAuth settings a scenario's context asks for.
fn oauth_config(scenario: &str) -> OAuthConfig {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut config = OAuthConfig::default();
    config.client_metadata_url = Some(CIMD_URL.to_owned());
    config.client_id = text("client_id");
    config.client_secret = text("client_secret");
    if scenario.starts_with("auth/cross-app-access") {
        config.grant = OAuthGrant::CrossAppAccess;
        config.idp_issuer = text("idp_issuer");
        config.idp_token_endpoint = text("idp_token_endpoint");
        config.idp_client_id = text("idp_client_id");
        config.id_token = text("idp_id_token");
    }
    if scenario.starts_with("auth/client-credentials") {
        config.grant = OAuthGrant::ClientCredentials;
        config.private_key_pem = text("private_key_pem");
        config.signing_algorithm = text("signing_algorithm");
    }
    config
}

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
            oauth: Some(Box::new(oauth_config(&scenario))),
            permissions: Default::default(),
        },
    )]);
    let options = McpOptions {
        startup_timeout: Duration::from_secs(20),
        tool_timeout: Duration::from_secs(20),
        oauth: OAuthOptions {
            browser: Some(Arc::new(HeadlessBrowser)),
            callback_timeout: Duration::from_secs(10),
            ..OAuthOptions::default()
        },
        elicitor: scenario
            .starts_with("elicitation")
            .then(|| Arc::new(AcceptEmpty) as Arc<dyn Elicitor>),
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
