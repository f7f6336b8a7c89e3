//! Crash safety: a process killed with SIGKILL mid-session leaves a fully
//! verifiable, signed prefix, and a resumed session continues the chain.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tascer_ledger::{EntryKind, Ledger, generate_keypair, load_home_signing_key};

const CHILD_ENV: &str = "TASCER_LEDGER_CRASH_CHILD_HOME";
const S: &str = "crash-session";

/// Runs only inside the child process: appends until killed.
#[test]
fn crash_child() {
    let Ok(home) = std::env::var(CHILD_ENV) else {
        return;
    };
    let key = load_home_signing_key(&home).unwrap();
    let ledger = Ledger::open_in_home(&home, key).unwrap();
    if ledger.store().last_entry(S).unwrap().is_none() {
        ledger
            .append(S, EntryKind::SessionStart, json!({"model": "m"}))
            .unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut i = 0u64;
    while Instant::now() < deadline {
        let e = ledger
            .append(
                S,
                EntryKind::UserPrompt,
                json!({"text": format!("prompt {i}")}),
            )
            .unwrap();
        println!("committed {}", e.seq);
        i += 1;
    }
}

#[test]
fn killed_mid_session_then_resumed() {
    let home = tempfile::tempdir().unwrap();
    let (key, _) = generate_keypair(home.path(), false).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut seen = 0u64;
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("committed ") {
            seen = n.trim().parse().unwrap();
            if seen >= 50 {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    assert!(seen >= 50, "child committed only {seen} entries");

    let ledger = Ledger::open_in_home(home.path(), Some(key)).unwrap();
    let report = ledger.verify(S, None).unwrap();
    assert!(report.ok, "{report:?}");
    assert!(report.signed);
    assert!(report.entries_checked >= seen);
    let last = ledger.store().last_entry(S).unwrap().unwrap();

    // Resume: the chain continues from the last committed entry.
    let next = ledger
        .append(S, EntryKind::UserPrompt, json!({"text": "after resume"}))
        .unwrap();
    assert_eq!(next.seq, last.seq + 1);
    assert_eq!(next.prev_hash, last.hash);
    let report = ledger.verify(S, None).unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(report.entries_checked, next.seq);
}

#[test]
fn shares_a_database_with_other_tables_and_connections() {
    let home = tempfile::tempdir().unwrap();
    let db = home.path().join("tascer.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             CREATE TABLE other_app (id TEXT PRIMARY KEY);
             INSERT INTO other_app VALUES ('x');",
        )
        .unwrap();
    }
    let a = Ledger::open(&db, home.path().join("evidence"), None).unwrap();
    let b = Ledger::open(&db, home.path().join("evidence"), None).unwrap();
    for i in 0..10 {
        let ledger = if i % 2 == 0 { &a } else { &b };
        let e = ledger
            .append("shared", EntryKind::UserPrompt, json!({"i": i}))
            .unwrap();
        assert_eq!(e.seq, i + 1);
    }
    assert!(a.verify("shared", None).unwrap().ok);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = conn
        .query_row("SELECT COUNT(*) FROM other_app", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}
