//! Key generation, files and ids.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use tascer_ledger::keys::{KeyPaths, load_signing_key, load_verifying_key};
use tascer_ledger::{LedgerError, generate_keypair, key_id, load_home_signing_key, sha256_hex};

#[test]
fn generate_writes_pem_files_and_refuses_to_overwrite() {
    let home = tempfile::tempdir().unwrap();
    let (key, paths) = generate_keypair(home.path(), false).unwrap();
    assert_eq!(paths, KeyPaths::in_home(home.path()));
    assert!(paths.private.ends_with("keys/tascer-ed25519.key"));
    assert!(paths.public.ends_with("keys/tascer-ed25519.pub.pem"));
    let private = std::fs::read_to_string(&paths.private).unwrap();
    assert!(private.starts_with("-----BEGIN PRIVATE KEY-----"));
    let public = std::fs::read_to_string(&paths.public).unwrap();
    assert!(public.starts_with("-----BEGIN PUBLIC KEY-----"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&paths.private)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(
        load_signing_key(&paths.private).unwrap().to_bytes(),
        key.to_bytes()
    );
    assert_eq!(
        load_verifying_key(&paths.public).unwrap(),
        key.verifying_key()
    );
    assert_eq!(
        load_home_signing_key(home.path())
            .unwrap()
            .unwrap()
            .to_bytes(),
        key.to_bytes()
    );
    assert!(matches!(
        generate_keypair(home.path(), false),
        Err(LedgerError::KeyExists(_))
    ));
    let (again, _) = generate_keypair(home.path(), true).unwrap();
    assert_ne!(again.to_bytes(), key.to_bytes());
    assert_eq!(
        load_signing_key(&paths.private).unwrap().to_bytes(),
        again.to_bytes()
    );
}

#[test]
fn key_id_is_sha256_of_the_raw_public_key() {
    let home = tempfile::tempdir().unwrap();
    let (key, _) = generate_keypair(home.path(), false).unwrap();
    let vk = key.verifying_key();
    assert_eq!(key_id(&vk), sha256_hex(vk.as_bytes()));
}

#[test]
fn missing_and_bad_key_files_are_errors() {
    let home = tempfile::tempdir().unwrap();
    assert!(load_home_signing_key(home.path()).unwrap().is_none());
    let bad = home.path().join("bad.pem");
    std::fs::write(
        &bad,
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    assert!(matches!(
        load_signing_key(&bad),
        Err(LedgerError::Key { .. })
    ));
    assert!(matches!(
        load_verifying_key(&bad),
        Err(LedgerError::Key { .. })
    ));
    assert!(load_signing_key(home.path().join("nope")).is_err());
}

#[test]
fn load_or_create_makes_one_key_even_when_many_race_for_it() {
    let home = tempfile::tempdir().unwrap();
    let keys: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| tascer_ledger::load_or_create_home_signing_key(home.path()).unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let created = keys.iter().filter(|(_, paths)| paths.is_some()).count();
    assert_eq!(created, 1, "exactly one call created the key");
    let first = keys[0].0.to_bytes();
    assert!(keys.iter().all(|(k, _)| k.to_bytes() == first));
    let paths = KeyPaths::in_home(home.path());
    assert_eq!(load_signing_key(&paths.private).unwrap().to_bytes(), first);
    assert_eq!(
        load_verifying_key(&paths.public).unwrap(),
        keys[0].0.verifying_key()
    );
    let (again, created) = tascer_ledger::load_or_create_home_signing_key(home.path()).unwrap();
    assert!(created.is_none());
    assert_eq!(again.to_bytes(), first);
    let leftovers: Vec<_> = std::fs::read_dir(paths.private.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
