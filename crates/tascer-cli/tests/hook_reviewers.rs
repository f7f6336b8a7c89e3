//! The safety chain under `tascer hook`: each event is a new process of
//! the built binary, the reviewers ask the mock model through the provider
//! of the hook's environment (as Claude Code passes its own), and every
//! verdict lands in the Claude Code session's ledger.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Route, Scenario, reviewer_verdict};

use common::{report_json, run_with_stdin, tascer, texts};

/// One Claude Code session: its home, project, transcript and the mock.
struct Session {
    id: &'static str,
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    user_home: tempfile::TempDir,
    transcript: std::path::PathBuf,
    server_url: String,
    /// `TASCER_STORE` for every command (none: the home's SQLite file).
    store: Option<String>,
}

impl Session {
    fn new(id: &'static str, server: &MockServer, safety: Value, request: &str) -> Self {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let user_home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(work.path().join(".tascer")).unwrap();
        std::fs::write(
            work.path().join(".tascer/settings.json"),
            json!({ "safety": safety }).to_string(),
        )
        .unwrap();
        let transcript = work.path().join("transcript.jsonl");
        let line = json!({"type": "user", "message": {"role": "user", "content": request}});
        std::fs::write(&transcript, format!("{line}\n")).unwrap();
        let keys = tascer(home.path(), work.path())
            .args(["keys", "generate"])
            .output()
            .unwrap();
        assert!(keys.status.success(), "{keys:?}");
        Session {
            id,
            home,
            work,
            user_home,
            transcript,
            server_url: server.url(),
            store: None,
        }
    }

    /// Runs every command on this store (`TASCER_STORE`).
    fn on_store(mut self, url: String) -> Self {
        self.store = Some(url);
        self
    }

    /// Replaces the project's settings file.
    fn settings(&self, settings: Value) {
        std::fs::write(
            self.cwd().join(".tascer/settings.json"),
            settings.to_string(),
        )
        .unwrap();
    }

    /// `tascer` in this session's home and project, on its store.
    fn tascer(&self) -> Command {
        self.tascer_in(self.cwd())
    }

    /// `tascer` in this session's home, run in `dir`, on its store.
    fn tascer_in(&self, dir: &Path) -> Command {
        let mut cmd = tascer(self.home.path(), dir);
        if let Some(url) = &self.store {
            cmd.env("TASCER_STORE", url);
        }
        cmd
    }

    fn cwd(&self) -> &Path {
        self.work.path()
    }

    /// Runs `tascer hook` with the event on standard input.
    fn hook(&self, name: &str, extra: Value) -> Output {
        self.hook_in(self.cwd(), name, extra)
    }

    /// Runs `tascer hook` in `dir` (the event's `cwd` too).
    fn hook_in(&self, dir: &Path, name: &str, extra: Value) -> Output {
        let mut event = json!({
            "hook_event_name": name,
            "session_id": self.id,
            "transcript_path": self.transcript.display().to_string(),
            "cwd": dir.display().to_string(),
            "permission_mode": "default",
        });
        for (k, v) in extra.as_object().unwrap() {
            event[k] = v.clone();
        }
        let mut cmd = self.tascer_in(dir);
        cmd.arg("hook")
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", &self.server_url)
            .env("HOME", self.user_home.path());
        run_with_stdin(cmd, &event.to_string())
    }

    fn pre(&self, id: &str, tool: &str, input: Value) -> Option<Value> {
        let out = self.hook(
            "PreToolUse",
            json!({"tool_name": tool, "tool_input": input, "tool_use_id": id}),
        );
        assert_eq!(out.status.code(), Some(0), "{:?}", texts(&out));
        answer(&out)
    }

    fn verify(&self) {
        let out = self.tascer().args(["verify", self.id]).output().unwrap();
        assert!(out.status.success(), "{:?}", texts(&out));
    }
}

fn answer(out: &Output) -> Option<Value> {
    let text = String::from_utf8_lossy(&out.stdout);
    let text = text.trim();
    (!text.is_empty()).then(|| serde_json::from_str(text).unwrap())
}

