//! `rewind_files` through an official SDK (`enable_file_checkpointing`):
//! the scripted model edits a file that was there and writes new ones
//! across two prompts; rewinding to a prompt puts every file back as it
//! was when that prompt was sent, and a file changed by hand since is
//! never overwritten.

use std::path::Path;

use serde_json::{Value, json};
use tascer_testkit::{Scenario, Turn};

use super::sdk::{Sdk, Workspace, session_of};

/// Two prompts: the first edits `keep.txt` (`original` → `first`) and
/// writes `made1.txt`; the second edits `keep.txt` again (→ `second`) and
/// writes `made2.txt`.
fn two_prompts(dir: &Path) -> Scenario {
    let file = |name: &str| dir.join(name).display().to_string();
    let edit = |old: &str, new: &str| {
        Turn::tool(
            "Edit",
            json!({"file_path": file("keep.txt"), "old_string": old, "new_string": new}),
        )
    };
    Scenario::new()
        .turn(Turn::tool("Read", json!({"file_path": file("keep.txt")})))
        .turn(edit("original", "first"))
        .turn(Turn::tool(
            "Write",
            json!({"file_path": file("made1.txt"), "content": "one\n"}),
        ))
        .turn(Turn::text("first changes done"))
        .turn(Turn::tool("Read", json!({"file_path": file("keep.txt")})))
        .turn(edit("first", "second"))
        .turn(Turn::tool(
            "Write",
            json!({"file_path": file("made2.txt"), "content": "two\n"}),
        ))
        .turn(Turn::text("second changes done"))
}

/// The workspace with `keep.txt` and the case's config.
fn workspace(rewinds: Value, hand_edit: Option<(&str, &str)>) -> (Workspace, Value) {
    let ws = Workspace::new(two_prompts);
    std::fs::write(ws.dir().join("keep.txt"), "original\n").unwrap();
    let path = |name: &str| ws.dir().join(name).display().to_string();
    let mut config = ws.config("unused");
    config["prompts"] = json!(["make the first changes", "make the second changes"]);
    config["watch"] = json!([path("keep.txt"), path("made1.txt"), path("made2.txt")]);
    config["rewinds"] = rewinds;
    if let Some((name, text)) = hand_edit {
        config["hand_edit"] = json!([path(name), text]);
    }
    (ws, config)
}

/// The watched files after one rewind: `[keep, made1, made2]`.
fn files(rewind: &Value) -> Vec<Value> {
    let files = rewind["files"].as_object().unwrap();
    ["keep.txt", "made1.txt", "made2.txt"]
        .iter()
        .map(|name| {
            files
                .iter()
                .find(|(path, _)| path.ends_with(&format!("/{name}")))
                .map(|(_, v)| v.clone())
                .unwrap()
        })
        .collect()
}

/// The rewinds `[1, 0]` of the two prompts: the first undid only the
/// second prompt's changes, the second every change.
fn assert_second_then_first_rewound(out: &Value) {
    let rewinds = out["rewinds"].as_array().unwrap();
    assert_eq!(rewinds[0]["ok"], true, "{:#}", rewinds[0]);
    assert_eq!(
        files(&rewinds[0]),
        [json!("first\n"), json!("one\n"), Value::Null]
    );
    assert_eq!(rewinds[1]["ok"], true, "{:#}", rewinds[1]);
    assert_eq!(
        files(&rewinds[1]),
        [json!("original\n"), Value::Null, Value::Null],
        "the edited file has its old content, the created ones are gone"
    );
}

/// Rewinding to the second prompt undoes only its changes; then to the
/// first, every change; both are in the ledger, which verifies.
pub fn rewind_restores_files(sdk: &Sdk) {
    let (ws, config) = workspace(json!([1, 0]), None);
    let out = sdk.run(&ws, "rewind", &config);
    let ids = out["prompt_ids"].as_array().unwrap();
    assert_eq!(ids.len(), 2, "the SDK got both prompts' uuids: {out:#}");
    assert_second_then_first_rewound(&out);

    let session = session_of(&out["turns"][0]);
    let recorded = rewinds_recorded(&ws, &session);
    assert_eq!(recorded.len(), 2, "{recorded:#?}");
    assert_eq!(recorded[1]["user_message_id"], ids[0]);
    let actions: Vec<(String, String)> = recorded[1]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap();
            let name = path.rsplit('/').next().unwrap().to_string();
            (name, f["action"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("keep.txt".to_string(), "restored".to_string()),
            ("made1.txt".to_string(), "removed".to_string()),
        ]
    );
    ws.verify(&session);
}

