//! Per-tool permissions in a server's configuration, written by
//! `tascer mcp add --allow-tool/--deny-tool`: the allowed tool runs
//! without asking in a headless run, the denied one is not offered to the
//! model and is refused when called anyway, by the rule made from the
//! server entry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

fn python3() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn mini_server() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tascer-mcp/tests/fixtures/mini_server.py")
}

fn tascer(home: &Path, ws: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tascer"));
    cmd.env_remove("OPENAI_BASE_URL")
        .env("TASCER_HOME", home)
        .env("ANTHROPIC_API_KEY", "k")
        .current_dir(ws);
    cmd
}

/// Runs a headless session whose model calls `hello`, then `fail`, then
/// ends; returns the requests the model received.
async fn session(home: &Path, ws: &Path) -> Vec<Value> {
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::new().with_tool("mcp__mini__hello", json!({})))
            .turn(Turn::new().with_tool("mcp__mini__fail", json!({})))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let mut cmd = tascer(home, ws);
    cmd.env("ANTHROPIC_BASE_URL", server.url())
        .args(["run", "go"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    server.requests().into_iter().map(|r| r.body).collect()
}

/// The tool result the model got in request `n` (its last message).
fn last_result(requests: &[Value], n: usize) -> String {
    let messages = requests[n]["messages"].as_array().unwrap();
    messages.last().unwrap()["content"].to_string()
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_allowed_tool_runs_and_its_denied_tool_is_hidden_and_refused() {
    if !python3() {
        tascer_testkit::skip("the python mini MCP server", "python3 not found");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let script = mini_server();

    // Without per-tool permissions a headless run refuses both calls (no
    // one can be asked): the allow list below is what lets `hello` run.
    let plain = json!({"mcpServers": {"mini": {"command": "python3", "args": [&script]}}});
    std::fs::write(ws.path().join(".mcp.json"), plain.to_string()).unwrap();
    let requests = session(home.path(), ws.path()).await;
    assert!(tool_names(&requests[0]).contains(&"mcp__mini__fail".to_string()));
    assert!(!last_result(&requests, 1).contains("hello from hello"));

    std::fs::remove_file(ws.path().join(".mcp.json")).unwrap();
    let out = tascer(home.path(), ws.path())
        .args([
            "mcp",
            "add",
            "--scope",
            "project",
            "--allow-tool",
            "hello",
            "--deny-tool",
            "fail",
            "mini",
            "python3",
        ])
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.path().join(".mcp.json")).unwrap())
            .unwrap();
    assert_eq!(
        written["mcpServers"]["mini"]["permissions"],
        json!({"allow": ["hello"], "deny": ["fail"]})
    );

    let requests = session(home.path(), ws.path()).await;
    let offered = tool_names(&requests[0]);
    assert!(
        offered.contains(&"mcp__mini__hello".to_string()),
        "{offered:?}"
    );
    assert!(
        offered.contains(&"mcp__mini__grow".to_string()),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"mcp__mini__fail".to_string()),
        "a denied tool is not offered: {offered:?}"
    );
    let hello = last_result(&requests, 1);
    assert!(hello.contains("hello from hello"), "{hello}");
    let fail = last_result(&requests, 2);
    assert!(fail.contains("is_error"), "{fail}");
    assert!(
        fail.contains("denied by rule `mcp__mini__fail`"),
        "the refusal names the rule made from the server entry: {fail}"
    );
    assert!(!fail.contains("hello from fail"), "{fail}");
}

#[test]
fn a_rule_in_a_servers_permissions_is_refused_naming_the_list() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"mini": {
        "command": "python3", "permissions": {"deny": ["mcp__mini__fail"]}
    }}});
    let out = tascer(home.path(), ws.path())
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .args(["run", "go", "--mcp-config", &config.to_string()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("server 'mini'") && stderr.contains("permissions.deny"),
        "{stderr}"
    );
}