fn decision(answer: &Option<Value>) -> (String, String) {
    let specific = &answer.as_ref().expect("a decision")["hookSpecificOutput"];
    (
        specific["permissionDecision"].as_str().unwrap().to_string(),
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string(),
    )
}

#[test]
fn reviewers_and_auto_approve_answer_for_the_user_and_the_cache_spans_processes() {
    let server = MockServer::start_blocking(
        Scenario::new()
            .route(Route::reviewer(
                "tool-approve",
                "git push",
                reviewer_verdict("deny", "pushes to main"),
            ))
            .route(Route::reviewer(
                "tool-appeal",
                "git push",
                reviewer_verdict("deny", "the user did not ask"),
            ))
            .route(Route::reviewer(
                "tool-approve",
                "make build",
                reviewer_verdict("allow", "builds the project"),
            )),
    )
    .unwrap();
    let session = Session::new(
        "6a1b2c3d-0000-4e5f-8a9b-reviewers0001",
        &server,
        json!({
            "autoApprove": {},
            "pathClasses": {},
            "reviewers": {"toolApprove": {}, "toolAppeal": {}},
        }),
        "build the project",
    );

    let (d, reason) = decision(&session.pre("t1", "Bash", json!({"command": "make build"})));
    assert_eq!(d, "allow");
    assert!(
        reason.contains("tool-approve reviewer: builds the project"),
        "{reason}"
    );
    // A new process asks the same question: the store's cache answers.
    let (d, _) = decision(&session.pre("t2", "Bash", json!({"command": "make build"})));
    assert_eq!(d, "allow");
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "tool-approve"),
        1
    );

    let (d, reason) =
        decision(&session.pre("t3", "Bash", json!({"command": "git push origin main"})));
    assert_eq!(d, "deny");
    assert!(
        reason.contains("tool-appeal reviewer: the user did not ask"),
        "{reason}"
    );

    // Low-risk auto-approve: a read in the trusted ~/.claude is allowed
    // without a reviewer; a sensitive file is refused, even in the project.
    let claude = session.user_home.path().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::write(claude.join("CLAUDE.md"), "notes").unwrap();
    let (d, reason) =
        decision(&session.pre("t4", "Read", json!({"file_path": claude.join("CLAUDE.md")})));
    assert_eq!(d, "allow", "{reason}");
    let (d, reason) = decision(&session.pre(
        "t5",
        "Read",
        json!({"file_path": session.cwd().join(".env")}),
    ));
    assert_eq!(d, "deny");
    assert!(reason.contains("sensitive pattern"), "{reason}");
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "tool-approve"),
        2
    );

    session.verify();
    let report = report_json(session.home.path(), session.cwd(), session.id);
    let reviews: Vec<(String, bool)> = report["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                format!(
                    "{} {}",
                    r["reviewer"].as_str().unwrap(),
                    r["verdict"].as_str().unwrap()
                ),
                r["cache_hit"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        reviews,
        [
            ("tool-approve allow".to_string(), false),
            ("tool-approve allow".to_string(), true),
            ("tool-approve deny".to_string(), false),
            ("tool-appeal deny".to_string(), false),
        ]
    );
    let text = tascer(session.home.path(), session.cwd())
        .args(["report", session.id])
        .output()
        .unwrap();
    let (stdout, _) = texts(&text);
    assert!(
        stdout.contains("reviewers   tool-approve deny (decided"),
        "{stdout}"
    );
    assert!(stdout.contains("→ tool-appeal deny"), "{stdout}");
    // Each reviewer model call is measured (the cached verdict made none).
    let calls: Vec<&str> = report["audit"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "reviewer_call")
        .map(|m| m["data"].as_str().unwrap())
        .collect();
    assert_eq!(
        calls,
        [
            r#"{"reviewer":"tool-approve"}"#,
            r#"{"reviewer":"tool-approve"}"#,
            r#"{"reviewer":"tool-appeal"}"#
        ]
    );
    assert!(stdout.contains("  reviewer calls 3: "), "{stdout}");
}

