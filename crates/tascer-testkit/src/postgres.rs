//! A real PostgreSQL server for tests, from the Debian package
//! (`postgresql`, installed by `scripts/install-postgres`): a throw-away
//! cluster (`initdb` in a temp dir) on a free loopback port, trust
//! authentication, superuser `postgres`.
//!
//! Two ways to get one:
//!
//! - `TASCER_TEST_POSTGRES_URL` set (`.ci/run` starts one server for the
//!   whole run and exports it): that server is used; nothing is started.
//! - otherwise the first test of a binary starts a cluster, kept in a
//!   `static` for all its tests. It runs under a watchdog shell that stops
//!   it (fast shutdown, then deletes its data directory) when the test
//!   process is gone, even after a panic or `kill -9`. A server that failed
//!   to start leaves its directory, logs included, for a look.
//!
//! Tests isolate themselves with [`PgServer::fresh_database`], which
//! creates a new, empty database and returns its URL.
//!
//! PostgreSQL refuses to run as root; when the tests run as root, the
//! server runs as the `postgres` system user the Debian package creates.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Environment variable naming an already running server
/// (`postgres://postgres@127.0.0.1:PORT`) for the tests to use.
pub const POSTGRES_URL_ENV: &str = "TASCER_TEST_POSTGRES_URL";

/// How to install the server, for a test's `SKIPPED` line.
pub const POSTGRES_INSTALL_HINT: &str =
    "install with scripts/install-postgres (Debian package postgresql)";

/// A PostgreSQL server the tests may use: one this process started, or the
/// one [`POSTGRES_URL_ENV`] names.
#[derive(Debug)]
pub struct PgServer {
    /// `postgres://postgres@127.0.0.1:PORT` (no database part).
    base_url: String,
    host: String,
    port: u16,
    child: Option<Child>,
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The directory holding `initdb`, `postgres` and `psql`: the newest
/// `/usr/lib/postgresql/<version>/bin` (Debian's layout), else `None` (the
/// programs are then looked up on `PATH`).
fn server_bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            bin.join("postgres").is_file().then_some((version, bin))
        })
        .collect();
    dirs.sort();
    dirs.pop().map(|(_, bin)| bin)
}

fn program(bin: &Option<PathBuf>, name: &str) -> String {
    match bin {
        Some(dir) => dir.join(name).display().to_string(),
        None => name.to_string(),
    }
}

