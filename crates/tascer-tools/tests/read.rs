//! Read tool tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use tascer_core::{ContentBlock, ImageSource, ToolResultContent};

#[tokio::test]
async fn reads_with_line_numbers_and_raw() {
    let (_d, dir) = tempdir();
    std::fs::write(dir.join("a.txt"), "one\ntwo\r\nthree\n").unwrap();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.read, &c, json!({"file_path": "a.txt"})).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(text(&out), "     1\tone\n     2\ttwo\n     3\tthree");
    let raw = out.raw.unwrap();
    assert_eq!(raw["type"], "text");
    assert_eq!(
        raw["file"]["filePath"],
        dir.join("a.txt").display().to_string()
    );
    assert_eq!(raw["file"]["content"], "one\ntwo\nthree");
    assert_eq!(raw["file"]["numLines"], 3);
    assert_eq!(raw["file"]["startLine"], 1);
    assert_eq!(raw["file"]["totalLines"], 3);
    assert!(t.state.has_read(&dir.join("a.txt")));
}

#[tokio::test]
async fn offset_and_limit() {
    let (_d, dir) = tempdir();
    let body: String = (1..=50).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.join("f.txt"), body).unwrap();
    let t = tools();
    let c = ctx(&dir);
    let path = dir.join("f.txt").display().to_string();
    let out = call(
        &t.read,
        &c,
        json!({"file_path": path, "offset": 10, "limit": 3}),
    )
    .await;
    assert_eq!(
        text(&out),
        "    10\tline 10\n    11\tline 11\n    12\tline 12"
    );
    let raw = out.raw.unwrap();
    assert_eq!(raw["file"]["numLines"], 3);
    assert_eq!(raw["file"]["startLine"], 10);
    assert_eq!(raw["file"]["totalLines"], 50);

    let out = call(&t.read, &c, json!({"file_path": path, "offset": 100})).await;
    assert!(!out.is_error);
    assert!(
        text(&out).contains("shorter than the provided offset"),
        "{}",
        text(&out)
    );
}

#[tokio::test]
async fn default_limit_is_2000_lines() {
    let (_d, dir) = tempdir();
    let body: String = (1..=2500).map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.join("big.txt"), body).unwrap();
    let t = tools();
    let out = call(&t.read, &ctx(&dir), json!({"file_path": "big.txt"})).await;
    let raw = out.raw.unwrap();
    assert_eq!(raw["file"]["numLines"], 2000);
    assert_eq!(raw["file"]["totalLines"], 2500);
}

#[tokio::test]
async fn long_lines_are_truncated() {
    let (_d, dir) = tempdir();
    std::fs::write(
        dir.join("long.txt"),
        format!("{}\nshort\n", "é".repeat(3000)),
    )
    .unwrap();
    let t = tools();
    let out = call(&t.read, &ctx(&dir), json!({"file_path": "long.txt"})).await;
    let txt = text(&out);
    let first = txt.lines().next().unwrap();
    assert!(first.ends_with("… [line truncated]"));
    assert_eq!(first.chars().filter(|c| *c == 'é').count(), 2000);
    assert!(txt.ends_with("     2\tshort"));
}

#[tokio::test]
async fn refuses_binary_and_missing_and_directory() {
    let (_d, dir) = tempdir();
    std::fs::write(dir.join("bin.dat"), b"abc\0def").unwrap();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.read, &c, json!({"file_path": "bin.dat"})).await;
    assert!(out.is_error);
    assert!(text(&out).contains("binary"), "{}", text(&out));
    assert!(!t.state.has_read(&dir.join("bin.dat")));

    let out = call(&t.read, &c, json!({"file_path": "nope.txt"})).await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        format!("File does not exist: {}", dir.join("nope.txt").display())
    );

    let out = call(&t.read, &c, json!({"file_path": dir.display().to_string()})).await;
    assert!(out.is_error);
    assert!(text(&out).contains("is a directory"));
}

#[tokio::test]
async fn large_file_needs_offset_or_limit() {
    let (_d, dir) = tempdir();
    let body = "x".repeat(100) + "\n";
    std::fs::write(dir.join("huge.txt"), body.repeat(3000)).unwrap();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.read, &c, json!({"file_path": "huge.txt"})).await;
    assert!(out.is_error);
    assert!(text(&out).contains("offset and limit"), "{}", text(&out));
    let out = call(&t.read, &c, json!({"file_path": "huge.txt", "limit": 5})).await;
    assert!(!out.is_error);
    assert_eq!(out.raw.unwrap()["file"]["totalLines"], 3000);
}

#[tokio::test]
async fn empty_file_gives_reminder() {
    let (_d, dir) = tempdir();
    std::fs::write(dir.join("empty.txt"), "").unwrap();
    let t = tools();
    let out = call(&t.read, &ctx(&dir), json!({"file_path": "empty.txt"})).await;
    assert!(!out.is_error);
    assert_eq!(
        text(&out),
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
    );
    assert!(t.state.has_read(&dir.join("empty.txt")));
}

#[tokio::test]
async fn image_is_returned_as_image_block() {
    let (_d, dir) = tempdir();
    // Bytes with NULs: an image must not be refused as binary.
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    std::fs::write(dir.join("pic.PNG"), png).unwrap();
    let t = tools();
    let out = call(&t.read, &ctx(&dir), json!({"file_path": "pic.PNG"})).await;
    assert!(!out.is_error, "{out:?}");
    let ToolResultContent::Blocks(blocks) = &out.content else {
        panic!("expected blocks: {out:?}");
    };
    assert_eq!(blocks.len(), 1);
    let ContentBlock::Image {
        source: ImageSource::Base64 { media_type, data },
    } = &blocks[0]
    else {
        panic!("expected image block");
    };
    assert_eq!(media_type, "image/png");
    assert_eq!(data, "iVBORw0KGgoAAAANSUhEUg==");
    let raw = out.raw.unwrap();
    assert_eq!(raw["type"], "image");
    assert_eq!(raw["file"]["originalSize"], png.len());
}

#[tokio::test]
async fn invalid_input_is_reported() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.read, &c, json!({"path": "x"})).await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("Read input is invalid: "),
        "{}",
        text(&out)
    );
    let out = call(&t.read, &c, json!({"file_path": "x", "offset": "ten"})).await;
    assert!(out.is_error);
    assert!(text(&out).contains("invalid type"), "{}", text(&out));
    let out = call(&t.read, &c, json!("just a string")).await;
    assert!(out.is_error);
}
