//! `tascer run --mcp-config`: servers from the flag, their tools called
//! through the pipeline, a failing server reported on stderr.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;
use tascer_testkit::{MockServer, Scenario, Turn};

#[tokio::test(flavor = "multi_thread")]
async fn mcp_config_servers_are_used_and_failures_reported() {
    if !Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        tascer_testkit::skip("the python mini MCP server", "python3 not found");
        return;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tascer-mcp/tests/fixtures/mini_server.py");
    let config = json!({"mcpServers": {
        "mini": {"command": "python3", "args": [script]},
        "ghost": {"command": "/nonexistent/server"}
    }})
    .to_string();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::new().with_tool("mcp__mini__hello", json!({})))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tascer"));
    cmd.env_remove("OPENAI_BASE_URL")
        .env("TASCER_HOME", home.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.url())
        .current_dir(ws.path())
        .args([
            "run",
            "--mcp-config",
            &config,
            "--allowedTools=mcp__mini__hello",
            "go",
        ]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("MCP server ghost failed to start"),
        "{stderr}"
    );
    let second = &server.requests()[1].body;
    let result = second["messages"][2]["content"][0].to_string();
    assert!(result.contains("hello from hello"), "{result}");

    // A bad --mcp-config is one clear error line, before any model call.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tascer"));
    cmd.env("TASCER_HOME", home.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.url())
        .current_dir(ws.path())
        .args(["run", "--mcp-config={\"servers\": {}}", "go"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--mcp-config") && stderr.contains("mcpServers"),
        "{stderr}"
    );
}
