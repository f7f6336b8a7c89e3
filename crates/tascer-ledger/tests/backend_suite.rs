//! One test suite, run against both store backends: the SQLite file and a
//! real PostgreSQL server (`tascer_testkit::postgres::PgServer`: the one
//! `.ci/run` starts, or a throw-away cluster started by the first test of
//! this binary; each test gets its own database).
//!
//! Every body in the first part runs twice (`<name>::sqlite`,
//! `<name>::postgres`): sessions and messages, fork and resume history,
//! ledger append and verify, a session moved between backends, tamper
//! detection, and concurrent writers. The second part is PostgreSQL's own:
//! migrations under concurrency, the append-only triggers, the documented
//! grants, and lost connections.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tascer_core::{Message, UserContent, UserMessage};
use tascer_ledger::keys::random_signing_key;
use tascer_ledger::transfer::{import_raw, session_blobs};
use tascer_ledger::{EntryKind, Ledger, SessionStart, SigningKey, ToolStatus, VerifyReport};
use tascer_store::{
    Backend, BackendKind, NewSession, PgBackend, PgOptions, SessionStore, SqliteBackend, StoreError,
};
use tascer_testkit::postgres::PgServer;

// ---------------------------------------------------------------------------
// The stores under test

/// A fresh store of one kind, and the means to reach around it.
struct Under {
    kind: BackendKind,
    /// A home for evidence files (and the SQLite file).
    home: tempfile::TempDir,
    /// SQLite: the file. PostgreSQL: the database URL.
    target: String,
    /// PostgreSQL: the server and database name, for raw SQL.
    pg: Option<(&'static PgServer, String)>,
}

impl Under {
    fn sqlite() -> Under {
        let home = tempfile::tempdir().unwrap();
        let target = home.path().join("tascer.db").display().to_string();
        Under {
            kind: BackendKind::Sqlite,
            home,
            target,
            pg: None,
        }
    }

    fn postgres(test: &str) -> Option<Under> {
        let server = PgServer::shared(test)?;
        let url = server.fresh_database(test).unwrap();
        let db = url.rsplit('/').next().unwrap().to_string();
        Some(Under {
            kind: BackendKind::Postgres,
            home: tempfile::tempdir().unwrap(),
            target: url,
            pg: Some((server, db)),
        })
    }

    /// A new backend on the store: its own connection(s), as another
    /// process would have.
    fn open(&self) -> Arc<dyn Backend> {
        match self.kind {
            BackendKind::Sqlite => Arc::new(SqliteBackend::open(&self.target).unwrap()),
            BackendKind::Postgres => Arc::new(PgBackend::open_with(&self.target, quick()).unwrap()),
        }
    }

    fn ledger(&self, key: Option<SigningKey>) -> Ledger {
        Ledger::with_backend(self.open(), self.home.path().join("evidence"), key)
    }

    fn sessions(&self) -> SessionStore {
        SessionStore::with_backend(self.open())
    }

    /// Runs raw SQL as the owner, around the store (PostgreSQL: with the
    /// append-only triggers off for this transaction, as a DBA could).
    fn tamper(&self, sql: &str) {
        match &self.pg {
            None => rusqlite::Connection::open(&self.target)
                .unwrap()
                .execute_batch(sql)
                .unwrap(),
            Some((server, db)) => {
                server
                    .psql(
                        db,
                        &format!(
                            "BEGIN; SET LOCAL session_replication_role = replica; {sql}; COMMIT;"
                        ),
                    )
                    .unwrap();
            }
        }
    }
}

/// Short retries, so a test of a failure does not wait 20 s.
fn quick() -> PgOptions {
    PgOptions {
        retry_for: Duration::from_secs(5),
        pool_size: 4,
        connect_timeout: Duration::from_secs(2),
    }
}

/// Runs a body against both backends: `NAME::sqlite` and `NAME::postgres`
/// (the latter prints `SKIPPED` when PostgreSQL is not installed).
macro_rules! both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn sqlite() {
                super::$name(super::Under::sqlite());
            }
            #[test]
            fn postgres() {
                if let Some(under) = super::Under::postgres(stringify!($name)) {
                    super::$name(under);
                }
            }
        }
    )*};
}

