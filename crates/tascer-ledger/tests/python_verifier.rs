//! A third-party verifier (securesystemslib + in-toto-attestation through
//! `tests/vectors/dsse/verify_envelope.py`) accepts exported envelopes.
//! Skipped, with a note, where those Python packages are not installed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;
use tascer_ledger::{EntryKind, Ledger, Subject, generate_keypair};

fn python_ready() -> bool {
    Command::new("python3")
        .args(["-c", "import securesystemslib, cryptography"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn exported_envelope_passes_verify_envelope_py() {
    if !python_ready() {
        tascer_testkit::skip(
            "exported_envelope_passes_verify_envelope_py",
            "python3 with securesystemslib is not available; install with \
             `pip install cryptography securesystemslib==1.6.0 in-toto-attestation==0.9.3`",
        );
        return;
    }
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/dsse/verify_envelope.py");
    let home = tempfile::tempdir().unwrap();
    let (key, paths) = generate_keypair(home.path(), false).unwrap();
    let ledger = Ledger::open_in_home(home.path(), Some(key)).unwrap();
    let s = "export-session";
    ledger
        .append(s, EntryKind::SessionStart, json!({"model": "m"}))
        .unwrap();
    ledger
        .append(
            s,
            EntryKind::UserPrompt,
            json!({"text": "caf\u{e9} \u{2713} <&>"}),
        )
        .unwrap();
    ledger
        .append(
            s,
            EntryKind::SessionEnd,
            json!({"status": "success", "cost_usd": 0.25}),
        )
        .unwrap();
    let changed = home.path().join("changed.rs");
    std::fs::write(&changed, "fn main() {}\n").unwrap();
    let env = ledger
        .export_attestation(
            s,
            vec![Subject::from_file("src/changed.rs", &changed).unwrap()],
        )
        .unwrap();
    let env_path = home.path().join("envelope.json");
    std::fs::write(&env_path, serde_json::to_string_pretty(&env).unwrap()).unwrap();

    let run = |subject: &PathBuf| {
        Command::new("python3")
            .arg(&script)
            .arg(&env_path)
            .arg(&paths.public)
            .arg("--subject")
            .arg(subject)
            .output()
            .unwrap()
    };
    let out = run(&changed);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("VERIFIED"), "{text}");
    assert!(
        text.contains("securesystemslib Envelope.verify accepted"),
        "{text}"
    );

    // a subject file that changed afterwards is rejected
    std::fs::write(&changed, "fn main() { evil() }\n").unwrap();
    let out = run(&changed);
    assert!(!out.status.success());

    // the default subject (the ledger head) also verifies
    let env = ledger.export_attestation(s, Vec::new()).unwrap();
    std::fs::write(&env_path, serde_json::to_string(&env).unwrap()).unwrap();
    let out = Command::new("python3")
        .arg(&script)
        .arg(&env_path)
        .arg(&paths.public)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
