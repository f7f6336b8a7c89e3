//! `tascer run --resume ID --resume-session-at UUID`: the resumed
//! conversation is cut after that message and goes on in a new session
//! forked there (the original keeps its whole history, both ledgers
//! verify); `--resume-drops-turn` refuses a cut that would drop more than
//! the turn it names, and the bad combinations are precise errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Output;

use tascer_testkit::{MockServer, Scenario, Turn};

use common::{json_lines, ledger_rows, run_cmd, texts};

/// The `(uuid, kind)` of a session's stored user and assistant messages,
/// in order.
fn messages(home: &Path, session: &str) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open(home.join("tascer.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT uuid, kind FROM messages WHERE session_id = ?1
             AND kind IN ('user', 'assistant') ORDER BY seq",
        )
        .unwrap();
    stmt.query_map([session], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The session id of a run's result frame.
fn session_of(out: &Output) -> String {
    let (stdout, stderr) = texts(out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let frames = json_lines(&out.stdout);
    frames.last().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn resume_session_at_cuts_the_history_in_a_fork_and_drops_turn_is_checked() {
    let home = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let scenario = Scenario::new()
        .turn(Turn::text("FIRST-ANSWER"))
        .turn(Turn::text("SECOND-ANSWER"))
        .turn(Turn::text("THIRD-ANSWER"));
    let server = MockServer::start_blocking(scenario).unwrap();
    let run = |prompt: &str, extra: &[&str]| {
        run_cmd(home.path(), ws.path(), &server.url(), prompt, extra)
            .output()
            .unwrap()
    };
    let original = session_of(&run("FIRST-PROMPT", &[]));
    session_of(&run("SECOND-PROMPT", &["--resume", &original]));
    let stored = messages(home.path(), &original);
    let kinds: Vec<&str> = stored.iter().map(|(_, k)| k.as_str()).collect();
    assert_eq!(
        kinds,
        ["user", "assistant", "user", "assistant"],
        "{stored:?}"
    );
    let first_answer = stored[1].0.clone();
    let (first_prompt, second_prompt) = (stored[0].0.clone(), stored[2].0.clone());

    // A cut that would drop another turn than the one named is refused
    // before any model call; so is an unknown message.
    let requests_before = server.requests().len();
    let cut = |drops_turn: &str| {
        let args = [
            "--resume",
            &original,
            "--resume-session-at",
            &first_answer,
            "--resume-drops-turn",
            drops_turn,
        ];
        run("THIRD-PROMPT", &args)
    };
    let refused = cut(&first_prompt);
    let (_, stderr) = texts(&refused);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("Resume rejected by --resume-drops-turn:")
            && stderr.contains(&second_prompt),
        "{stderr}"
    );
    let unknown = run(
        "THIRD-PROMPT",
        &[
            "--resume",
            &original,
            "--resume-session-at",
            "no-such-message",
        ],
    );
    let (_, stderr) = texts(&unknown);
    assert!(!unknown.status.success());
    assert!(
        stderr.contains("No message found with message.uuid of: no-such-message"),
        "{stderr}"
    );
    let alone = run("THIRD-PROMPT", &["--resume-session-at", &first_answer]);
    let (_, stderr) = texts(&alone);
    assert!(!alone.status.success());
    assert!(
        stderr.contains("--resume-session-at needs --resume or --continue"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), requests_before);

    // The cut: the model gets the first exchange and the new prompt only.
    let forked = session_of(&cut(&second_prompt));
    assert_ne!(forked, original);
    let last = server.requests().last().unwrap().body["messages"].to_string();
    assert!(
        last.contains("FIRST-ANSWER") && last.contains("THIRD-PROMPT"),
        "{last}"
    );
    assert!(
        !last.contains("SECOND-PROMPT") && !last.contains("SECOND-ANSWER"),
        "{last}"
    );
    assert_eq!(
        messages(home.path(), &original).len(),
        4,
        "the original is whole"
    );
    let copied = messages(home.path(), &forked);
    assert_eq!(copied.len(), 4, "two copied, two new: {copied:?}");
    assert_eq!(copied[1].0, first_answer);

    let start = ledger_rows(home.path(), &forked)
        .into_iter()
        .find(|r| r.kind == "session_start")
        .unwrap();
    assert_eq!(
        start.payload["context"]["resumed_at"]["session_id"],
        original.as_str()
    );
    assert_eq!(
        start.payload["context"]["resumed_at"]["message_uuid"],
        first_answer.as_str()
    );
    for session in [&original, &forked] {
        let out = common::tascer(home.path(), ws.path())
            .args(["verify", session])
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}", texts(&out));
    }
}
