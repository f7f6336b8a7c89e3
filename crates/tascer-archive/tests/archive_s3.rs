//! Archives on a real S3-compatible server (moto, started once for this
//! test binary on a free loopback port, path-style, plain HTTP).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{Failing, recorded_session, request, tree};
use object_store::ObjectStoreExt as _;
use tascer_archive::{Location, list_archives, stage, upload, verify_archive};
use tascer_testkit::s3::S3Server as Moto;

fn moto(test: &str) -> Option<&'static Moto> {
    Moto::shared(test)
}

fn s3(moto: &Moto, url: &str) -> Location {
    Location::parse_with_env(url, moto.env()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_round_trip_with_multipart_upload() {
    let Some(moto) = moto("s3_round_trip_with_multipart_upload") else {
        return;
    };
    moto.create_bucket("roundtrip").unwrap();
    // 12 MiB of incompressible data: the tarball goes up in 2 parts.
    let s = recorded_session(12 * 1024 * 1024);
    let loc = s3(moto, "s3://roundtrip/team/archives");
    let staged = stage(&request(&s)).unwrap();
    let tarball = staged
        .manifest()
        .objects
        .iter()
        .find(|o| o.path == "workdir.tar.gz")
        .unwrap();
    assert!(tarball.size > tascer_archive::create::MULTIPART_THRESHOLD);
    let archived = upload(&staged, &loc).await.unwrap();
    assert!(
        archived
            .url
            .starts_with(&format!("s3://roundtrip/team/archives/{}/", s.id)),
        "{}",
        archived.url
    );
    assert_eq!(
        list_archives(&loc).await.unwrap(),
        vec![archived.url.clone()]
    );
    assert!(
        !moto.has_open_multipart_upload("roundtrip").unwrap(),
        "a multipart upload was left open"
    );

    std::fs::remove_dir_all(s.home()).unwrap();
    let restore = s.dir.path().join("restored");
    let vk = s.key.verifying_key();
    let report = verify_archive(&s3(moto, &archived.url), Some(&vk), Some(&restore))
        .await
        .unwrap();
    assert!(report.ok, "{:#?}", report.problems);
    assert!(report.ledger.as_ref().unwrap().signed);
    let mut original = tree(&s.workdir);
    original.retain(|(p, _)| !p.starts_with("target/"));
    assert_eq!(tree(&restore.join("workdir")), original);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_a_tampered_object_is_named() {
    let Some(moto) = moto("s3_a_tampered_object_is_named") else {
        return;
    };
    moto.create_bucket("tamper").unwrap();
    let s = recorded_session(0);
    let loc = s3(moto, "s3://tamper");
    let archived = upload(&stage(&request(&s)).unwrap(), &loc).await.unwrap();
    let archive = s3(moto, &archived.url);
    let vk = s.key.verifying_key();
    assert!(verify_archive(&archive, Some(&vk), None).await.unwrap().ok);

    // Someone with write access to the bucket rewrites the head.
    let head = archive.child("head.json");
    let text = archive
        .store()
        .get(&head)
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let edited = String::from_utf8(text.to_vec())
        .unwrap()
        .replace("\"seq\": 3", "\"seq\": 2");
    archive
        .store()
        .put(&head, edited.into_bytes().into())
        .await
        .unwrap();
    let report = verify_archive(&archive, Some(&vk), None).await.unwrap();
    assert!(!report.ok);
    assert_eq!(
        report.problems[0].what, "head.json",
        "{:?}",
        report.problems
    );
    assert!(report.problems[0].detail.contains("object changed"));

    // Deleting the manifest makes it no archive at all.
    archive
        .store()
        .delete(&archive.child("manifest.json"))
        .await
        .unwrap();
    assert!(list_archives(&loc).await.unwrap().is_empty());
    let err = verify_archive(&archive, Some(&vk), None).await.unwrap_err();
    assert!(err.to_string().contains("no manifest.json"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_an_interrupted_upload_leaves_no_archive() {
    let Some(moto) = moto("s3_an_interrupted_upload_leaves_no_archive") else {
        return;
    };
    moto.create_bucket("interrupted").unwrap();
    let s = recorded_session(12 * 1024 * 1024);
    let real = s3(moto, "s3://interrupted/a");
    let staged = stage(&request(&s)).unwrap();

    // The connection drops during the second part of the tarball.
    let failing = Arc::new(Failing::new(Arc::clone(real.store()), 0, 2));
    let loc = Location::new(failing, "a", real.url());
    let err = upload(&staged, &loc).await.unwrap_err();
    assert!(err.to_string().contains("injected"), "{err}");
    assert!(list_archives(&real).await.unwrap().is_empty());
    assert!(
        !moto.has_open_multipart_upload("interrupted").unwrap(),
        "multipart upload not aborted"
    );

    // The manifest put fails: every object uploaded before is removed.
    let n_objects = staged.manifest().objects.len();
    let small_objects = n_objects - 1; // all but the tarball are simple puts
    let failing = Arc::new(Failing::new(Arc::clone(real.store()), small_objects + 1, 0));
    let loc = Location::new(failing, "a", real.url());
    upload(&staged, &loc).await.unwrap_err();
    assert!(list_archives(&real).await.unwrap().is_empty());
    let keys = moto.keys("interrupted").unwrap();
    assert!(keys.is_empty(), "objects left behind: {keys:?}");

    let archived = upload(&staged, &real).await.unwrap();
    assert_eq!(list_archives(&real).await.unwrap(), vec![archived.url]);
}
