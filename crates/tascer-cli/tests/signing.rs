//! Signed by default: the first `tascer run` in a new Tascer home creates
//! the signing key (private key mode 0600, a one-line notice on stderr
//! naming it) and signs the session; `TASCER_SIGNING=off` writes an
//! unsigned ledger, which `tascer verify` still warns about.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use common::*;
use tascer_testkit::{MockServer, Scenario, Turn};

fn run(home: &Path, ws: &Path, url: &str, signing: Option<&str>) -> (String, String) {
    let mut cmd = run_cmd(home, ws, url, "hello", &[]);
    if let Some(value) = signing {
        cmd.env("TASCER_SIGNING", value);
    }
    let out = cmd.output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let result = json_lines(stdout.as_bytes()).pop().unwrap();
    (result["session_id"].as_str().unwrap().to_string(), stderr)
}

fn verify(home: &Path, ws: &Path, session: &str) -> String {
    let out = tascer(home, ws).args(["verify", session]).output().unwrap();
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout
}

#[test]
fn the_first_run_creates_the_key_and_signs_every_session() {
    let root = tempfile::tempdir().unwrap();
    let (home, ws) = (root.path().join("home"), root.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    let server = MockServer::start_blocking(Scenario::new().turn(Turn::text("hi"))).unwrap();
    let private = home.join("keys/tascer-ed25519.key");
    let public = home.join("keys/tascer-ed25519.pub.pem");

    let (first, stderr) = run(&home, &ws, &server.url(), None);
    let notices: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("created the ledger signing key"))
        .collect();
    assert_eq!(notices.len(), 1, "one notice line: {stderr}");
    assert!(
        notices[0].contains(&private.display().to_string()),
        "{}",
        notices[0]
    );
    assert!(notices[0].contains("TASCER_SIGNING=off"), "{}", notices[0]);
    let mode = std::fs::metadata(&private).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "private key mode {mode:o}");
    assert!(public.is_file());
    let key = std::fs::read(&private).unwrap();
    assert!(verify(&home, &ws, &first).contains("signed by"));

    // The next run uses the same key, quietly.
    let (second, stderr) = run(&home, &ws, &server.url(), None);
    assert!(!stderr.contains("signing key"), "{stderr}");
    assert_eq!(std::fs::read(&private).unwrap(), key);
    assert!(verify(&home, &ws, &second).contains("signed by"));
}

#[test]
fn signing_off_writes_an_unsigned_ledger_that_verify_warns_about() {
    let root = tempfile::tempdir().unwrap();
    let (home, ws) = (root.path().join("home"), root.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    let server = MockServer::start_blocking(Scenario::new().turn(Turn::text("hi"))).unwrap();
    let (session, stderr) = run(&home, &ws, &server.url(), Some("off"));
    assert!(!stderr.contains("signing key"), "{stderr}");
    assert!(!home.join("keys").exists(), "no key was created");
    let text = verify(&home, &ws, &session);
    assert!(
        text.contains("UNSIGNED") && text.contains("a cut-off tail cannot be detected"),
        "{text}"
    );
}