/// True when a PostgreSQL server can be started here (or one is named by
/// [`POSTGRES_URL_ENV`]).
pub fn postgres_available() -> bool {
    if std::env::var_os(POSTGRES_URL_ENV).is_some() {
        return true;
    }
    let bin = server_bin_dir();
    Command::new(program(&bin, "initdb"))
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// Single-quotes `s` for bash.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl PgServer {
    /// Starts a new cluster on a free loopback port and waits (up to 60 s)
    /// until it accepts connections. `Ok(None)` when PostgreSQL is not
    /// installed.
    pub fn start() -> std::io::Result<Option<PgServer>> {
        let bin = server_bin_dir();
        if !Command::new(program(&bin, "initdb"))
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
        {
            return Ok(None);
        }
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let dir = tempfile_dir()?;
        let as_user = if running_as_root() {
            "runuser -u postgres --"
        } else {
            ""
        };
        let chown = if running_as_root() {
            "chown -R postgres: \"$d\" &&".to_string()
        } else {
            String::new()
        };
        let log = format!("{dir}/server.log");
        let script = format!(
            "set -e; d={d}; {chown} \
             {as_user} {initdb} -D \"$d/data\" -U postgres --auth=trust -E UTF8 --no-sync >\"$d/initdb.log\" 2>&1; \
             set +e; \
             {as_user} {postgres} -D \"$d/data\" -p {port} -k \"$d\" -c listen_addresses=127.0.0.1 \
               -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 \
               >\"$d/server.log\" 2>&1 & m=$!; \
             trap 'if [ -f \"$d/data/postmaster.pid\" ]; then kill -INT \"$(head -n 1 \"$d/data/postmaster.pid\")\"; wait $m; rm -rf \"$d\"; fi' EXIT TERM; \
             while kill -0 {pid} 2>/dev/null && kill -0 $m 2>/dev/null; do sleep 0.2; done",
            d = sh_quote(&dir),
            initdb = program(&bin, "initdb"),
            postgres = program(&bin, "postgres"),
            pid = std::process::id(),
        );
        let child = Command::new("bash")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let mut server = PgServer {
            base_url: format!("postgres://postgres@127.0.0.1:{port}"),
            host: "127.0.0.1".to_string(),
            port,
            child: Some(child),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            let exited = server
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
                .is_some();
            if exited || Instant::now() > deadline {
                let initdb_log =
                    std::fs::read_to_string(format!("{dir}/initdb.log")).unwrap_or_default();
                let server_log = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(std::io::Error::other(format!(
                    "PostgreSQL did not start on port {port}: initdb said {initdb_log:?}; the server said {server_log:?}"
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        server.wait_ready()?;
        Ok(Some(server))
    }

    /// Waits until `psql` can run a query (the port opens slightly before
    /// the server accepts sessions).
    fn wait_ready(&self) -> std::io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.psql("postgres", "SELECT 1") {
                Ok(_) => return Ok(()),
                Err(err) if Instant::now() > deadline => return Err(err),
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }

    /// The server [`POSTGRES_URL_ENV`] names, when set.
    fn from_env() -> Option<PgServer> {
        let url = std::env::var(POSTGRES_URL_ENV).ok()?;
        let (base_url, host, port) = parse_server_url(&url)?;
        Some(PgServer {
            base_url,
            host,
            port,
            child: None,
        })
    }

    /// The one server of this test binary: the one [`POSTGRES_URL_ENV`]
    /// names, or one started on first use. `None` (after printing
    /// `SKIPPED: <test>: …`) when PostgreSQL is not installed.
    ///
    /// # Panics
    ///
    /// When PostgreSQL is installed but does not start (a test set-up
    /// failure, not a skip).
    #[allow(clippy::expect_used)]
    pub fn shared(test: &str) -> Option<&'static PgServer> {
        static SERVER: OnceLock<Option<PgServer>> = OnceLock::new();
        let server = SERVER
            .get_or_init(|| {
                PgServer::from_env().or_else(|| {
                    PgServer::start().expect("PostgreSQL is installed but does not start")
                })
            })
            .as_ref();
        if server.is_none() {
            crate::skip(
                test,
                &format!("PostgreSQL not found; {POSTGRES_INSTALL_HINT}"),
            );
        }
        server
    }

    /// `postgres://postgres@HOST:PORT` (no database).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The URL of `database` on this server.
    pub fn url(&self, database: &str) -> String {
        format!("{}/{database}", self.base_url)
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Creates a new, empty database with a unique name built from `hint`
    /// and returns its URL.
    pub fn fresh_database(&self, hint: &str) -> std::io::Result<String> {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let clean: String = hint
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .take(30)
            .collect();
        let name = format!(
            "t_{clean}_{}_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            fastrand_suffix()
        );
        self.psql("postgres", &format!("CREATE DATABASE \"{name}\""))?;
        Ok(self.url(&name))
    }

    /// Runs one SQL command with `psql` against `database`; its output
    /// (unaligned, tuples only) on success.
    pub fn psql(&self, database: &str, sql: &str) -> std::io::Result<String> {
        let bin = server_bin_dir();
        let out = Command::new(program(&bin, "psql"))
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .args([
                "-h",
                &self.host,
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
            ])
            .args(["-d", database, "-c", sql])
            .stdin(Stdio::null())
            .output()?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(std::io::Error::other(format!(
                "psql {sql:?} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )))
        }
    }
}

/// `(base URL without database, host, port)` of a `postgres://` URL that
/// names its port.
fn parse_server_url(url: &str) -> Option<(String, String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split('/').next()?;
    let host_port = authority.rsplit('@').next()?;
    let (host, port) = host_port.rsplit_once(':')?;
    Some((
        format!("{scheme}://{authority}"),
        host.to_string(),
        port.parse().ok()?,
    ))
}

/// A new directory under the system temp dir, readable by the `postgres`
/// user once chowned (mode 0700 is set by initdb on its data directory).
fn tempfile_dir() -> std::io::Result<String> {
    let dir = std::env::temp_dir().join(format!(
        "tascer-pg-{}-{}",
        std::process::id(),
        fastrand_suffix()
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir.display().to_string())
}

/// Eight hex digits from the clock, enough to keep two names apart.
fn fastrand_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{nanos:08x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_starts_and_gives_isolated_databases() {
        let Some(server) = PgServer::shared("a_server_starts_and_gives_isolated_databases") else {
            return;
        };
        let a = server.fresh_database("one").unwrap();
        let b = server.fresh_database("one").unwrap();
        assert_ne!(a, b);
        let db = a.rsplit('/').next().unwrap();
        server.psql(db, "CREATE TABLE t (x int)").unwrap();
        server.psql(db, "INSERT INTO t VALUES (41), (1)").unwrap();
        assert_eq!(
            server.psql(db, "SELECT sum(x) FROM t").unwrap().trim(),
            "42"
        );
        let other = b.rsplit('/').next().unwrap();
        assert!(server.psql(other, "SELECT * FROM t").is_err());
    }

    #[test]
    fn a_server_url_is_split_into_base_host_and_port() {
        assert_eq!(
            parse_server_url("postgres://postgres@127.0.0.1:5544/"),
            Some((
                "postgres://postgres@127.0.0.1:5544".to_string(),
                "127.0.0.1".to_string(),
                5544
            ))
        );
        assert_eq!(
            parse_server_url("postgres://u:pw@db.local:6000/some_db"),
            Some((
                "postgres://u:pw@db.local:6000".to_string(),
                "db.local".to_string(),
                6000
            ))
        );
        assert_eq!(parse_server_url("postgres://127.0.0.1"), None);
    }
}
