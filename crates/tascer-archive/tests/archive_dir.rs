//! Archives in a local directory: round trip, tampering, interruptions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{Failing, recorded_session, request, tree};
use tascer_archive::{
    ArchiveError, Location, WorkdirPolicy, list_archives, stage, upload, verify_archive,
};

#[tokio::test]
async fn round_trip_list_verify_restore() {
    let s = recorded_session(0);
    let dest = s.dir.path().join("archives");
    let loc = Location::parse(dest.to_str().unwrap()).unwrap();
    let staged = stage(&request(&s)).unwrap();
    let archived = upload(&staged, &loc).await.unwrap();
    assert!(archived.url.starts_with("file://"), "{}", archived.url);
    assert!(archived.url.contains(&s.id));

    let listed = list_archives(&loc).await.unwrap();
    assert_eq!(listed, vec![archived.url.clone()]);

    // Verify from the archive alone: the original home is gone.
    std::fs::remove_dir_all(s.home()).unwrap();
    let restore = s.dir.path().join("restored");
    let vk = s.key.verifying_key();
    let report = verify_archive(
        &Location::parse(&archived.url).unwrap(),
        Some(&vk),
        Some(&restore),
    )
    .await
    .unwrap();
    assert!(report.ok, "{:#?}", report.problems);
    assert!(report.key_pinned);
    let ledger = report.ledger.as_ref().unwrap();
    assert!(ledger.ok && ledger.signed, "{ledger:?}");
    assert_eq!(ledger.entries_checked, 3);
    // Every object: ledger, head, attestation, tarball, 2 evidence.
    assert_eq!(report.objects_checked, 6);
    assert_eq!(report.workdir_files_checked, 3);

    // The restored working directory equals the original minus ignored files.
    let mut original = tree(&s.workdir);
    original.retain(|(p, _)| !p.starts_with("target/"));
    assert_eq!(tree(&restore.join("workdir")), original);
    // The evidence came back byte for byte.
    let large = vec![b'L'; 100 * 1024];
    let hex = tascer_ledger::sha256_hex(&large);
    let ev = restore.join(format!("evidence/sha256/{}/{hex}", &hex[..2]));
    assert_eq!(std::fs::read(ev).unwrap(), large);
}

#[tokio::test]
async fn a_changed_object_is_named() {
    let s = recorded_session(0);
    let loc = Location::parse(s.dir.path().join("a").to_str().unwrap()).unwrap();
    let archived = upload(&stage(&request(&s)).unwrap(), &loc).await.unwrap();
    let root = archived.url.trim_start_matches("file://").to_string();
    let vk = s.key.verifying_key();
    let verify = || async {
        verify_archive(&Location::parse(&root).unwrap(), Some(&vk), None)
            .await
            .unwrap()
    };
    assert!(verify().await.ok);

    // An edited ledger line.
    let ledger = format!("{root}/ledger.jsonl");
    let original = std::fs::read_to_string(&ledger).unwrap();
    std::fs::write(&ledger, original.replace("success", "failure")).unwrap();
    let report = verify().await;
    assert!(!report.ok);
    assert_eq!(
        report.problems[0].what, "ledger.jsonl",
        "{:?}",
        report.problems
    );
    assert!(report.problems[0].detail.contains("object changed"));
    std::fs::write(&ledger, &original).unwrap();

    // An evidence file replaced.
    let small = tascer_ledger::sha256_hex(b"small tool output");
    let ev = format!("{root}/evidence/sha256/{}/{small}", &small[..2]);
    std::fs::write(&ev, b"other output").unwrap();
    let report = verify().await;
    assert!(!report.ok);
    assert_eq!(
        report.problems[0].what,
        format!("evidence/sha256/{}/{small}", &small[..2])
    );
    std::fs::write(&ev, b"small tool output").unwrap();

    // An object added that the manifest does not list.
    std::fs::write(format!("{root}/extra.txt"), b"x").unwrap();
    let report = verify().await;
    assert_eq!(report.problems[0].what, "extra.txt");
    std::fs::remove_file(format!("{root}/extra.txt")).unwrap();

    // The manifest re-signed by another key after editing it.
    let manifest_path = format!("{root}/manifest.json");
    let envelope: tascer_ledger::Envelope =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    let mut m = tascer_archive::Manifest::unverified(&envelope, "x").unwrap();
    let forger = tascer_ledger::keys::random_signing_key().unwrap();
    m.signer.key_id = tascer_ledger::key_id(&forger.verifying_key());
    m.signer.public_key = hex::encode(forger.verifying_key().as_bytes());
    std::fs::write(
        &manifest_path,
        serde_json::to_vec(&m.sign(&forger).unwrap()).unwrap(),
    )
    .unwrap();
    let report = verify().await;
    assert!(!report.ok);
    assert_eq!(report.problems[0].what, "manifest.json");
    assert!(
        report.problems[0].detail.contains("not by the trusted key"),
        "{:?}",
        report.problems
    );
    // Without a pinned key, the forged manifest checks out on its own but
    // the ledger inside is signed by the real key, so it still fails.
    let report = verify_archive(&Location::parse(&root).unwrap(), None, None)
        .await
        .unwrap();
    assert!(!report.ok);
    assert!(!report.key_pinned);
    assert_eq!(
        report.problems[0].what, "ledger.jsonl",
        "{:?}",
        report.problems
    );
    std::fs::write(&manifest_path, serde_json::to_vec(&envelope).unwrap()).unwrap();

    // A changed tarball (the manifest is signed, so it cannot follow).
    let tarball = format!("{root}/workdir.tar.gz");
    let mut bytes = std::fs::read(&tarball).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&tarball, bytes).unwrap();
    let report = verify().await;
    assert_eq!(report.problems[0].what, "workdir.tar.gz");
}

