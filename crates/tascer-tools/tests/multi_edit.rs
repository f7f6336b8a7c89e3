//! MultiEdit tool tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;

#[tokio::test]
async fn applies_edits_in_order_and_reports_diff() {
    let (_d, dir) = tempdir();
    let path = dir.join("a.rs");
    std::fs::write(&path, "fn one() {}\nfn two() {}\nlet x = 1;\nlet y = x;\n").unwrap();
    let t = tools();
    let c = ctx(&dir);
    call(&t.read, &c, json!({"file_path": "a.rs"})).await;
    let out = call(
        &t.multi_edit,
        &c,
        json!({"file_path": path.display().to_string(), "edits": [
            {"old_string": "fn one()", "new_string": "fn uno()"},
            // Applies to the result of the first edit.
            {"old_string": "fn uno() {}", "new_string": "fn uno() { two() }"},
            {"old_string": "x", "new_string": "z", "replace_all": true},
        ]}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "fn uno() { two() }\nfn two() {}\nlet z = 1;\nlet y = z;\n"
    );
    let shown = path.display().to_string();
    assert_eq!(
        text(&out),
        format!(
            "Applied 3 edits to {shown}:\n1. Replaced \"fn one()\" with \"fn uno()\"\n\
             2. Replaced \"fn uno() {{}}\" with \"fn uno() {{ two() }}\"\n\
             3. Replaced \"x\" with \"z\""
        )
    );
    let raw = out.raw.unwrap();
    assert_eq!(raw["filePath"], shown);
    assert_eq!(raw["edits"].as_array().unwrap().len(), 3);
    assert_eq!(raw["edits"][2]["replace_all"], true);
    assert_eq!(
        raw["originalFileContents"],
        "fn one() {}\nfn two() {}\nlet x = 1;\nlet y = x;\n"
    );
    let diff = raw["diff"].as_str().unwrap();
    assert!(diff.contains("-fn one() {}\n+fn uno() { two() }"), "{diff}");
    let patch = &raw["structuredPatch"][0];
    assert_eq!(patch["oldStart"], 1);
    assert!(
        patch["lines"]
            .as_array()
            .unwrap()
            .contains(&json!("+let y = z;"))
    );

    // The session may edit again without re-reading.
    let out = call(
        &t.multi_edit,
        &c,
        json!({"file_path": "a.rs", "edits": [{"old_string": "let y", "new_string": "let w"}]}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert!(text(&out).starts_with("Applied 1 edit to "));
}

#[tokio::test]
async fn all_or_nothing() {
    let (_d, dir) = tempdir();
    let path = dir.join("a.txt");
    std::fs::write(&path, "alpha beta gamma\n").unwrap();
    let t = tools();
    let c = ctx(&dir);
    call(&t.read, &c, json!({"file_path": "a.txt"})).await;
    let out = call(
        &t.multi_edit,
        &c,
        json!({"file_path": "a.txt", "edits": [
            {"old_string": "alpha", "new_string": "ALPHA"},
            {"old_string": "delta", "new_string": "DELTA"},
        ]}),
    )
    .await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        "Edit 2 failed: String to replace not found in file.\nString: delta"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "alpha beta gamma\n"
    );

    // Ambiguous match without replace_all.
    std::fs::write(&path, "a a\n").unwrap();
    call(&t.read, &c, json!({"file_path": "a.txt"})).await;
    let out = call(
        &t.multi_edit,
        &c,
        json!({"file_path": "a.txt", "edits": [{"old_string": "a", "new_string": "b"}]}),
    )
    .await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("Edit 1 failed: Found 2 matches of the string to replace"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a a\n");
}

#[tokio::test]
async fn rule_errors() {
    let (_d, dir) = tempdir();
    let path = dir.join("a.txt");
    std::fs::write(&path, "one two\n").unwrap();
    let t = tools();
    let c = ctx(&dir);

    // Not read yet.
    let input = json!({"file_path": "a.txt", "edits": [{"old_string": "one", "new_string": "1"}]});
    let out = call(&t.multi_edit, &c, input.clone()).await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        "File has not been read yet. Read it first before writing to it."
    );
    call(&t.read, &c, json!({"file_path": "a.txt"})).await;

    // Identical strings.
    let out = call(
        &t.multi_edit,
        &c,
        json!({"file_path": "a.txt", "edits": [{"old_string": "one", "new_string": "one"}]}),
    )
    .await;
    assert_eq!(
        text(&out),
        "Edit 1 failed: No changes to make: old_string and new_string are exactly the same."
    );

    // A later edit may target text an earlier edit inserted (applied in order).
    let out = call(
        &t.multi_edit,
        &c,
        json!({"file_path": "a.txt", "edits": [
            {"old_string": "one", "new_string": "uno"},
            {"old_string": "uno", "new_string": "UNO"},
        ]}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "UNO two\n");
    std::fs::write(&path, "one two\n").unwrap();
    call(&t.read, &c, json!({"file_path": "a.txt"})).await;

    // Empty edits and missing fields are invalid input.
    let out = call(
        &t.multi_edit,
        &c,
        json!({"file_path": "a.txt", "edits": []}),
    )
    .await;
    assert!(out.is_error);
    assert!(text(&out).starts_with("MultiEdit input is invalid:"));
    let out = call(
        &t.multi_edit,
        &c,
        json!({"file_path": "a.txt", "edits": [{"old_string": "one"}]}),
    )
    .await;
    assert!(text(&out).starts_with("MultiEdit input is invalid:"));

    // Missing file.
    let out = call(
        &t.multi_edit,
        &c,
        json!({"file_path": "nope.txt", "edits": [{"old_string": "a", "new_string": "b"}]}),
    )
    .await;
    assert_eq!(
        text(&out),
        format!("File does not exist: {}", dir.join("nope.txt").display())
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one two\n");
}

#[tokio::test]
async fn creates_new_file_with_empty_first_old_string() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let out = call(
        &t.multi_edit,
        &c,
        json!({"file_path": "new/file.txt", "edits": [
            {"old_string": "", "new_string": "hello world\n"},
            {"old_string": "world", "new_string": "there"},
        ]}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("new/file.txt")).unwrap(),
        "hello there\n"
    );
}

#[tokio::test]
async fn keeps_crlf_line_endings() {
    let (_d, dir) = tempdir();
    let path = dir.join("w.txt");
    std::fs::write(&path, "a\r\nb\r\nc\r\n").unwrap();
    let t = tools();
    let c = ctx(&dir);
    call(&t.read, &c, json!({"file_path": "w.txt"})).await;
    let out = call(
        &t.multi_edit,
        &c,
        json!({"file_path": "w.txt", "edits": [
            {"old_string": "a\nb", "new_string": "A\nB"},
            {"old_string": "c", "new_string": "C\nD"},
        ]}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "A\r\nB\r\nC\r\nD\r\n"
    );
}
