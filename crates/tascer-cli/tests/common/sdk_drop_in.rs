//! The drop-in cases (issue 26) both official SDKs run against `tascer`:
//! what code written for Claude Code expects of its CLI — the environment
//! block, Claude Code's settings files, AskUserQuestion answered through
//! `can_use_tool`, permission updates that last. tests/sdk_python.rs and
//! tests/sdk_typescript.rs call them with their SDK.

use std::process::Command;

use serde_json::{Value, json};
use tascer_testkit::{Scenario, Turn};

use super::sdk::{Sdk, Workspace, blocks, session_of, the_result};

/// The text of the system prompt of the mock's first request.
fn first_system_prompt(ws: &Workspace) -> String {
    let requests = ws.mock.requests();
    super::content_text(&requests[0].body["system"])
}

/// With the SDK's default options (no system prompt: the SDKs ask for an
/// empty one), the model is still told where it works; the scripted model
/// writes relative to the directory it was told, and the file lands in
/// the workspace. The workspace is a git repository on branch `drop-in`
/// whose `.claude/settings.local.json` allows `Write` (the default mode
/// would ask, and no one could answer).
pub fn environment_block(sdk: &Sdk) {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool(
                "Write",
                json!({
                    "file_path": "{{system:Working directory:}}/told.txt",
                    "content": "written where I was told\n",
                }),
            ))
            .turn(Turn::text("Done."))
    });
    let git = Command::new("git")
        .args(["init", "-q", "-b", "drop-in"])
        .current_dir(ws.dir())
        .status()
        .unwrap();
    assert!(git.success());
    std::fs::write(ws.dir().join("tracked.txt"), "x").unwrap();
    std::fs::create_dir_all(ws.dir().join(".claude")).unwrap();
    std::fs::write(
        ws.dir().join(".claude/settings.local.json"),
        json!({"permissions": {"allow": ["Write"]}}).to_string(),
    )
    .unwrap();

    let out = sdk.run(&ws, "default_options", &ws.config("write told.txt"));
    let messages = &out["messages"];

    assert_eq!(
        std::fs::read_to_string(ws.dir().join("told.txt")).unwrap(),
        "written where I was told\n",
        "the file lands in the working directory the model was told"
    );
    assert_eq!(the_result(messages)["subtype"], "success");
    let system = first_system_prompt(&ws);
    let date = Command::new("date").arg("+%F").output().unwrap();
    let today = String::from_utf8_lossy(&date.stdout).trim().to_string();
    for line in [
        format!("Working directory: {}", ws.dir().display()),
        "Is directory a git repo: Yes".to_string(),
        format!("Platform: {}", std::env::consts::OS),
        "OS Version: ".to_string(),
        format!("Today's date: {today}"),
        "You are powered by the model ".to_string(),
        "Current branch: drop-in".to_string(),
        "?? tracked.txt".to_string(),
    ] {
        assert!(system.contains(&line), "{line:?} missing from:\n{system}");
    }
    assert!(
        !system.contains("You are Tascer"),
        "the SDK's (empty) prompt replaces Tascer's instructions:\n{system}"
    );
    let tool_uses: Vec<&Value> = blocks(messages, "assistant")
        .into_iter()
        .filter(|b| b["type"] == "tool_use")
        .collect();
    assert_eq!(
        tool_uses[0]["input"]["file_path"],
        ws.dir().join("told.txt").display().to_string()
    );
    ws.verify(&session_of(messages));
}

/// Claude Code's `.claude/settings.json` is read with the SDK's default
/// options: its deny rule stops a Read that every mode would allow, and a
/// setting Tascer cannot honour is a warning on standard error.
pub fn claude_settings_deny(sdk: &Sdk) {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool(
                "Read",
                json!({"file_path": "{{system:Working directory:}}/secret.txt"}),
            ))
            .turn(Turn::text("I may not read it."))
    });
    std::fs::write(ws.dir().join("secret.txt"), "TOP-SECRET\n").unwrap();
    std::fs::create_dir_all(ws.dir().join(".claude")).unwrap();
    std::fs::write(
        ws.dir().join(".claude/settings.json"),
        json!({
            "permissions": {"deny": ["Read(./secret.txt)"]},
            "statusLine": {"type": "command", "command": "echo hi"},
        })
        .to_string(),
    )
    .unwrap();

    let out = sdk.run(&ws, "default_options", &ws.config("read the secret"));
    let messages = &out["messages"];

    let sent = ws.tool_results_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].1, "the Read is refused: {sent:?}");
    assert!(
        sent[0].0.contains("Read(./secret.txt)") && !sent[0].0.contains("TOP-SECRET"),
        "the model learns the deny rule, not the secret: {sent:?}"
    );
    let result = the_result(messages);
    assert_eq!(result["permission_denials"][0]["tool_name"], "Read");

    let session = session_of(messages);
    let decisions = ws.ledger(&session, "permission_decision");
    assert_eq!(decisions.len(), 1, "{decisions:#?}");
    assert_eq!(decisions[0]["behavior"], "deny");
    assert_eq!(decisions[0]["decided_by"]["type"], "rule", "{decisions:#?}");
    assert!(
        decisions[0].to_string().contains(".claude/settings.json"),
        "the decision names the file: {decisions:#?}"
    );
    let stderr: Vec<&str> = out["stderr"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        stderr
            .iter()
            .any(|l| l.contains(".claude/settings.json: statusLine is not honoured by Tascer")),
        "an unhonoured setting is a warning: {stderr:#?}"
    );
    ws.verify(&session);
}