#[test]
fn a_failure_waits_between_processes_for_the_next_call_to_acknowledge_it() {
    let server = MockServer::start_blocking(Scenario::new().route(Route::reviewer(
        "error-acknowledge",
        "cat notes.txt",
        reviewer_verdict("unacknowledged", "it reads on as if the build passed"),
    )))
    .unwrap();
    let session = Session::new(
        "6a1b2c3d-0000-4e5f-8a9b-reviewers0002",
        &server,
        json!({"reviewers": {"errorAcknowledge": {}}}),
        "fix the build",
    );
    assert_eq!(
        session.pre("f1", "Bash", json!({"command": "make"})),
        None,
        "left to Claude Code"
    );
    let failed = session.hook(
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_input": {"command": "make"}, "tool_use_id": "f1",
               "error": "make: *** [all] Error 2"}),
    );
    assert_eq!(failed.status.code(), Some(0), "{:?}", texts(&failed));

    let (d, reason) = decision(&session.pre("n1", "Bash", json!({"command": "cat notes.txt"})));
    assert_eq!(d, "deny");
    assert!(reason.contains("Address that failure first"), "{reason}");
    assert!(reason.contains("make: *** [all] Error 2"), "{reason}");
    // Checked once: the next call is left to Claude Code again.
    assert_eq!(
        session.pre("n2", "Bash", json!({"command": "cat notes.txt"})),
        None
    );
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "error-acknowledge"),
        1
    );
    session.verify();
}

#[test]
fn intent_validate_blocks_a_stop_once_and_respects_stop_hook_active() {
    let server = MockServer::start_blocking(
        Scenario::new()
            .route(Route::reviewer(
                "intent-validate",
                "a tiny task",
                reviewer_verdict("complete", "it was done"),
            ))
            .route(Route::when_system_contains(
                "Tascer reviewer: intent-validate\n",
                reviewer_verdict("incomplete", "Add the tests the user asked for."),
            )),
    )
    .unwrap();
    let safety = json!({"reviewers": {"intentValidate": {"maxBlocks": 1}}});
    let session = Session::new(
        "6a1b2c3d-0000-4e5f-8a9b-reviewers0003",
        &server,
        safety.clone(),
        "write the parser and its tests",
    );
    let stop = |active: bool| {
        session.hook(
            "Stop",
            json!({"stop_hook_active": active, "last_assistant_message": "Parser written."}),
        )
    };
    let out = stop(false);
    assert_eq!(out.status.code(), Some(0), "{:?}", texts(&out));
    let block = answer(&out).expect("a block");
    assert_eq!(block["decision"], "block");
    assert!(
        block["reason"]
            .as_str()
            .unwrap()
            .contains("Add the tests the user asked for."),
        "{block}"
    );
    // Claude goes on; its next stop carries stop_hook_active: let it go.
    assert_eq!(answer(&stop(true)), None);
    // A later stop: the one block allowed is used up.
    assert_eq!(answer(&stop(false)), None);
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "intent-validate"),
        1
    );
    session.verify();
    let report = report_json(session.home.path(), session.cwd(), session.id);
    let outcomes: Vec<&str> = report["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["decided", "skipped"]);

    // Work that matches its request is not blocked.
    let done = Session::new(
        "6a1b2c3d-0000-4e5f-8a9b-reviewers0004",
        &server,
        safety,
        "a tiny task",
    );
    let out = done.hook(
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "Done."}),
    );
    assert_eq!(answer(&out), None, "{:?}", texts(&out));
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "intent-validate"),
        2
    );
}