both!(
    sessions_messages_and_totals_persist,
    fork_copies_a_session_and_resume_rebuilds_history,
    fork_at_copies_through_a_message_with_its_file_checkpoints,
    bad_session_ids_get_precise_errors,
    a_ledger_appends_verifies_and_reports,
    a_session_moves_between_backends_and_verifies_the_same,
    every_kind_of_edit_is_named_by_verify,
    concurrent_writers_leave_no_gap_and_no_duplicate,
);

// ---------------------------------------------------------------------------
// Sessions

fn user(text: &str, session: &str) -> Message {
    Message::User(UserMessage::new(UserContent::Text(text.into()), session))
}

fn new_session<'a>(id: &'a str, cwd: &'a str) -> NewSession<'a> {
    NewSession {
        id,
        cwd,
        model: "m",
        forked_from: None,
    }
}

fn sessions_messages_and_totals_persist(under: Under) {
    {
        let store = under.sessions();
        store.create_session(&new_session("s1", "/w")).unwrap();
        store.append_message("s1", &user("first", "s1")).unwrap();
        store
            .append_message_with_totals(
                "s1",
                &user("second", "s1"),
                Some(&tascer_store::Totals {
                    num_turns: 3,
                    total_cost_usd: 0.125,
                    status: "running".into(),
                }),
            )
            .unwrap();
        store.update_totals("s1", 4, 0.5, "success").unwrap();
        store.create_session(&new_session("s2", "/w")).unwrap();
        store.create_session(&new_session("s3", "/other")).unwrap();
    }
    // Another "process".
    let store = under.sessions();
    let info = store.session("s1").unwrap().unwrap();
    assert_eq!(
        (info.message_count, info.num_turns, info.total_cost_usd),
        (2, 4, 0.5)
    );
    assert_eq!(info.status, "success");
    assert_eq!(info.first_prompt.as_deref(), Some("first"));
    assert_eq!(info.cwd, "/w");
    let texts: Vec<String> = store
        .messages("s1")
        .unwrap()
        .iter()
        .map(|m| serde_json::to_value(m).unwrap()["message"]["content"].to_string())
        .collect();
    assert_eq!(texts, ["\"first\"", "\"second\""]);
    assert_eq!(
        store.history("s1").unwrap().len(),
        1,
        "two user frames merge"
    );
    let ids: Vec<String> = store.list(10).unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(store.latest_for_cwd("/other").unwrap().unwrap().id, "s3");
    assert!(store.latest_for_cwd("/none").unwrap().is_none());
    assert_eq!(store.list(1).unwrap().len(), 1);
    let summary = store.summary("s1").unwrap().unwrap();
    assert_eq!((summary.prompts, summary.assistant_messages), (2, 0));
    assert_eq!(summary.total_cost_usd, 0.5);
    assert!(store.summary("missing").unwrap().is_none());
}

fn fork_copies_a_session_and_resume_rebuilds_history(under: Under) {
    let store = under.sessions();
    store.create_session(&new_session("a", "/w")).unwrap();
    store.append_message("a", &user("hello", "a")).unwrap();
    store.append_message("a", &user("again", "a")).unwrap();
    let fork = store.fork("a", "b").unwrap();
    assert_eq!(fork.forked_from.as_deref(), Some("a"));
    assert_eq!(fork.message_count, 2);
    assert_eq!(fork.first_prompt.as_deref(), Some("hello"));
    // The copies carry the new session id; the original is untouched.
    for m in under.sessions().messages("b").unwrap() {
        assert_eq!(serde_json::to_value(&m).unwrap()["session_id"], "b");
    }
    for m in store.messages("a").unwrap() {
        assert_eq!(serde_json::to_value(&m).unwrap()["session_id"], "a");
    }
    // Resuming the fork in another process continues its own history.
    let resumed = under.sessions();
    resumed.append_message("b", &user("more", "b")).unwrap();
    assert_eq!(resumed.messages("b").unwrap().len(), 3);
    assert_eq!(resumed.messages("a").unwrap().len(), 2);
    assert_eq!(resumed.history("b").unwrap()[0].content.len(), 3);
}

