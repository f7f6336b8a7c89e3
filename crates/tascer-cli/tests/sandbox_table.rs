//! The OS sandbox's table test (issue 22): every case of
//! `sandbox/cases.rs` runs as a real subprocess through the built
//! `tascer sandbox`, again through the Bash tool, and once more through the
//! Bash tool behind permission rules (admission in `bypassPermissions` with
//! a project's deny and allow rules); no escape succeeds and every benign
//! look-alike works. Each escape also runs once without the sandbox, as a
//! control: a case that escapes nothing even then would prove nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "sandbox/cases.rs"]
mod cases;

use std::collections::{BTreeMap, HashMap};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cases::{CASES, Case, Expect};
use serde_json::json;
use tascer::tools::{BashTool, CommandSandbox, ToolState};
use tascer::{Tool, ToolContext};
use tascer_sandbox::{Launcher, SandboxPolicy};
use tokio_util::sync::CancellationToken;

const TASCER: &str = env!("CARGO_BIN_EXE_tascer");
/// Longest a case may run.
const CASE_TIMEOUT: Duration = Duration::from_secs(20);
/// How long to wait for a case's background processes before looking.
const SETTLE: Duration = Duration::from_millis(700);

/// False (after a `SKIPPED` line, or a failure under
/// `TASCER_TEST_REQUIRE_DEPS`) when this kernel cannot sandbox.
fn kernel_can_sandbox(test: &str) -> bool {
    let support = tascer_sandbox::support();
    if support.landlock && support.seccomp {
        return true;
    }
    let why = format!(
        "the kernel cannot run the OS sandbox: {}",
        support.missing().unwrap_or_default()
    );
    eprintln!("SKIPPED: {test}: {why}");
    tascer_testkit::skip(test, &why);
    false
}

/// A workspace, a directory outside it, a fake home with secrets, a
/// private temporary directory and a TCP listener.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    out: PathBuf,
    home: PathBuf,
    tmp: PathBuf,
    listener: TcpListener,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (ws, out, home, tmp) = (
            root.join("ws"),
            root.join("outside"),
            root.join("home"),
            root.join("tmp"),
        );
        for d in [&ws, &out, &home, &tmp] {
            std::fs::create_dir_all(d).unwrap();
        }
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&ws)
            .status()
            .unwrap();
        assert!(git.success());
        write(&ws.join(".claude/settings.json"), "{}");
        write(&ws.join(".tascer/settings.json"), "{}");
        write(&ws.join(".git/hooks/pre-commit.sample"), "#!/bin/sh\n");
        write(&out.join("keep.txt"), "original\n");
        write(&home.join(".bashrc"), "alias ll='ls -l'\n");
        for secret in [
            ".ssh/id_rsa",
            ".aws/credentials",
            ".gnupg/private-keys-v1.d/key",
            ".config/gcloud/credentials.db",
            ".tascer/keys/signing.key",
            ".git-credentials",
            ".netrc",
            "projects/api/.env",
        ] {
            write(&home.join(secret), &format!("SECRET-{secret}\n"));
        }
        write(&root.join(".env.production"), "SECRET-above\n");
        write(&home.join("projects/api/.env.example"), "KEY=\n");
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Fixture {
            _dir: dir,
            root,
            ws,
            out,
            home,
            tmp,
            listener,
        }
    }

    fn env(&self) -> HashMap<String, String> {
        let port = self.listener.local_addr().unwrap().port();
        HashMap::from([
            ("HOME".into(), self.home.display().to_string()),
            ("OUT".into(), self.out.display().to_string()),
            ("WS".into(), self.ws.display().to_string()),
            ("PORT".into(), port.to_string()),
            (
                "TASCER_HOME".into(),
                self.home.join(".tascer").display().to_string(),
            ),
        ])
    }

    /// Everything a command must not change: the whole fixture but the
    /// workspace's writable part and the private temporary directory.
    fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        let protected = [".git/hooks", ".git/config", ".tascer", ".claude"];
        self.walk(&self.root, &protected, &mut out);
        out
    }

    fn walk(&self, dir: &Path, protected: &[&str], out: &mut BTreeMap<PathBuf, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path == self.tmp {
                continue;
            }
            let in_ws = path.starts_with(&self.ws);
            let guarded = protected.iter().any(|p| {
                let p = self.ws.join(p);
                path.starts_with(&p) || p.starts_with(&path)
            });
            if in_ws && !guarded {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode();
            let what = if meta.is_symlink() {
                format!("link {:?}", std::fs::read_link(&path).ok())
            } else if meta.is_dir() {
                self.walk(&path, protected, out);
                "dir".to_string()
            } else if meta.is_file() {
                format!("{:?}", std::fs::read(&path).ok())
            } else {
                // A fifo or socket: reading it would block.
                format!("special {:?}", meta.file_type())
            };
            out.insert(path, format!("{mode:o} {what}"));
        }
    }

    /// What escaped, if anything, given the snapshot before and the
    /// command's output.
    fn escape(&self, before: &BTreeMap<PathBuf, String>, output: &str) -> Option<String> {
        let after = self.snapshot();
        if &after != before {
            let changed: Vec<_> = before
                .iter()
                .filter(|(k, v)| after.get(*k) != Some(v))
                .map(|(k, _)| k.display().to_string())
                .chain(
                    after
                        .keys()
                        .filter(|k| !before.contains_key(*k))
                        .map(|k| k.display().to_string()),
                )
                .collect();
            return Some(format!("changed outside the workspace: {changed:?}"));
        }
        if output.contains("SECRET-") {
            return Some("printed a secret".into());
        }
        if output.contains("ESCAPED") {
            return Some("printed ESCAPED".into());
        }
        if self.listener.accept().is_ok() {
            return Some("connected to the TCP listener".into());
        }
        None
    }
}

