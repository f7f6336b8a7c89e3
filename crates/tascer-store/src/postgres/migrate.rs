//! Versioned schema migrations for the PostgreSQL store.
//!
//! The migrations are SQL files compiled into the binary
//! (`migrations/postgres/NNNN_name.sql`), applied in order when a store is
//! opened, each recorded in `tascer_schema_migrations` with the SHA-256 of
//! its text. Many processes on many hosts open the store at once, so:
//!
//! - a store that is up to date is recognised with one read and no lock
//!   (a runtime role that may not create tables never needs to);
//! - otherwise every pending migration runs in ONE transaction that first
//!   takes a transaction-level advisory lock, so concurrent openers queue,
//!   and the second finds the work done; a failed migration leaves nothing
//!   behind (PostgreSQL's DDL is transactional);
//! - a store migrated by a newer build (a version this build does not
//!   know), or whose recorded checksum differs from this build's file, is
//!   refused with a message saying which.
//!
//! (`refinery` was considered: it takes no lock across processes, which is
//! the case here, and needs a newer Rust than the workspace's minimum.)

use sha2::{Digest, Sha256};
use tokio_postgres::GenericClient;
use tokio_postgres::error::SqlState;

/// One schema migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    /// Its version, from 1, without gaps.
    pub version: i32,
    /// A short name.
    pub name: &'static str,
    /// The SQL (several statements).
    pub sql: &'static str,
}

impl Migration {
    /// `sha256:<hex>` of the SQL text.
    pub fn checksum(&self) -> String {
        format!(
            "sha256:{}",
            hex::encode(Sha256::digest(self.sql.as_bytes()))
        )
    }
}

/// The store's migrations, in order.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "init",
        sql: include_str!("../../migrations/postgres/0001_init.sql"),
    },
    Migration {
        version: 2,
        name: "audit",
        sql: include_str!("../../migrations/postgres/0002_audit.sql"),
    },
    Migration {
        version: 3,
        name: "sessions",
        sql: include_str!("../../migrations/postgres/0003_sessions.sql"),
    },
];

/// Key of the advisory lock migrations hold (any constant; the one-key
/// space of `pg_advisory_xact_lock(bigint)`, apart from the per-session
/// locks, which use the two-key space).
const MIGRATION_LOCK: i64 = 0x7461_7363_6572_6d67; // "tascermg"

/// What [`migrate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// Versions this call applied (empty when the store was up to date).
    pub applied: Vec<i32>,
    /// The schema version now.
    pub version: i32,
}

/// Why the schema cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// A query failed.
    #[error(transparent)]
    Pg(#[from] tokio_postgres::Error),
    /// The store's schema cannot be used by this build.
    #[error("{0}")]
    Schema(String),
}

/// A schema in a PostgreSQL database: its migrations, the table that
/// records which are applied, and the advisory lock that serializes
/// applying them. The store's is [`STORE_SCHEMA`]; another component
/// sharing the database (the contract queue) has its own table and lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schema {
    /// Whose schema it is, for messages ("the store").
    pub owner: &'static str,
    /// The table recording the applied migrations.
    pub table: &'static str,
    /// The `pg_advisory_xact_lock` key held while migrating.
    pub lock: i64,
    /// The migrations, in order.
    pub migrations: &'static [Migration],
}

/// The store's schema.
pub const STORE_SCHEMA: Schema = Schema {
    owner: "the store",
    table: "tascer_schema_migrations",
    lock: MIGRATION_LOCK,
    migrations: MIGRATIONS,
};

/// Applies the pending `migrations` of the store (see the module docs).
pub async fn migrate(
    client: &mut deadpool_postgres::ClientWrapper,
    migrations: &'static [Migration],
) -> Result<Migrated, MigrateError> {
    migrate_schema(
        client,
        &Schema {
            migrations,
            ..STORE_SCHEMA
        },
    )
    .await
}

