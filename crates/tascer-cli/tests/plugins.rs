//! `tascer run --plugin-dir`: a plugin in Claude Code's layout (command,
//! agent, skill, hooks, MCP server) loads into the session and is governed
//! like the session's own: its command expands and runs, its hook blocks a
//! call and is recorded under the plugin's name, its MCP tools need the
//! same permission as any other, and a broken plugin is a warning naming
//! its file while the rest loads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

use common::plugin_fixture::{HOOK_BLOCK, HOOK_LOG, write_plugin};
use common::{content_text, exchanges, json_lines, ledger_rows, tascer, texts};

/// The model's turns: one call of each kind the plugin brings, then done.
fn scenario(ws: &Path) -> Scenario {
    let greeting = ws.join("greeting.txt").display().to_string();
    Scenario::new()
        .turn(Turn::tool(
            "Write",
            json!({"file_path": greeting, "content": "hello Ada\n"}),
        ))
        .turn(Turn::tool("Bash", json!({"command": "rm -rf greeting.txt"})))
        .turn(Turn::tool("Bash", json!({"command": "echo fine > fine.txt"})))
        .turn(Turn::tool("mcp__plugin_kit_mini__hello", json!({})))
        .turn(Turn::tool("mcp__plugin_kit_mini__fail", json!({})))
        .turn(Turn::tool("Skill", json!({"skill": "kit:style"})))
        .turn(Turn::tool(
            "Task",
            json!({"description": "check", "prompt": "SUBTASK check it", "subagent_type": "kit:checker"}),
        ))
        .turn(Turn::text("done"))
        .conversation("SUBTASK", vec![Turn::text("all checked")])
}

/// `tascer run --output-format stream-json` against the mock, in `ws`;
/// the caller adds the flags and the prompt.
fn run(home: &Path, ws: &Path, server: &MockServer) -> Command {
    let mut cmd = tascer(home, ws);
    cmd.env("ANTHROPIC_API_KEY", "test")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args(["run", "--output-format", "stream-json"]);
    cmd
}