fn fork_at_copies_through_a_message_with_its_file_checkpoints(under: Under) {
    let store = under.sessions();
    store.create_session(&new_session("p", "/w")).unwrap();
    let (first, second) = (user("first", "p"), user("second", "p"));
    store.append_message("p", &first).unwrap();
    store.append_message("p", &second).unwrap();
    let change = |prompt: &Message, path: &str| tascer_store::FileChange {
        prompt_uuid: prompt.uuid().to_string(),
        path: path.to_string(),
        existed: true,
        before: Some(b"before".to_vec()),
        after_sha256: Some("00".repeat(32)),
        tool_use_id: "toolu_1".to_string(),
    };
    store
        .record_file_change("p", &change(&first, "/w/a"))
        .unwrap();
    store
        .record_file_change("p", &change(&second, "/w/b"))
        .unwrap();

    // Cut after the first prompt: its message and its checkpoint only.
    let cut = store.fork_at("p", "cut", first.uuid()).unwrap();
    assert_eq!(cut.forked_from.as_deref(), Some("p"));
    assert_eq!(cut.message_count, 1);
    assert_eq!(store.file_changes("cut").unwrap(), [change(&first, "/w/a")]);
    // A whole fork keeps every checkpoint; the parent keeps its own.
    store.fork("p", "whole").unwrap();
    assert_eq!(
        store.file_changes("whole").unwrap(),
        [change(&first, "/w/a"), change(&second, "/w/b")]
    );
    assert_eq!(store.file_changes("p").unwrap().len(), 2);
    assert!(matches!(
        store.fork_at("p", "x", "no-such-message"),
        Err(StoreError::NoSuchMessage(uuid)) if uuid == "no-such-message"
    ));
    assert!(store.session("x").unwrap().is_none());
}

fn bad_session_ids_get_precise_errors(under: Under) {
    let store = under.sessions();
    store.create_session(&new_session("s", "/w")).unwrap();
    assert!(matches!(
        store.create_session(&new_session("s", "/w")),
        Err(StoreError::AlreadyExists(id)) if id == "s"
    ));
    assert!(matches!(store.fork("nope", "t"), Err(StoreError::NotFound(id)) if id == "nope"));
    assert!(matches!(
        store.fork("s", "s"),
        Err(StoreError::AlreadyExists(_))
    ));
    let err = store.history("nope").unwrap_err().to_string();
    assert_eq!(err, "No conversation found with session ID: nope");
}

// ---------------------------------------------------------------------------
// The ledger

const S: &str = "session-1";

/// The fixture session of [`common::record_session`] under id [`S`].
fn record_session(ledger: &Ledger) -> (String, String) {
    common::record_session(ledger, S)
}

fn a_ledger_appends_verifies_and_reports(under: Under) {
    let key = random_signing_key().unwrap();
    let ledger = under.ledger(Some(key.clone()));
    let (small, large) = record_session(&ledger);
    // A fresh handle (another process) sees the same, signed, intact chain.
    let again = under.ledger(None);
    let report = again.verify(S, Some(&key.verifying_key())).unwrap();
    assert!(report.ok && report.signed, "{report:?}");
    assert_eq!(report.entries_checked, 6);
    let head = again.head(S).unwrap().unwrap();
    assert_eq!(head.seq, 6);
    assert!(head.signature.is_some());
    // Projections.
    let calls = again.store().tool_calls(S).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status, ToolStatus::Validated);
    assert!(calls[0].proof_is_valid());
    let data = again.report(S).unwrap();
    assert_eq!(data.tools.len(), 1);
    // Evidence reads back either way; large evidence stays in the store
    // with PostgreSQL (complete in the database), in a file with SQLite.
    assert_eq!(again.get_evidence(S, &small).unwrap(), b"file-a\nfile-b\n");
    assert_eq!(
        again.get_evidence(S, &large).unwrap(),
        common::large_output()
    );
    let in_db: Vec<String> = session_blobs(again.store(), S)
        .unwrap()
        .into_iter()
        .map(|(digest, _)| digest)
        .collect();
    let large_file = again.evidence(S).path_of(&large).unwrap();
    match under.kind {
        BackendKind::Sqlite => {
            assert_eq!(in_db, vec![small.clone()]);
            assert!(large_file.is_file());
        }
        BackendKind::Postgres => {
            let mut both = vec![small.clone(), large.clone()];
            both.sort();
            assert_eq!(in_db, both);
            assert!(!large_file.exists());
        }
    }
    assert_eq!(again.store().sessions().unwrap(), vec![S.to_string()]);
    // A second session continues its own chain from 1.
    let entry = again
        .append("other", EntryKind::UserPrompt, json!({"text": "x"}))
        .unwrap();
    assert_eq!(entry.seq, 1);
    assert_eq!(again.store().sessions().unwrap(), vec!["other", S]);
}