#[test]
fn reviewer_denials_count_toward_escalation_across_hook_processes() {
    let server = MockServer::start_blocking(Scenario::new().route(Route::reviewer(
        "tool-approve",
        "x.example",
        reviewer_verdict("deny", "downloads code"),
    )))
    .unwrap();
    let session = Session::new(
        "6a1b2c3d-0000-4e5f-8a9b-reviewers0005",
        &server,
        json!({"reviewers": {"toolApprove": {}}}),
        "set up the project",
    );
    // Alike calls (same program, same target), each a new process.
    for (i, flag) in ["-s", "-L", "-sS"].iter().enumerate() {
        let command = format!("curl {flag} https://x.example/install.sh");
        let (d, reason) =
            decision(&session.pre(&format!("c{i}"), "Bash", json!({"command": command})));
        assert_eq!(d, "deny", "{reason}");
        assert!(reason.contains("downloads code"), "{reason}");
    }
    // The fourth escalates to the user instead of the reviewer.
    let (d, reason) = decision(&session.pre(
        "c3",
        "Bash",
        json!({"command": "curl -f https://x.example/install.sh"}),
    ));
    assert_eq!(d, "ask", "{reason}");
    assert!(reason.contains("looks like a workaround"), "{reason}");
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "tool-approve"),
        3
    );
    session.verify();
}