/// The question the scripted model asks.
fn color_question() -> Value {
    json!({"questions": [{
        "question": "Which color should the button be?",
        "header": "Color",
        "multiSelect": false,
        "options": [
            {"label": "Red", "description": "Warm"},
            {"label": "Blue", "description": "Calm"},
        ],
    }]})
}

/// AskUserQuestion answered by `can_use_tool` (the answers in the updated
/// input, as Claude Code takes them) reaches the model as the user's
/// answer; without a callback it is refused with a message that says why
/// and what to do.
pub fn ask_user_question(sdk: &Sdk) {
    let scenario = || {
        Scenario::new()
            .turn(Turn::new().with_tool_id("toolu_ask", "AskUserQuestion", color_question()))
            .turn(Turn::text("Going with it."))
    };
    let ws = Workspace::new(|_| scenario());
    let out = sdk.run(&ws, "ask_user_question", &ws.config("style the button"));
    let asked = out["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert_eq!(asked[0]["tool_name"], "AskUserQuestion");
    assert_eq!(asked[0]["input"], color_question());
    let sent = ws.tool_results_sent();
    assert_eq!(
        sent,
        [(
            "User has answered your questions: \"Which color should the button be?\"=\"Blue\". \
             You can now continue with the user's answers in mind."
                .to_string(),
            false
        )]
    );
    let messages = &out["messages"];
    assert_eq!(the_result(messages)["subtype"], "success");
    let session = session_of(messages);
    let decisions = ws.ledger(&session, "permission_decision");
    assert_eq!(decisions.len(), 1, "{decisions:#?}");
    assert_eq!(decisions[0]["decided_by"]["type"], "callback");
    assert_eq!(
        decisions[0]["updated_input"]["answers"]["Which color should the button be?"],
        "Blue"
    );
    ws.verify(&session);

    // Headless, no callback: refused, and the model is told what to do.
    let ws = Workspace::new(|_| scenario());
    let out = sdk.run(&ws, "default_options", &ws.config("style the button"));
    let sent = ws.tool_results_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].1, "refused: {sent:?}");
    assert!(
        sent[0]
            .0
            .contains("no one can answer questions in this session")
            && sent[0].0.contains("Continue without asking"),
        "{sent:?}"
    );
    assert_eq!(
        the_result(&out["messages"])["permission_denials"][0]["tool_name"],
        "AskUserQuestion"
    );
}

/// "Always allow": `can_use_tool` allows the first `touch` with an
/// `addRules` update to `localSettings`. The second `touch` of the session
/// and the one of the next session (a second process) are not asked, and
/// the rule is in `.claude/settings.local.json`.
pub fn always_allow(sdk: &Sdk) {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "touch a.txt"})))
            .turn(Turn::tool("Bash", json!({"command": "touch b.txt"})))
            .turn(Turn::text("Both touched."))
            .conversation(
                "the next session",
                vec![
                    Turn::tool("Bash", json!({"command": "touch c.txt"})),
                    Turn::text("Touched again."),
                ],
            )
    });
    let mut config = ws.config("touch two files");
    config["second_prompt"] = json!("the next session: touch one more");
    let out = sdk.run(&ws, "always_allow", &config);

    let asked = out["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "asked only the first time: {asked:#?}");
    assert_eq!(asked[0]["input"]["command"], "touch a.txt");
    // The suggestions reach the callback as the SDK's own PermissionUpdate
    // values, Claude Code's shape: allow rules for the local settings.
    let suggestion = &asked[0]["suggestions"][0];
    assert_eq!(suggestion["type"], "addRules", "{asked:#?}");
    assert_eq!(suggestion["behavior"], "allow");
    assert_eq!(suggestion["destination"], "localSettings");
    assert_eq!(suggestion["rules"][0]["toolName"], "Bash");
    for file in ["a.txt", "b.txt", "c.txt"] {
        assert!(ws.dir().join(file).exists(), "{file} was touched");
    }
    let local: Value = serde_json::from_str(
        &std::fs::read_to_string(ws.dir().join(".claude/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(local, json!({"permissions": {"allow": ["Bash(touch:*)"]}}));

    let first = session_of(&out["first"]);
    let decisions = ws.ledger(&first, "permission_decision");
    assert_eq!(decisions.len(), 2, "{decisions:#?}");
    assert_eq!(decisions[0]["decided_by"]["type"], "callback");
    assert!(
        decisions[0]["reason"]
            .as_str()
            .unwrap()
            .contains("added allow rule(s) Bash(touch:*) (localSettings)"),
        "{decisions:#?}"
    );
    assert_eq!(decisions[1]["decided_by"]["type"], "rule", "{decisions:#?}");
    assert_eq!(decisions[1]["behavior"], "allow");

    let second = session_of(&out["second"]);
    assert_ne!(first, second, "a new session");
    assert_eq!(the_result(&out["second"])["result"], "Touched again.");
    let decisions = ws.ledger(&second, "permission_decision");
    assert_eq!(decisions.len(), 1, "{decisions:#?}");
    assert_eq!(decisions[0]["decided_by"]["type"], "rule", "{decisions:#?}");
    assert!(
        decisions[0].to_string().contains("settings.local.json"),
        "the rule comes from the file: {decisions:#?}"
    );
    ws.verify(&first);
    ws.verify(&second);
}
