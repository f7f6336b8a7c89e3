//! Archiving a session of a Tascer home in one call, the archive record,
//! and evidence retention.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::recorded_session;
use serde_json::json;
use tascer_archive::{
    ArchiveSettings, Location, WorkdirPolicy, archive_session, prune_evidence, recorded_workdir,
};
use tascer_ledger::EntryKind;

/// `archive_session` of the fixture's session to `dest`, defaults.
async fn archive_to(
    s: &common::Session,
    dest: &Location,
) -> tascer_archive::Result<(tascer_archive::Archived, tascer_archive::ArchiveRecord)> {
    archive_session(
        &s.home(),
        &s.id,
        dest,
        None,
        &WorkdirPolicy::default(),
        vec![],
    )
    .await
}

#[tokio::test]
async fn archive_session_uses_the_recorded_workdir_and_records_the_archive() {
    let s = recorded_session(0);
    assert_eq!(
        recorded_workdir(&s.ledger, &s.id).unwrap(),
        Some(s.workdir.clone())
    );
    let dest = Location::parse(s.dir.path().join("archives").to_str().unwrap()).unwrap();
    let (archived, record) = archive_to(&s, &dest).await.unwrap();
    assert_eq!(archived.manifest.workdir_files.len(), 3);
    assert_eq!(record.url, archived.url);
    assert_eq!(record.head_seq, 3);
    assert_eq!(
        tascer_archive::session::records(&s.home(), &s.id).unwrap(),
        vec![record]
    );
}

#[tokio::test]
async fn archive_session_needs_the_key() {
    let s = recorded_session(0);
    std::fs::remove_dir_all(s.home().join("keys")).unwrap();
    let dest = Location::parse(s.dir.path().join("a").to_str().unwrap()).unwrap();
    let err = archive_to(&s, &dest).await.unwrap_err();
    assert!(err.to_string().contains("tascer keys generate"), "{err}");
}

#[tokio::test]
async fn retention_deletes_evidence_only_once_a_verified_archive_holds_the_head() {
    let s = recorded_session(0);
    let evidence_dir = s.home().join("evidence").join(&s.id);
    assert!(evidence_dir.is_dir());
    let home = s.home();
    let prune = |days| prune_evidence(&home, days, false, &[]);

    // Not archived: kept.
    let out = prune(0).await.unwrap();
    assert!(!out[0].pruned);
    assert!(out[0].reason.contains("no archive"), "{out:?}");

    let dest_dir = s.dir.path().join("archives");
    let dest = Location::parse(dest_dir.to_str().unwrap()).unwrap();
    let (archived, _) = archive_to(&s, &dest).await.unwrap();

    // Too recent: kept.
    let out = prune(36_500).await.unwrap();
    assert!(
        !out[0].pruned && out[0].reason.contains("within"),
        "{out:?}"
    );
    assert!(prune(u64::MAX).await.unwrap().iter().all(|o| !o.pruned));

    // The archive was changed since: it no longer verifies, so kept.
    let root = archived.url.trim_start_matches("file://");
    let head = format!("{root}/head.json");
    let original = std::fs::read(&head).unwrap();
    std::fs::write(&head, b"{}").unwrap();
    let out = prune(0).await.unwrap();
    assert!(
        !out[0].pruned && out[0].reason.contains("does not verify"),
        "{out:?}"
    );
    assert!(evidence_dir.is_dir());
    std::fs::write(&head, original).unwrap();

    // Dry run: nothing deleted.
    let out = prune_evidence(&s.home(), 0, true, &[]).await.unwrap();
    assert!(out[0].pruned);
    assert!(evidence_dir.is_dir());

    // Verified archive of the current head: deleted.
    let out = prune(0).await.unwrap();
    assert!(out[0].pruned, "{out:?}");
    assert!(!evidence_dir.exists());
}

#[tokio::test]
async fn a_session_that_went_on_after_its_archive_is_kept() {
    let s = recorded_session(0);
    let dest = Location::parse(s.dir.path().join("a").to_str().unwrap()).unwrap();
    archive_to(&s, &dest).await.unwrap();
    s.ledger
        .append(&s.id, EntryKind::Checkpoint, json!({"resumed": true}))
        .unwrap();
    let out = prune_evidence(&s.home(), 0, false, &[]).await.unwrap();
    assert!(!out[0].pruned, "{out:?}");
    assert!(s.home().join("evidence").join(&s.id).is_dir());
}

#[test]
fn settings_shape() {
    let s = ArchiveSettings::from_value(Some(&json!({
        "to": "s3://b/p", "auto": true, "retentionDays": 30,
        "maxFileBytes": 10, "exclude": ["*.log"]
    })))
    .unwrap();
    assert_eq!(s.to.as_deref(), Some("s3://b/p"));
    assert!(s.auto);
    assert_eq!(s.retention_days, Some(30));
    assert_eq!(s.workdir.max_file_bytes, 10);
    assert_eq!(s.workdir.exclude, ["*.log"]);
    assert!(s.workdir.respect_gitignore);
    let err = ArchiveSettings::from_value(Some(&json!({"auto": "yes"}))).unwrap_err();
    assert!(err.contains("archive"), "{err}");
    assert_eq!(
        ArchiveSettings::from_value(None).unwrap(),
        ArchiveSettings::default()
    );
}
