//! The store backends side by side, in the same run: ledger appends per
//! tool call (the loop's two transactions: the opening batch, then the
//! closing record with its evidence) and a whole 20-tool-call `tascer run`
//! process, on the home's SQLite file and on a PostgreSQL server on
//! loopback (`tascer_testkit::postgres::PgServer`: the one
//! `TASCER_TEST_POSTGRES_URL` names, or a throw-away cluster).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tascer::ledger::Ledger;
use tascer::ledger::keys::random_signing_key;
use tascer::store::{Backend, PgBackend, SqliteBackend};
use tascer_testkit::postgres::PgServer;
use tascer_testkit::{MockServer, Scenario, Turn};

use crate::stats::{Stats, Table, ms_since};

/// Tool calls appended per backend (after a warm-up).
const CALLS: usize = 300;
/// Tool calls of the warm-up (connections, prepared statements).
const WARM_UP: usize = 20;
/// Tool calls per `tascer run` session.
const SESSION_TOOLS: usize = 20;
/// `tascer run` sessions per backend.
const SESSIONS: usize = 7;

fn scenario() -> Scenario {
    let mut scenario = Scenario::new();
    for _ in 0..SESSION_TOOLS {
        scenario = scenario.turn(Turn::tool("Read", json!({"file_path": "notes.txt"})));
    }
    scenario.turn(Turn::text("done"))
}

/// Reads of a session's head (one query, one round trip with
/// PostgreSQL): the floor under every store operation.
fn reads(backend: &dyn Backend) -> anyhow::Result<Vec<f64>> {
    (0..WARM_UP + CALLS)
        .map(|_| {
            let t = Instant::now();
            backend.head("no-such-session")?;
            Ok(ms_since(t))
        })
        .collect::<anyhow::Result<Vec<f64>>>()
        .map(|times| times[WARM_UP..].to_vec())
}

/// Per-call times (ms) of a head read, the opening batch, the close, and
/// both.
fn appends(backend: Arc<dyn Backend>, evidence: &Path) -> anyhow::Result<[Vec<f64>; 4]> {
    let read = reads(backend.as_ref())?;
    let ledger = Ledger::with_backend(backend, evidence, Some(random_signing_key()?));
    crate::ledger::append_calls(&ledger, "warm-up", WARM_UP)?;
    let (opens, closes, _) = crate::ledger::append_calls(&ledger, "bench", CALLS)?;
    let both = opens.iter().zip(&closes).map(|(a, b)| a + b).collect();
    anyhow::ensure!(
        ledger.verify("bench", None)?.ok,
        "the benchmark session does not verify"
    );
    Ok([read, opens, closes, both])
}

/// One `tascer run` of the 20-tool scenario on a fresh home; wall ms.
fn session(tascer: &Path, url: &str, store: Option<&str>) -> anyhow::Result<f64> {
    let root = tempfile::tempdir()?;
    let (home, ws) = (root.path().join("home"), root.path().join("ws"));
    std::fs::create_dir_all(&ws)?;
    std::fs::write(ws.join("notes.txt"), "notes\n")?;
    let mut cmd = Command::new(tascer);
    cmd.env("TASCER_HOME", &home)
        .env("ANTHROPIC_API_KEY", "bench")
        .env("ANTHROPIC_BASE_URL", url)
        .env_remove("TASCER_LOG")
        .env_remove("TASCER_STORE")
        .current_dir(&ws)
        .args([
            "run",
            "--output-format",
            "json",
            "--permission-mode",
            "bypassPermissions",
            "read the notes",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(store) = store {
        cmd.env("TASCER_STORE", store);
    }
    let start = Instant::now();
    let out = cmd.output()?;
    let ms = ms_since(start);
    anyhow::ensure!(
        out.status.success(),
        "tascer run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(ms)
}

/// Runs the benchmark and prints its table.
pub async fn run() -> anyhow::Result<()> {
    let Some(pg) = PgServer::shared("bench store") else {
        println!("\n(PostgreSQL is not installed: the store group needs it)");
        return Ok(());
    };
    let server = MockServer::start(scenario()).await?;
    let url = server.url();
    let tascer = crate::cli::tascer_binary();
    let db_url = pg.fresh_database("bench_appends")?;
    let rows = tokio::task::spawn_blocking(move || {
        let tmp = tempfile::tempdir()?;
        let sqlite: Arc<dyn Backend> = Arc::new(SqliteBackend::open(tmp.path().join("t.db"))?);
        let postgres: Arc<dyn Backend> = Arc::new(PgBackend::open(&db_url)?);
        let lite = appends(sqlite, &tmp.path().join("ev-sqlite"))?;
        let pg_times = appends(postgres, &tmp.path().join("ev-pg"))?;
        let mut sessions = (Vec::new(), Vec::new());
        if let Some(tascer) = &tascer {
            for _ in 0..SESSIONS {
                // Alternating, so drift on a shared machine hits both.
                sessions.0.push(session(tascer, &url, None)?);
                let store = pg.fresh_database("bench_session")?;
                sessions.1.push(session(tascer, &url, Some(&store))?);
            }
        }
        anyhow::Ok((lite, pg_times, sessions, tascer.is_some()))
    })
    .await??;
    let (lite, postgres, sessions, ran_sessions) = rows;
    let mut table = Table::new(
        format!(
            "Store backends: SQLite file vs PostgreSQL on loopback ({CALLS} signed tool calls; \
             {SESSIONS} `tascer run` sessions of {SESSION_TOOLS} tool calls)"
        ),
        "PostgreSQL / SQLite",
    );
    let names = [
        "one read (a session's head)",
        "opening batch (model response, tool_call_opened, permission; 1 transaction)",
        "closing record with evidence (1 transaction)",
        "ledger per tool call (both)",
    ];
    for (name, (a, b)) in names.iter().zip(lite.into_iter().zip(postgres)) {
        let (a, b) = (Stats::of(a), Stats::of(b));
        table.row(format!("{name}, SQLite"), &a, None);
        table.row(format!("{name}, PostgreSQL"), &b, Some(b.median / a.median));
    }
    if ran_sessions {
        let (a, b) = (Stats::of(sessions.0), Stats::of(sessions.1));
        table.row("`tascer run`, 20 tool calls, SQLite (wall)", &a, None);
        table.row(
            "`tascer run`, 20 tool calls, PostgreSQL (wall)",
            &b,
            Some(b.median / a.median),
        );
    } else {
        table.note("(no `tascer` binary next to the bench: the session rows were skipped)");
    }
    table.note(
        "The test server runs with fsync=off and synchronous_commit=off; SQLite runs WAL with \
         synchronous=NORMAL (no fsync per commit either). A durable production server adds its \
         commit flush to every PostgreSQL transaction.",
    );
    table.print();
    server.shutdown();
    Ok(())
}