fn a_session_moves_between_backends_and_verifies_the_same(under: Under) {
    let key = random_signing_key().unwrap();
    let ledger = under.ledger(Some(key.clone()));
    let (small, large) = record_session(&ledger);
    let here = ledger.verify(S, Some(&key.verifying_key())).unwrap();
    // Into the other kind of store, rows and blobs exactly as stored.
    let other = match under.kind {
        BackendKind::Sqlite => match Under::postgres("moves_from_sqlite") {
            Some(under) => under,
            None => return,
        },
        BackendKind::Postgres => Under::sqlite(),
    };
    let copy = other.ledger(None);
    let rows = ledger.store().raw_entries(S).unwrap();
    import_raw(copy.store(), &rows, ledger.head(S).unwrap().as_ref()).unwrap();
    for digest in [&small, &large] {
        let bytes = ledger.get_evidence(S, digest).unwrap();
        copy.store().put_blob(S, digest, &bytes).unwrap();
    }
    let there = copy.verify(S, Some(&key.verifying_key())).unwrap();
    assert!(there.ok && there.signed, "{there:?}");
    assert_eq!(here, there, "the same report from either backend");
    assert_eq!(copy.store().raw_entries(S).unwrap(), rows);
}

fn verify(ledger: &Ledger) -> VerifyReport {
    ledger.verify(S, None).unwrap()
}

fn assert_broken(report: &VerifyReport, seq: u64, reason: &str) {
    assert!(!report.ok, "{report:?}");
    let b = report.first_broken.as_ref().expect("a break");
    assert_eq!((b.seq, b.reason.name()), (seq, reason), "{b}");
}

fn every_kind_of_edit_is_named_by_verify(under: Under) {
    // Each edit on its own session of the same store.
    let cases: [(&str, &str, u64, &str); 5] = [
        (
            "edited",
            "UPDATE ledger_entries SET payload = '{\"text\":\"hello World\"}' \
             WHERE session_id = 'edited' AND seq = 2",
            2,
            "EditedEntry",
        ),
        (
            "deleted",
            "DELETE FROM ledger_entries WHERE session_id = 'deleted' AND seq = 3",
            3,
            "DeletedEntry",
        ),
        (
            "reordered",
            "UPDATE ledger_entries SET seq = 100 WHERE session_id = 'reordered' AND seq = 2; \
             UPDATE ledger_entries SET seq = 2 WHERE session_id = 'reordered' AND seq = 3; \
             UPDATE ledger_entries SET seq = 3 WHERE session_id = 'reordered' AND seq = 100",
            2,
            "Reordered",
        ),
        (
            "evidence",
            "UPDATE ledger_evidence SET bytes = CAST('file-a' AS BLOB_TYPE) \
             WHERE session_id = 'evidence'",
            4,
            "EvidenceChanged",
        ),
        (
            "cut",
            "DELETE FROM ledger_entries WHERE session_id = 'cut' AND seq = 6",
            6,
            "HeadMismatch",
        ),
    ];
    let key = random_signing_key().unwrap();
    let ledger = under.ledger(Some(key.clone()));
    for (session, ..) in &cases {
        record_session_as(&ledger, session);
    }
    let blob_type = match under.kind {
        BackendKind::Sqlite => "BLOB",
        BackendKind::Postgres => "BYTEA",
    };
    for (session, sql, seq, reason) in cases {
        assert!(ledger.verify(session, None).unwrap().ok, "{session} before");
        under.tamper(&sql.replace("BLOB_TYPE", blob_type));
        let report = ledger.verify(session, Some(&key.verifying_key())).unwrap();
        assert_broken(&report, seq, reason);
    }
    // Untouched: S itself.
    record_session(&ledger);
    assert!(verify(&ledger).ok);
}

/// [`record_session`] under another session id.
fn record_session_as(ledger: &Ledger, session: &str) {
    let start = SessionStart {
        model: "m".into(),
        options_digest: tascer_ledger::sha256_ref(b"{}"),
        system_prompt_digest: tascer_ledger::sha256_ref(b""),
        signing_key_id: None,
        context: json!({}),
    };
    ledger.start_session(session, &start).unwrap();
    ledger
        .append(
            session,
            EntryKind::UserPrompt,
            json!({"text": "hello world"}),
        )
        .unwrap();
    ledger
        .append(session, EntryKind::UserPrompt, json!({"text": "two"}))
        .unwrap();
    let small = ledger.put_evidence(session, b"file-a\nfile-b\n").unwrap();
    ledger
        .append(session, EntryKind::Checkpoint, json!({"evidence": [small]}))
        .unwrap();
    ledger
        .append(session, EntryKind::UserPrompt, json!({"text": "five"}))
        .unwrap();
    ledger
        .append(session, EntryKind::UserPrompt, json!({"text": "six"}))
        .unwrap();
}