/// An unknown id is refused; a file changed by hand since the session
/// wrote it is refused by name, and nothing is restored.
pub fn rewind_refuses_a_file_changed_by_hand(sdk: &Sdk) {
    let (ws, config) = workspace(json!(["not-a-message", 0]), Some(("made1.txt", "mine\n")));
    let out = sdk.run(&ws, "rewind", &config);
    let rewinds = out["rewinds"].as_array().unwrap();
    let unknown = rewinds[0]["error"].as_str().unwrap();
    assert!(
        unknown.contains("No file checkpoint found for this message"),
        "{unknown}"
    );
    let refused = rewinds[1]["error"].as_str().unwrap();
    assert!(
        refused.contains("changed outside the session") && refused.contains("made1.txt"),
        "{refused}"
    );
    assert!(!refused.contains("keep.txt"), "{refused}");
    assert_eq!(
        files(&rewinds[1]),
        [json!("second\n"), json!("mine\n"), json!("two\n")],
        "nothing was restored"
    );
    ws.verify(&session_of(&out["turns"][0]));
}

/// The `rewind_files` checkpoint entries of a session's ledger.
fn rewinds_recorded(ws: &Workspace, session: &str) -> Vec<Value> {
    ws.ledger(session, "checkpoint")
        .into_iter()
        .filter(|p| p["event"] == "rewind_files")
        .collect()
}

/// The file names of a rewind answer's `filesChanged`, sorted.
fn changed_names(answer: &Value) -> Vec<String> {
    let mut names: Vec<String> = answer["filesChanged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().rsplit('/').next().unwrap().to_string())
        .collect();
    names.sort();
    names
}

/// `rewindFiles(id, {dryRun: true})` answers what a rewind would change
/// and changes nothing (nor the ledger); the same rewind without it then
/// restores every file.
pub fn dry_run_then_rewind(sdk: &Sdk) {
    let (ws, config) = workspace(
        json!([{"target": 0, "dryRun": true}, {"target": 0, "dryRun": false}]),
        None,
    );
    let out = sdk.run(&ws, "rewind", &config);
    let rewinds = out["rewinds"].as_array().unwrap();
    let dry = &rewinds[0]["answer"];
    assert_eq!(dry["canRewind"], true, "{:#}", rewinds[0]);
    assert_eq!(changed_names(dry), ["keep.txt", "made1.txt", "made2.txt"]);
    assert_eq!(
        (dry["insertions"].as_u64(), dry["deletions"].as_u64()),
        (Some(1), Some(3))
    );
    assert_eq!(
        files(&rewinds[0]),
        [json!("second\n"), json!("one\n"), json!("two\n")],
        "a dry run changes no file"
    );
    let real = &rewinds[1]["answer"];
    assert_eq!(real["canRewind"], true, "{:#}", rewinds[1]);
    assert_eq!(changed_names(real), changed_names(dry));
    assert_eq!(
        files(&rewinds[1]),
        [json!("original\n"), Value::Null, Value::Null]
    );
    let session = session_of(&out["turns"][0]);
    let recorded = rewinds_recorded(&ws, &session).len();
    assert_eq!(recorded, 1, "only the real rewind is recorded");
    ws.verify(&session);
}

/// A dry run over a file changed by hand answers `canRewind: false`
/// naming it, and changes nothing.
pub fn dry_run_refuses_a_file_changed_by_hand(sdk: &Sdk) {
    let (ws, config) = workspace(
        json!([{"target": 0, "dryRun": true}]),
        Some(("made2.txt", "mine\n")),
    );
    let out = sdk.run(&ws, "rewind", &config);
    let rewind = &out["rewinds"][0];
    assert_eq!(rewind["answer"]["canRewind"], false, "{rewind:#}");
    let error = rewind["answer"]["error"].as_str().unwrap();
    assert!(
        error.contains("changed outside the session") && error.contains("made2.txt"),
        "{error}"
    );
    assert_eq!(
        files(rewind),
        [json!("second\n"), json!("one\n"), json!("mine\n")]
    );
    ws.verify(&session_of(&out["turns"][0]));
}

/// After `fork_session`, the fork finds the parent's file checkpoints:
/// rewinding to the parent's prompts in the fork restores the files, and
/// the rewind is recorded in the fork's ledger, not the parent's.
pub fn rewind_in_a_fork(sdk: &Sdk) {
    let (ws, mut config) = workspace(json!([1, 0]), None);
    config["fork"] = json!(true);
    let out = sdk.run(&ws, "rewind", &config);
    assert_second_then_first_rewound(&out);
    let parent = session_of(&out["turns"][0]);
    let fork = out["fork_id"].as_str().unwrap().to_string();
    assert_ne!(fork, parent);
    let rewinds_in = |session: &str| rewinds_recorded(&ws, session).len();
    assert_eq!(rewinds_in(&fork), 2);
    assert_eq!(rewinds_in(&parent), 0);
    ws.verify(&parent);
    ws.verify(&fork);
}
