//! Write and Edit tool tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, SystemTime};

use common::*;
use serde_json::json;

fn touch_later(path: &std::path::Path) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(60))
        .unwrap();
}

#[tokio::test]
async fn write_creates_file_and_parents() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let path = dir.join("a/b/c.txt");
    let out = call(
        &t.write,
        &c,
        json!({"file_path": "a/b/c.txt", "content": "hello\n"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        text(&out),
        format!("File created successfully at: {}", path.display())
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello\n");
    let raw = out.raw.unwrap();
    assert_eq!(raw["type"], "create");
    assert_eq!(raw["filePath"], path.display().to_string());
    assert_eq!(raw["content"], "hello\n");
    assert_eq!(raw["bytes"], 6);

    // A file the session wrote may be overwritten without reading it.
    let out = call(
        &t.write,
        &c,
        json!({"file_path": "a/b/c.txt", "content": "bye"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.raw.unwrap()["type"], "update");
}

#[tokio::test]
async fn write_refuses_unread_file_then_allows_after_read() {
    let (_d, dir) = tempdir();
    let path = dir.join("x.txt");
    std::fs::write(&path, "old").unwrap();
    let t = tools();
    let c = ctx(&dir);
    let input = json!({"file_path": path.display().to_string(), "content": "new"});
    let out = call(&t.write, &c, input.clone()).await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        "File has not been read yet. Read it first before writing to it."
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");

    call(&t.read, &c, json!({"file_path": "x.txt"})).await;
    let out = call(&t.write, &c, input).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        text(&out),
        format!("The file {} has been updated.", path.display())
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
}

#[tokio::test]
async fn write_refuses_file_modified_since_read() {
    let (_d, dir) = tempdir();
    let path = dir.join("x.txt");
    std::fs::write(&path, "old").unwrap();
    let t = tools();
    let c = ctx(&dir);
    call(&t.read, &c, json!({"file_path": "x.txt"})).await;
    std::fs::write(&path, "changed by someone").unwrap();
    touch_later(&path);
    let out = call(
        &t.write,
        &c,
        json!({"file_path": "x.txt", "content": "new"}),
    )
    .await;
    assert!(out.is_error);
    assert!(text(&out).contains("modified since read"), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "changed by someone"
    );
}

#[tokio::test]
async fn write_invalid_input() {
    let (_d, dir) = tempdir();
    let t = tools();
    let out = call(&t.write, &ctx(&dir), json!({"file_path": "x"})).await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("Write input is invalid: "),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("content"), "{}", text(&out));
}

async fn read_first(t: &Tools, c: &tascer_core::ToolContext, name: &str) {
    let out = call(&t.read, c, json!({"file_path": name})).await;
    assert!(!out.is_error, "{out:?}");
}

#[tokio::test]
async fn edit_single_replacement_with_diff() {
    let (_d, dir) = tempdir();
    let path = dir.join("f.rs");
    std::fs::write(&path, "fn main() {\n    println!(\"hi\");\n}\n").unwrap();
    let t = tools();
    let c = ctx(&dir);

    let input = json!({"file_path": "f.rs", "old_string": "\"hi\"", "new_string": "\"hello\""});
    let out = call(&t.edit, &c, input.clone()).await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        "File has not been read yet. Read it first before writing to it."
    );

    read_first(&t, &c, "f.rs").await;
    let out = call(&t.edit, &c, input).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        text(&out),
        format!("The file {} has been updated.", path.display())
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "fn main() {\n    println!(\"hello\");\n}\n"
    );
    let raw = out.raw.unwrap();
    assert_eq!(raw["filePath"], path.display().to_string());
    assert_eq!(raw["oldString"], "\"hi\"");
    assert_eq!(raw["newString"], "\"hello\"");
    assert_eq!(raw["replaceAll"], false);
    let diff = raw["diff"].as_str().unwrap();
    assert!(diff.contains("-    println!(\"hi\");"), "{diff}");
    assert!(diff.contains("+    println!(\"hello\");"), "{diff}");
    assert!(diff.contains("@@ -1,3 +1,3 @@"), "{diff}");
    let hunk = &raw["structuredPatch"][0];
    assert_eq!(hunk["oldStart"], 1);
    assert_eq!(hunk["oldLines"], 3);
    assert_eq!(hunk["lines"][1], "-    println!(\"hi\");");

    // A second edit works without re-reading: the session's own write counts.
    let out = call(
        &t.edit,
        &c,
        json!({"file_path": "f.rs", "old_string": "main", "new_string": "start"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
}

#[tokio::test]
async fn edit_not_unique_replace_all_and_not_found() {
    let (_d, dir) = tempdir();
    let path = dir.join("f.txt");
    std::fs::write(&path, "a x a x a\n").unwrap();
    let t = tools();
    let c = ctx(&dir);
    read_first(&t, &c, "f.txt").await;

    let out = call(
        &t.edit,
        &c,
        json!({"file_path": "f.txt", "old_string": "a", "new_string": "b"}),
    )
    .await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        "Found 3 matches of the string to replace, but replace_all is false. To replace all \
         occurrences, set replace_all to true. To replace only one occurrence, please provide \
         more context to uniquely identify the instance."
    );

    let out = call(
        &t.edit,
        &c,
        json!({"file_path": "f.txt", "old_string": "a", "new_string": "b", "replace_all": true}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(out.raw.unwrap()["replaceAll"], true);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "b x b x b\n");

    let out = call(
        &t.edit,
        &c,
        json!({"file_path": "f.txt", "old_string": "zzz", "new_string": "y"}),
    )
    .await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("String to replace not found in file."),
        "{}",
        text(&out)
    );

    let out = call(
        &t.edit,
        &c,
        json!({"file_path": "f.txt", "old_string": "x", "new_string": "x"}),
    )
    .await;
    assert!(out.is_error);
    assert!(text(&out).contains("exactly the same"), "{}", text(&out));

    let out = call(
        &t.edit,
        &c,
        json!({"file_path": "missing.txt", "old_string": "x", "new_string": "y"}),
    )
    .await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("File does not exist: "),
        "{}",
        text(&out)
    );
}

#[tokio::test]
async fn edit_preserves_crlf() {
    let (_d, dir) = tempdir();
    let path = dir.join("win.txt");
    std::fs::write(&path, "first\r\nsecond\r\nthird\r\n").unwrap();
    let t = tools();
    let c = ctx(&dir);
    read_first(&t, &c, "win.txt").await;
    let out = call(
        &t.edit,
        &c,
        json!({"file_path": "win.txt", "old_string": "first\nsecond", "new_string": "one\ntwo\nthree"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "one\r\ntwo\r\nthree\r\nthird\r\n"
    );
}

#[tokio::test]
async fn edit_refuses_file_modified_since_read() {
    let (_d, dir) = tempdir();
    let path = dir.join("f.txt");
    std::fs::write(&path, "abc").unwrap();
    let t = tools();
    let c = ctx(&dir);
    read_first(&t, &c, "f.txt").await;
    touch_later(&path);
    let out = call(
        &t.edit,
        &c,
        json!({"file_path": "f.txt", "old_string": "b", "new_string": "B"}),
    )
    .await;
    assert!(out.is_error);
    assert!(text(&out).contains("modified since read"), "{}", text(&out));
}

#[tokio::test]
async fn edit_with_empty_old_string_creates_file() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let out = call(
        &t.edit,
        &c,
        json!({"file_path": "new/n.txt", "old_string": "", "new_string": "hi\n"}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("new/n.txt")).unwrap(),
        "hi\n"
    );
}

#[tokio::test]
async fn edit_invalid_input() {
    let (_d, dir) = tempdir();
    let t = tools();
    let out = call(
        &t.edit,
        &ctx(&dir),
        json!({"file_path": "f", "old_string": "a", "new_string": "b", "bogus": 1}),
    )
    .await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("Edit input is invalid: "),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("bogus"), "{}", text(&out));
}
