//! The PostgreSQL backend's own tests: migrations under concurrency, the
//! append-only triggers, the documented grants, lost connections and
//! commits whose answer is lost. They run against a real PostgreSQL server
//! (`tascer_testkit::postgres::PgServer`: the one `.ci/run` starts, or a
//! throw-away cluster) and print `SKIPPED` when none is installed; the
//! tests both backends share are in `backend_suite.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::under::{S, new_session, pg, quick, user, verify};
use serde_json::json;
use tascer_ledger::keys::random_signing_key;
use tascer_ledger::{EntryKind, Ledger};
use tascer_store::{Backend, PgBackend, PgOptions, SessionStore};

fn record_session(ledger: &Ledger) -> (String, String) {
    common::record_session(ledger, S)
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
