//! `tascer mcp list`: loads servers from the config sources, connects them
//! and reports each one; exit 1 when any failed. The "good" server is
//! `tascer mcp serve --conformance` itself (stdio), the failing one a
//! command that does not exist.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use assert_cmd::Command;
use serde_json::{Value, json};

const TASCER: &str = env!("CARGO_BIN_EXE_tascer");

fn good() -> Value {
    json!({"command": TASCER, "args": ["mcp", "serve", "--conformance"]})
}

fn bad() -> Value {
    json!({"command": "/nonexistent/tascer-test-no-such-server"})
}

fn list(cwd: &Path, home: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(TASCER)
        .args(["mcp", "list"])
        .args(args)
        .current_dir(cwd)
        .env("TASCER_HOME", home)
        .env("MCP_TIMEOUT", "20000")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn good_and_failing_server() {
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"good": good(), "broken": bad()}}).to_string();
    let (code, out) = list(
        cwd.path(),
        home.path(),
        &["--strict-mcp-config", "--mcp-config", &config],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("✓ good  connected"), "{out}");
    assert!(out.contains("test_simple_text"), "{out}");
    assert!(out.contains("✗ broken  failed"), "{out}");
    assert!(out.contains("cannot spawn"), "{out}");

    let (code, out) = list(
        cwd.path(),
        home.path(),
        &["--strict-mcp-config", "--mcp-config", &config, "--json"],
    );
    assert_eq!(code, 1, "{out}");
    let rows: Value = serde_json::from_str(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let broken = rows.iter().find(|r| r["name"] == "broken").unwrap();
    assert_eq!(broken["status"], "failed");
    assert!(
        broken["error"].as_str().unwrap().contains("No such file"),
        "{broken}"
    );
    let good = rows.iter().find(|r| r["name"] == "good").unwrap();
    assert_eq!(good["status"], "connected");
    assert_eq!(good["server_info"]["name"], "tascer-conformance");
    assert!(good["tools"].as_array().unwrap().len() >= 10, "{good}");
}

#[test]
fn sources_and_exit_zero() {
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let (code, out) = list(cwd.path(), home.path(), &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no MCP servers configured"), "{out}");

    // .mcp.json in cwd, plus an in-process server in the settings (skipped).
    std::fs::write(
        cwd.path().join(".mcp.json"),
        json!({"mcpServers": {"good": good()}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        home.path().join("settings.json"),
        json!({"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}).to_string(),
    )
    .unwrap();
    let (code, out) = list(cwd.path(), home.path(), &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("✓ good  connected"), "{out}");
    assert!(out.contains(".mcp.json"), "{out}");
    assert!(out.contains("- calc  skipped"), "{out}");

    // --strict-mcp-config ignores them; a broken .mcp.json is an error that names it.
    let (code, out) = list(cwd.path(), home.path(), &["--strict-mcp-config"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no MCP servers configured"), "{out}");
    std::fs::write(cwd.path().join(".mcp.json"), "{oops").unwrap();
    let out = Command::new(TASCER)
        .args(["mcp", "list"])
        .current_dir(cwd.path())
        .env("TASCER_HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(".mcp.json") && err.contains("not JSON"),
        "{err}"
    );
}
