//! The session store's SQLite schema (connection settings: [`crate::db`]).

/// The tables [`SCHEMA`] creates.
pub(crate) const TABLES: &[&str] = &["sessions", "messages"];

/// Creates the tables if they are missing.
pub(crate) const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS sessions (
            id             TEXT PRIMARY KEY,
            cwd            TEXT NOT NULL,
            model          TEXT NOT NULL,
            created_at     TEXT NOT NULL,
            updated_at     TEXT NOT NULL,
            forked_from    TEXT,
            num_turns      INTEGER NOT NULL DEFAULT 0,
            total_cost_usd REAL NOT NULL DEFAULT 0,
            status         TEXT NOT NULL DEFAULT 'open',
            first_prompt   TEXT
        );
        CREATE INDEX IF NOT EXISTS sessions_by_cwd ON sessions (cwd, updated_at);
        CREATE TABLE IF NOT EXISTS messages (
            session_id TEXT NOT NULL REFERENCES sessions (id),
            seq        INTEGER NOT NULL,
            uuid       TEXT NOT NULL,
            kind       TEXT NOT NULL,
            data       TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        );";
