//! `tascer mcp serve` over stdio, driven by rmcp's client the way an MCP
//! client (Claude Code, an IDE) drives it: a real child process, a real git
//! repository, a real (temporary) Tascer home.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tascer_testkit::{MockServer, Scenario, Turn};

const GIT_ENV: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "Test"),
    ("GIT_AUTHOR_EMAIL", "test@example.invalid"),
    ("GIT_COMMITTER_NAME", "Test"),
    ("GIT_COMMITTER_EMAIL", "test@example.invalid"),
];
const MODEL_ENV: [&str; 5] = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "TASCER_MODEL",
];

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(repo)
        .envs(GIT_ENV)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A repo with one commit and a check configured to run `lint` / `test`.
fn repo_with_check(dir: &Path, lint: &str, test: &str) {
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    set_check(dir, lint, test);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "init"]);
}

fn set_check(dir: &Path, lint: &str, test: &str) {
    std::fs::create_dir_all(dir.join(".tascer")).unwrap();
    std::fs::write(
        dir.join(".tascer/settings.json"),
        json!({"check": {"lint": [lint], "test": [test], "timeoutSecs": 60}}).to_string(),
    )
    .unwrap();
}

async fn serve(repo: &Path, home: &Path) -> RunningService<RoleClient, ()> {
    serve_with(repo, home, &[]).await
}