#[tokio::test]
async fn a_broken_ledger_is_not_archived() {
    let s = recorded_session(0);
    // Tampered with through the file, as anyone with access to it could.
    rusqlite::Connection::open(s.ledger.store().location())
        .unwrap()
        .execute(
            "UPDATE ledger_entries SET payload = '{\"status\":\"failure\"}' WHERE seq = 3",
            [],
        )
        .unwrap();
    let err = stage(&request(&s)).unwrap_err();
    assert!(matches!(err, ArchiveError::BrokenLedger { .. }), "{err}");
    assert!(err.to_string().contains("entry 3"), "{err}");
}

#[tokio::test]
async fn an_interrupted_upload_leaves_no_archive() {
    let s = recorded_session(0);
    let dest = s.dir.path().join("archives");
    let real = Location::parse(dest.to_str().unwrap()).unwrap();
    let staged = stage(&request(&s)).unwrap();
    // Fail each put in turn, the manifest (the 7th) included.
    for fail_at in 1..=7 {
        let failing = Arc::new(Failing::new(Arc::clone(real.store()), fail_at, 0));
        let loc = Location::new(failing, "", real.url());
        let err = upload(&staged, &loc).await.unwrap_err();
        assert!(err.to_string().contains("injected"), "{err}");
        assert!(
            list_archives(&real).await.unwrap().is_empty(),
            "failed at put {fail_at}"
        );
        // The objects already uploaded were removed again.
        assert!(
            tree(&dest).is_empty(),
            "failed at put {fail_at}: {:?}",
            tree(&dest).len()
        );
    }
    // And with nothing failing, the archive is there and verifies.
    let archived = upload(&staged, &real).await.unwrap();
    assert_eq!(
        list_archives(&real).await.unwrap(),
        vec![archived.url.clone()]
    );
}

#[tokio::test]
async fn gitignored_excluded_and_large_files_are_left_out_and_listed() {
    let s = recorded_session(0);
    std::fs::write(s.workdir.join("huge.bin"), vec![1u8; 4096]).unwrap();
    std::fs::write(s.workdir.join("debug.log"), b"log").unwrap();
    let mut req = request(&s);
    req.policy = WorkdirPolicy {
        max_file_bytes: 1024,
        exclude: vec!["*.log".into()],
        ..WorkdirPolicy::default()
    };
    let staged = stage(&req).unwrap();
    let m = staged.manifest();
    let files: Vec<_> = m.workdir_files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(files, [".gitignore", "README.md", "src/main.rs"]);
    assert_eq!(m.skipped.len(), 1);
    assert_eq!(m.skipped[0].path, "huge.bin");
}
