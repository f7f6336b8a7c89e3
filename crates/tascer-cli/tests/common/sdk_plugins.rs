//! Issue 26's plugin and resume cases both official SDKs run against
//! `tascer`: the SDK's `plugins` option loads a plugin whose command
//! expands and whose hook blocks a call (recorded under the plugin's
//! name); `resume_session_at` continues a session from an earlier answer.

use serde_json::{Value, json};
use tascer_testkit::{Scenario, Turn};

use super::plugin_fixture::{HOOK_BLOCK, HOOK_LOG, write_plugin};
use super::sdk::{Sdk, Workspace, of_type, session_of};

/// The SDK's `plugins` option (with `delivery`, the TS SDK's
/// `pluginDelivery`): the plugin is listed in `system/init` with its
/// command, `/kit:greet Ada` expands to the command's prompt, and the
/// plugin's PreToolUse hook blocks `rm` (the model gets its message, the
/// file stays) and lets `echo` through, with `CLAUDE_PLUGIN_ROOT` set.
pub fn plugin_command_and_hook(sdk: &Sdk, delivery: Option<&str>) {
    let plugins = tempfile::tempdir().unwrap();
    let plugin = write_plugin(plugins.path(), false);
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "rm -f keep.txt"})))
            .turn(Turn::tool("Bash", json!({"command": "echo ok > ok.txt"})))
            .turn(Turn::text("greeted"))
    });
    std::fs::write(ws.dir().join("keep.txt"), "keep\n").unwrap();
    let mut config = ws.config("/kit:greet Ada");
    config["plugin"] = json!(plugin);
    if let Some(delivery) = delivery {
        config["plugin_delivery"] = json!(delivery);
    }
    let out = sdk.run(&ws, "plugins", &config);
    let messages = &out["messages"];

    let init = of_type(messages, "system")
        .into_iter()
        .find(|m| m["subtype"] == "init")
        .unwrap_or_else(|| panic!("no init: {messages:#}"));
    assert_eq!(init["plugins"][0]["name"], "kit", "{init:#}");
    assert_eq!(init["plugins"][0]["path"], plugin.display().to_string());
    let commands = init["slash_commands"].as_array().unwrap();
    assert!(commands.iter().any(|c| c == "kit:greet"), "{init:#}");

    let first = ws.mock.requests()[0].body["messages"][0]["content"].to_string();
    assert!(
        first.contains("GREET-COMMAND: write a greeting for Ada into greeting.txt"),
        "the command expanded: {first}"
    );
    let sent = ws.tool_results_sent();
    assert!(
        sent.iter()
            .any(|(text, error)| *error && text.contains(HOOK_BLOCK)),
        "the hook's block reached the model: {sent:?}"
    );
    assert!(ws.dir().join("keep.txt").exists(), "the blocked rm ran");
    assert!(
        ws.dir().join("ok.txt").exists(),
        "the allowed echo did not run"
    );
    let log = std::fs::read_to_string(ws.dir().join(HOOK_LOG)).unwrap();
    assert_eq!(log.trim(), plugin.display().to_string());

    let session = session_of(messages);
    let runs = ws.ledger(&session, "hook_execution");
    let names: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| {
            (
                r["hook_name"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(names.len(), 2, "{runs:#?}");
    assert!(
        names.iter().all(|(n, _)| n.starts_with("plugin kit: ")),
        "{names:?}"
    );
    assert_eq!([names[0].1, names[1].1], ["blocked", "success"]);
    ws.verify(&session);
}

/// `resume_session_at` the first answer of a two-prompt session: the
/// model gets the conversation up to that answer (not the second prompt),
/// in a new session forked there whose ledger names the point; the
/// original keeps its whole history. An unknown uuid is Claude Code's
/// error.
pub fn resume_session_at(sdk: &Sdk) {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::text("FIRST-ANSWER"))
            .turn(Turn::text("SECOND-ANSWER"))
            .turn(Turn::text("THIRD-ANSWER"))
    });
    let mut config = ws.config("FIRST-PROMPT");
    config["second_prompt"] = json!("SECOND-PROMPT");
    config["third_prompt"] = json!("THIRD-PROMPT");
    let out = sdk.run(&ws, "resume_at", &config);
    assert!(out["error"].is_null(), "{out:#}");
    let original = out["session_id"].as_str().unwrap();
    let forked = session_of(&out["third"]);
    assert_ne!(forked, original, "the cut continues in a new session");

    let requests = ws.mock.requests();
    let last = requests.last().unwrap().body["messages"].to_string();
    assert!(
        last.contains("FIRST-PROMPT") && last.contains("FIRST-ANSWER"),
        "{last}"
    );
    assert!(last.contains("THIRD-PROMPT"), "{last}");
    assert!(
        !last.contains("SECOND-PROMPT") && !last.contains("SECOND-ANSWER"),
        "the history is cut after the first answer: {last}"
    );
    let start = &ws.ledger(&forked, "session_start")[0];
    assert_eq!(
        start["context"]["resumed_at"],
        json!({"session_id": original, "message_uuid": out["at"]})
    );
    ws.verify(&forked);
    ws.verify(original);

    let ws = Workspace::new(|_| Scenario::new().turn(Turn::text("A")).turn(Turn::text("B")));
    let mut config = ws.config("FIRST-PROMPT");
    config["second_prompt"] = json!("SECOND-PROMPT");
    config["third_prompt"] = json!("THIRD-PROMPT");
    config["at"] = json!("00000000-0000-4000-8000-000000000000");
    let out = sdk.run(&ws, "resume_at", &config);
    let error = match &out["error"] {
        Value::String(e) => e.clone(),
        other => panic!("an unknown message must fail: {other} {out:#}"),
    };
    let stderr = out["stderr"].to_string();
    assert!(
        format!("{error}{stderr}").contains(
            "No message found with message.uuid of: 00000000-0000-4000-8000-000000000000"
        ),
        "{error}\n{stderr}"
    );
}
