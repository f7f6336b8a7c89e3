//! The SQLite schema and connection settings.

use rusqlite::Connection;

/// Creates the tables if they are missing and sets WAL mode.
pub(crate) fn prepare(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS sessions (
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
        );",
    )
}
