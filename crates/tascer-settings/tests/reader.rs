#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The reader's own sections: archive merging, the check section, the
//! home's per-host settings.

use std::path::Path;

use serde_json::json;
use tascer_settings::{CheckSettings, FileError, HostSettings, SettingsLoader, check_settings};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn archive_merges_key_by_key_and_refuses_a_non_object() {
    let dir = tempfile::tempdir().unwrap();
    let (home, cwd) = (dir.path().join("home"), dir.path().join("proj"));
    write(
        &home.join("settings.json"),
        &json!({"archive": {"to": "s3://b/p", "retentionDays": 30}}).to_string(),
    );
    write(
        &cwd.join(".tascer/settings.json"),
        &json!({"archive": {"to": "/tmp/a"}}).to_string(),
    );
    let layered = SettingsLoader::for_home(&cwd, &home).read().unwrap();
    let archive = layered.archive().unwrap();
    assert_eq!(archive["to"], "/tmp/a");
    assert_eq!(archive["retentionDays"], 30);
    write(
        &cwd.join(".tascer/settings.local.json"),
        &json!({"archive": 5}).to_string(),
    );
    let err = SettingsLoader::for_home(&cwd, &home)
        .read()
        .unwrap()
        .archive()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("settings.local.json") && err.contains("archive must be an object, not 5"),
        "{err}"
    );
}

#[test]
fn the_first_file_with_a_check_section_wins_whole() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(check_settings(dir.path()).unwrap(), None);
    write(
        &dir.path().join(".tascer/settings.json"),
        &json!({"check": {"lint": "a", "test": ["b"], "timeoutSecs": 7}}).to_string(),
    );
    let (file, check) = check_settings(dir.path()).unwrap().unwrap();
    assert!(file.ends_with(".tascer/settings.json"));
    assert_eq!(
        (check.lint, check.test, check.timeout_secs),
        (vec!["a".to_string()], vec!["b".to_string()], Some(7))
    );
    // A local file without the section does not hide the project's; a bad
    // value elsewhere in it does not stop the check.
    write(
        &dir.path().join(".tascer/settings.local.json"),
        &json!({"safety": {"nonsense": true}}).to_string(),
    );
    assert!(check_settings(dir.path()).unwrap().is_some());
    write(
        &dir.path().join(".tascer/settings.local.json"),
        &json!({"mcpServe": {"check": {"lint": 3}}}).to_string(),
    );
    match check_settings(dir.path()).unwrap_err() {
        FileError::Invalid { path, message } => {
            assert!(path.ends_with(".tascer/settings.local.json"));
            assert_eq!(
                message,
                "check.lint must be a command string or an array of them"
            );
        }
        other => panic!("unexpected {other}"),
    }
    assert!(
        CheckSettings::of(&json!({"check": {}}))
            .unwrap_err()
            .contains("names no command")
    );
}

#[test]
fn the_home_file_sets_the_store_and_nothing_else_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(HostSettings::read(dir.path()).unwrap().store, None);
    write(
        &dir.path().join("settings.json"),
        &json!({"store": "sqlite:x.db", "safety": {"nonsense": true}}).to_string(),
    );
    assert_eq!(
        HostSettings::read(dir.path()).unwrap().store.as_deref(),
        Some("sqlite:x.db")
    );
    write(
        &dir.path().join("settings.json"),
        &json!({"store": "  "}).to_string(),
    );
    assert_eq!(HostSettings::read(dir.path()).unwrap().store, None);
    write(&dir.path().join("settings.json"), "{");
    let err = HostSettings::read(dir.path()).unwrap_err().to_string();
    assert!(err.contains("is not valid JSON"), "{err}");
}
