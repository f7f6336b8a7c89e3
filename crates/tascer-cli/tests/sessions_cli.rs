//! `tascer sessions rename|delete|export` on the home's SQLite store and on
//! PostgreSQL (when a server can be started): two real sessions against
//! the mock model; a title shown by `list` and `show`; the three export
//! formats; a delete that removes every row and the transcript of one
//! session and leaves the other's ledger verifying.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;
use serde_json::{Value, json};
use tascer_testkit::postgres::PgServer;
use tascer_testkit::{MockServer, Scenario, Turn};

/// The tables holding a session's rows, and the column naming it.
const TABLES: &[(&str, &str)] = &[
    ("sessions", "id"),
    ("messages", "session_id"),
    ("ledger_entries", "session_id"),
    ("ledger_heads", "session_id"),
    ("tool_calls", "session_id"),
    ("permission_decisions", "session_id"),
    ("metrics", "session_id"),
    ("file_changes", "session_id"),
];

/// Where the rows are: the home's SQLite file, or a PostgreSQL database.
enum Rows<'a> {
    Sqlite(&'a Path),
    Postgres(&'static PgServer, String),
}

impl Rows<'_> {
    /// The number of rows of `session` in `table`.
    fn count(&self, table: &str, column: &str, session: &str) -> i64 {
        let sql = format!("SELECT COUNT(*) FROM {table} WHERE {column} = '{session}'");
        match self {
            Rows::Sqlite(home) => rusqlite::Connection::open(home.join("tascer.db"))
                .unwrap()
                .query_row(&sql, [], |r| r.get(0))
                .unwrap(),
            Rows::Postgres(server, db) => server.psql(db, &sql).unwrap().trim().parse().unwrap(),
        }
    }
}

fn ok(out: &Output) -> String {
    let (stdout, stderr) = texts(out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout
}

/// Everything, on the store `url` names (`None`: SQLite).
fn exercise(root: &Path, url: Option<&str>, rows: &Rows<'_>) {
    let (home, ws) = (root.join("home"), root.join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    let server = MockServer::start_blocking(
        Scenario::new()
            .turn(Turn::tool(
                "Write",
                json!({"file_path": "a.txt", "content": "from session A\n"}),
            ))
            .turn(Turn::text("A is done"))
            .turn(Turn::text("B is done")),
    )
    .unwrap();
    let with_store = |mut cmd: Command| {
        if let Some(url) = url {
            cmd.env("TASCER_STORE", url);
        }
        cmd
    };
    let (a, b) = (tascer::new_id(), tascer::new_id());
    for (id, prompt) in [(&a, "write a"), (&b, "just answer")] {
        let cmd = run_cmd(&home, &ws, &server.url(), prompt, &["--session-id", id]);
        ok(&with_store(cmd).output().unwrap());
    }
    let cli = |args: &[&str]| {
        let mut cmd = with_store(tascer(&home, &ws));
        cmd.args(args);
        run_with_stdin(cmd, "")
    };

    // rename: the title in list (text and JSON) and show.
    ok(&cli(&["sessions", "rename", &a, "Writes a.txt"]));
    assert!(ok(&cli(&["sessions", "list"])).contains("Writes a.txt"));
    let listed: Value = serde_json::from_str(&ok(&cli(&["sessions", "list", "--json"]))).unwrap();
    let titles: Vec<&Value> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["title"])
        .collect();
    assert!(titles.contains(&&json!("Writes a.txt")) && titles.contains(&&Value::Null));
    assert!(ok(&cli(&["sessions", "show", &a])).contains("title    Writes a.txt"));
    let unknown = cli(&["sessions", "rename", "nope", "x"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        texts(&unknown)
            .1
            .contains("No conversation found with session ID: nope")
    );

    export_formats(&cli, &a, root);

    // delete: refused without --yes off a terminal, then every row goes.
    let refused = cli(&["sessions", "delete", &a]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        texts(&refused).1.contains("pass --yes"),
        "{}",
        texts(&refused).1
    );
    assert!(rows.count("messages", "session_id", &a) > 0);
    let transcript = |id: &str| tascer::guard::settings::claude_transcript_file(&home, &ws, id);
    assert!(transcript(&a).is_file() && transcript(&b).is_file());
    let deleted = ok(&cli(&["sessions", "delete", &a, "--yes"]));
    assert!(
        deleted.contains(&format!("deleted session {a}")) && deleted.contains("1 transcript file"),
        "{deleted}"
    );
    assert!(
        !transcript(&a).exists(),
        "the session's transcript goes too"
    );
    assert!(
        transcript(&b).is_file(),
        "another session's transcript stays"
    );
    for (table, column) in TABLES {
        assert_eq!(
            rows.count(table, column, &a),
            0,
            "{table} still has rows of {a}"
        );
    }
    assert!(rows.count("ledger_entries", "session_id", &b) > 0);
    assert_eq!(cli(&["sessions", "show", &a]).status.code(), Some(1));
    let verified = ok(&cli(&["verify", "--all"]));
    assert!(
        verified.contains(&b) && !verified.contains(&a),
        "{verified}"
    );
    ok(&cli(&["verify", &b]));
    assert_eq!(
        cli(&["sessions", "delete", &a, "--yes"]).status.code(),
        Some(1)
    );
}

/// `--format jsonl|json|markdown`, to a file and to stdout.
fn export_formats(cli: &dyn Fn(&[&str]) -> Output, a: &str, root: &Path) {
    let file = root.join("a.jsonl");
    ok(&cli(&[
        "sessions",
        "export",
        a,
        "-o",
        file.to_str().unwrap(),
    ]));
    let lines: Vec<Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() >= 3, "{lines:#?}");
    assert_eq!(lines[0]["type"], "user");
    assert_eq!(lines[0]["parentUuid"], Value::Null);
    assert_eq!(lines[0]["message"]["content"], "write a");
    assert_eq!(lines[1]["type"], "assistant");
    for pair in lines.windows(2) {
        assert_eq!(
            pair[1]["parentUuid"], pair[0]["uuid"],
            "each line links to the one before"
        );
    }
    assert!(lines.iter().all(|l| l["sessionId"] == a));

    let json: Value =
        serde_json::from_str(&ok(&cli(&["sessions", "export", a, "--format", "json"]))).unwrap();
    let kinds: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"user") && kinds.contains(&"result"),
        "{kinds:?}"
    );

    let md = ok(&cli(&["sessions", "export", a, "--format", "markdown"]));
    for needle in [
        "# Writes a.txt",
        "## User",
        "write a",
        "## Assistant",
        "**Write**",
        "A is done",
    ] {
        assert!(md.contains(needle), "{needle:?} missing from:\n{md}");
    }
}

#[test]
fn rename_delete_and_export_on_sqlite() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    exercise(root.path(), None, &Rows::Sqlite(&home));
}

#[test]
fn rename_delete_and_export_on_postgres() {
    let Some(pg) = PgServer::shared("sessions_admin_postgres") else {
        return;
    };
    let url = pg.fresh_database("admin").unwrap();
    let db = url.rsplit('/').next().unwrap().to_string();
    let root = tempfile::tempdir().unwrap();
    exercise(root.path(), Some(&url), &Rows::Postgres(pg, db));
}
