//! The built `tascer` binary's ledger commands (`keys generate`, `verify`,
//! `report`, `export`) on ledgers written with the `tascer-ledger` API.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use tascer_ledger::keys::{KeyPaths, load_home_signing_key};
use tascer_ledger::{
    EntryKind, GateOutcome, Ledger, SessionStart, ToolRecord, ToolStatus, key_id, sha256_ref,
};

const SESSION: &str = "11111111-2222-3333-4444-555555555555";

/// A `tascer` command with its own home and working directory.
fn tascer(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tascer"))
        .env("TASCER_HOME", home)
        .env_remove("TASCER_LOG")
        .current_dir(cwd)
        .args(args)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Fixture { dir }
    }
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }
    fn run(&self, args: &[&str]) -> Output {
        tascer(&self.home(), &self.work(), args)
    }
    fn generate_key(&self) {
        let out = self.run(&["keys", "generate"]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    /// Writes a session: start, prompt, a Write call (validated, gates,
    /// permission, evidence), a blocked Bash call, an unclosed Read call,
    /// end. (The hooks a report shows are those a real session ran:
    /// `audit_cli.rs`.) Signed with the home key when there is one.
    fn write_session(&self, session: &str) {
        let key = load_home_signing_key(self.home()).unwrap();
        let ledger = Ledger::open_in_home(self.home(), key).unwrap();
        let work = self.work();
        ledger
            .start_session(
                session,
                &SessionStart {
                    model: "claude-test".into(),
                    options_digest: sha256_ref(b"{}"),
                    system_prompt_digest: sha256_ref(b"be nice"),
                    signing_key_id: None,
                    context: json!({"cwd": work.to_string_lossy()}),
                },
            )
            .unwrap();
        ledger
            .append(
                session,
                EntryKind::UserPrompt,
                json!({"text": "write a file"}),
            )
            .unwrap();
        std::fs::write(work.join("out.txt"), "hello from the agent\n").unwrap();
        let mut write = ToolRecord::open(
            "toolu_write",
            "Write",
            json!({"file_path": "out.txt", "content": "hello from the agent\n"}),
            "2026-01-01T00:00:00.000Z",
        );
        write.context = json!({"cwd": work.to_string_lossy()});
        ledger.open_tool_call(session, &write).unwrap();
        let evidence = ledger.put_evidence(session, b"wrote 21 bytes").unwrap();
        write.output_digest = Some(evidence.clone());
        write.evidence = vec![evidence];
        write.finished_at = Some("2026-01-01T00:00:01.000Z".into());
        write.pre_gates = vec![GateOutcome {
            gate: "path-policy".into(),
            passed: true,
            message: String::new(),
            duration_ms: 1,
        }];
        write.post_gates = vec![GateOutcome {
            gate: "tests".into(),
            passed: true,
            message: "ok".into(),
            duration_ms: 12,
        }];
        write.permission = json!({"decision": "allow", "tool_use_id": "toolu_write"});
        write.status = ToolStatus::Validated;
        ledger.close_tool_call(session, &mut write).unwrap();
        ledger
            .append(
                session,
                EntryKind::PermissionDecision,
                json!({"tool_use_id": "toolu_bash", "decision": "deny"}),
            )
            .unwrap();
        let mut bash = ToolRecord::open(
            "toolu_bash",
            "Bash",
            json!({"command": "rm -rf /"}),
            "2026-01-01T00:00:02.000Z",
        );
        bash.permission = json!({"decision": "deny"});
        bash.status = ToolStatus::Blocked;
        ledger.close_tool_call(session, &mut bash).unwrap();
        let read = ToolRecord::open(
            "toolu_read",
            "Read",
            json!({"file_path": "out.txt"}),
            "2026-01-01T00:00:03.000Z",
        );
        ledger.open_tool_call(session, &read).unwrap();
        ledger
            .append(
                session,
                EntryKind::SessionEnd,
                json!({"status": "success", "cost_usd": 0.0123,
                       "usage": {"input_tokens": 10, "output_tokens": 2}, "num_turns": 2}),
            )
            .unwrap();
    }
    fn tamper_payload(&self, session: &str, seq: i64) {
        let conn = rusqlite::Connection::open(self.home().join("tascer.db")).unwrap();
        let n = conn
            .execute(
                "UPDATE ledger_entries SET payload = ?1 WHERE session_id = ?2 AND seq = ?3",
                rusqlite::params![r#"{"text":"something else"}"#, session, seq],
            )
            .unwrap();
        assert_eq!(n, 1);
    }
    fn home_key_id(&self) -> String {
        let key = load_home_signing_key(self.home()).unwrap().unwrap();
        key_id(&key.verifying_key())
    }
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn keys_generate_writes_the_pair_and_refuses_to_overwrite() {
    let f = Fixture::new();
    let out = f.run(&["keys", "generate"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let paths = KeyPaths::in_home(f.home());
    assert!(paths.private.is_file() && paths.public.is_file());
    assert!(paths.public.to_string_lossy().ends_with(".pub.pem"));
    let public = std::fs::read_to_string(&paths.public).unwrap();
    assert!(public.contains("-----BEGIN PUBLIC KEY-----"), "{public}");
    #[cfg(unix)]
    assert_eq!(mode(&paths.private), 0o600);
    let text = stdout(&out);
    let id = f.home_key_id();
    assert!(text.contains(&id), "{text}");
    assert!(
        text.contains(&paths.private.display().to_string()),
        "{text}"
    );
    assert!(text.contains(&paths.public.display().to_string()), "{text}");

    let again = f.run(&["keys", "generate"]);
    assert_eq!(again.status.code(), Some(1));
    let err = stderr(&again);
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        f.home_key_id(),
        id,
        "the key must not change without --force"
    );

    let forced = f.run(&["keys", "generate", "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert_ne!(f.home_key_id(), id);
    #[cfg(unix)]
    assert_eq!(mode(&paths.private), 0o600);
}

#[test]
fn verify_passes_on_an_intact_signed_session() {
    let f = Fixture::new();
    f.generate_key();
    f.write_session(SESSION);
    let out = f.run(&["verify", SESSION]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(
        text.contains(&format!(
            "✓ {SESSION}: 8 entries, signed by {}",
            f.home_key_id()
        )),
        "{text}"
    );

    // The same with an explicit key, and as JSON.
    let pem = KeyPaths::in_home(f.home()).public;
    let out = f.run(&["verify", SESSION, "--key", pem.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["signed"], true);
    assert_eq!(v["entries_checked"], 8);
}

#[test]
fn verify_names_the_tampered_entry() {
    let f = Fixture::new();
    f.generate_key();
    f.write_session(SESSION);
    f.tamper_payload(SESSION, 2);
    let out = f.run(&["verify", SESSION]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("✗ {SESSION}: entry 2: EditedEntry (")),
        "{text}"
    );
    let out = f.run(&["verify", SESSION, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["first_broken"]["seq"], 2);
}

#[test]
fn verify_all_checks_every_session_and_fails_if_one_fails() {
    let f = Fixture::new();
    f.generate_key();
    let other = "other-session";
    f.write_session(SESSION);
    f.write_session(other);
    let out = f.run(&["verify", "--all"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(stdout(&out).matches('✓').count(), 2, "{}", stdout(&out));

    f.tamper_payload(other, 2);
    let out = f.run(&["verify", "--all"]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains(&format!("✓ {SESSION}")), "{text}");
    assert!(text.contains(&format!("✗ {other}: entry 2")), "{text}");
}

#[test]
fn verify_reports_unknown_sessions_and_unsigned_ones() {
    let f = Fixture::new();
    // No key in the home: the session is written unsigned.
    f.write_session(SESSION);
    let out = f.run(&["verify", SESSION]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("UNSIGNED"), "{text}");

    let out = f.run(&["verify", "no-such-session"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("unknown session no-such-session"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // Neither a session nor --all: a usage error.
    let out = f.run(&["verify"]);
    assert!(!out.status.success());
}

#[test]
fn report_text_and_json() {
    let f = Fixture::new();
    f.generate_key();
    f.write_session(SESSION);
    let out = f.run(&["report", SESSION]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    for needle in [
        "model    claude-test",
        "status   success",
        "[validated] Write toolu_write",
        "[blocked] Bash toolu_bash",
        "[pending] Read toolu_read",
        "post-gates  tests ✓ (12 ms)",
        "pre-gates   path-policy ✓ (1 ms)",
        "permission  allow   hooks run 0",
        "permission  deny   hooks run 0",
        "(valid)",
        "ledger head: entry 8",
        "verify: ✓",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }

    let out = f.run(&["report", SESSION, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["session_id"], SESSION);
    assert_eq!(v["entries"], 8);
    assert_eq!(v["tools"].as_array().unwrap().len(), 3);
    assert_eq!(v["tool_status_counts"]["validated"], 1);
    assert_eq!(v["tool_status_counts"]["blocked"], 1);
    assert_eq!(v["tool_status_counts"]["pending"], 1);
    assert_eq!(v["permission_decisions"], 1);

    let out = f.run(&["report", "no-such-session"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("unknown session"), "{}", stderr(&out));
}

#[test]
fn a_reader_that_went_away_ends_report_and_verify_quietly() {
    let f = Fixture::new();
    f.generate_key();
    f.write_session(SESSION);
    for args in [
        &["report", SESSION][..],
        &["report", SESSION, "--format", "json"],
        &["verify", SESSION],
        &["sessions", "list"],
    ] {
        // Standard output is a pipe whose reader is already gone, as with
        // `tascer report … | head -0`: every write fails with EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_tascer"))
            .env("TASCER_HOME", f.home())
            .current_dir(f.work())
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
        // 141, as a Unix tool killed by SIGPIPE: `set -o pipefail` sees it.
        assert_eq!(out.status.code(), Some(141), "{args:?}");
    }
}

#[test]
fn export_without_a_key_tells_the_user_to_generate_one() {
    let f = Fixture::new();
    f.write_session(SESSION);
    let out = f.run(&["export", SESSION, "--attestation"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("tascer keys generate"), "{err}");
}

fn python_has_securesystemslib() -> bool {
    Command::new("python3")
        .args(["-c", "import securesystemslib"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn export_writes_an_envelope_the_reference_verifier_accepts() {
    let f = Fixture::new();
    f.generate_key();
    f.write_session(SESSION);
    let out = f.run(&["export", SESSION, "--attestation"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let envelope_path = f.work().join(format!("{SESSION}.intoto.jsonl"));
    let text = std::fs::read_to_string(&envelope_path).unwrap();
    assert_eq!(text.lines().count(), 1);
    let envelope = tascer_ledger::Envelope::from_json(&text).unwrap();
    let key = load_home_signing_key(f.home()).unwrap().unwrap();
    let payload = envelope
        .verify(&key.verifying_key(), tascer_ledger::IN_TOTO_PAYLOAD_TYPE)
        .unwrap();
    let statement: Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(statement["_type"], tascer_ledger::STATEMENT_V1);
    let subjects = statement["subject"].as_array().unwrap();
    assert_eq!(subjects.len(), 1, "{statement}");
    assert_eq!(subjects[0]["name"], "out.txt");
    assert_eq!(
        format!(
            "sha256:{}",
            subjects[0]["digest"]["sha256"].as_str().unwrap()
        ),
        sha256_ref(b"hello from the agent\n")
    );
    assert_eq!(statement["predicate"]["ledger"]["verified"], true);

    // `-o -` writes the same kind of envelope to stdout.
    let out = f.run(&["export", SESSION, "--attestation", "-o", "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    tascer_ledger::Envelope::from_json(stdout(&out).trim()).unwrap();

    if !python_has_securesystemslib() {
        tascer_testkit::skip(
            "export_writes_an_envelope_the_reference_verifier_accepts (its reference check)",
            "python3 with securesystemslib is not available",
        );
        return;
    }
    let pubkey = KeyPaths::in_home(f.home()).public;
    let out = Command::new("python3")
        .arg(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tascer-ledger/tests/vectors/dsse/verify_envelope.py"),
        )
        .arg(&envelope_path)
        .arg(&pubkey)
        .arg("--subject")
        .arg(f.work().join("out.txt"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "verify_envelope.py rejected the envelope:\n{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("VERIFIED"), "{}", stdout(&out));
}

#[test]
fn export_refuses_a_tampered_session() {
    let f = Fixture::new();
    f.generate_key();
    f.write_session(SESSION);
    f.tamper_payload(SESSION, 2);
    let out = f.run(&["export", SESSION, "--attestation", "-o", "x.jsonl"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("broken"), "{}", stderr(&out));
    assert!(!f.work().join("x.jsonl").exists());
}
