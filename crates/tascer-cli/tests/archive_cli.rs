//! `tascer archive …` end to end: real sessions run by the built binary
//! against the mock model, archived to a directory (automatically, from
//! the settings) and to a real S3-compatible server (moto), listed,
//! verified with no access to the original home, fetched, tampered with,
//! and an upload killed with SIGKILL.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{tascer, texts};
use serde_json::{Value, json};
use tascer_testkit::s3::S3Server;
use tascer_testkit::{MockServer, Scenario, Turn};

async fn output(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    /// A home with a key, and a working directory with an ignored build
    /// folder and a log file.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let f = Fixture { dir };
        std::fs::create_dir_all(f.home()).unwrap();
        std::fs::create_dir_all(f.work().join("build")).unwrap();
        std::fs::write(f.work().join(".gitignore"), "build/\n").unwrap();
        std::fs::write(f.work().join("build/app.o"), "object").unwrap();
        std::fs::write(f.work().join("notes.md"), "# notes\n").unwrap();
        std::fs::write(f.work().join("debug.log"), "log").unwrap();
        let out = tascer(&f.home(), &f.work())
            .args(["keys", "generate"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}", texts(&out));
        f
    }
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = tascer(&self.home(), &self.work());
        cmd.args(args);
        cmd
    }
    /// Runs a session that writes `out.txt`; returns its id and stderr.
    async fn run_session(&self) -> (String, String) {
        let server = MockServer::start(
            Scenario::new()
                .turn(Turn::tool(
                    "Write",
                    json!({"file_path": "out.txt", "content": "written by the agent\n"}),
                ))
                .turn(Turn::text("Done.")),
        )
        .await
        .unwrap();
        let mut cmd = tascer(&self.home(), &self.work());
        cmd.env("ANTHROPIC_API_KEY", "test")
            .env("ANTHROPIC_BASE_URL", server.url())
            .args([
                "run",
                "--output-format",
                "json",
                "--permission-mode",
                "bypassPermissions",
                "write the file",
            ]);
        let out = output(cmd).await;
        let (stdout, stderr) = texts(&out);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        let result: Value = serde_json::from_str(stdout.trim()).unwrap();
        (result["session_id"].as_str().unwrap().to_string(), stderr)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn auto_archive_to_a_directory_then_list_verify_fetch_and_tamper() {
    let f = Fixture::new();
    let dest = f.path("archives");
    std::fs::write(
        f.home().join("settings.json"),
        serde_json::to_string(&json!({
            "archive": {"to": dest.display().to_string(), "auto": true, "exclude": ["*.log"]}
        }))
        .unwrap(),
    )
    .unwrap();
    let (session, stderr) = f.run_session().await;
    assert!(
        stderr.contains(&format!("archived session {session} to file://")),
        "{stderr}"
    );

    // list: the one archive.
    let out = output(f.cmd(&["archive", "list", dest.to_str().unwrap()])).await;
    let (stdout, _) = texts(&out);
    let urls: Vec<&str> = stdout.lines().collect();
    assert_eq!(urls.len(), 1, "{stdout}");
    let url = urls[0].to_string();
    assert!(url.contains(&session));

    // verify and fetch with the original home gone: only the public key kept.
    let pubkey = f.path("tascer.pub.pem");
    std::fs::copy(f.home().join("keys/tascer-ed25519.pub.pem"), &pubkey).unwrap();
    let pubkey_arg = pubkey.display().to_string();
    std::fs::remove_dir_all(f.home()).unwrap();
    let auditor_home = f.path("auditor");
    let auditor = |args: &[&str]| {
        let mut cmd = tascer(&auditor_home, &f.work());
        cmd.args(args);
        cmd
    };
    let out = output(auditor(&["archive", "verify", &url, "--key", &pubkey_arg])).await;
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.starts_with('✓'), "{stdout}");
    assert!(stdout.contains("head signed"), "{stdout}");

    let restored = f.path("restored");
    let out = output(auditor(&[
        "archive",
        "fetch",
        &url,
        restored.to_str().unwrap(),
        "--key",
        pubkey.to_str().unwrap(),
    ]))
    .await;
    assert!(out.status.success(), "{:?}", texts(&out));
    let workdir = restored.join("workdir");
    assert_eq!(
        std::fs::read_to_string(workdir.join("out.txt")).unwrap(),
        "written by the agent\n"
    );
    assert_eq!(
        std::fs::read_to_string(workdir.join("notes.md")).unwrap(),
        "# notes\n"
    );
    assert!(
        !workdir.join("debug.log").exists(),
        "excluded by the settings"
    );
    assert!(!workdir.join("build").exists(), "ignored by .gitignore");
    assert!(restored.join("ledger.jsonl").is_file());
    assert!(restored.join("attestation.intoto.jsonl").is_file());

    // The attestation names out.txt with the digest of what was written.
    let envelope: Value = serde_json::from_str(
        std::fs::read_to_string(restored.join("attestation.intoto.jsonl"))
            .unwrap()
            .trim(),
    )
    .unwrap();
    let statement: Value = {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(envelope["payload"].as_str().unwrap())
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    };
    assert_eq!(statement["subject"][0]["name"], "out.txt");

    // A file of the working directory changed inside the tarball.
    let root = PathBuf::from(url.trim_start_matches("file://"));
    let tarball = root.join("workdir.tar.gz");
    let mut bytes = std::fs::read(&tarball).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x55;
    std::fs::write(&tarball, bytes).unwrap();
    let out = output(auditor(&["archive", "verify", &url, "--key", &pubkey_arg])).await;
    let (stdout, _) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("✗ workdir.tar.gz: object changed"),
        "{stdout}"
    );

    // Signed by someone else than the pinned key.
    let other = f.path("other");
    let out = tascer(&other, &f.work())
        .args(["keys", "generate"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = output(auditor(&[
        "archive",
        "verify",
        &url,
        "--key",
        other.join("keys/tascer-ed25519.pub.pem").to_str().unwrap(),
    ]))
    .await;
    let (stdout, _) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("not by the trusted key"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_gets_a_clear_error() {
    let f = Fixture::new();
    let out = output(f.cmd(&["archive", "nosuch", "--to", f.path("a").to_str().unwrap()])).await;
    let (_, stderr) = texts(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("no ledger database"), "{stderr}");
    let (session, _) = f.run_session().await;
    let out = output(f.cmd(&["archive", &session])).await;
    let (_, stderr) = texts(&out);
    assert!(
        stderr.contains("pass --to s3://BUCKET/PREFIX or --to DIR"),
        "{stderr}"
    );
    let out = output(f.cmd(&["archive", &session, "--to", "gs://bucket/x"])).await;
    let (_, stderr) = texts(&out);
    assert!(
        stderr.contains("only s3:// and local directories"),
        "{stderr}"
    );
    let out = output(f.cmd(&["archive", "verify", f.path("nothing").to_str().unwrap()])).await;
    let (_, stderr) = texts(&out);
    assert!(stderr.contains("has no manifest.json"), "{stderr}");
}

/// Incompressible bytes.
fn noise(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_archive_list_verify_and_a_killed_upload_lists_nothing() {
    let Some(moto) = S3Server::shared("s3_archive_list_verify_and_a_killed_upload_lists_nothing")
    else {
        return;
    };
    moto.create_bucket("cli").unwrap();
    let f = Fixture::new();
    let (session, _) = f.run_session().await;
    let s3 = |args: &[&str]| {
        let mut cmd = f.cmd(args);
        cmd.envs(moto.env());
        cmd
    };

    let out = output(s3(&["archive", &session, "--to", "s3://cli/team"])).await;
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let url = stdout.trim().to_string();
    assert!(
        url.starts_with(&format!("s3://cli/team/{session}/")),
        "{url}"
    );
    let out = output(s3(&["archive", "list", "s3://cli/team"])).await;
    assert_eq!(texts(&out).0.trim(), url);
    let out = output(s3(&["archive", "verify", &url, "--json"])).await;
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["key_pinned"], true);

    // A large working directory; the upload is killed while its
    // multipart upload is in progress.
    std::fs::write(f.work().join("data.bin"), noise(48 * 1024 * 1024)).unwrap();
    let mut child = s3(&["archive", &session, "--to", "s3://cli/killed"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if moto.has_open_multipart_upload("cli").unwrap() {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the upload finished before it could be killed"
        );
        assert!(Instant::now() < deadline, "no multipart upload started");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let keys = moto.keys("cli").unwrap();
    assert!(
        keys.iter().any(|k| k.starts_with("killed/")),
        "the killed upload had written objects: {keys:?}"
    );
    let out = output(s3(&["archive", "list", "s3://cli/killed"])).await;
    let (stdout, stderr) = texts(&out);
    assert!(out.status.success());
    assert_eq!(stdout.trim(), "", "a half archive is listed");
    assert!(
        stderr.contains("no archives under s3://cli/killed"),
        "{stderr}"
    );
}
