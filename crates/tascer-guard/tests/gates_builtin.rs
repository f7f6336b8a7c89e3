#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Each built-in gate passes and fails on real files and processes.

use std::path::Path;

use serde_json::{Value, json};
use tascer_core::ToolOutput;
use tascer_guard::gates::{BuiltinOptions, GateContext, GateRegistry, GateResult, Phase};

fn registry(options: &BuiltinOptions) -> GateRegistry {
    GateRegistry::with_builtins(options).unwrap()
}

async fn check(name: &str, options: &BuiltinOptions, ctx: &GateContext) -> GateResult {
    let reg = registry(options);
    let gate = reg.get(name).unwrap();
    gate.check(ctx).await
}

fn ctx(phase: Phase, tool: &str, input: Value, cwd: &Path) -> GateContext {
    GateContext::new(phase, tool, input, cwd.to_path_buf())
}

fn output(text: &str, is_error: bool, raw: Option<Value>) -> ToolOutput {
    let out = if is_error {
        ToolOutput::error(text)
    } else {
        ToolOutput::text(text)
    };
    match raw {
        Some(raw) => out.with_raw(raw),
        None => out,
    }
}

#[tokio::test]
async fn command_allowed_denies_prefixes_in_any_segment() {
    let dir = tempfile::tempdir().unwrap();
    let opts = BuiltinOptions::default();
    let ok = ctx(
        Phase::Pre,
        "Bash",
        json!({"command": "git push origin main"}),
        dir.path(),
    );
    assert!(check("command_allowed", &opts, &ok).await.passed);

    let bad = ctx(
        Phase::Pre,
        "Bash",
        json!({"command": "cargo build && git push --force origin main"}),
        dir.path(),
    );
    let r = check("command_allowed", &opts, &bad).await;
    assert!(!r.passed);
    assert!(r.message.contains("git push --force"), "{}", r.message);

    let mut custom = BuiltinOptions::default();
    custom.command_allowed.deny = vec!["curl".into()];
    let quoted = ctx(
        Phase::Pre,
        "Bash",
        json!({"command": "'curl' -s x"}),
        dir.path(),
    );
    assert!(!check("command_allowed", &custom, &quoted).await.passed);
    let fine = ctx(
        Phase::Pre,
        "Bash",
        json!({"command": "echo curl"}),
        dir.path(),
    );
    assert!(check("command_allowed", &custom, &fine).await.passed);
}

#[tokio::test]
async fn file_protected_and_alias() {
    let dir = tempfile::tempdir().unwrap();
    let opts = BuiltinOptions::default();
    let git = ctx(
        Phase::Pre,
        "Write",
        json!({"file_path": ".git/config", "content": "x"}),
        dir.path(),
    );
    let r = check("file_protected", &opts, &git).await;
    assert!(!r.passed);
    assert_eq!(r.findings[0]["path"], ".git/config");
    assert!(!check("not_protected", &opts, &git).await.passed);

    let lock = dir.path().join("sub/Cargo.lock");
    let lock = ctx(
        Phase::Pre,
        "Edit",
        json!({"file_path": lock, "old_string": "a", "new_string": "b"}),
        dir.path(),
    );
    assert!(!check("file_protected", &opts, &lock).await.passed);
    let mut no_locks = BuiltinOptions::default();
    no_locks.file_protected.lockfiles = false;
    assert!(check("file_protected", &no_locks, &lock).await.passed);

    let src = ctx(
        Phase::Pre,
        "Write",
        json!({"file_path": "src/main.rs", "content": "x"}),
        dir.path(),
    );
    assert!(check("file_protected", &opts, &src).await.passed);
}

#[tokio::test]
async fn invalid_glob_is_an_error() {
    let mut opts = BuiltinOptions::default();
    opts.file_protected.globs = vec!["a/[".into()];
    let err = GateRegistry::with_builtins(&opts).unwrap_err();
    assert!(err.to_string().contains("a/["), "{err}");
}

#[tokio::test]
async fn file_exists_for_read_targets() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("here.txt"), "hi").unwrap();
    let opts = BuiltinOptions::default();
    let here = ctx(
        Phase::Pre,
        "Read",
        json!({"file_path": "here.txt"}),
        dir.path(),
    );
    assert!(check("file_exists", &opts, &here).await.passed);
    let gone = ctx(
        Phase::Pre,
        "Edit",
        json!({"file_path": "gone.txt"}),
        dir.path(),
    );
    let r = check("file_exists", &opts, &gone).await;
    assert!(!r.passed);
    assert!(r.message.contains("gone.txt"));
}

#[tokio::test]
async fn exit_code_zero_reads_raw_then_is_error() {
    let dir = tempfile::tempdir().unwrap();
    let opts = BuiltinOptions::default();
    let base = ctx(Phase::Post, "Bash", json!({"command": "true"}), dir.path());
    let ok = base
        .clone()
        .with_output(output("", false, Some(json!({"exitCode": 0}))));
    assert!(check("exit_code_zero", &opts, &ok).await.passed);
    let bad = base
        .clone()
        .with_output(output("", false, Some(json!({"exitCode": 3}))));
    let r = check("exit_code_zero", &opts, &bad).await;
    assert!(!r.passed);
    assert!(r.message.contains('3'));
    let err = base.clone().with_output(output("boom", true, None));
    assert!(!check("exit_code_zero", &opts, &err).await.passed);
    let plain = base.with_output(output("fine", false, None));
    assert!(check("exit_code_zero", &opts, &plain).await.passed);
}

