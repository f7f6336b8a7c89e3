//! `tascer run --mcp-config`: servers from the flag, their tools called
//! through the pipeline, a failing server reported on stderr.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

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

/// A session whose MCP server samples (`tascer mcp serve --conformance`'s
/// `test_sampling`, stdio): the session's own model answers, the answer
/// reaches the server and, in its tool result, the model, and the ledger
/// records the sampling call as a model response; with
/// `--refuse-mcp-sampling` the server is refused and the model is not
/// called for it.
async fn run_sampling(refuse: bool) -> (MockServer, serde_json::Value, PathBuf, tempfile::TempDir) {
    let config = json!({"mcpServers": {"conf": {
        "command": env!("CARGO_BIN_EXE_tascer"), "args": ["mcp", "serve", "--conformance"]
    }}})
    .to_string();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    // The sampling request is its own conversation (its first prompt).
    let scenario = Scenario::new()
        .turn(Turn::new().with_tool(
            "mcp__conf__test_sampling",
            json!({"prompt": "What is 2+2?"}),
        ))
        .turn(Turn::text("done"))
        .conversation("What is 2+2?", vec![Turn::text("four")]);
    let server = MockServer::start(scenario).await.unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tascer"));
    cmd.env_remove("OPENAI_BASE_URL")
        .env("TASCER_HOME", home.path())
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.url())
        .current_dir(ws.path())
        .args([
            "run",
            "--output-format",
            "json",
            "--mcp-config",
            &config,
            "--allowedTools=mcp__conf__test_sampling",
        ]);
    if refuse {
        cmd.arg("--refuse-mcp-sampling");
    }
    cmd.arg("ask the server");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let home_path = home.path().to_path_buf();
    (server, result, home_path, home)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_servers_sampling_request_is_a_recorded_model_call_or_refused() {
    let (server, result, home, _keep) = run_sampling(false).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "turn, sampling, turn");
    let sampling = &requests[1].body;
    assert!(sampling.to_string().contains("What is 2+2?"), "{sampling}");
    assert!(
        sampling["tools"].as_array().is_none_or(|t| t.is_empty()),
        "no tools offered to a sampling call: {sampling}"
    );
    let after = requests[2].body.to_string();
    assert!(after.contains("LLM response: four"), "{after}");
    let session = result["session_id"].as_str().unwrap();
    let responses: Vec<_> = common::ledger_rows(&home, session)
        .into_iter()
        .filter(|r| r.kind == "model_response")
        .collect();
    assert_eq!(responses.len(), 3, "the sampling call is in the ledger");
    let servers: Vec<_> = responses
        .iter()
        .map(|r| r.payload["mcp_sampling_server"].clone())
        .collect();
    assert_eq!(servers, [json!(null), json!("conf"), json!(null)]);
    // The stored summary agrees with the ledger: the sampling call is not
    // one of the session's turns.
    let verify = Command::new(env!("CARGO_BIN_EXE_tascer"))
        .env("TASCER_HOME", &home)
        .args(["verify", session])
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );

    let (server, result, home, _keep) = run_sampling(true).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the model is not called for the server");
    let after = requests[1].body.to_string();
    assert!(
        after.contains("sampling failed: the MCP client"),
        "the client did not offer sampling: {after}"
    );
    assert!(!after.contains("LLM response"), "{after}");
    let session = result["session_id"].as_str().unwrap();
    let responses = common::ledger_rows(&home, session)
        .into_iter()
        .filter(|r| r.kind == "model_response")
        .count();
    assert_eq!(responses, 2);
}
