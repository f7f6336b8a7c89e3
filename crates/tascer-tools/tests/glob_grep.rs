//! Glob and Grep tool tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::{Duration, SystemTime};

use common::*;
use serde_json::json;

fn write(root: &Path, rel: &str, body: &str, age_secs: u64) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, body).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(age_secs))
        .unwrap();
}

/// A small project: .gitignore hides target/ and *.log.
fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let (d, dir) = tempdir();
    write(&dir, ".gitignore", "target/\n*.log\n", 500);
    write(
        &dir,
        "src/main.rs",
        "fn main() {\n    println!(\"Hello\");\n}\n",
        300,
    );
    write(
        &dir,
        "src/lib.rs",
        "pub fn hello() {}\n// hello again\n",
        100,
    );
    write(&dir, "src/util/mod.rs", "pub fn util() {}\n", 200);
    write(&dir, "README.md", "# Hello project\nsay hello\n", 400);
    write(&dir, "notes.py", "print('hello')\n", 50);
    write(&dir, "target/debug/out.rs", "fn hello() {}\n", 10);
    write(&dir, "build.log", "hello from the log\n", 10);
    write(&dir, ".git/config", "hello\n", 10);
    (d, dir)
}

fn abs(dir: &Path, rel: &str) -> String {
    dir.join(rel).display().to_string()
}

#[tokio::test]
async fn glob_matches_relative_sorted_by_mtime_and_respects_gitignore() {
    let (_d, dir) = project();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.glob, &c, json!({"pattern": "**/*.rs"})).await;
    assert!(!out.is_error, "{out:?}");
    let expected = [
        abs(&dir, "src/lib.rs"),
        abs(&dir, "src/util/mod.rs"),
        abs(&dir, "src/main.rs"),
    ];
    assert_eq!(text(&out), expected.join("\n"));
    let raw = out.raw.unwrap();
    assert_eq!(raw["numFiles"], 3);
    assert_eq!(raw["truncated"], false);
    assert_eq!(raw["filenames"][0], expected[0]);

    let out = call(&t.glob, &c, json!({"pattern": "*.rs", "path": "src"})).await;
    assert_eq!(
        text(&out),
        [abs(&dir, "src/lib.rs"), abs(&dir, "src/main.rs")].join("\n")
    );

    let out = call(&t.glob, &c, json!({"pattern": "**/*.log"})).await;
    assert_eq!(text(&out), "No files found");

    let out = call(&t.glob, &c, json!({"pattern": "**/config"})).await;
    assert_eq!(text(&out), "No files found");

    let out = call(&t.glob, &c, json!({"pattern": "*.{md,py}"})).await;
    assert_eq!(
        text(&out),
        [abs(&dir, "notes.py"), abs(&dir, "README.md")].join("\n")
    );
}

#[tokio::test]
async fn glob_truncates_at_100() {
    let (_d, dir) = tempdir();
    for i in 0..120 {
        write(&dir, &format!("f{i:03}.txt"), "x", i);
    }
    let t = tools();
    let out = call(&t.glob, &ctx(&dir), json!({"pattern": "*.txt"})).await;
    let txt = text(&out);
    assert_eq!(txt.lines().count(), 101);
    assert!(txt.lines().next().unwrap().ends_with("f000.txt"));
    assert!(
        txt.ends_with("(Results are truncated. Consider using a more specific path or pattern.)")
    );
    assert_eq!(out.raw.unwrap()["truncated"], true);
}

#[tokio::test]
async fn glob_errors() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.glob, &c, json!({"pattern": "*", "path": "missing"})).await;
    assert!(out.is_error);
    assert!(text(&out).contains("does not exist"), "{}", text(&out));
    let out = call(&t.glob, &c, json!({"pattern": "a[", "path": "."})).await;
    assert!(out.is_error);
    assert!(text(&out).contains("Invalid glob"), "{}", text(&out));
    let out = call(&t.glob, &c, json!({"pattern": 5})).await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("Glob input is invalid: "),
        "{}",
        text(&out)
    );
}

#[tokio::test]
async fn grep_files_with_matches_default() {
    let (_d, dir) = project();
    let t = tools();
    let out = call(&t.grep, &ctx(&dir), json!({"pattern": "hello"})).await;
    assert!(!out.is_error, "{out:?}");
    let expected = [
        abs(&dir, "notes.py"),
        abs(&dir, "src/lib.rs"),
        abs(&dir, "README.md"),
    ];
    assert_eq!(
        text(&out),
        format!("Found 3 files\n{}", expected.join("\n"))
    );
    let raw = out.raw.unwrap();
    assert_eq!(raw["mode"], "files_with_matches");
    assert_eq!(raw["numFiles"], 3);

    let out = call(&t.grep, &ctx(&dir), json!({"pattern": "nothing-like-this"})).await;
    assert_eq!(text(&out), "No files found");
}

