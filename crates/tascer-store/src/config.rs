//! Which store a Tascer home uses: the one place that decides it, for
//! every command (`run`, `sessions`, `verify`, `report`, `export`,
//! `archive`, `hook`, `contracts`, `mcp serve`) and the library.
//!
//! In order:
//!
//! 1. `TASCER_STORE`, when set and not empty;
//! 2. `"store"` in the home's own settings file, `$TASCER_HOME/settings.json`
//!    (a per-host setting: a project's settings files cannot move a
//!    session's records elsewhere; read by `tascer-settings`, the one
//!    settings reader);
//! 3. the SQLite file `$TASCER_HOME/tascer.db`.
//!
//! A value is `postgres://…` (or `postgresql://…`) for the shared
//! PostgreSQL store, `sqlite` for the default file, or `sqlite:PATH` for
//! another SQLite file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tascer_settings::{HostSettings, home_settings_file};

use crate::backend::Backend;
use crate::db::HOME_DB_FILE;
use crate::error::StoreError;
#[cfg(feature = "postgres")]
use crate::postgres::{PgBackend, describe_config, parse_url};
use crate::sqlite::SqliteBackend;

/// Environment variable naming the store (see the module docs).
pub const STORE_ENV: &str = "TASCER_STORE";

/// The settings key naming the store, in `$TASCER_HOME/settings.json`
/// (read by `tascer-settings`' [`HostSettings`]).
pub const STORE_SETTING: &str = tascer_settings::STORE;

/// Where a home's sessions and ledger are kept.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database, by its connection URL (which may hold a
    /// password: print [`describe`](Self::describe), never this).
    Postgres(String),
}

impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StoreConfig({})", self.describe())
    }
}

impl StoreConfig {
    /// The store the home `home` is configured for (see the module docs).
    pub fn for_home(home: &Path) -> Result<StoreConfig, StoreError> {
        if let Ok(value) = std::env::var(STORE_ENV)
            && !value.trim().is_empty()
        {
            return Self::parse(&value, home)
                .map_err(|detail| StoreError::Config(format!("{STORE_ENV}: {detail}")));
        }
        let host = HostSettings::read(home).map_err(|e| StoreError::Config(e.to_string()))?;
        if let Some(value) = host.store {
            return Self::parse(&value, home).map_err(|detail| {
                StoreError::Config(format!(
                    "{}: \"{STORE_SETTING}\": {detail}",
                    home_settings_file(home).display()
                ))
            });
        }
        Ok(StoreConfig::Sqlite(home.join(HOME_DB_FILE)))
    }

    /// Reads one store value; relative `sqlite:` paths are under `home`.
    pub fn parse(value: &str, home: &Path) -> Result<StoreConfig, String> {
        let value = value.trim();
        if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            #[cfg(feature = "postgres")]
            parse_url(value).map_err(|e| e.to_string())?;
            return Ok(StoreConfig::Postgres(value.to_string()));
        }
        if value == "sqlite" {
            return Ok(StoreConfig::Sqlite(home.join(HOME_DB_FILE)));
        }
        if let Some(path) = value.strip_prefix("sqlite:").filter(|p| !p.is_empty()) {
            return Ok(StoreConfig::Sqlite(home.join(path)));
        }
        Err(
            "expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, \"sqlite\" or \
             \"sqlite:PATH\""
                .to_string(),
        )
    }

    /// Where the data is, safe to print: the file's path, or the URL
    /// without its password.
    pub fn describe(&self) -> String {
        match self {
            StoreConfig::Sqlite(path) => path.display().to_string(),
            #[cfg(feature = "postgres")]
            StoreConfig::Postgres(url) => match parse_url(url) {
                Ok(config) => describe_config(&config),
                Err(_) => "postgres://(invalid URL)".to_string(),
            },
            #[cfg(not(feature = "postgres"))]
            StoreConfig::Postgres(url) => describe_without_password(url),
        }
    }

    /// False for an SQLite file that does not exist yet (nothing was ever
    /// recorded there); true otherwise (a PostgreSQL store is asked when
    /// opened).
    pub fn exists(&self) -> bool {
        match self {
            StoreConfig::Sqlite(path) => path.is_file(),
            StoreConfig::Postgres(_) => true,
        }
    }

    /// Opens the store (creating an SQLite file, or migrating a PostgreSQL
    /// database, as needed).
    pub fn open(&self) -> Result<Arc<dyn Backend>, StoreError> {
        Ok(match self {
            StoreConfig::Sqlite(path) => Arc::new(SqliteBackend::open(path)?),
            StoreConfig::Postgres(url) => open_postgres(url)?,
        })
    }

    /// Opens the store for a short-lived process (a hook process writes a
    /// few entries and exits): an SQLite file's connection then leaves the
    /// WAL in place on close ([`SqliteBackend::open_short_lived`]); call
    /// [`Backend::bound_wal`] before the process ends. A PostgreSQL store
    /// opens as [`open`](Self::open) does.
    pub fn open_short_lived(&self) -> Result<Arc<dyn Backend>, StoreError> {
        Ok(match self {
            StoreConfig::Sqlite(path) => Arc::new(SqliteBackend::open_short_lived(path)?),
            StoreConfig::Postgres(url) => open_postgres(url)?,
        })
    }
}