/// Applies the pending migrations of `schema` (see the module docs).
pub async fn migrate_schema(
    client: &mut deadpool_postgres::ClientWrapper,
    schema: &Schema,
) -> Result<Migrated, MigrateError> {
    let migrations = schema.migrations;
    let latest = migrations.last().map_or(0, |m| m.version);
    match applied(&**client, schema.table).await {
        Ok(rows) => {
            if check(&rows, migrations, schema.owner)? {
                return Ok(Migrated {
                    applied: Vec::new(),
                    version: latest,
                });
            }
        }
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => {}
        Err(e) => return Err(e.into()),
    }
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&schema.lock])
        .await?;
    tx.batch_execute(&format!(
        "CREATE TABLE IF NOT EXISTS {} (
             version    INTEGER PRIMARY KEY,
             name       TEXT NOT NULL,
             checksum   TEXT NOT NULL,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
        schema.table
    ))
    .await?;
    let rows = applied(&*tx, schema.table).await?;
    let mut done = Vec::new();
    if !check(&rows, migrations, schema.owner)? {
        for migration in migrations.iter().skip(rows.len()) {
            tx.batch_execute(migration.sql).await.map_err(|e| {
                MigrateError::Schema(format!(
                    "migration {} ({}) failed: {}",
                    migration.version,
                    migration.name,
                    super::error::describe(&e)
                ))
            })?;
            tx.execute(
                &format!(
                    "INSERT INTO {} (version, name, checksum) VALUES ($1, $2, $3)",
                    schema.table
                ),
                &[&migration.version, &migration.name, &migration.checksum()],
            )
            .await?;
            done.push(migration.version);
        }
    }
    tx.commit().await?;
    Ok(Migrated {
        applied: done,
        version: latest,
    })
}

/// `(version, name, checksum)` of the applied migrations, in order.
type AppliedRow = (i32, String, String);

async fn applied(
    client: &impl GenericClient,
    table: &str,
) -> Result<Vec<AppliedRow>, tokio_postgres::Error> {
    let rows = client
        .query(
            &format!("SELECT version, name, checksum FROM {table} ORDER BY version"),
            &[],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

/// True when `rows` are exactly `migrations`; false when some are
/// pending; an error when the database has a migration this build does
/// not know or one whose checksum differs (`owner` names the schema).
fn check(rows: &[AppliedRow], migrations: &[Migration], owner: &str) -> Result<bool, MigrateError> {
    for (i, (version, name, checksum)) in rows.iter().enumerate() {
        let Some(known) = migrations.get(i).filter(|m| m.version == *version) else {
            let latest = migrations.last().map_or(0, |m| m.version);
            return Err(MigrateError::Schema(format!(
                "{owner}'s schema has migration {version} ({name}), which this build of \
                 Tascer does not know (it knows up to {latest}): upgrade Tascer on this host"
            )));
        };
        if known.checksum() != *checksum {
            return Err(MigrateError::Schema(format!(
                "migration {version} ({name}) recorded for {owner} has checksum {checksum}, \
                 this build's is {}: the schema was changed by hand or by a different build",
                known.checksum()
            )));
        }
    }
    Ok(rows.len() == migrations.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Migration = Migration {
        version: 1,
        name: "a",
        sql: "SELECT 1",
    };
    const B: Migration = Migration {
        version: 2,
        name: "b",
        sql: "SELECT 2",
    };

    fn row(m: &Migration) -> AppliedRow {
        (m.version, m.name.to_string(), m.checksum())
    }

    #[test]
    fn up_to_date_pending_newer_and_changed_are_told_apart() {
        let s = "the store";
        assert!(check(&[row(&A), row(&B)], &[A, B], s).unwrap());
        assert!(!check(&[row(&A)], &[A, B], s).unwrap());
        assert!(!check(&[], &[A], s).unwrap());
        let newer = check(&[row(&A), row(&B)], &[A], s).unwrap_err().to_string();
        assert!(
            newer.contains("does not know") && newer.contains("upgrade"),
            "{newer}"
        );
        let mut changed = row(&A);
        changed.2 = "sha256:00".into();
        let changed = check(&[changed], &[A], s).unwrap_err().to_string();
        assert!(changed.contains("checksum sha256:00"), "{changed}");
    }

    #[test]
    fn migration_versions_run_from_one_without_gaps() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(usize::try_from(m.version).unwrap(), i + 1, "{}", m.name);
        }
    }
}
