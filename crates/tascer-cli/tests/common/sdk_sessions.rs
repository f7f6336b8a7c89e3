//! The official SDKs' session helpers on sessions Tascer ran: they read
//! and edit Claude Code's transcripts (`$CLAUDE_CONFIG_DIR/projects/…`),
//! which Tascer writes in SDK mode (issue 26).

use serde_json::{Value, json};
use tascer_testkit::{Scenario, Turn};

use super::sdk::{Sdk, Workspace};

/// A session that writes a file, listed, read, renamed and deleted with
/// the SDK's `list_sessions`, `get_session_messages`, `rename_session`
/// and `delete_session`.
pub fn session_helpers(sdk: &Sdk) {
    let ws = Workspace::new(|dir| {
        let file = dir.join("notes.txt").display().to_string();
        Scenario::new()
            .turn(Turn::tool(
                "Write",
                json!({"file_path": file, "content": "kept\n"}),
            ))
            .turn(Turn::text("Written."))
    });
    let out = sdk.run(&ws, "session_helpers", &ws.config("write the notes please"));
    let id = out["session_id"].as_str().unwrap();

    let listed = out["listed"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["session_id"], id);
    assert_eq!(listed[0]["first_prompt"], "write the notes please");
    assert_eq!(listed[0]["summary"], "write the notes please");
    assert_eq!(listed[0]["cwd"], ws.dir().display().to_string());

    // The conversation in order: prompt, tool call, tool result, answer.
    let read = out["read"].as_array().unwrap();
    let kinds: Vec<&str> = read.iter().map(|m| m["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["user", "assistant", "user", "assistant"],
        "{read:?}"
    );
    assert!(read.iter().all(|m| m["session_id"] == id));
    assert_eq!(read[0]["message"]["content"], "write the notes please");
    let call = &read[1]["message"]["content"][0];
    assert_eq!(
        (call["type"].as_str(), call["name"].as_str()),
        (Some("tool_use"), Some("Write"))
    );
    let result = &read[2]["message"]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], call["id"]);
    assert_eq!(read[3]["message"]["content"][0]["text"], "Written.");

    let renamed = out["renamed"].as_array().unwrap();
    assert_eq!(renamed[0]["custom_title"], "Renamed by the SDK");
    assert_eq!(renamed[0]["summary"], "Renamed by the SDK");
    assert_eq!(out["after_delete"], Value::Array(Vec::new()));

    // Deleting the transcript does not delete the stored session: the
    // ledger still verifies.
    ws.verify(id);
}
