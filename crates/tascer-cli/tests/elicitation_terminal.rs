//! MCP servers' questions (elicitation) in `tascer run`: with a terminal,
//! the person at it answers (driven here through a pseudo-terminal by
//! tests/fixtures/pty_drive.py), a form field by field or a URL-mode
//! question by confirming the page; without one, the server's question is
//! refused. The server is `tascer mcp serve --conformance`'s, over HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tascer::mcp::HttpServer;
use tascer_testkit::{MockServer, Scenario, Turn};

/// A session calling `tool` of the conformance server, then ending.
async fn servers(tool: &str, arguments: Value) -> (HttpServer, MockServer) {
    let mcp = HttpServer::bind(
        tascer::mcp::conformance_spec("0.0.0-test"),
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
    )
    .await
    .unwrap();
    let model = MockServer::start(
        Scenario::new()
            .turn(Turn::new().with_tool(format!("mcp__conf__{tool}"), arguments))
            .turn(Turn::text("Thanks.")),
    )
    .await
    .unwrap();
    (mcp, model)
}

/// `tascer run`'s arguments for a session with the `conf` server.
fn run_args(mcp: &HttpServer, tool: &str) -> Vec<String> {
    let config = json!({"mcpServers": {"conf": {"type": "http", "url": mcp.url()}}});
    vec![
        env!("CARGO_BIN_EXE_tascer").to_string(),
        "run".into(),
        "--mcp-config".into(),
        config.to_string(),
        format!("--allowedTools=mcp__conf__{tool}"),
        "ask me".into(),
    ]
}

/// The tool result the model was sent after the call.
fn tool_result(model: &MockServer) -> (String, bool) {
    let requests = model.requests();
    let second = &requests.get(1).expect("a second model request").body;
    let block = &second["messages"][2]["content"][0];
    assert_eq!(block["type"], "tool_result", "{second:#}");
    (
        common::content_text(&block["content"]),
        block["is_error"].as_bool().unwrap_or(false),
    )
}

fn python3() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs `argv` in a pseudo-terminal, answering by `rules` (see
/// pty_drive.py); its output, exit status and unused rules.
fn in_terminal(
    argv: &[String],
    home: &Path,
    cwd: &Path,
    base_url: &str,
    rules: &[(&str, &str)],
) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pty_drive.py");
    let mut env: serde_json::Map<String, Value> = std::env::vars()
        .filter(|(k, _)| {
            !k.starts_with("ANTHROPIC_") && !k.starts_with("OPENAI_") && !k.starts_with("TASCER_")
        })
        .map(|(k, v)| (k, json!(v)))
        .collect();
    env.insert("TASCER_HOME".into(), json!(home));
    env.insert("ANTHROPIC_API_KEY".into(), json!("test"));
    env.insert("ANTHROPIC_BASE_URL".into(), json!(base_url));
    env.insert("TERM".into(), json!("dumb"));
    let config = json!({"argv": argv, "env": env, "cwd": cwd, "timeout": 120, "rules": rules});
    let out = Command::new("python3")
        .arg(script)
        .arg(config.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_person_at_the_terminal_answers_and_a_wrong_value_is_asked_again() {
    if !python3() {
        tascer_testkit::skip("the pseudo-terminal driver", "python3 not found");
        return;
    }
    let tool = "test_elicitation_sep1034_defaults";
    let (mcp, model) = servers(tool, json!({})).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let argv = run_args(&mcp, tool);
    let (h, w, url) = (home.path().to_owned(), ws.path().to_owned(), model.url());
    let out = tokio::task::spawn_blocking(move || {
        in_terminal(
            &argv,
            &h,
            &w,
            &url,
            &[
                ("User name", "Ann"),
                ("User age", "old"),
                ("is not a whole number", "41"),
                ("User score", ""),
                ("User status", "3"),
                ("Verification status", "n"),
                ("[a] accept", "a"),
            ],
        )
    })
    .await
    .unwrap();
    let output = out["output"].as_str().unwrap();
    assert_eq!(out["unused"], json!([]), "every prompt came: {output}");
    assert_eq!(out["status"], 0, "{output}");
    assert!(
        output.contains("MCP server 'conf' asks: Please review and update the form fields"),
        "{output}"
    );
    assert!(output.contains("[default: 30]"), "{output}");
    let (text, is_error) = tool_result(&model);
    assert!(!is_error, "{text}");
    let content: Value = serde_json::from_str(
        text.split("content=")
            .nth(1)
            .expect("the server quotes the answer"),
    )
    .unwrap();
    assert!(text.contains("action=accept"), "{text}");
    assert_eq!(
        content,
        json!({"name": "Ann", "age": 41, "score": 95.5, "status": "pending", "verified": false})
    );
    mcp.shutdown();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_person_at_the_terminal_can_decline() {
    if !python3() {
        tascer_testkit::skip("the pseudo-terminal driver", "python3 not found");
        return;
    }
    let tool = "test_elicitation";
    let (mcp, model) = servers(tool, json!({"message": "Who are you?"})).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let argv = run_args(&mcp, tool);
    let (h, w, url) = (home.path().to_owned(), ws.path().to_owned(), model.url());
    let out = tokio::task::spawn_blocking(move || {
        in_terminal(
            &argv,
            &h,
            &w,
            &url,
            &[
                ("User's email address", "me@example.com"),
                ("User's response", "me"),
                ("[a] accept", "d"),
            ],
        )
    })
    .await
    .unwrap();
    let output = out["output"].as_str().unwrap();
    assert_eq!(out["unused"], json!([]), "every prompt came: {output}");
    assert!(output.contains("Who are you?"), "{output}");
    let (text, is_error) = tool_result(&model);
    assert!(!is_error && text.contains("action=decline"), "{text}");
    mcp.shutdown();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_url_question_shows_the_page_and_the_person_confirms() {
    if !python3() {
        tascer_testkit::skip("the pseudo-terminal driver", "python3 not found");
        return;
    }
    let tool = "test_elicitation_url";
    let (mcp, model) = servers(tool, json!({})).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let argv = run_args(&mcp, tool);
    let (h, w, url) = (home.path().to_owned(), ws.path().to_owned(), model.url());
    let out = tokio::task::spawn_blocking(move || {
        in_terminal(&argv, &h, &w, &url, &[("[y] I finished there", "y")])
    })
    .await
    .unwrap();
    let output = out["output"].as_str().unwrap();
    assert_eq!(out["unused"], json!([]), "every prompt came: {output}");
    assert!(output.contains("Sign in to the test service"), "{output}");
    assert!(
        output.contains("https://auth.example.com/authorize?state=test"),
        "{output}"
    );
    let (text, is_error) = tool_result(&model);
    assert!(!is_error && text.contains("action=accept"), "{text}");
    mcp.shutdown();
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_terminal_the_servers_question_is_refused() {
    let tool = "test_elicitation";
    let (mcp, model) = servers(tool, json!({"message": "Who are you?"})).await;
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let argv = run_args(&mcp, tool);
    let mut cmd = common::tascer(home.path(), ws.path());
    cmd.env("ANTHROPIC_API_KEY", "test")
        .env("ANTHROPIC_BASE_URL", model.url())
        .args(&argv[1..]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (text, is_error) = tool_result(&model);
    assert!(
        is_error && text.contains("does not support elicitation"),
        "no one can answer, so the client does not offer elicitation: {text}"
    );
    mcp.shutdown();
}