#[test]
fn a_plugins_command_hook_skill_agent_and_mcp_server_run_under_governance() {
    if !common::python3_available("plugin MCP server") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let plugins = tempfile::tempdir().unwrap();
    let plugin = write_plugin(plugins.path(), true);
    let broken = plugins.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    let server = MockServer::start_blocking(scenario(&ws)).unwrap();

    let allowed = "Write,Bash,Skill,Task,mcp__plugin_kit_mini__hello";
    let out = run(home.path(), &ws, &server)
        .args(["--allowedTools", allowed])
        .arg("--plugin-dir")
        .arg(&plugin)
        .arg("--plugin-dir")
        .arg(&broken)
        .arg("/kit:greet Ada")
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");

    // The broken plugin is a warning naming its manifest; the other loads.
    let manifest = broken.join(".claude-plugin/plugin.json");
    assert!(stderr.contains(&manifest.display().to_string()), "{stderr}");
    let frames = json_lines(&out.stdout);
    let init = frames.iter().find(|f| f["subtype"] == "init").unwrap();
    assert_eq!(
        init["plugins"],
        json!([{"name": "kit", "path": plugin.display().to_string(), "version": "1.2.0"}])
    );
    assert_eq!(init["plugin_errors"][0]["type"], "manifest-parse-error");
    let has = |key: &str, name: &str| {
        init[key]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == name || v["name"] == name)
    };
    assert!(has("slash_commands", "kit:greet"), "{init:#}");
    assert!(has("skills", "kit:style"), "{init:#}");
    assert!(has("agents", "kit:checker"), "{init:#}");
    assert!(has("tools", "mcp__plugin_kit_mini__hello"), "{init:#}");
    assert!(has("mcp_servers", "plugin_kit_mini"), "{init:#}");

    // The command expanded into the prompt the model got.
    let requests = server.requests();
    let first = requests[0].body["messages"][0]["content"].to_string();
    assert!(
        first.contains("GREET-COMMAND: write a greeting for Ada into greeting.txt"),
        "{first}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("greeting.txt")).unwrap(),
        "hello Ada\n"
    );

    let calls = exchanges(&frames);
    let call = |name: &str, n: usize| calls.iter().filter(|c| c.name == name).nth(n).unwrap();
    // The hook blocked `rm` with its message and let `echo` through; it ran
    // with CLAUDE_PLUGIN_ROOT set to the plugin.
    let rm = call("Bash", 0);
    assert!(
        rm.result().is_error && rm.text().contains(HOOK_BLOCK),
        "{rm:?}"
    );
    assert!(
        ws.join("greeting.txt").exists(),
        "the blocked rm did not run"
    );
    assert!(!call("Bash", 1).result().is_error);
    assert!(ws.join("fine.txt").exists());
    let log = std::fs::read_to_string(ws.join(HOOK_LOG)).unwrap();
    assert_eq!(log.trim(), plugin.display().to_string());

    // The MCP tools are governed like any other: allowed by a rule, or
    // refused (no rule, no one to ask) without reaching the server.
    assert_eq!(
        call("mcp__plugin_kit_mini__hello", 0).text(),
        "hello from hello"
    );
    let fail = call("mcp__plugin_kit_mini__fail", 0);
    assert!(fail.result().is_error, "{fail:?}");
    assert!(!fail.text().contains("it failed"), "{}", fail.text());

    // The skill and the agent are the plugin's.
    assert!(
        call("Skill", 0)
            .text()
            .contains("STYLE-SKILL: short lines only.")
    );
    let sub = requests
        .iter()
        .find(|r| r.body["messages"].to_string().contains("SUBTASK"))
        .unwrap();
    assert!(content_text(&sub.body["system"]).contains("CHECKER-PROMPT"));
    assert!(call("Task", 0).text().contains("all checked"));

    // The ledger records the hook under the plugin's name, and the denial.
    let result = frames.last().unwrap();
    let session = result["session_id"].as_str().unwrap();
    let rows = ledger_rows(home.path(), session);
    let hook_runs: Vec<&Value> = rows
        .iter()
        .filter(|r| r.kind == "hook_execution")
        .map(|r| &r.payload)
        .collect();
    assert_eq!(hook_runs.len(), 2, "{hook_runs:#?}");
    let name = hook_runs[0]["hook_name"].as_str().unwrap();
    assert!(name.starts_with("plugin kit: sh "), "{name}");
    assert_eq!(hook_runs[0]["outcome"], "blocked");
    assert_eq!(hook_runs[1]["outcome"], "success");
    let denied: Vec<&str> = result["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["tool_name"].as_str().unwrap())
        .collect();
    assert_eq!(denied, ["Bash", "mcp__plugin_kit_mini__fail"]);
    let verify = tascer(home.path(), &ws)
        .args(["verify", session])
        .output()
        .unwrap();
    assert!(verify.status.success(), "{:?}", texts(&verify));
}

#[test]
fn plugin_dir_no_mcp_loads_the_plugin_without_its_servers_and_bad_hooks_are_named() {
    let home = tempfile::tempdir().unwrap();
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let plugins = tempfile::tempdir().unwrap();
    let plugin = write_plugin(plugins.path(), true);
    std::fs::write(
        plugin.join("hooks/hooks.json"),
        "{\"hooks\": {\"NoSuchEvent\": []}}",
    )
    .unwrap();
    let server = MockServer::start_blocking(Scenario::new().turn(Turn::text("ok"))).unwrap();
    let out = run(home.path(), &ws, &server)
        .arg("--plugin-dir-no-mcp")
        .arg(&plugin)
        .arg("/kit:greet Bob")
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let hooks_file = plugin.join("hooks/hooks.json").display().to_string();
    assert!(
        stderr.contains(&hooks_file) && stderr.contains("NoSuchEvent"),
        "{stderr}"
    );
    let frames = json_lines(&out.stdout);
    let init = frames.iter().find(|f| f["subtype"] == "init").unwrap();
    assert_eq!(init["plugins"][0]["name"], "kit");
    assert_eq!(init["plugin_errors"][0]["type"], "component-load-error");
    assert_eq!(init["mcp_servers"], json!([]), "{init:#}");
    let first = server.requests()[0].body["messages"][0]["content"].to_string();
    assert!(first.contains("write a greeting for Bob"), "{first}");
}
