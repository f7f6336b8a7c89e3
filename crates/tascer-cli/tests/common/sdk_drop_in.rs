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

/// With the SDK's default system prompt (none: the SDKs ask for an empty
/// one), the model is still told where it works; the scripted model
/// writes relative to the directory it was told, and the file lands in
/// the workspace. The workspace is a git repository on branch `drop-in`.
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

    let out = sdk.run(&ws, "query_tools", &ws.config("write told.txt"));
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