/// Runs a command to its end (killed after [`CASE_TIMEOUT`]); returns
/// the exit code and stdout + stderr.
fn run(mut cmd: Command) -> (i32, String) {
    let out_file = tempfile::NamedTempFile::new().unwrap();
    let err_file = tempfile::NamedTempFile::new().unwrap();
    cmd.stdin(Stdio::null())
        .stdout(out_file.reopen().unwrap())
        .stderr(err_file.reopen().unwrap());
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code().unwrap_or(-1);
        }
        if start.elapsed() > CASE_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break -2;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let text = std::fs::read_to_string(out_file.path()).unwrap_or_default()
        + &std::fs::read_to_string(err_file.path()).unwrap_or_default();
    (code, text)
}

fn runnable(case: &Case) -> bool {
    case.needs.iter().all(|p| {
        Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

fn settle(case: &Case) {
    if case.script.contains('&') {
        std::thread::sleep(SETTLE);
    }
}

/// `bash -c script` in the fixture, through `tascer sandbox` or not.
fn command(f: &Fixture, script: &str, sandboxed: bool) -> Command {
    let mut cmd = if sandboxed {
        let mut cmd = Command::new(TASCER);
        cmd.arg("sandbox").arg("--add-dir").arg(&f.tmp).arg("--");
        cmd.args(["bash", "-c", script]);
        cmd
    } else {
        let mut cmd = Command::new("bash");
        cmd.args(["-c", script]);
        cmd
    };
    cmd.current_dir(&f.ws).envs(f.env()).env("TMPDIR", &f.tmp);
    cmd
}

/// Checks one case's result; `Err` says what went wrong.
fn judge(
    case: &Case,
    f: &Fixture,
    before: &BTreeMap<PathBuf, String>,
    code: i32,
    out: &str,
) -> Result<(), String> {
    match case.expect {
        Expect::Works => {
            if code != 0 || !out.contains("OK") {
                return Err(format!("benign command failed (exit {code}): {out}"));
            }
            if let Some(escape) = f.escape(before, out) {
                return Err(format!("benign command changed what it must not: {escape}"));
            }
            Ok(())
        }
        Expect::Refused | Expect::RefusedNoControl => match f.escape(before, out) {
            Some(escape) => Err(format!("ESCAPED ({escape}); output: {out}")),
            None => Ok(()),
        },
    }
}

#[test]
fn no_escape_through_tascer_sandbox_and_benign_commands_work() {
    if !kernel_can_sandbox("no_escape_through_tascer_sandbox_and_benign_commands_work") {
        return;
    }
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in CASES {
        if !runnable(case) {
            eprintln!("case {}: not run, needs {:?}", case.name, case.needs);
            continue;
        }
        ran += 1;
        eprintln!("case {}", case.name);
        let f = Fixture::new();
        let before = f.snapshot();
        let (code, out) = run(command(&f, case.script, true));
        settle(case);
        if let Err(why) = judge(case, &f, &before, code, &out) {
            failures.push(format!("{} ({}): {why}", case.name, case.why));
        }
        if case.expect == Expect::Refused {
            // The control: without the sandbox the same command escapes.
            let f = Fixture::new();
            let before = f.snapshot();
            let (_, out) = run(command(&f, case.script, false));
            settle(case);
            if f.escape(&before, &out).is_none() {
                failures.push(format!(
                    "{} ({}): escapes nothing even without the sandbox, so proves nothing: {out}",
                    case.name, case.why
                ));
            }
        }
    }
    assert!(ran >= 60, "only {ran} cases ran");
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The Bash tool with the sandbox, its helper the built
/// `tascer-sandbox-exec` (what `tascer` finds next to itself).
fn bash_tool(f: &Fixture) -> (BashTool, CommandSandbox) {
    let policy = SandboxPolicy::for_workspace(&f.ws, Some(&f.home));
    let helper = Launcher::exec_helper(env!("CARGO_BIN_EXE_tascer-sandbox-exec"));
    let sandbox = CommandSandbox::new(helper, policy).unwrap();
    let state = ToolState::new().with_sandbox(sandbox.clone());
    (BashTool::new(state), sandbox)
}

fn ctx(f: &Fixture) -> ToolContext {
    ToolContext {
        session_id: "sandbox-table".into(),
        tool_use_id: "toolu_sandbox".into(),
        cwd: ToolContext::shared_cwd(&f.ws),
        env: Arc::new(f.env()),
        cancel: CancellationToken::new(),
        file_access: None,
    }
}

fn raw_text(raw: &serde_json::Value) -> String {
    let s = |k: &str| {
        raw.get(k)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    s("stdout") + "\n" + &s("stderr")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_escape_through_the_bash_tool_and_benign_commands_work() {
    if !kernel_can_sandbox("no_escape_through_the_bash_tool_and_benign_commands_work") {
        return;
    }
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in CASES.iter().filter(|c| runnable(c)) {
        ran += 1;
        let f = Fixture::new();
        let (tool, _sandbox) = bash_tool(&f);
        let before = f.snapshot();
        let out = tool.call(json!({ "command": case.script }), &ctx(&f)).await;
        settle(case);
        let raw = out.raw.clone().unwrap_or_default();
        let code = if out.is_error { 1 } else { 0 };
        if let Err(why) = judge(case, &f, &before, code, &raw_text(&raw)) {
            failures.push(format!("{} ({}): {why}", case.name, case.why));
        }
        if raw.pointer("/sandbox/enabled") != Some(&json!(true)) {
            failures.push(format!(
                "{}: raw.sandbox.enabled is not true: {raw}",
                case.name
            ));
        }
    }
    assert!(ran >= 60, "only {ran} cases ran");
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_write_comes_back_to_the_model_saying_what_and_why() {
    if !kernel_can_sandbox("a_refused_write_comes_back_to_the_model_saying_what_and_why") {
        return;
    }
    let f = Fixture::new();
    let (tool, sandbox) = bash_tool(&f);
    let ctx = ctx(&f);
    let out = tool
        .call(json!({ "command": "touch \"$OUT/evil\"" }), &ctx)
        .await;
    assert!(out.is_error);
    let text = match &out.content {
        tascer::ToolResultContent::Text(t) => t.clone(),
        other => panic!("{other:?}"),
    };
    let target = f.out.join("evil");
    let expected = format!(
        "the sandbox refused a write outside the workspace: {}",
        target.display()
    );
    assert!(text.contains(&expected), "{text}");
    assert!(text.contains("writes only under"), "{text}");
    let raw = out.raw.unwrap();
    assert!(
        raw.pointer("/sandbox/refusal")
            .and_then(|v| v.as_str())
            .is_some_and(|r| r.contains(&expected)),
        "{raw}"
    );
    assert!(!target.exists());

    // The protected hooks and a secret get their own reasons.
    let hook = tool
        .call(json!({ "command": "echo x > .git/hooks/pre-commit" }), &ctx)
        .await;
    let raw = hook.raw.unwrap();
    assert!(
        raw.pointer("/sandbox/refusal")
            .and_then(|v| v.as_str())
            .is_some_and(|r| r.contains("read-only")),
        "{raw}"
    );
    let secret = tool
        .call(json!({ "command": "cat ~/.ssh/id_rsa" }), &ctx)
        .await;
    let raw = secret.raw.unwrap();
    assert!(
        raw.pointer("/sandbox/refusal")
            .and_then(|v| v.as_str())
            .is_some_and(|r| r.contains("secret location")),
        "{raw}"
    );

    // A command that simply fails gets no sandbox note; one that works
    // may write to the private temporary directory.
    let plain = tool.call(json!({ "command": "exit 3" }), &ctx).await;
    assert_eq!(
        plain.raw.unwrap().pointer("/sandbox/refusal"),
        Some(&json!(null))
    );
    let tmp = tool
        .call(
            json!({ "command": "echo hi > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"" }),
            &ctx,
        )
        .await;
    assert!(!tmp.is_error, "{:?}", tmp.content);
    assert!(sandbox.temp_dir().join("t").exists());
}

#[test]
fn the_network_flag_lets_a_command_connect() {
    if !kernel_can_sandbox("the_network_flag_lets_a_command_connect") {
        return;
    }
    let f = Fixture::new();
    let script = r#"python3 -c 'import os, socket; socket.create_connection(("127.0.0.1", int(os.environ["PORT"]))); print("OK")'"#;
    let mut cmd = Command::new(TASCER);
    cmd.args(["sandbox", "--network", "--", "bash", "-c", script])
        .current_dir(&f.ws)
        .envs(f.env());
    let (code, out) = run(cmd);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("OK"));
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        f.listener.accept().is_ok(),
        "the listener saw no connection"
    );
}

#[test]
fn a_missing_command_and_a_bad_policy_fail_clearly() {
    let f = Fixture::new();
    let mut cmd = Command::new(TASCER);
    cmd.args(["sandbox", "--", "/nonexistent/program"])
        .current_dir(&f.ws);
    let (code, out) = run(cmd);
    if kernel_can_sandbox("a_missing_command_and_a_bad_policy_fail_clearly") {
        assert_eq!(code, 127, "{out}");
        assert!(out.contains("cannot execute /nonexistent/program"), "{out}");
    }
    let mut cmd = Command::new(TASCER);
    cmd.args([
        "sandbox",
        "--policy",
        r#"{"writable":["relative"]}"#,
        "--",
        "true",
    ]);
    let (code, out) = run(cmd);
    assert_eq!(code, 125, "{out}");
    assert!(out.contains("not an absolute path"), "{out}");
}

/// A project's rules in front of the sandbox: the deny rules of the
/// bypass corpus (`rm -rf` rather than every `rm`: the project deletes
/// its own files), and allow rules naming the project's own programs and
/// inline code (what the benign cases need past the opaque-code check).
fn admission_with_rules() -> tascer::guard::admission::Admission {
    use tascer::guard::permissions::{PermissionEngine, PermissionMode, PermissionRules};
    let deny = [
        "Bash(rm -rf:*)",
        "Bash(curl:*)",
        "Bash(wget:*)",
        "Bash(git push:*)",
        "Bash(chmod:*)",
        "Bash(sudo:*)",
        "Bash(nc:*)",
        "Bash(scp:*)",
        "Bash(shred:*)",
        "Read(~/.ssh/**)",
    ];
    let allow = [
        "Bash(./build/m)",
        "Bash(python3 -c:*)",
        "Bash(python3 -m unittest:*)",
    ];
    let engine = PermissionEngine::builder()
        .rules(PermissionRules::parse(&allow, &[], &deny).unwrap())
        .default_policies()
        .mode(PermissionMode::BypassPermissions)
        .build()
        .unwrap();
    tascer::guard::admission::Admission::new(Arc::new(engine))
}

/// Benign cases the rules ask about in every mode, by design: touching a
/// sensitive file (`.env`) needs a person even in the workspace.
const ASKED_BY_THE_RULES: &[&str] = &["env-in-workspace"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_escape_behind_permission_rules_and_benign_commands_are_admitted_and_work() {
    use tascer::guard::admission::CallRequest;
    use tascer::guard::hooks::HookCommon;
    if !kernel_can_sandbox(
        "no_escape_behind_permission_rules_and_benign_commands_are_admitted_and_work",
    ) {
        return;
    }
    let admission = admission_with_rules();
    let (mut failures, mut by_rules, mut by_kernel) = (Vec::new(), Vec::new(), 0);
    let mut ran = 0;
    for case in CASES.iter().filter(|c| runnable(c)) {
        ran += 1;
        let f = Fixture::new();
        let (tool, _sandbox) = bash_tool(&f);
        let before = f.snapshot();
        let call = tascer::ToolCall {
            tool_name: "Bash".into(),
            input: json!({ "command": case.script }),
            tool_use_id: format!("toolu_{}", case.name),
            cwd: f.ws.clone(),
            session_id: "sandbox-table-rules".into(),
        };
        let admitted = admission
            .admit(CallRequest {
                call: &call,
                hook_common: HookCommon {
                    session_id: call.session_id.clone(),
                    transcript_path: String::new(),
                    cwd: f.ws.display().to_string(),
                    permission_mode: None,
                },
                agent_id: None,
            })
            .await;
        let input = match admitted.verdict {
            Ok(input) => input,
            Err(_) if ASKED_BY_THE_RULES.contains(&case.name) => continue,
            Err(refusal) => {
                match case.expect {
                    Expect::Works => failures.push(format!(
                        "{} ({}): a benign command refused by the rules: {}",
                        case.name, case.why, refusal.message
                    )),
                    _ => by_rules.push(case.name),
                }
                continue;
            }
        };
        if ASKED_BY_THE_RULES.contains(&case.name) {
            failures.push(format!("{}: the rules no longer ask about it", case.name));
        }
        let out = tool.call(input, &ctx(&f)).await;
        settle(case);
        let raw = out.raw.clone().unwrap_or_default();
        let code = if out.is_error { 1 } else { 0 };
        match judge(case, &f, &before, code, &raw_text(&raw)) {
            Err(why) => failures.push(format!("{} ({}): {why}", case.name, case.why)),
            Ok(()) if case.expect != Expect::Works => by_kernel += 1,
            Ok(()) => {}
        }
    }
    eprintln!(
        "{ran} cases: {} escapes refused by the rules, {by_kernel} admitted and held by the \
         sandbox; refused by the rules: {by_rules:?}",
        by_rules.len()
    );
    assert!(ran >= 60, "only {ran} cases ran");
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The rules alone stop some escapes, the sandbox the rest: both layers
    // are exercised.
    assert!(
        !by_rules.is_empty() && by_kernel > 0,
        "{by_rules:?} / {by_kernel}"
    );
}