/// `tascer mcp serve` with no model configured, plus `env`.
async fn serve_with(
    repo: &Path,
    home: &Path,
    env: &[(&str, &str)],
) -> RunningService<RoleClient, ()> {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_tascer"));
    cmd.args(["mcp", "serve", "--cwd"])
        .arg(repo)
        .env("TASCER_HOME", home)
        .envs(GIT_ENV);
    for var in MODEL_ENV {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    ().serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .expect("initialize tascer mcp serve")
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> Value {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    let result = client.call_tool(params).await.expect(tool);
    serde_json::to_value(&result).unwrap()
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn is_error(result: &Value) -> bool {
    result["isError"].as_bool().unwrap_or(false)
}

#[tokio::test]
async fn gate_chain_over_stdio() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    repo_with_check(repo.path(), "true", "true");
    let client = serve(repo.path(), home.path()).await;

    let info = serde_json::to_value(&*client.peer_info().unwrap()).unwrap();
    assert_eq!(info["serverInfo"]["name"], "tascer", "{info}");
    let tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    for name in [
        "check",
        "confirm",
        "commit",
        "push",
        "validate_intent",
        "sessions_list",
        "session_report",
        "session_verify",
    ] {
        assert!(tools.iter().any(|t| t == name), "{name} missing: {tools:?}");
    }

    // An empty home: no sessions, and listing them creates no database.
    let r = call(&client, "sessions_list", json!({})).await;
    assert!(!is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["sessions"], json!([]), "{r}");
    assert!(text(&r).starts_with("no sessions"), "{r}");
    assert!(!home.path().join("tascer.db").exists());

    std::fs::write(repo.path().join("a.txt"), "two\n").unwrap();

    // confirm before any check: declined.
    let r = call(&client, "confirm", json!({})).await;
    assert_eq!(r["structuredContent"]["verdict"], "DECLINED", "{r}");
    assert!(text(&r).starts_with("DECLINED"), "{r}");
    assert!(text(&r).contains("call `check` first"), "{r}");

    // commit runs the chain: the check passes, but confirm without a
    // model fails closed, so nothing is committed.
    let head = git(repo.path(), &["rev-parse", "HEAD"]);
    let r = call(&client, "commit", json!({})).await;
    assert!(is_error(&r), "{r}");
    assert!(text(&r).starts_with("commit refused at confirm"), "{r}");
    assert!(text(&r).contains("no reviewer model is configured"), "{r}");
    assert_eq!(r["structuredContent"]["step"], "confirm", "{r}");
    assert_eq!(git(repo.path(), &["rev-parse", "HEAD"]), head);

    // A passing check; confirm without a model declines (fail closed)...
    let r = call(&client, "check", json!({})).await;
    assert!(!is_error(&r), "{r}");
    let data = &r["structuredContent"];
    assert_eq!(data["passed"], true, "{r}");
    assert_eq!(data["commands"].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(data["commands"][0]["exit_code"], 0, "{r}");
    assert!(text(&r).starts_with("check PASSED"), "{r}");
    let r = call(&client, "confirm", json!({"intent": "say two"})).await;
    assert_eq!(r["structuredContent"]["verdict"], "DECLINED", "{r}");
    assert!(text(&r).contains("fails closed"), "{r}");
    assert!(text(&r).contains("confirmWithoutModel"), "{r}");
    // ...unless Tascer's settings let a passing check alone confirm.
    std::fs::write(
        home.path().join("settings.json"),
        json!({"mcpServe": {"confirmWithoutModel": true}}).to_string(),
    )
    .unwrap();
    let r = call(&client, "confirm", json!({"intent": "say two"})).await;
    assert_eq!(r["structuredContent"]["verdict"], "CONFIRMED", "{r}");
    assert!(text(&r).contains("rests on the check alone"), "{r}");

    // commit reuses what passed for this very state, with the fallback
    // message.
    let r = call(&client, "commit", json!({})).await;
    assert!(!is_error(&r), "{r}");
    let data = &r["structuredContent"];
    assert_eq!(data["message_from"], "fallback", "{r}");
    assert_eq!(data["steps"]["check"]["ran"], false, "{r}");
    assert_eq!(data["steps"]["confirm"]["ran"], false, "{r}");
    let log = git(repo.path(), &["log", "-1", "--format=%s"]);
    assert_eq!(log.trim(), "Update 1 file: modify a.txt");
    // Nothing left to commit: the chain's confirm declines.
    let r = call(&client, "commit", json!({})).await;
    assert!(is_error(&r), "{r}");
    assert!(text(&r).contains("nothing to confirm"), "{r}");

    // A new change: commit runs check and confirm itself.
    std::fs::write(repo.path().join("b.txt"), "new\n").unwrap();
    let r = call(&client, "commit", json!({"message": "Add b"})).await;
    assert!(!is_error(&r), "{r}");
    let steps = &r["structuredContent"]["steps"];
    assert_eq!(steps["check"]["ran"], true, "{r}");
    assert_eq!(steps["confirm"]["ran"], true, "{r}");
    assert_eq!(steps["confirm"]["verdict"], "CONFIRMED", "{r}");
    assert_eq!(
        git(repo.path(), &["log", "-1", "--format=%s"]).trim(),
        "Add b"
    );

    // A failing check: confirm declines and names the failing command.
    std::fs::write(repo.path().join("a.txt"), "three\n").unwrap();
    set_check(repo.path(), "true", "false");
    let r = call(&client, "check", json!({})).await;
    let data = &r["structuredContent"];
    assert_eq!(data["passed"], false, "{r}");
    assert_eq!(data["commands"][1]["exit_code"], 1, "{r}");
    assert!(text(&r).starts_with("check FAILED"), "{r}");
    let r = call(&client, "confirm", json!({})).await;
    assert_eq!(r["structuredContent"]["verdict"], "DECLINED", "{r}");
    assert!(text(&r).contains("the last check failed (false)"), "{r}");
    // commit runs the check again; it fails, nothing is committed.
    let head = git(repo.path(), &["rev-parse", "HEAD"]);
    let r = call(&client, "commit", json!({})).await;
    assert!(is_error(&r), "{r}");
    assert!(
        text(&r).starts_with("commit refused at check: the check failed (false)"),
        "{r}"
    );
    assert!(text(&r).contains("check FAILED"), "{r}");
    assert_eq!(git(repo.path(), &["rev-parse", "HEAD"]), head);

    // validate_intent without a model: a clear tool error.
    let r = call(
        &client,
        "validate_intent",
        json!({"transcript": "USER: hi"}),
    )
    .await;
    assert!(is_error(&r) && text(&r).contains("needs a model"), "{r}");

    // push without a remote: git's error, recorded, as a tool error.
    let r = call(&client, "push", json!({})).await;
    assert!(is_error(&r), "{r}");
    assert_ne!(r["structuredContent"]["exit_code"], 0, "{r}");

    // Everything above went into a signed-or-not ledger session that verifies.
    let r = call(&client, "session_verify", json!({"all": true})).await;
    assert!(!is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["ok"], true, "{r}");
    let reports = r["structuredContent"]["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 1, "{r}");
    let session = reports[0]["session_id"].as_str().unwrap().to_owned();
    assert!(session.starts_with("mcp-serve-"), "{session}");
    let r = call(&client, "session_report", json!({"session_id": session})).await;
    assert!(!is_error(&r), "{r}");
    assert!(
        r["structuredContent"]["report"]["gate_results"]
            .as_u64()
            .unwrap()
            >= 8,
        "{r}"
    );
    let r = call(&client, "session_report", json!({"session_id": "nope"})).await;
    assert!(
        is_error(&r) && text(&r).contains("unknown session nope"),
        "{r}"
    );

    client.cancel().await.unwrap();
}

#[tokio::test]
async fn check_outside_git_and_timeouts() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let client = serve(dir.path(), home.path()).await;
    let r = call(&client, "check", json!({})).await;
    assert!(
        is_error(&r) && text(&r).contains("not inside a git work tree"),
        "{r}"
    );

    git(dir.path(), &["init", "-q"]);
    set_check(dir.path(), "true", "sleep 20");
    let r = call(&client, "check", json!({"timeout_secs": 1})).await;
    let data = &r["structuredContent"];
    assert_eq!(data["passed"], false, "{r}");
    assert_eq!(data["commands"][1]["timed_out"], true, "{r}");
    assert!(text(&r).contains("timed out after 1s"), "{r}");
    client.cancel().await.unwrap();
}

/// What `tascer hook` answers Claude Code for a `Bash` call of `command`
/// in `repo`: (permissionDecision, permissionDecisionReason).
fn hook_answer(repo: &Path, home: &Path, command: &str) -> (String, String) {
    let event = json!({
        "hook_event_name": "PreToolUse",
        "session_id": "claude-session-1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": repo.display().to_string(),
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "toolu_1",
    });
    let out = common::hook(home, repo, &event);
    assert!(out.status.success(), "{out:?}");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let specific = &answer["hookSpecificOutput"];
    (
        specific["permissionDecision"].as_str().unwrap().to_owned(),
        specific["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_owned(),
    )
}

/// `check`, `confirm` and `push` ask the same admission `tascer hook`
/// asks: a command a deny rule or a policy refuses in Claude Code is
/// refused here with the same reason, and does not run.
#[tokio::test]
async fn the_safe_profile_does_not_refuse_what_the_user_asked_the_server_to_run() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    repo_with_check(repo.path(), "touch linted", "true");
    // What install writes: the auto mode and the reviewers, and Claude
    // Code's own hooks, which Claude Code runs (not the server).
    let mut settings: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.path().join(".tascer/settings.json")).unwrap(),
    )
    .unwrap();
    settings["permissions"] = json!({"defaultMode": "auto"});
    std::fs::write(
        repo.path().join(".tascer/settings.json"),
        settings.to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(repo.path().join(".claude")).unwrap();
    std::fs::write(
        repo.path().join(".claude/settings.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "touch claude-hook-ran"}]}]}})
        .to_string(),
    )
    .unwrap();
    let client = serve(repo.path(), home.path()).await;
    let r = call(&client, "check", json!({})).await;
    assert!(!is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["passed"], true, "{r}");
    assert!(repo.path().join("linted").exists(), "the check ran");
    assert!(
        !repo.path().join("claude-hook-ran").exists(),
        "Claude Code's hooks are Claude Code's to run"
    );
}

#[tokio::test]
async fn check_and_push_are_refused_with_the_reason_tascer_hook_gives() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    repo_with_check(repo.path(), "true", "true");
    let denied = "touch ran-it && git push origin main";
    let dangerous = "mkfs.ext4 /nonexistent/tascer-test-device";
    let settings = |lint: &str| {
        json!({
            "check": {"lint": [lint], "test": ["true"]},
            "permissions": {"deny": ["Bash(git push:*)"]},
        })
        .to_string()
    };
    std::fs::write(repo.path().join(".tascer/settings.json"), settings(denied)).unwrap();
    let (decision, rule_reason) = hook_answer(repo.path(), home.path(), denied);
    assert_eq!(decision, "deny");
    assert!(rule_reason.contains("Bash(git push:*)"), "{rule_reason}");
    let (decision, policy_reason) = hook_answer(repo.path(), home.path(), dangerous);
    assert_eq!(decision, "deny");
    assert!(policy_reason.contains("mkfs"), "{policy_reason}");

    let client = serve(repo.path(), home.path()).await;
    // A deny rule: refused with the hook's reason; the command did not run.
    let r = call(&client, "check", json!({})).await;
    assert!(is_error(&r), "{r}");
    assert!(text(&r).contains(&rule_reason), "{r}");
    let data = &r["structuredContent"];
    assert_eq!(data["passed"], false, "{r}");
    assert_eq!(data["refused"]["command"], denied, "{r}");
    assert_eq!(data["refused"]["reason"], rule_reason.as_str(), "{r}");
    assert!(
        !repo.path().join("ran-it").exists(),
        "a refused command ran"
    );
    // confirm declines what was never checked.
    let r = call(&client, "confirm", json!({})).await;
    assert_eq!(r["structuredContent"]["verdict"], "DECLINED", "{r}");

    // A policy (a dangerous command): the same.
    std::fs::write(
        repo.path().join(".tascer/settings.json"),
        settings(dangerous),
    )
    .unwrap();
    let r = call(&client, "check", json!({})).await;
    assert!(is_error(&r), "{r}");
    assert_eq!(
        r["structuredContent"]["refused"]["reason"],
        policy_reason.as_str(),
        "{r}"
    );

    // push is a `git push` under the same deny rule.
    let r = call(
        &client,
        "push",
        json!({"remote": "origin", "branch": "main"}),
    )
    .await;
    assert!(is_error(&r), "{r}");
    assert!(
        text(&r).contains("push refused") && text(&r).contains("Bash(git push:*)"),
        "{r}"
    );

    // Each refusal is on record.
    let r = call(&client, "session_verify", json!({"all": true})).await;
    assert_eq!(r["structuredContent"]["ok"], true, "{r}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn reviewer_model_decides_and_writes() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    repo_with_check(repo.path(), "true", "true");
    // Each reviewer call is a fresh one-message conversation; the mock picks
    // the answer by what the prompt contains.
    let scenario = Scenario::new()
        .conversation(
            "meant to do: say two",
            vec![Turn::text(
                "Verdict:\n```json\n{\"verdict\": \"DECLINED\", \"reasons\": [\"leftover debug print\"]}\n```",
            )],
        )
        .conversation(
            "meant to do: (not given)",
            vec![Turn::text(
                r#"{"verdict": "CONFIRMED", "reasons": ["small and correct"]}"#,
            )],
        )
        .conversation("diff --git", vec![Turn::text("Say two instead of one")])
        .conversation(
            "User's request: fix the typo",
            vec![Turn::text(
                r#"{"aligned": false, "drift": [{"what": "deleted the tests", "evidence": "TOOL CALL Bash rm -r tests", "severity": "high"}], "summary": "Asked to fix a typo, removed tests."}"#,
            )],
        );
    let model = MockServer::start(scenario).await.unwrap();
    let url = model.url();
    let client = serve_with(
        repo.path(),
        home.path(),
        &[("ANTHROPIC_API_KEY", "k"), ("ANTHROPIC_BASE_URL", &url)],
    )
    .await;
    std::fs::write(repo.path().join("a.txt"), "two\n").unwrap();
    let r = call(&client, "check", json!({})).await;
    assert_eq!(r["structuredContent"]["passed"], true, "{r}");

    // The reviewer declines: the verdict and its reasons come through.
    let r = call(&client, "confirm", json!({"intent": "say two"})).await;
    assert_eq!(r["structuredContent"]["verdict"], "DECLINED", "{r}");
    assert!(text(&r).contains("leftover debug print"), "{r}");
    assert!(
        r["structuredContent"]["reviewed_by"]
            .as_str()
            .unwrap()
            .starts_with("anthropic/")
    );
    let body = model.requests()[0].body.to_string();
    assert!(body.contains("+two") && body.contains("say two"), "{body}");
    let r = call(&client, "commit", json!({})).await;
    assert!(is_error(&r) && text(&r).contains("DECLINED"), "{r}");
    assert!(text(&r).contains("leftover debug print"), "{r}");

    // Then confirms; the commit message comes from the model.
    let r = call(&client, "confirm", json!({})).await;
    assert_eq!(r["structuredContent"]["verdict"], "CONFIRMED", "{r}");
    let r = call(&client, "commit", json!({})).await;
    assert!(!is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["message_from"], "model", "{r}");
    assert_eq!(
        git(repo.path(), &["log", "-1", "--format=%s"]).trim(),
        "Say two instead of one"
    );

    let r = call(
        &client,
        "validate_intent",
        json!({"transcript": "USER: fix the typo\nTOOL CALL Bash rm -r tests", "request": "fix the typo"}),
    )
    .await;
    assert!(!is_error(&r), "{r}");
    assert_eq!(r["structuredContent"]["aligned"], false, "{r}");
    assert!(text(&r).starts_with("DRIFT: Asked to fix a typo"), "{r}");
    assert!(text(&r).contains("[high] deleted the tests"), "{r}");
    let r = call(&client, "validate_intent", json!({"session_id": "missing"})).await;
    assert!(
        is_error(&r) && text(&r).contains("No conversation found with session ID: missing"),
        "{r}"
    );
    client.cancel().await.unwrap();
}

/// The model of the request to the mock whose system prompt contains
/// `system`.
fn model_asked(model: &MockServer, system: &str) -> String {
    let request = model
        .requests()
        .into_iter()
        .find(|r| r.body["system"].to_string().contains(system))
        .unwrap_or_else(|| panic!("no request with {system:?}"));
    request.body["model"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn each_tool_asks_the_model_its_settings_or_environment_name() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    repo_with_check(repo.path(), "true", "true");
    let mut settings: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.path().join(".tascer/settings.json")).unwrap(),
    )
    .unwrap();
    settings["mcpServe"] = json!({"models": {"confirm": "confirm-model-x"}});
    std::fs::write(
        repo.path().join(".tascer/settings.json"),
        settings.to_string(),
    )
    .unwrap();
    let scenario = Scenario::new()
        .conversation(
            "meant to do:",
            vec![Turn::text(
                r#"{"verdict": "CONFIRMED", "reasons": ["fine"]}"#,
            )],
        )
        .conversation(
            "User's request:",
            vec![Turn::text(
                r#"{"aligned": true, "drift": [], "summary": "Did what was asked."}"#,
            )],
        );
    let model = MockServer::start(scenario).await.unwrap();
    let url = model.url();
    // The setting beats the tool's variable; validate_intent's variable
    // names an alias, sent as the provider's id.
    let client = serve_with(
        repo.path(),
        home.path(),
        &[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", &url),
            ("TASCER_MCP_MODEL_CONFIRM", "env-confirm-model"),
            ("TASCER_MCP_MODEL_VALIDATE_INTENT", "haiku"),
            ("TASCER_REVIEW_MODEL", "review-model"),
        ],
    )
    .await;
    std::fs::write(repo.path().join("a.txt"), "two\n").unwrap();
    let r = call(&client, "check", json!({})).await;
    assert_eq!(r["structuredContent"]["passed"], true, "{r}");
    let r = call(&client, "confirm", json!({})).await;
    assert_eq!(r["structuredContent"]["verdict"], "CONFIRMED", "{r}");
    assert_eq!(
        r["structuredContent"]["reviewed_by"], "anthropic/confirm-model-x",
        "{r}"
    );
    assert!(
        r["structuredContent"]["model_from"]
            .as_str()
            .unwrap()
            .starts_with("mcpServe.models.confirm in "),
        "{r}"
    );
    let r = call(
        &client,
        "validate_intent",
        json!({"transcript": "USER: fix the typo", "request": "fix the typo"}),
    )
    .await;
    assert_eq!(r["structuredContent"]["aligned"], true, "{r}");
    assert_eq!(
        r["structuredContent"]["reviewed_by"], "anthropic/claude-haiku-4-5",
        "{r}"
    );
    assert_eq!(
        r["structuredContent"]["model_from"], "TASCER_MCP_MODEL_VALIDATE_INTENT",
        "{r}"
    );
    assert_eq!(
        model_asked(&model, "strict code reviewer"),
        "confirm-model-x"
    );
    assert_eq!(
        model_asked(&model, "You audit an AI coding agent"),
        "claude-haiku-4-5"
    );

    // An unknown tool under mcpServe.models is an error, not ignored.
    settings["mcpServe"] = json!({"models": {"review": "opus"}});
    std::fs::write(
        repo.path().join(".tascer/settings.json"),
        settings.to_string(),
    )
    .unwrap();
    let r = call(
        &client,
        "validate_intent",
        json!({"transcript": "USER: fix the typo"}),
    )
    .await;
    assert!(is_error(&r), "{r}");
    assert!(text(&r).contains("unknown tool \"review\""), "{r}");
    client.cancel().await.unwrap();
}

/// A repository with one commit whose only check is its Makefile's
/// `check` target, which fails while `a.txt` says BROKEN.
fn repo_with_makefile(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    std::fs::write(
        dir.join("Makefile"),
        "check:\n\t@echo checking a.txt\n\t! grep -q BROKEN a.txt\n",
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "init"]);
}

/// The done-when case of the MCP chain: `commit` with `working_dir`
/// (another repository than the server's own) on a dirty tree runs the
/// Makefile's `make check` and the reviewer (the mock model) and commits;
/// with the check failing it refuses at the check, asks no reviewer and
/// commits nothing. A `working_dir` outside git is refused.
#[tokio::test(flavor = "multi_thread")]
async fn commit_with_working_dir_runs_check_and_confirm_then_commits() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    // The server's own repository: dirty, and never touched.
    let own = root.path().join("own");
    repo_with_makefile(&own);
    std::fs::write(own.join("a.txt"), "own change\n").unwrap();
    let project = root.path().join("project");
    repo_with_makefile(&project);
    let scenario = Scenario::new().conversation(
        "meant to do: Say two",
        vec![Turn::text(
            r#"{"verdict": "CONFIRMED", "reasons": ["says two"]}"#,
        )],
    );
    let model = MockServer::start(scenario).await.unwrap();
    let url = model.url();
    let client = serve_with(
        &own,
        home.path(),
        &[("ANTHROPIC_API_KEY", "k"), ("ANTHROPIC_BASE_URL", &url)],
    )
    .await;

    std::fs::write(project.join("a.txt"), "two\n").unwrap();
    std::fs::write(project.join("new.txt"), "added\n").unwrap();
    let working_dir = project.display().to_string();
    let r = call(
        &client,
        "commit",
        json!({"working_dir": working_dir, "message": "Say two"}),
    )
    .await;
    assert!(!is_error(&r), "{r}");
    let data = &r["structuredContent"];
    let check = &data["steps"]["check"];
    assert_eq!(check["ran"], true, "{r}");
    assert_eq!(
        check["result"]["source"], "detected: Makefile check target",
        "{r}"
    );
    assert_eq!(
        check["result"]["commands"][0]["command"], "make check",
        "{r}"
    );
    assert!(
        check["result"]["commands"][0]["tail"]
            .as_str()
            .unwrap()
            .contains("checking a.txt"),
        "{r}"
    );
    let confirm = &data["steps"]["confirm"];
    assert_eq!(confirm["verdict"], "CONFIRMED", "{r}");
    assert!(
        confirm["reviewed_by"]
            .as_str()
            .unwrap()
            .starts_with("anthropic/"),
        "{r}"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 1, "one review");
    let body = requests[0].body.to_string();
    assert!(body.contains("+two") && body.contains("+added"), "{body}");
    assert_eq!(
        git(&project, &["log", "-1", "--format=%s"]).trim(),
        "Say two"
    );
    assert_eq!(git(&project, &["status", "--porcelain"]), "");
    assert_eq!(
        git(&project, &["show", "--name-only", "--format=", "HEAD"]).trim(),
        "a.txt\nnew.txt"
    );
    // The server's own repository was neither checked nor committed.
    assert_eq!(git(&own, &["rev-list", "--count", "HEAD"]).trim(), "1");
    assert_eq!(git(&own, &["status", "--porcelain"]).trim(), "M a.txt");

    // A failing `make check` (a relative working_dir this time): refused at
    // the check, no review asked, nothing committed.
    std::fs::write(project.join("a.txt"), "BROKEN\n").unwrap();
    let head = git(&project, &["rev-parse", "HEAD"]);
    let r = call(
        &client,
        "commit",
        json!({"working_dir": "../project", "message": "Break it"}),
    )
    .await;
    assert!(is_error(&r), "{r}");
    assert!(
        text(&r).starts_with("commit refused at check: the check failed (make check)"),
        "{r}"
    );
    assert!(
        text(&r).contains("checking a.txt"),
        "the check's output: {r}"
    );
    assert_eq!(r["structuredContent"]["step"], "check", "{r}");
    assert_eq!(model.requests().len(), 1, "no review of a failing check");
    assert_eq!(git(&project, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&project, &["status", "--porcelain"]).trim(), "M a.txt");

    // working_dir must be a git work tree.
    let plain = root.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    for (dir, says) in [
        (plain.display().to_string(), "not inside a git work tree"),
        ("../missing".to_owned(), "missing: No such file"),
    ] {
        let r = call(&client, "check", json!({"working_dir": dir})).await;
        assert!(is_error(&r) && text(&r).contains(says), "{dir}: {r}");
    }
    // The refusals are on record in a ledger that verifies.
    let r = call(&client, "session_verify", json!({"all": true})).await;
    assert_eq!(r["structuredContent"]["ok"], true, "{r}");
    client.cancel().await.unwrap();
}

