//! `tascer run` writes a Claude Code–format transcript of the session in
//! the Tascer home (`projects/<project>/<session id>.jsonl`), and command
//! hooks get it as `transcript_path`, as under Claude Code: a PreToolUse
//! hook that reads it sees the prompt and the call being made.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

use common::{json_lines, texts};

/// A PreToolUse hook that copies the transcript it is given to
/// `seen.jsonl` in the working directory.
const HOOK: &str = "python3 -c 'import json,sys,shutil; \
    shutil.copy(json.load(sys.stdin)[\"transcript_path\"], \"seen.jsonl\")'";

#[tokio::test(flavor = "multi_thread")]
async fn hooks_read_the_sessions_transcript_in_claude_codes_format() {
    let server = MockServer::start(
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "echo hi"})))
            .turn(Turn::text("done")),
    )
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let ws_path = ws.path().canonicalize().unwrap();
    let settings = json!({
        "permissions": {"allow": ["Bash(echo:*)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": HOOK}]}]}
    })
    .to_string();
    let mut cmd = common::tascer(home.path(), &ws_path);
    cmd.env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args([
            "run",
            "--output-format",
            "stream-json",
            "--verbose",
            "--settings",
            &settings,
            "say hi in the shell",
        ]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let frames = json_lines(&out.stdout);
    let id = frames.iter().find(|f| f["type"] == "result").unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string();

    let lines = |text: &str| -> Vec<Value> {
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    // What the hook saw: the prompt, then the model's call to Bash.
    let seen = lines(&std::fs::read_to_string(ws_path.join("seen.jsonl")).unwrap());
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0]["type"], "user");
    assert_eq!(seen[0]["message"]["content"], "say hi in the shell");
    assert_eq!(seen[1]["type"], "assistant");
    assert_eq!(seen[1]["message"]["content"][0]["name"], "Bash");
    assert_eq!(seen[1]["parentUuid"], seen[0]["uuid"]);

    // The whole session, in the home, where Claude Code would put it.
    let project = tascer::guard::settings::claude_transcript_file(home.path(), &ws_path, &id);
    assert!(
        project.starts_with(home.path().join("projects")),
        "{}",
        project.display()
    );
    let all = lines(&std::fs::read_to_string(&project).unwrap());
    let kinds: Vec<&str> = all.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["user", "assistant", "user", "assistant"]);
    assert!(all.iter().all(|l| l["sessionId"] == id.as_str()));
    assert!(
        all.iter()
            .all(|l| l["cwd"] == ws_path.display().to_string())
    );
    for pair in all.windows(2) {
        assert_eq!(pair[1]["parentUuid"], pair[0]["uuid"]);
    }
}