#[tokio::test]
async fn grep_case_insensitive_and_head_limit() {
    let (_d, dir) = project();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.grep, &c, json!({"pattern": "hello", "-i": true})).await;
    assert!(text(&out).starts_with("Found 4 files\n"), "{}", text(&out));
    assert!(text(&out).contains(&abs(&dir, "src/main.rs")));

    let out = call(
        &t.grep,
        &c,
        json!({"pattern": "hello", "-i": true, "head_limit": 2}),
    )
    .await;
    let txt = text(&out);
    assert!(txt.starts_with("Found 2 files\n"), "{txt}");
    assert!(
        txt.contains("[Showing results with pagination = limit: 2, offset: 0]"),
        "{txt}"
    );
    assert_eq!(out.raw.unwrap()["appliedLimit"], 2);
}

#[tokio::test]
async fn grep_content_mode_with_line_numbers_and_context() {
    let (_d, dir) = project();
    let t = tools();
    let c = ctx(&dir);
    let out = call(
        &t.grep,
        &c,
        json!({"pattern": "println", "output_mode": "content", "path": "src"}),
    )
    .await;
    let main = abs(&dir, "src/main.rs");
    assert_eq!(text(&out), format!("{main}:2:    println!(\"Hello\");"));

    let out = call(
        &t.grep,
        &c,
        json!({"pattern": "println", "output_mode": "content", "path": "src", "-C": 1}),
    )
    .await;
    assert_eq!(
        text(&out),
        format!("{main}-1-fn main() {{\n{main}:2:    println!(\"Hello\");\n{main}-3-}}")
    );

    let out = call(
        &t.grep,
        &c,
        json!({"pattern": "println", "output_mode": "content", "path": "src", "-n": false, "-B": 1}),
    )
    .await;
    assert_eq!(
        text(&out),
        format!("{main}-fn main() {{\n{main}:    println!(\"Hello\");")
    );

    let out = call(
        &t.grep,
        &c,
        json!({"pattern": "zzz", "output_mode": "content"}),
    )
    .await;
    assert_eq!(text(&out), "No matches found");
}

#[tokio::test]
async fn grep_content_head_limit_and_offset() {
    let (_d, dir) = tempdir();
    let body: String = (1..=10).map(|i| format!("match {i}\n")).collect();
    write(&dir, "m.txt", &body, 0);
    let t = tools();
    let out = call(
        &t.grep,
        &ctx(&dir),
        json!({"pattern": "match", "output_mode": "content", "head_limit": 2, "offset": 3}),
    )
    .await;
    let f = abs(&dir, "m.txt");
    assert_eq!(
        text(&out),
        format!(
            "{f}:4:match 4\n{f}:5:match 5\n\n[Showing results with pagination = limit: 2, offset: 3]"
        )
    );
}

#[tokio::test]
async fn grep_count_mode() {
    let (_d, dir) = project();
    let t = tools();
    let out = call(
        &t.grep,
        &ctx(&dir),
        json!({"pattern": "hello", "output_mode": "count"}),
    )
    .await;
    let txt = text(&out);
    assert_eq!(
        txt,
        format!(
            "{}:1\n{}:1\n{}:2\n\nFound 4 total occurrences across 3 files.",
            abs(&dir, "README.md"),
            abs(&dir, "notes.py"),
            abs(&dir, "src/lib.rs"),
        )
    );
    assert_eq!(out.raw.unwrap()["numMatches"], 4);
}

#[tokio::test]
async fn grep_glob_and_type_filters() {
    let (_d, dir) = project();
    let t = tools();
    let c = ctx(&dir);
    let out = call(
        &t.grep,
        &c,
        json!({"pattern": "hello", "-i": true, "glob": "*.rs"}),
    )
    .await;
    assert_eq!(
        text(&out),
        format!(
            "Found 2 files\n{}\n{}",
            abs(&dir, "src/lib.rs"),
            abs(&dir, "src/main.rs")
        )
    );
    let out = call(
        &t.grep,
        &c,
        json!({"pattern": "hello", "glob": "*.{py,md}"}),
    )
    .await;
    assert_eq!(
        text(&out),
        format!(
            "Found 2 files\n{}\n{}",
            abs(&dir, "notes.py"),
            abs(&dir, "README.md")
        )
    );
    let out = call(&t.grep, &c, json!({"pattern": "hello", "type": "py"})).await;
    assert_eq!(
        text(&out),
        format!("Found 1 file\n{}", abs(&dir, "notes.py"))
    );
    let out = call(
        &t.grep,
        &c,
        json!({"pattern": "hello", "type": "nosuchtype"}),
    )
    .await;
    assert!(out.is_error);
    assert!(text(&out).contains("nosuchtype"), "{}", text(&out));
}

#[tokio::test]
async fn grep_multiline() {
    let (_d, dir) = tempdir();
    write(&dir, "s.rs", "struct A {\n    x: u8,\n}\n", 0);
    let t = tools();
    let c = ctx(&dir);
    let out = call(
        &t.grep,
        &c,
        json!({"pattern": "A \\{.*x", "output_mode": "content"}),
    )
    .await;
    assert_eq!(text(&out), "No matches found");
    let out = call(
        &t.grep,
        &c,
        json!({"pattern": "A \\{.*x", "output_mode": "content", "multiline": true}),
    )
    .await;
    let f = abs(&dir, "s.rs");
    assert_eq!(text(&out), format!("{f}:1:struct A {{\n{f}:2:    x: u8,"));
}