/// Opens the PostgreSQL store at `url`.
#[cfg(feature = "postgres")]
fn open_postgres(url: &str) -> Result<Arc<dyn Backend>, StoreError> {
    Ok(Arc::new(PgBackend::open(url)?))
}

/// This build has no PostgreSQL client: a clear error instead of a store.
#[cfg(not(feature = "postgres"))]
fn open_postgres(url: &str) -> Result<Arc<dyn Backend>, StoreError> {
    Err(StoreError::Config(format!(
        "the store is {}, but this build of Tascer has no PostgreSQL support (it was built \
         without the `postgres` cargo feature); rebuild with the default features, or set \
         {STORE_ENV}=sqlite",
        describe_without_password(url)
    )))
}

/// `postgres://user@host:port/db` from a URL this build cannot parse
/// fully: the user's password (between `:` and `@`) and any query are
/// left out.
#[cfg(not(feature = "postgres"))]
fn describe_without_password(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    match rest.rsplit_once('@') {
        Some((userinfo, server)) => {
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("postgres://{user}@{server}")
        }
        None => format!("postgres://{rest}"),
    }
}

/// Opens the store the home is configured for ([`StoreConfig::for_home`]).
pub fn open_home_backend(home: &Path) -> Result<Arc<dyn Backend>, StoreError> {
    StoreConfig::for_home(home)?.open()
}

/// Opens the store the home is configured for, for a short-lived process
/// ([`StoreConfig::open_short_lived`]).
pub fn open_home_backend_short_lived(home: &Path) -> Result<Arc<dyn Backend>, StoreError> {
    StoreConfig::for_home(home)?.open_short_lived()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_and_describe_without_the_password() {
        let home = Path::new("/h");
        assert_eq!(
            StoreConfig::parse("sqlite", home).unwrap(),
            StoreConfig::Sqlite(home.join("tascer.db"))
        );
        assert_eq!(
            StoreConfig::parse("sqlite:other.db", home).unwrap(),
            StoreConfig::Sqlite(home.join("other.db"))
        );
        let pg = StoreConfig::parse("postgres://app:s3cret@db.example:6543/tascer", home).unwrap();
        assert_eq!(pg.describe(), "postgres://app@db.example:6543/tascer");
        assert!(!format!("{pg:?}").contains("s3cret"));
        let err = StoreConfig::parse("mysql://x", home).unwrap_err();
        assert!(err.contains("expected postgres://"), "{err}");
        #[cfg(feature = "postgres")]
        {
            let err = StoreConfig::parse("postgres://u:pw@h:notaport/db", home).unwrap_err();
            assert!(!err.contains("pw"), "{err}");
        }
    }

    /// A build without the `postgres` feature still reads a PostgreSQL
    /// store setting, and opening it says why it cannot, without the
    /// password (`cargo test -p tascer-store --no-default-features`).
    #[cfg(not(feature = "postgres"))]
    #[test]
    fn without_postgres_opening_a_postgres_store_says_so() {
        let home = Path::new("/h");
        let pg =
            StoreConfig::parse("postgres://app:s3cret@db.example:6543/tascer?x=1", home).unwrap();
        assert_eq!(pg.describe(), "postgres://app@db.example:6543/tascer");
        for opened in [pg.open(), pg.open_short_lived()] {
            let Err(err) = opened else {
                panic!("a PostgreSQL store opened without the postgres feature")
            };
            let err = err.to_string();
            assert!(err.contains("no PostgreSQL support"), "{err}");
            assert!(err.contains("`postgres` cargo feature"), "{err}");
            assert!(
                err.contains("postgres://app@db.example:6543/tascer"),
                "{err}"
            );
            assert!(!err.contains("s3cret"), "{err}");
        }
    }

    #[test]
    fn the_home_settings_file_names_the_store_and_bad_values_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        // No settings file: SQLite in the home (TASCER_STORE is not set by
        // the test runner; when it is, this test checks nothing else).
        if std::env::var_os(STORE_ENV).is_some() {
            return;
        }
        assert_eq!(
            StoreConfig::for_home(dir.path()).unwrap(),
            StoreConfig::Sqlite(dir.path().join("tascer.db"))
        );
        std::fs::write(
            dir.path().join("settings.json"),
            r#"{"store": "postgres://u@h:5/d"}"#,
        )
        .unwrap();
        assert_eq!(
            StoreConfig::for_home(dir.path()).unwrap(),
            StoreConfig::Postgres("postgres://u@h:5/d".into())
        );
        std::fs::write(dir.path().join("settings.json"), r#"{"store": 5}"#).unwrap();
        let err = StoreConfig::for_home(dir.path()).unwrap_err().to_string();
        assert!(err.contains("must be a string"), "{err}");
        std::fs::write(
            dir.path().join("settings.json"),
            r#"{"store": "redis://x"}"#,
        )
        .unwrap();
        let err = StoreConfig::for_home(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("settings.json") && err.contains("expected"),
            "{err}"
        );
    }
}