/// `validate_intent` reads a Claude Code session: by `session_id` (its
/// transcript under `$CLAUDE_CONFIG_DIR/projects/<project>/`), by
/// `transcript_path`, or the working directory's latest session.
#[tokio::test(flavor = "multi_thread")]
async fn validate_intent_reads_a_claude_code_transcript() {
    let home = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let encoded: String = project
        .path()
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let sessions = config.path().join("projects").join(encoded);
    std::fs::create_dir_all(&sessions).unwrap();
    let transcript = sessions.join("0b6c1f2e-session.jsonl");
    let lines = [
        json!({"type": "user", "message": {"role": "user", "content": "Fix the typo in README"}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "rm -r tests"}}]}}),
    ];
    let text_lines: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&transcript, text_lines).unwrap();
    let scenario = Scenario::new().conversation(
        "USER: Fix the typo in README",
        vec![Turn::text(
            r#"{"aligned": false, "drift": [{"what": "deleted the tests", "evidence": "rm -r tests", "severity": "high"}], "summary": "Asked for a typo fix, removed tests."}"#,
        )],
    );
    let model = MockServer::start(scenario).await.unwrap();
    let url = model.url();
    let config_dir = config.path().display().to_string();
    let client = serve_with(
        project.path(),
        home.path(),
        &[
            ("ANTHROPIC_API_KEY", "k"),
            ("ANTHROPIC_BASE_URL", &url),
            ("CLAUDE_CONFIG_DIR", &config_dir),
        ],
    )
    .await;
    let path = transcript.display().to_string();
    for args in [
        json!({"session_id": "0b6c1f2e-session"}),
        json!({"transcript_path": path}),
        json!({"working_dir": project.path().display().to_string()}),
    ] {
        let r = call(&client, "validate_intent", args.clone()).await;
        assert!(!is_error(&r), "{args}: {r}");
        assert_eq!(r["structuredContent"]["aligned"], false, "{r}");
        assert_eq!(
            r["structuredContent"]["transcript_source"],
            path.as_str(),
            "{r}"
        );
        assert!(text(&r).contains("[high] deleted the tests"), "{r}");
    }
    let body = model.requests()[0].body.to_string();
    assert!(
        body.contains("TOOL CALL Bash") && body.contains("rm -r tests"),
        "{body}"
    );
    // Not a transcript, and an unknown session: errors that say so.
    let r = call(
        &client,
        "validate_intent",
        json!({"transcript_path": "/etc/passwd"}),
    )
    .await;
    assert!(
        is_error(&r) && text(&r).contains("not a Claude Code transcript"),
        "{r}"
    );
    let r = call(&client, "validate_intent", json!({"session_id": "../x"})).await;
    assert!(
        is_error(&r) && text(&r).contains("No conversation found"),
        "{r}"
    );
    client.cancel().await.unwrap();
}

/// Serving over HTTP on an address other than loopback needs a bearer
/// token: without one the server refuses to start and says how to set it.
#[test]
fn http_on_a_public_address_needs_a_token() {
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tascer"))
        .args([
            "mcp",
            "serve",
            "--transport",
            "http",
            "--bind",
            "0.0.0.0",
            "--port",
            "0",
        ])
        .env("TASCER_HOME", home.path())
        .env_remove("TASCER_MCP_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("without authentication") && stderr.contains("TASCER_MCP_TOKEN"),
        "{stderr}"
    );
}