#[tokio::test]
async fn grep_errors() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.grep, &c, json!({"pattern": "(unclosed"})).await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("Invalid regex pattern"),
        "{}",
        text(&out)
    );
    let out = call(&t.grep, &c, json!({"pattern": "x", "path": "missing"})).await;
    assert!(out.is_error);
    assert!(text(&out).contains("does not exist"));
    let out = call(&t.grep, &c, json!({"pattern": "x", "output_mode": "lines"})).await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("Grep input is invalid: "),
        "{}",
        text(&out)
    );
    let out = call(&t.grep, &c, json!({"pattern": "x", "-x": true})).await;
    assert!(out.is_error);
    assert!(text(&out).contains("-x"), "{}", text(&out));
}

#[tokio::test]
async fn grep_single_file_path() {
    let (_d, dir) = project();
    let t = tools();
    let out = call(
        &t.grep,
        &ctx(&dir),
        json!({"pattern": "hello", "path": "src/lib.rs", "output_mode": "content", "glob": "*.py"}),
    )
    .await;
    let f = abs(&dir, "src/lib.rs");
    assert_eq!(
        text(&out),
        format!("{f}:1:pub fn hello() {{}}\n{f}:2:// hello again")
    );
}

#[tokio::test]
async fn grep_only_matching() {
    let (_d, dir) = tempdir();
    write(&dir, "v.txt", "a=1 b=22\nnone\nc=333\n", 0);
    let t = tools();
    let c = ctx(&dir);
    let f = abs(&dir, "v.txt");
    let out = call(
        &t.grep,
        &c,
        json!({"pattern": "[a-z]=\\d+", "output_mode": "content", "-o": true, "-C": 2}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(text(&out), format!("{f}:1:a=1\n{f}:1:b=22\n{f}:3:c=333"));
    assert_eq!(out.raw.unwrap()["numLines"], 3);

    let out = call(
        &t.grep,
        &c,
        json!({"pattern": "\\d+\\nno", "output_mode": "content", "-o": true, "multiline": true}),
    )
    .await;
    assert_eq!(text(&out), format!("{f}:1:22\nno"));

    // Ignored outside content mode.
    let out = call(&t.grep, &c, json!({"pattern": "b=", "-o": true})).await;
    assert_eq!(text(&out), format!("Found 1 file\n{f}"));
}

/// Many files searched on several threads: content comes out in path order
/// (as a sequential, name-sorted walk gives it), context separators and the
/// line cap (head_limit + offset) apply to that order, the same every run.
#[tokio::test]
async fn grep_many_files_keep_walk_order_and_cap() {
    let (_d, dir) = tempdir();
    let mut rels = Vec::new();
    for i in 0..300 {
        // Names whose creation order differs from their sorted order.
        let rel = format!(
            "d{}/s{}/f{:03}.txt",
            (i * 7) % 5,
            (i * 3) % 4,
            (i * 37) % 300
        );
        write(&dir, &rel, "x\nhit one\ny\nhit two\n", 0);
        rels.push(rel);
    }
    rels.sort_by(|a, b| std::path::Path::new(a).cmp(std::path::Path::new(b)));
    let all: Vec<String> = rels
        .iter()
        .flat_map(|r| {
            let f = abs(&dir, r);
            [format!("{f}:2:hit one"), format!("{f}:4:hit two")]
        })
        .collect();
    let t = tools();
    let c = ctx(&dir);
    for _ in 0..3 {
        let out = call(
            &t.grep,
            &c,
            json!({"pattern": "hit", "output_mode": "content"}),
        )
        .await;
        assert_eq!(text(&out), all.join("\n"));
        let raw = out.raw.unwrap();
        assert_eq!(raw["numFiles"], 300);
        assert_eq!(raw["numLines"], 600);

        let out = call(
            &t.grep,
            &c,
            json!({"pattern": "hit", "output_mode": "content", "head_limit": 5, "offset": 101}),
        )
        .await;
        assert_eq!(
            text(&out),
            format!(
                "{}\n\n[Showing results with pagination = limit: 5, offset: 101]",
                all[101..106].join("\n")
            )
        );

        let out = call(
            &t.grep,
            &c,
            json!({"pattern": "one", "output_mode": "content", "-A": 1, "head_limit": 4}),
        )
        .await;
        let (f0, f1) = (abs(&dir, &rels[0]), abs(&dir, &rels[1]));
        assert_eq!(
            text(&out),
            format!(
                "{f0}:2:hit one\n{f0}-3-y\n--\n{f1}:2:hit one\n\n[Showing results with pagination = limit: 4, offset: 0]"
            )
        );

        let out = call(
            &t.grep,
            &c,
            json!({"pattern": "two", "output_mode": "count"}),
        )
        .await;
        let counts: Vec<String> = rels.iter().map(|r| format!("{}:1", abs(&dir, r))).collect();
        assert!(
            text(&out).starts_with(&format!("{}\n\nFound 300 total", counts.join("\n"))),
            "{}",
            text(&out)
        );
    }
}
