//! The built `tascer` on the shared PostgreSQL store, end to end: a
//! governed session against the mock model with
//! `TASCER_STORE=postgres://…`, then `verify`, `report`, `export`,
//! `--resume`, `sessions list`, `archive` and `archive verify`, each in a
//! new process, give the same results as the same session on SQLite; the
//! home keeps no database and no evidence of its own. The `store` setting
//! of the home's settings file selects the store the same way, and an
//! unreachable store stops the session with `store_error` naming the
//! server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;
use serde_json::{Value, json};
use tascer_testkit::postgres::PgServer;
use tascer_testkit::{MockServer, Scenario, Turn};

/// What one backend made of the session.
#[derive(Debug)]
struct Outcome {
    verify: Value,
    verify_after_resume: Value,
    tools: Vec<(String, String)>,
    resumed_request_messages: usize,
    listed_messages: u64,
    archive_verified: bool,
}

fn with_store(mut cmd: Command, store: Option<&str>) -> Command {
    if let Some(url) = store {
        cmd.env("TASCER_STORE", url);
    }
    cmd
}

fn ok(out: &Output) -> String {
    let (stdout, stderr) = texts(out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout
}

fn scenario() -> Scenario {
    Scenario::new()
        .turn(Turn::tool(
            "Write",
            json!({"file_path": "b.txt", "content": "written by the agent\n"}),
        ))
        .turn(Turn::tool("Bash", json!({"command": "cat b.txt"})))
        .turn(Turn::text("done"))
        .turn(Turn::text("still done"))
}

/// The whole session on one store (`None`: the home's SQLite file).
fn session_on(root: &Path, store: Option<&str>) -> Outcome {
    let (home, ws) = (root.join("home"), root.join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    let server = MockServer::start_blocking(scenario()).unwrap();
    let session = tascer::new_id();
    let cmd = |args: &[&str]| {
        let mut c = with_store(tascer(&home, &ws), store);
        c.args(args);
        c.output().unwrap()
    };

    let first = with_store(
        run_cmd(
            &home,
            &ws,
            &server.url(),
            "write b",
            &["--session-id", &session],
        ),
        store,
    )
    .output()
    .unwrap();
    ok(&first);

    let verify: Value = serde_json::from_str(&ok(&cmd(&["verify", &session, "--json"]))).unwrap();
    let report: Value =
        serde_json::from_str(&ok(&cmd(&["report", &session, "--format", "json"]))).unwrap();
    let tools = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["record"]["tool"].as_str().unwrap().to_string(),
                t["record"]["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let attestation = ws.join("att.intoto.jsonl");
    ok(&cmd(&[
        "export",
        &session,
        "--attestation",
        "-o",
        attestation.to_str().unwrap(),
    ]));
    let envelope: Value =
        serde_json::from_str(std::fs::read_to_string(&attestation).unwrap().trim()).unwrap();
    assert_eq!(envelope["payloadType"], "application/vnd.in-toto+json");

    let resumed = with_store(
        run_cmd(
            &home,
            &ws,
            &server.url(),
            "and now?",
            &["--resume", &session],
        ),
        store,
    )
    .output()
    .unwrap();
    ok(&resumed);
    let requests = server.requests();
    let resumed_request_messages = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .len();
    let verify_after_resume: Value =
        serde_json::from_str(&ok(&cmd(&["verify", &session, "--json"]))).unwrap();

    let listed: Value = serde_json::from_str(&ok(&cmd(&["sessions", "list", "--json"]))).unwrap();
    let listed_messages = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session.as_str())
        .map(|s| s["message_count"].as_u64().unwrap())
        .unwrap();

    let dest = root.join("archive");
    let url = ok(&cmd(&["archive", &session, "--to", dest.to_str().unwrap()]));
    let check: Value =
        serde_json::from_str(&ok(&cmd(&["archive", "verify", url.trim(), "--json"]))).unwrap();

    Outcome {
        verify,
        verify_after_resume,
        tools,
        resumed_request_messages,
        listed_messages,
        archive_verified: check["ok"] == true,
    }
}

#[test]
fn a_session_on_postgres_verifies_reports_exports_resumes_and_archives_like_on_sqlite() {
    let Some(pg) = PgServer::shared("store_postgres_end_to_end") else {
        return;
    };
    let url = pg.fresh_database("e2e").unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let sqlite = session_on(a.path(), None);
    let postgres = session_on(b.path(), Some(&url));

    for outcome in [&sqlite, &postgres] {
        for verify in [&outcome.verify, &outcome.verify_after_resume] {
            assert_eq!(verify["ok"], true, "{verify}");
            assert_eq!(verify["signed"], true, "{verify}");
        }
        assert!(outcome.archive_verified, "{outcome:?}");
    }
    assert_eq!(
        sqlite.verify["entries_checked"],
        postgres.verify["entries_checked"]
    );
    assert_eq!(
        sqlite.verify_after_resume["entries_checked"],
        postgres.verify_after_resume["entries_checked"]
    );
    assert!(
        postgres.verify_after_resume["entries_checked"].as_u64()
            > postgres.verify["entries_checked"].as_u64()
    );
    assert_eq!(sqlite.tools, postgres.tools);
    assert_eq!(sqlite.tools.len(), 2, "{:?}", sqlite.tools);
    assert_eq!(
        sqlite.resumed_request_messages,
        postgres.resumed_request_messages
    );
    assert_eq!(sqlite.listed_messages, postgres.listed_messages);

    // The PostgreSQL home holds no database and no evidence: the session is
    // complete in the shared store.
    let home = b.path().join("home");
    assert!(!home.join("tascer.db").exists());
    let evidence = home.join("evidence");
    assert!(
        !evidence.exists() || std::fs::read_dir(&evidence).unwrap().next().is_none(),
        "evidence files under {}",
        evidence.display()
    );
    assert!(a.path().join("home/tascer.db").is_file());
}

#[test]
fn the_home_settings_select_the_store_and_an_unreachable_one_stops_the_session() {
    let Some(pg) = PgServer::shared("store_setting") else {
        return;
    };
    let url = pg.fresh_database("setting").unwrap();
    let root = tempfile::tempdir().unwrap();
    let (home, ws) = (root.path().join("home"), root.path().join("ws"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        home.join("settings.json"),
        json!({ "store": url }).to_string(),
    )
    .unwrap();
    let server = MockServer::start_blocking(Scenario::new().turn(Turn::text("hi"))).unwrap();
    let session = tascer::new_id();
    ok(&run_cmd(
        &home,
        &ws,
        &server.url(),
        "hello",
        &["--session-id", &session],
    )
    .output()
    .unwrap());
    assert!(!home.join("tascer.db").exists());
    let listed = ok(&tascer(&home, &ws)
        .args(["sessions", "list", "--json"])
        .output()
        .unwrap());
    assert!(listed.contains(&session), "{listed}");
    let entries: u32 = pg
        .psql(
            url.rsplit('/').next().unwrap(),
            &format!("SELECT count(*) FROM ledger_entries WHERE session_id = '{session}'"),
        )
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(entries > 0, "the session's ledger is in the database");

    // TASCER_STORE wins over the setting; a server that is not there
    // fails the run with the server named and no password shown.
    let out = run_cmd(&home, &ws, &server.url(), "hello", &[])
        .env("TASCER_STORE", "postgres://app:hunter2@127.0.0.1:1/tascer")
        .env("TASCER_STORE_RETRY_MS", "300")
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stderr.contains("postgres://app@127.0.0.1:1/tascer"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2") && !stdout.contains("hunter2"));

    // A bad value is refused with advice.
    let out = tascer(&home, &ws)
        .args(["sessions", "list"])
        .env("TASCER_STORE", "mysql://x")
        .output()
        .unwrap();
    let (_, stderr) = texts(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("TASCER_STORE") && stderr.contains("expected postgres://"),
        "{stderr}"
    );
}

#[test]
fn a_store_lost_mid_session_stops_it_with_store_error_naming_the_server() {
    let Some(pg) = PgServer::shared("store_lost_mid_session") else {
        return;
    };
    let url = pg.fresh_database("lost").unwrap();
    let db = url.rsplit('/').next().unwrap().to_string();
    let root = tempfile::tempdir().unwrap();
    let (home, ws) = (root.path().join("home"), root.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    // The second model call takes 2 s; meanwhile the database is renamed
    // away (connections cut, new ones refused: "database does not exist").
    let scenario = Scenario::new()
        .turn(Turn::tool("Bash", json!({"command": "echo one"})))
        .turn(Turn::text("two").with_latency_ms(2000))
        .loop_last_turn(true);
    let server = MockServer::start_blocking(scenario).unwrap();
    let session = tascer::new_id();
    let child = run_cmd(&home, &ws, &server.url(), "go", &["--session-id", &session])
        .env("TASCER_STORE", &url)
        .env("TASCER_STORE_RETRY_MS", "1000")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while server.requests().len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let moved = format!("{db}_moved");
    pg.psql(
        "postgres",
        &format!(
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = '{db}'"
        ),
    )
    .unwrap();
    pg.psql(
        "postgres",
        &format!("ALTER DATABASE \"{db}\" RENAME TO \"{moved}\""),
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    let result = json_lines(&out.stdout)
        .into_iter()
        .find(|f| f["type"] == "result")
        .unwrap_or_else(|| panic!("no result frame: {stdout}\n{stderr}"));
    assert_eq!(result["terminal_reason"], "store_error", "{result}");
    let message = result["result"].as_str().unwrap();
    assert!(
        message.contains(&format!("postgres://postgres@127.0.0.1:{}/{db}", pg.port())),
        "{message}"
    );
    assert!(
        message.contains(&format!("--resume {session}")),
        "{message}"
    );

    // Back in place, the session's stored prefix resumes, and verifies.
    pg.psql(
        "postgres",
        &format!("ALTER DATABASE \"{moved}\" RENAME TO \"{db}\""),
    )
    .unwrap();
    let out = run_cmd(&home, &ws, &server.url(), "go on", &["--resume", &session])
        .env("TASCER_STORE", &url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    let verify = tascer(&home, &ws)
        .env("TASCER_STORE", &url)
        .args(["verify", &session, "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&verify.stdout).unwrap();
    assert_eq!(report["ok"], true, "{report}");
}

#[test]
fn hosts_with_their_own_keys_record_into_one_store_at_once_and_verify_each_other() {
    let Some(pg) = PgServer::shared("store_many_hosts") else {
        return;
    };
    const HOSTS: usize = 4;
    let url = pg.fresh_database("hosts").unwrap();
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("notes.txt"), "notes\n").unwrap();
    let mut scenario = Scenario::new();
    for _ in 0..5 {
        scenario = scenario.turn(Turn::tool("Read", json!({"file_path": "notes.txt"})));
    }
    let server = MockServer::start_blocking(scenario.turn(Turn::text("done"))).unwrap();
    // One home (one key) per "host", all started together.
    let runs: Vec<_> = (0..HOSTS)
        .map(|i| {
            let home = root.path().join(format!("host{i}"));
            let session = tascer::new_id();
            let child = run_cmd(
                &home,
                &ws,
                &server.url(),
                "read",
                &["--session-id", &session],
            )
            .env("TASCER_STORE", &url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
            (home, session, child)
        })
        .collect();
    let mut sessions = Vec::new();
    for (home, session, child) in runs {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        sessions.push((home, session));
    }
    // From the first host: every session is listed, and each verifies
    // with the public key of the host that signed it.
    let auditor = &sessions[0].0;
    let listed = ok(&tascer(auditor, &ws)
        .env("TASCER_STORE", &url)
        .args(["sessions", "list", "--json"])
        .output()
        .unwrap());
    for (home, session) in &sessions {
        assert!(listed.contains(session.as_str()), "{listed}");
        let key = home.join("keys/tascer-ed25519.pub.pem");
        let report: Value = serde_json::from_str(&ok(&tascer(auditor, &ws)
            .env("TASCER_STORE", &url)
            .args(["verify", session, "--key", key.to_str().unwrap(), "--json"])
            .output()
            .unwrap()))
        .unwrap();
        assert_eq!(report["ok"], true, "{report}");
        assert_eq!(report["signed"], true, "{report}");
    }
    // Another host's key does not verify a session: the signer matters.
    let wrong = sessions[1].0.join("keys/tascer-ed25519.pub.pem");
    let out = tascer(auditor, &ws)
        .env("TASCER_STORE", &url)
        .args(["verify", &sessions[2].1, "--key", wrong.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn claude_code_hook_events_are_recorded_in_the_shared_store() {
    use std::io::Write as _;
    let Some(pg) = PgServer::shared("store_hook") else {
        return;
    };
    let url = pg.fresh_database("hook").unwrap();
    let root = tempfile::tempdir().unwrap();
    let (home, ws) = (root.path().join("home"), root.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    ok(&tascer(&home, &ws)
        .args(["keys", "generate"])
        .output()
        .unwrap());
    let session = "5f0c2a1e-cc00-4d7e-9a51-0123456789ab";
    let event = json!({
        "hook_event_name": "PreToolUse",
        "session_id": session,
        "transcript_path": "/home/u/.claude/projects/x/session.jsonl",
        "cwd": ws.display().to_string(),
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
    });
    let mut child = tascer(&home, &ws)
        .env("TASCER_STORE", &url)
        .arg("hook")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.code().is_some(), "{out:?}");
    // Only what stays on this host is in the home's local file: the
    // admitted call's record, waiting for its PostToolUse. No session,
    // message or ledger table is there.
    let tables = home_db_texts(
        &home,
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    );
    assert_eq!(tables, ["pending_calls"]);
    let local = rusqlite::Connection::open(home.join("tascer.db")).unwrap();
    let waiting: String = local
        .query_row("SELECT tool_use_id FROM pending_calls", [], |r| r.get(0))
        .unwrap();
    assert_eq!(waiting, "toolu_1");
    let report: Value = serde_json::from_str(&ok(&tascer(&home, &ws)
        .env("TASCER_STORE", &url)
        .args(["verify", session, "--json"])
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["signed"], true, "{report}");
    assert!(report["entries_checked"].as_u64().unwrap() >= 2, "{report}");
}