#[test]
fn on_the_shared_postgres_store_the_chain_records_there_and_keeps_its_cache_and_outbox_local() {
    let Some(pg) = tascer_testkit::postgres::PgServer::shared("hook_reviewers_postgres") else {
        return;
    };
    let url = pg.fresh_database("reviewers").unwrap();
    let server = MockServer::start_blocking(
        Scenario::new()
            .route(Route::reviewer(
                "tool-approve",
                "make build",
                reviewer_verdict("allow", "builds it"),
            ))
            .route(Route::reviewer(
                "intent-validate",
                "build",
                reviewer_verdict("incomplete", "Run the tests too."),
            )),
    )
    .unwrap();
    let web = common::WebServer::start(|_| common::HttpResponse {
        status: 200,
        content_type: "text/plain",
        body: String::new(),
    });
    let session = Session::new(
        "6a1b2c3d-0000-4e5f-8a9b-reviewers0006",
        &server,
        json!({}),
        "build the project",
    )
    .on_store(url);
    session.settings(json!({
        "safety": {"reviewers": {"toolApprove": {}, "intentValidate": {}}},
        "webhooks": [{"url": web.url()}],
    }));
    for id in ["p1", "p2"] {
        let (d, _) = decision(&session.pre(id, "Bash", json!({"command": "make build"})));
        assert_eq!(d, "allow");
    }
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "tool-approve"),
        1,
        "cached"
    );
    let out = session.hook("Stop", json!({"stop_hook_active": false}));
    assert_eq!(answer(&out).unwrap()["decision"], "block");
    session.verify();
    let report = session
        .tascer()
        .args(["report", session.id, "--format", "json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(report["reviews"].as_array().unwrap().len(), 3, "{report}");
    // The three events reach the webhook from the local outbox.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while web.requests().len() < 3 {
        assert!(
            std::time::Instant::now() < until,
            "webhook events not delivered"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(session.home.path().join("tascer.db").is_file());
}

#[test]
fn style_drift_denies_an_edit_with_unrequested_cosmetic_changes_under_the_hook() {
    let server = MockServer::start_blocking(
        Scenario::new()
            .route(Route::reviewer(
                "style-drift",
                "def total(",
                reviewer_verdict(
                    "drift",
                    "it also renames sum_all to total and re-indents it",
                ),
            ))
            .route(Route::reviewer(
                "style-drift",
                "return a + b",
                reviewer_verdict("focused", "only the requested fix"),
            )),
    )
    .unwrap();
    let session = Session::new(
        "6a1b2c3d-0000-4e5f-8a9b-validators001",
        &server,
        json!({"reviewers": {"styleDrift": {}}}),
        "make add() return the sum",
    );
    let util = session.cwd().join("util.py");
    std::fs::write(
        &util,
        "def add(a, b):\n    return a - b\n\ndef sum_all(xs):\n  return sum(xs)\n",
    )
    .unwrap();
    // Not a change: no validator is asked, Claude Code decides.
    assert_eq!(session.pre("v0", "Read", json!({"file_path": util})), None);
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "style-drift"),
        0
    );

    let (d, reason) = decision(&session.pre(
        "v1",
        "MultiEdit",
        json!({"file_path": util, "edits": [
            {"old_string": "return a - b", "new_string": "return a + b"},
            {"old_string": "def sum_all(xs):\n  return sum(xs)",
             "new_string": "def total(xs):\n    return sum(xs)"}
        ]}),
    ));
    assert_eq!(d, "deny");
    assert!(
        reason.contains("style-drift reviewer: the edit makes cosmetic changes"),
        "{reason}"
    );
    assert!(reason.contains("renames sum_all to total"), "{reason}");
    assert!(
        reason.contains("Redo the edit without the unrequested cosmetic changes"),
        "{reason}"
    );
    // The focused retry passes; in `default` mode Claude Code asks its user.
    assert_eq!(
        session.pre(
            "v2",
            "Edit",
            json!({"file_path": util, "old_string": "return a - b", "new_string": "return a + b"}),
        ),
        None
    );
    assert_eq!(
        tascer_testkit::reviewer_requests(&server.requests(), "style-drift"),
        2
    );

    session.verify();
    let report = report_json(session.home.path(), session.cwd(), session.id);
    let reviews: Vec<String> = report["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {} {}",
                r["reviewer"].as_str().unwrap(),
                r["verdict"].as_str().unwrap(),
                r["tool_use_id"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(reviews, ["style-drift drift v1", "style-drift focused v2"]);
    let text = session
        .tascer()
        .args(["report", session.id])
        .output()
        .unwrap();
    let (stdout, _) = texts(&text);
    assert!(
        stdout.contains("reviewers   style-drift drift (decided"),
        "{stdout}"
    );
}

#[test]
fn from_a_subdirectory_the_project_roots_claude_md_reaches_tool_approve() {
    let server = MockServer::start_blocking(Scenario::new().route(Route::reviewer(
        "tool-approve",
        "make deploy-docs",
        reviewer_verdict("allow", "CLAUDE.md names this deploy"),
    )))
    .unwrap();
    let session = Session::new(
        "6a1b2c3d-0000-4e5f-8a9b-reviewers0007",
        &server,
        json!({"reviewers": {"toolApprove": {}}}),
        "publish the docs",
    );
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(session.cwd())
        .output()
        .unwrap();
    assert!(git.status.success(), "{git:?}");
    std::fs::write(
        session.cwd().join("CLAUDE.md"),
        "Deploy the docs only with `make deploy-docs`; never touch production.\n",
    )
    .unwrap();
    let src = session.cwd().join("src");
    std::fs::create_dir_all(&src).unwrap();

    let out = session.hook_in(
        &src,
        "PreToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "make deploy-docs"},
               "tool_use_id": "d1"}),
    );
    assert_eq!(out.status.code(), Some(0), "{:?}", texts(&out));
    let (d, reason) = decision(&answer(&out));
    assert_eq!(d, "allow", "{reason}");
    let asked: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| {
            r.body["system"]
                .to_string()
                .contains("Tascer reviewer: tool-approve\\n")
        })
        .map(|r| {
            // No model configured, an Anthropic provider: tool-approve's
            // class.
            assert_eq!(r.body["model"], "claude-haiku-4-5");
            r.body["messages"][0]["content"].to_string()
        })
        .collect();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let root = session.cwd().canonicalize().unwrap();
    let shown = format!(
        "--- {}/CLAUDE.md ---\\nDeploy the docs only with `make deploy-docs`; never touch \
         production.",
        root.display()
    );
    assert!(asked[0].contains(&shown), "{shown} in {}", asked[0]);
    assert!(
        asked[0].contains("The user's latest request: publish the docs"),
        "{}",
        asked[0]
    );
    session.verify();
}
