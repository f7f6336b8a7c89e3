//! `tascer mcp add|add-json|remove|get`: entries written in Claude Code's
//! shapes to the file of each scope (local `.tascer/settings.local.json`,
//! project `.mcp.json`, user `<home>/settings.json`), read back by
//! `tascer mcp get` / `list`, which connect them (the stdio server is
//! `tascer mcp serve --conformance` itself), and removed again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use assert_cmd::Command;
use serde_json::{Value, json};

const TASCER: &str = env!("CARGO_BIN_EXE_tascer");

fn tascer(cwd: &Path, home: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(TASCER)
        .args(args)
        .current_dir(cwd)
        .env("TASCER_HOME", home)
        .env("MCP_TIMEOUT", "20000")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn add_get_list_and_remove_in_each_scope() {
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let (cwd, home) = (cwd.path(), home.path());
    std::fs::write(home.join("settings.json"), r#"{"model": "keep-me"}"#).unwrap();

    // local (default scope): a stdio server, arguments after `--`.
    let (code, out) = tascer(
        cwd,
        home,
        &[
            "mcp",
            "add",
            "-e",
            "K=V",
            "fixture",
            "--",
            TASCER,
            "mcp",
            "serve",
            "--conformance",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("(local scope)"), "{out}");
    assert_eq!(
        json_file(&cwd.join(".tascer/settings.local.json"))["mcpServers"]["fixture"],
        json!({"type": "stdio", "command": TASCER, "args": ["mcp", "serve", "--conformance"],
               "env": {"K": "V"}})
    );

    // project: an HTTP server with a header and a pre-registered OAuth client.
    let (code, out) = tascer(
        cwd,
        home,
        &[
            "mcp",
            "add",
            "--scope",
            "project",
            "--transport",
            "http",
            "-H",
            "X-Api-Key: secret-value",
            "--client-id",
            "cli-1",
            "remote",
            "http://127.0.0.1:9/mcp",
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        json_file(&cwd.join(".mcp.json")),
        json!({"mcpServers": {"remote": {"type": "http", "url": "http://127.0.0.1:9/mcp",
               "headers": {"X-Api-Key": "secret-value"}, "oauth": {"clientId": "cli-1"}}}})
    );

    // user: add-json; the settings file keeps its other keys.
    let (code, out) = tascer(
        cwd,
        home,
        &[
            "mcp",
            "add-json",
            "-s",
            "user",
            "old",
            r#"{"type":"sse","url":"http://127.0.0.1:9/sse"}"#,
        ],
    );
    assert_eq!(code, 0, "{out}");
    let user = json_file(&home.join("settings.json"));
    assert_eq!(user["model"], "keep-me");
    assert_eq!(user["mcpServers"]["old"]["type"], "sse");

    // A name that exists in that scope is refused; bad input is explained.
    let (code, out) = tascer(cwd, home, &["mcp", "add", "fixture", "other"]);
    assert_ne!(code, 0);
    assert!(out.contains("already exists"), "{out}");
    let (code, out) = tascer(cwd, home, &["mcp", "add-json", "bad", r#"{"type":"ws"}"#]);
    assert_ne!(code, 0);
    assert!(out.contains("server 'bad'"), "{out}");
    let (code, out) = tascer(cwd, home, &["mcp", "add", "-e", "NOEQUALS", "x", "cmd"]);
    assert_ne!(code, 0);
    assert!(out.contains("expected NAME=VALUE"), "{out}");

    // get: where it is configured, and it connects.
    let (code, out) = tascer(cwd, home, &["mcp", "get", "fixture", "--json"]);
    assert_eq!(code, 0, "{out}");
    let got: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(got["status"], "connected");
    assert!(
        got["source"]
            .as_str()
            .unwrap()
            .starts_with("local settings"),
        "{got}"
    );
    assert!(got["tools"].as_array().unwrap().len() > 3, "{got}");
    // A header value is not shown; an unreachable server fails.
    let (code, out) = tascer(cwd, home, &["mcp", "get", "remote"]);
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("secret-value"), "{out}");
    assert!(
        out.contains("<hidden>") && out.contains("status: failed"),
        "{out}"
    );

    // list sees all three.
    let out = Command::new(TASCER)
        .args(["mcp", "list", "--json"])
        .current_dir(cwd)
        .env("TASCER_HOME", home)
        .output()
        .unwrap();
    let names: Vec<String> = serde_json::from_slice::<Vec<Value>>(&out.stdout)
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["fixture", "old", "remote"]);

    // remove: from the one scope that has it, or the named scope.
    let (code, out) = tascer(cwd, home, &["mcp", "remove", "remote"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("(project scope)"), "{out}");
    assert_eq!(json_file(&cwd.join(".mcp.json")), json!({"mcpServers": {}}));
    let (code, _) = tascer(cwd, home, &["mcp", "remove", "-s", "local", "old"]);
    assert_eq!(code, 1, "not in that scope");
    let (code, _) = tascer(cwd, home, &["mcp", "remove", "-s", "user", "old"]);
    assert_eq!(code, 0);
    assert_eq!(json_file(&home.join("settings.json"))["model"], "keep-me");
    let (code, out) = tascer(cwd, home, &["mcp", "remove", "nothing-here"]);
    assert_eq!(code, 1);
    assert!(out.contains("no MCP server named 'nothing-here'"), "{out}");
}
