//! A real S3-compatible server for tests: moto's `moto_server` (PyPI
//! `moto[server]`, installed by `scripts/install-moto`), on a free loopback
//! port, path-style, plain HTTP.
//!
//! The server runs under a small watchdog shell that stops it when the
//! test process that started it is gone, so a test binary can keep one
//! server in a `static` for all its tests and still leave nothing running
//! (even after a panic or `kill -9`). Dropping an [`S3Server`] stops it at
//! once.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How to install the server, for a test's `SKIPPED` line.
pub const MOTO_INSTALL_HINT: &str =
    "install with scripts/install-moto (pip install 'moto[server]')";

/// A running moto S3 server.
#[derive(Debug)]
pub struct S3Server {
    endpoint: String,
    child: Child,
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// True when `moto_server` can be run.
pub fn moto_available() -> bool {
    Command::new("moto_server")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl S3Server {
    /// Starts moto on a free loopback port and waits (up to 30 s) until it
    /// accepts connections. `Ok(None)` when `moto_server` is not installed.
    pub fn start() -> std::io::Result<Option<S3Server>> {
        if !moto_available() {
            return Ok(None);
        }
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let script = format!(
            "moto_server -H 127.0.0.1 -p {port} >/dev/null 2>&1 & m=$!; \
             trap 'kill $m 2>/dev/null' EXIT TERM; \
             while kill -0 {pid} 2>/dev/null && kill -0 $m 2>/dev/null; do sleep 0.2; done",
            pid = std::process::id()
        );
        let child = Command::new("bash")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .spawn()?;
        let server = S3Server {
            endpoint: format!("http://127.0.0.1:{port}"),
            child,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return Err(std::io::Error::other(format!(
                    "moto_server did not start on port {port} within 30 s"
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(Some(server))
    }

    /// The one server of this test binary, started on first use; `None`
    /// (after printing `SKIPPED: <test>: …`) when moto is not installed.
    /// Its watchdog stops it when the binary exits.
    ///
    /// # Panics
    ///
    /// When `moto_server` is installed but does not start (a test set-up
    /// failure, not a skip).
    #[allow(clippy::expect_used)]
    pub fn shared(test: &str) -> Option<&'static S3Server> {
        static SERVER: OnceLock<Option<S3Server>> = OnceLock::new();
        let server = SERVER
            .get_or_init(|| S3Server::start().expect("moto_server is installed but does not start"))
            .as_ref();
        if server.is_none() {
            crate::skip(test, &format!("moto_server not found; {MOTO_INSTALL_HINT}"));
        }
        server
    }

    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The `AWS_*` environment a client of this server needs (endpoint,
    /// dummy credentials, region).
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT_URL", self.endpoint.as_str()),
            ("AWS_ACCESS_KEY_ID", "testing"),
            ("AWS_SECRET_ACCESS_KEY", "testing"),
            ("AWS_REGION", "us-east-1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    /// One raw, unsigned HTTP request (moto accepts them): the whole
    /// response, status line included.
    pub fn http(&self, method: &str, path: &str) -> std::io::Result<String> {
        let addr = self.endpoint.trim_start_matches("http://");
        let mut stream = TcpStream::connect(addr)?;
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )?;
        let mut out = String::new();
        stream.read_to_string(&mut out)?;
        Ok(out)
    }

    /// Creates a bucket.
    pub fn create_bucket(&self, bucket: &str) -> std::io::Result<()> {
        let reply = self.http("PUT", &format!("/{bucket}"))?;
        if reply.starts_with("HTTP/1.1 200") {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "cannot create bucket {bucket}: {reply}"
            )))
        }
    }

    /// True when the bucket has a multipart upload in progress.
    pub fn has_open_multipart_upload(&self, bucket: &str) -> std::io::Result<bool> {
        Ok(self
            .http("GET", &format!("/{bucket}?uploads"))?
            .contains("<Upload>"))
    }

    /// The keys in a bucket (first 1000).
    pub fn keys(&self, bucket: &str) -> std::io::Result<Vec<String>> {
        let reply = self.http("GET", &format!("/{bucket}?list-type=2"))?;
        Ok(reply
            .split("<Key>")
            .skip(1)
            .filter_map(|s| s.split("</Key>").next())
            .map(str::to_string)
            .collect())
    }
}