fn concurrent_writers_leave_no_gap_and_no_duplicate(under: Under) {
    const WRITERS: usize = 6;
    const EACH: usize = 15;
    let under = Arc::new(under);
    let key = random_signing_key().unwrap();
    under
        .sessions()
        .create_session(&new_session("shared", "/w"))
        .unwrap();
    let threads: Vec<_> = (0..WRITERS)
        .map(|w| {
            let under = Arc::clone(&under);
            let key = key.clone();
            std::thread::spawn(move || {
                // Its own connections, as a separate process would have.
                let ledger = under.ledger(Some(key));
                let sessions = under.sessions();
                let own = format!("own-{w}");
                for i in 0..EACH {
                    ledger
                        .append(&own, EntryKind::UserPrompt, json!({"i": i}))
                        .unwrap();
                    ledger
                        .append_many(
                            "shared",
                            vec![
                                (EntryKind::UserPrompt, json!({"writer": w, "i": i})),
                                (EntryKind::Checkpoint, json!({"writer": w, "i": i})),
                            ],
                            &[format!("{w}/{i}").into_bytes()],
                        )
                        .unwrap();
                    sessions
                        .append_message("shared", &user(&format!("{w}/{i}"), "shared"))
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let ledger = under.ledger(Some(key.clone()));
    for w in 0..WRITERS {
        let report = ledger
            .verify(&format!("own-{w}"), Some(&key.verifying_key()))
            .unwrap();
        assert!(report.ok && report.signed, "{report:?}");
        assert_eq!(report.entries_checked, EACH as u64);
    }
    let report = ledger.verify("shared", Some(&key.verifying_key())).unwrap();
    assert!(report.ok && report.signed, "{report:?}");
    let total = (WRITERS * EACH * 2) as u64;
    assert_eq!(report.entries_checked, total);
    let seqs: Vec<u64> = ledger
        .store()
        .entries("shared")
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, (1..=total).collect::<Vec<_>>());
    // Each batch stayed together: a prompt is followed by its checkpoint.
    let entries = ledger.store().entries("shared").unwrap();
    for pair in entries.chunks(2) {
        assert_eq!(pair[0].payload, pair[1].payload);
    }
    let messages = under.sessions().messages("shared").unwrap();
    assert_eq!(messages.len(), WRITERS * EACH);
    assert_eq!(
        under
            .sessions()
            .session("shared")
            .unwrap()
            .unwrap()
            .message_count,
        (WRITERS * EACH) as u64
    );
}

// ---------------------------------------------------------------------------
// PostgreSQL only

fn pg(test: &str) -> Option<Under> {
    Under::postgres(test)
}

#[test]
fn migrations_run_once_under_concurrent_opens_and_a_changed_schema_is_refused() {
    let Some(under) = pg("migrations_concurrent") else {
        return;
    };
    let opens: Vec<_> = (0..8)
        .map(|_| {
            let url = under.target.clone();
            std::thread::spawn(move || PgBackend::open_with(&url, quick()).map(|_| ()))
        })
        .collect();
    for open in opens {
        open.join().unwrap().unwrap();
    }
    let (server, db) = under.pg.as_ref().unwrap();
    let rows = server
        .psql(
            db,
            "SELECT version, name FROM tascer_schema_migrations ORDER BY version",
        )
        .unwrap();
    assert_eq!(rows.trim(), "1|init\n2|audit\n3|sessions");
    // Opening an up-to-date store needs no lock and changes nothing.
    let backend = PgBackend::open_with(&under.target, quick()).unwrap();
    assert!(backend.migrate().unwrap().applied.is_empty());

    server
        .psql(
            db,
            "UPDATE tascer_schema_migrations SET checksum = 'sha256:00' WHERE version = 1",
        )
        .unwrap();
    let err = PgBackend::open_with(&under.target, quick())
        .unwrap_err()
        .to_string();
    assert!(err.contains("checksum sha256:00"), "{err}");
    server
        .psql(
            db,
            &format!(
                "UPDATE tascer_schema_migrations SET checksum = '{}' WHERE version = 1; \
                 INSERT INTO tascer_schema_migrations (version, name, checksum) \
                 VALUES (4, 'from-the-future', 'sha256:ff')",
                tascer_store::postgres::migrate::MIGRATIONS[0].checksum()
            ),
        )
        .unwrap();
    let err = PgBackend::open_with(&under.target, quick())
        .unwrap_err()
        .to_string();
    assert!(err.contains("migration 4 (from-the-future)"), "{err}");
    assert!(err.contains("upgrade Tascer"), "{err}");
}

#[test]
fn recorded_rows_cannot_be_updated_or_deleted() {
    let Some(under) = pg("append_only") else {
        return;
    };
    let ledger = under.ledger(None);
    record_session(&ledger);
    under
        .sessions()
        .create_session(&new_session("s", "/w"))
        .unwrap();
    under
        .sessions()
        .append_message("s", &user("hi", "s"))
        .unwrap();
    let (server, db) = under.pg.as_ref().unwrap();
    for sql in [
        "UPDATE ledger_entries SET payload = '{}' WHERE seq = 2",
        "DELETE FROM ledger_entries WHERE seq = 6",
        "TRUNCATE ledger_entries",
        "UPDATE ledger_evidence SET bytes = '\\x00'",
        "DELETE FROM ledger_evidence",
        "UPDATE messages SET data = '{}'",
        "DELETE FROM messages",
    ] {
        let err = server.psql(db, sql).unwrap_err().to_string();
        assert!(err.contains("append-only"), "{sql}: {err}");
    }
    assert!(verify(&ledger).ok);
    assert_eq!(under.sessions().messages("s").unwrap().len(), 1);
}

#[test]
fn the_documented_grants_let_a_runtime_role_record_but_not_rewrite() {
    let Some(under) = pg("grants") else {
        return;
    };
    // The owner migrates (creates the tables) first.
    drop(under.open());
    let (server, db) = under.pg.as_ref().unwrap();
    let role = format!("tascer_app_{}", &db[db.len().saturating_sub(12)..]);
    let grants = include_str!("../../../docs/fleet-grants.sql")
        .replace("tascer_app", &role)
        .replace("tascer_db", db);
    server
        .psql(db, &format!("CREATE ROLE {role} LOGIN;"))
        .unwrap();
    server.psql(db, &grants).unwrap();
    let url = under.target.replacen("postgres@", &format!("{role}@"), 1);
    let backend: Arc<dyn Backend> = Arc::new(PgBackend::open_with(&url, quick()).unwrap());
    let key = random_signing_key().unwrap();
    let ledger = Ledger::with_backend(
        Arc::clone(&backend),
        under.home.path().join("evidence"),
        Some(key.clone()),
    );
    record_session(&ledger);
    let sessions = SessionStore::with_backend(backend);
    sessions.create_session(&new_session("s", "/w")).unwrap();
    sessions.append_message("s", &user("hi", "s")).unwrap();
    sessions.update_totals("s", 1, 0.1, "success").unwrap();
    sessions.fork("s", "t").unwrap();
    let report = ledger.verify(S, Some(&key.verifying_key())).unwrap();
    assert!(report.ok && report.signed, "{report:?}");
    // The role itself may not rewrite history, even with the triggers off.
    let as_role = |sql: &str| {
        std::process::Command::new("psql")
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", &url, "-c", sql])
            .output()
            .map(|out| {
                (
                    out.status.success(),
                    String::from_utf8_lossy(&out.stderr).into_owned(),
                )
            })
    };
    let (ok, stderr) = as_role("DELETE FROM ledger_entries").unwrap();
    assert!(!ok && stderr.contains("permission denied"), "{stderr}");
    let (ok, stderr) =
        as_role("SET session_replication_role = replica; UPDATE ledger_entries SET seq = 1")
            .unwrap();
    assert!(!ok && stderr.contains("permission denied"), "{stderr}");
}

#[test]
fn connections_killed_by_the_server_are_retried_and_the_chain_stays_intact() {
    let Some(under) = pg("killed_connections") else {
        return;
    };
    let key = random_signing_key().unwrap();
    let ledger = under.ledger(Some(key.clone()));
    let sessions = under.sessions();
    sessions.create_session(&new_session(S, "/w")).unwrap();
    let (server, db) = under.pg.as_ref().unwrap();
    for i in 0..5 {
        ledger
            .append(S, EntryKind::UserPrompt, json!({"i": i}))
            .unwrap();
        sessions
            .append_message(S, &user(&format!("{i}"), S))
            .unwrap();
        // What a server restart does to every open connection.
        server
            .psql(
                db,
                &format!(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                     WHERE datname = '{db}' AND pid <> pg_backend_pid()"
                ),
            )
            .unwrap();
    }
    let report = ledger.verify(S, Some(&key.verifying_key())).unwrap();
    assert!(report.ok && report.signed, "{report:?}");
    assert_eq!(report.entries_checked, 5);
    assert_eq!(sessions.messages(S).unwrap().len(), 5);
}

#[test]
fn a_server_that_goes_away_is_waited_for_then_named_in_a_clear_error() {
    let Some(under) = pg("server_away") else {
        return;
    };
    drop(under.open()); // migrated through the direct port
    let proxy = Proxy::start(&under.target);
    // A password in the URL never shows in an error.
    let url = proxy.url.replacen("postgres@", "postgres:hunter2@", 1);
    let options = PgOptions {
        retry_for: Duration::from_secs(6),
        ..quick()
    };
    let backend: Arc<dyn Backend> = Arc::new(PgBackend::open_with(&url, options).unwrap());
    let ledger = Ledger::with_backend(Arc::clone(&backend), under.home.path(), None);
    ledger
        .append(S, EntryKind::UserPrompt, json!({"i": 0}))
        .unwrap();

    // Down for a moment (connections cut, new ones refused), then back:
    // the append waits and succeeds.
    proxy.set_up(false);
    let back = {
        let proxy = proxy.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            proxy.set_up(true);
        })
    };
    let entry = ledger
        .append(S, EntryKind::UserPrompt, json!({"i": 1}))
        .unwrap();
    back.join().unwrap();
    assert_eq!(entry.seq, 2);

    // Down for good: after the retries, an error that names the server.
    proxy.set_up(false);
    let started = std::time::Instant::now();
    let err = ledger
        .append(S, EntryKind::UserPrompt, json!({"i": 2}))
        .unwrap_err();
    let waited = started.elapsed();
    let text = err.to_string();
    assert!(
        text.contains(&format!("postgres://postgres@127.0.0.1:{}/", proxy.port)),
        "{text}"
    );
    assert!(text.contains("cannot append to the ledger"), "{text}");
    assert!(text.contains("check that the server is up"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(waited >= Duration::from_secs(3), "gave up after {waited:?}");
    assert!(waited < Duration::from_secs(20), "waited {waited:?}");
    proxy.set_up(true);
    let report = under.ledger(None).verify(S, None).unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(report.entries_checked, 2, "the failed append left nothing");
}

#[test]
fn a_store_url_that_cannot_work_is_refused_without_repeating_it() {
    let err = PgBackend::open_with("postgres://u:hunter2@127.0.0.1:notaport/db", quick())
        .unwrap_err()
        .to_string();
    assert!(err.contains("not valid"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    // Nothing listens on port 1: refused at once, retried, then named.
    let options = PgOptions {
        retry_for: Duration::from_millis(600),
        ..quick()
    };
    let err = PgBackend::open_with("postgres://u:hunter2@127.0.0.1:1/db", options)
        .unwrap_err()
        .to_string();
    assert!(err.contains("postgres://u@127.0.0.1:1/db"), "{err}");
    assert!(err.contains("cannot open the store"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn a_commit_whose_answer_is_lost_is_not_written_twice() {
    let Some(under) = pg("lost_commit_answer") else {
        return;
    };
    drop(under.open());
    let proxy = Proxy::start(&under.target);
    let backend: Arc<dyn Backend> = Arc::new(PgBackend::open_with(&proxy.url, quick()).unwrap());
    let key = random_signing_key().unwrap();
    let ledger = Ledger::with_backend(Arc::clone(&backend), under.home.path(), Some(key.clone()));
    let sessions = SessionStore::with_backend(backend);
    ledger
        .append(S, EntryKind::UserPrompt, json!({"i": 0}))
        .unwrap();
    proxy.cut_after_next_commit();
    let entry = ledger
        .append(S, EntryKind::UserPrompt, json!({"i": 1}))
        .unwrap();
    assert_eq!(entry.seq, 2, "the committed attempt's entry is returned");
    proxy.cut_after_next_commit();
    sessions.create_session(&new_session("chat", "/w")).unwrap();
    proxy.cut_after_next_commit();
    sessions
        .append_message("chat", &user("once", "chat"))
        .unwrap();
    proxy.cut_after_next_commit();
    sessions.fork("chat", "forked").unwrap();
    assert!(
        !proxy.state.lock().unwrap().cut_after_commit,
        "every cut happened"
    );

    let direct = under.ledger(None);
    let report = direct.verify(S, Some(&key.verifying_key())).unwrap();
    assert!(report.ok && report.signed, "{report:?}");
    assert_eq!(report.entries_checked, 2, "nothing appended twice");
    assert_eq!(under.sessions().messages("chat").unwrap().len(), 1);
    assert_eq!(under.sessions().messages("forked").unwrap().len(), 1);
}

#[test]
fn a_url_that_requires_tls_is_refused_not_sent_in_plain_text() {
    let Some(under) = pg("requires_tls") else {
        return;
    };
    let url = format!("{}?sslmode=require", under.target);
    let options = PgOptions {
        retry_for: Duration::from_millis(300),
        ..quick()
    };
    let err = PgBackend::open_with(&url, options).unwrap_err().to_string();
    assert!(err.contains("cannot open the store"), "{err}");
}

// ---------------------------------------------------------------------------
// A TCP proxy in front of the server that can cut every connection and
// refuse new ones: a server restart or a network cut, on loopback.

#[derive(Clone)]
struct Proxy {
    port: u16,
    url: String,
    state: Arc<std::sync::Mutex<ProxyState>>,
}

#[derive(Default)]
struct ProxyState {
    up: bool,
    open: Vec<std::net::TcpStream>,
    /// Armed: the next COMMIT a client sends reaches the server, and then
    /// the connection is cut before the client hears that it committed.
    cut_after_commit: bool,
}

impl Proxy {
    fn start(target_url: &str) -> Proxy {
        let authority = target_url.split('/').nth(2).unwrap();
        let upstream: String = authority.rsplit('@').next().unwrap().to_string();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let url = target_url.replacen(&upstream, &format!("127.0.0.1:{port}"), 1);
        let state = Arc::new(std::sync::Mutex::new(ProxyState {
            up: true,
            open: Vec::new(),
            cut_after_commit: false,
        }));
        let accept_state = Arc::clone(&state);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let mut state = accept_state.lock().unwrap();
                if !state.up {
                    let _ = client.shutdown(std::net::Shutdown::Both);
                    continue;
                }
                let Ok(server) = std::net::TcpStream::connect(&upstream) else {
                    continue;
                };
                state.open.push(client.try_clone().unwrap());
                state.open.push(server.try_clone().unwrap());
                let to_server = Arc::clone(&accept_state);
                pipe(
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                    Some(to_server),
                );
                pipe(server, client, None);
            }
        });
        Proxy { port, url, state }
    }

    /// Up: connections pass. Down: every open one is cut, new ones closed.
    fn set_up(&self, up: bool) {
        let mut state = self.state.lock().unwrap();
        state.up = up;
        if !up {
            for stream in state.open.drain(..) {
                let _ = stream.shutdown(std::net::Shutdown::Both);
            }
        }
    }

    /// Arms a cut after the next COMMIT (see [`ProxyState`]).
    fn cut_after_next_commit(&self) {
        self.state.lock().unwrap().cut_after_commit = true;
    }
}

/// Copies `from` to `to`; on the client-to-server side (`state` given),
/// an armed COMMIT is passed on and then both sides are cut.
fn pipe(
    mut from: std::net::TcpStream,
    mut to: std::net::TcpStream,
    state: Option<Arc<std::sync::Mutex<ProxyState>>>,
) {
    use std::io::{Read as _, Write as _};
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
            let commit = buf[..n].windows(7).any(|w| w == b"COMMIT\0");
            if commit
                && let Some(state) = &state
                && std::mem::take(&mut state.lock().unwrap().cut_after_commit)
            {
                // The client loses the answer; the server, which has the
                // COMMIT, commits before it sees its side closed.
                let _ = from.shutdown(std::net::Shutdown::Both);
                std::thread::sleep(Duration::from_millis(300));
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Both);
    });
}