async fn syntax_of(dir: &Path, name: &str, content: &str) -> GateResult {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    let c = ctx(
        Phase::Post,
        "Write",
        json!({"file_path": path, "content": content}),
        dir,
    );
    check("syntax_valid", &BuiltinOptions::default(), &c).await
}

#[tokio::test]
async fn syntax_valid_per_language() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        ("a.rs", "fn main() { let x = 1; }", "fn main( {"),
        ("a.json", r#"{"a": [1, 2]}"#, r#"{"a": [1, 2}"#),
        ("a.toml", "[package]\nname = \"x\"\n", "[package\nname = "),
        ("a.yaml", "a: 1\nb: [1, 2]\n---\nc: d\n", "a: [1, 2\nb: : :"),
        (
            "a.py",
            "def f(x):\n    return x + 1\n",
            "def f(x:\n    return\n",
        ),
        ("a.js", "const f = (a) => a * 2;\n", "function f( {\n"),
        ("a.ts", "let x: number = 1;\n", "let x: number = ;\n"),
        (
            "a.tsx",
            "const a = <div>hi</div>;\n",
            "const a = <div>hi</div>; function f( {\n",
        ),
    ];
    for (name, good, bad) in cases {
        let r = syntax_of(d, name, good).await;
        assert!(r.passed, "{name}: {}", r.message);
        let r = syntax_of(d, name, bad).await;
        assert!(!r.passed, "{name} should fail");
        assert!(r.message.contains(name), "{}", r.message);
    }
    let r = syntax_of(d, "notes.txt", "anything {").await;
    assert!(r.passed);
    assert!(r.message.contains("skipped"), "{}", r.message);
}

/// Large files are parsed on the blocking pool: same verdicts, on a
/// single-threaded runtime too.
#[tokio::test(flavor = "current_thread")]
async fn syntax_valid_large_files() {
    let dir = tempfile::tempdir().unwrap();
    let good: String = (0..400)
        .map(|i| format!("fn f{i}(x: u32) -> u32 {{ x + {i} }}\n"))
        .collect();
    assert!(good.len() > 8 * 1024);
    let r = syntax_of(dir.path(), "big.rs", &good).await;
    assert!(r.passed, "{}", r.message);
    let bad = format!("{good}fn broken( {{\n");
    let r = syntax_of(dir.path(), "big.rs", &bad).await;
    assert!(!r.passed && r.message.contains("big.rs"), "{}", r.message);
}

#[tokio::test]
async fn syntax_valid_pre_write_uses_input_content() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(
        Phase::Pre,
        "Write",
        json!({"file_path": "new.json", "content": "{oops"}),
        dir.path(),
    );
    assert!(
        !check("syntax_valid", &BuiltinOptions::default(), &c)
            .await
            .passed
    );
}

#[tokio::test]
async fn tests_pass_runs_the_command() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker"), "").unwrap();
    let edit = ctx(
        Phase::Post,
        "Edit",
        json!({"file_path": "src/lib.rs"}),
        dir.path(),
    );
    let mut opts = BuiltinOptions::default();
    opts.tests_pass.command = Some("test -f marker && echo all good".into());
    let r = check("tests_pass", &opts, &edit).await;
    assert!(r.passed, "{}", r.message);

    opts.tests_pass.command = Some("echo first line; echo 'test x failed' >&2; exit 4".into());
    let r = check("tests_pass", &opts, &edit).await;
    assert!(!r.passed);
    assert!(r.message.contains("code 4"), "{}", r.message);
    assert!(r.message.contains("test x failed"), "{}", r.message);

    let read = ctx(Phase::Post, "Read", json!({"file_path": "x"}), dir.path());
    assert!(check("tests_pass", &opts, &read).await.passed);

    let unset = BuiltinOptions::default();
    assert!(!check("tests_pass", &unset, &edit).await.passed);
}

#[tokio::test]
async fn diff_size_limit_from_each_source() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = BuiltinOptions::default();
    opts.diff_size_limit.max_changed_lines = 2;
    let base = ctx(
        Phase::Post,
        "Edit",
        json!({"file_path": "a.txt"}),
        dir.path(),
    );

    let patch = json!({"structuredPatch": [{"lines": [" keep", "-old", "+new"]}]});
    let r = check(
        "diff_size_limit",
        &opts,
        &base.clone().with_output(output("", false, Some(patch))),
    )
    .await;
    assert!(r.passed, "{}", r.message);
    assert_eq!(r.findings[0]["changed_lines"], 2);

    let diff = json!({"diff": "--- a\n+++ b\n@@\n-a\n-b\n+c\n"});
    let r = check(
        "diff_size_limit",
        &opts,
        &base.clone().with_output(output("", false, Some(diff))),
    )
    .await;
    assert!(!r.passed);
    assert_eq!(r.findings[0]["changed_lines"], 3);

    std::fs::write(dir.path().join("a.txt"), "1\n2\nX\nY\nZ\n").unwrap();
    let orig = json!({"originalFile": "1\n2\n3\n4\n5\n"});
    let r = check(
        "diff_size_limit",
        &opts,
        &base.clone().with_output(output("", false, Some(orig))),
    )
    .await;
    assert!(!r.passed);
    assert_eq!(r.findings[0]["changed_lines"], 6);

    let none = base.with_output(output("", false, None));
    assert!(check("diff_size_limit", &opts, &none).await.passed);
}
