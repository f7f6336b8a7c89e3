//! The webhook sink against real HTTP servers on loopback: events of
//! `tascer hook` (delivered by a detached `tascer webhook flush`) and of
//! `tascer run` (delivered by the session), retries after 500s, a hanging
//! webhook that delays nothing, and the per-URL cap with its drop record.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tascer_testkit::{MockServer, Route, Scenario, Turn, reviewer_verdict};

use common::{run_cmd, run_with_stdin, tascer, tascer_hook, texts};

/// One request a receiver got.
#[derive(Debug, Clone)]
struct Received {
    headers: Vec<(String, String)>,
    body: Value,
    /// The status it was answered with.
    status: u16,
}

/// An HTTP/1.1 server on 127.0.0.1 that answers the n-th request (from 0)
/// with `respond(n)`: a status and a delay before answering.
struct Receiver {
    url: String,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    fn start(respond: impl Fn(usize) -> (u16, Duration) + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let got: Arc<Mutex<Vec<Received>>> = Arc::default();
        let (seen, respond) = (Arc::clone(&got), Arc::new(respond));
        let count = Arc::new(Mutex::new(0usize));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (seen, respond, count) = (seen.clone(), respond.clone(), count.clone());
                std::thread::spawn(move || {
                    let n = {
                        let mut c = count.lock().unwrap();
                        *c += 1;
                        *c - 1
                    };
                    serve(stream, n, &seen, respond.as_ref());
                });
            }
        });
        Receiver { url, got }
    }

    fn got(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// The events answered 2xx, in arrival order.
    fn delivered(&self) -> Vec<Value> {
        self.got()
            .into_iter()
            .filter(|r| (200..300).contains(&r.status))
            .map(|r| r.body)
            .collect()
    }
}

fn serve(
    stream: TcpStream,
    n: usize,
    seen: &Mutex<Vec<Received>>,
    respond: &(dyn Fn(usize) -> (u16, Duration) + Send + Sync),
) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            let (name, value) = (name.trim().to_ascii_lowercase(), value.trim().to_string());
            if name == "content-length" {
                length = value.parse().unwrap_or(0);
            }
            headers.push((name, value));
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let (status, delay) = respond(n);
    std::thread::sleep(delay);
    seen.lock().unwrap().push(Received {
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        status,
    });
    let mut stream = reader.into_inner();
    let _ = stream.write_all(
        format!("HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").as_bytes(),
    );
}

/// Polls `done` every 100 ms for up to `secs` seconds.
fn wait_for(secs: u64, what: &str, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(secs);
    while !done() {
        assert!(Instant::now() < until, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn settings(dir: &Path, webhooks: Value) {
    std::fs::create_dir_all(dir.join(".tascer")).unwrap();
    std::fs::write(
        dir.join(".tascer/settings.json"),
        json!({ "webhooks": webhooks }).to_string(),
    )
    .unwrap();
}

const SESSION: &str = "7b2c3d4e-0000-4f60-9a1b-webhook00001";

fn hook(home: &Path, cwd: &Path, name: &str, extra: Value) -> (Output, Duration) {
    let mut event = json!({
        "hook_event_name": name,
        "session_id": SESSION,
        "transcript_path": cwd.join("t.jsonl").display().to_string(),
        "cwd": cwd.display().to_string(),
        "permission_mode": "default",
    });
    for (k, v) in extra.as_object().unwrap() {
        event[k] = v.clone();
    }
    // The tascer-hook executable, as `tascer install` sets it up: its
    // flusher is the `tascer` next to it.
    let started = Instant::now();
    let out = run_with_stdin(tascer_hook(home, cwd), &event.to_string());
    (out, started.elapsed())
}

fn status(home: &Path, cwd: &Path) -> Value {
    let out = tascer(home, cwd)
        .args(["webhook", "status", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The events of a `tascer hook` session, in order.
fn claude_code_events(home: &Path, cwd: &Path) -> Vec<Duration> {
    let events = [
        ("SessionStart", json!({"source": "startup"})),
        ("UserPromptSubmit", json!({"prompt": "list the files"})),
        (
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"}),
        ),
        (
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1",
                   "tool_response": {"stdout": "a.txt\n", "stderr": ""}}),
        ),
        ("Stop", json!({"stop_hook_active": false})),
    ];
    events
        .into_iter()
        .map(|(name, extra)| {
            let (out, took) = hook(home, cwd, name, extra);
            assert_eq!(out.status.code(), Some(0), "{name}: {:?}", texts(&out));
            took
        })
        .collect()
}

#[test]
fn hook_events_reach_the_webhook_after_500s_and_a_hanging_one_delays_nothing() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // The first two attempts fail with 500.
    let flaky = Receiver::start(|n| (if n < 2 { 500 } else { 200 }, Duration::ZERO));
    // Never answers in time.
    let hanging = Receiver::start(|_| (200, Duration::from_secs(30)));
    let stops = Receiver::start(|_| (200, Duration::ZERO));
    settings(
        work.path(),
        json!([
            {"url": flaky.url, "headers": {"Authorization": "Bearer t0ken"}, "backoffMs": 50},
            {"url": hanging.url, "timeoutMs": 500, "maxAttempts": 1},
            {"url": stops.url, "events": ["Stop"]},
        ]),
    );
    let took = claude_code_events(home.path(), work.path());
    // Each hook returned long before the hanging webhook would answer.
    for t in &took {
        assert!(*t < Duration::from_secs(10), "a hook took {t:?}");
    }

    wait_for(30, "the five events at the flaky webhook", || {
        flaky.delivered().len() == 5
    });
    let got = flaky.got();
    assert_eq!(got[0].status, 500);
    assert_eq!(got[1].status, 500);
    let delivered = flaky.delivered();
    let names: Vec<&str> = delivered
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "Stop"
        ],
        "in order, each once"
    );
    for e in &delivered {
        assert_eq!(e["session_id"], SESSION);
        assert_eq!(e["tascer"]["source"], "claude-code");
        assert!(e["tascer"]["event_id"].is_string());
    }
    assert_eq!(delivered[2]["tool_input"]["command"], "ls");
    assert_eq!(delivered[2]["tascer"]["exit_code"], 0);
    assert!(
        got.iter().all(|r| r
            .headers
            .contains(&("authorization".into(), "Bearer t0ken".into()))),
        "configured headers are sent"
    );
    let stop_events = stops.delivered();
    assert_eq!(stop_events.len(), 1, "only the events asked for");
    assert_eq!(stop_events[0]["hook_event_name"], "Stop");

    // The hanging webhook's events were given up and counted, not lost.
    wait_for(30, "the hanging webhook's events to be given up", || {
        status(home.path(), work.path())["pending"] == 0
    });
    let s = status(home.path(), work.path());
    let drops = s["drops"].as_array().unwrap();
    assert_eq!(drops.len(), 1, "{s}");
    assert_eq!(drops[0]["url"], hanging.url.as_str());
    assert_eq!(drops[0]["reason"], "gave_up");
    assert_eq!(drops[0]["count"], 5);
    assert!(
        drops[0]["last_error"]
            .as_str()
            .unwrap()
            .contains("no answer within 500 ms"),
        "{s}"
    );
}

#[test]
fn a_full_queue_drops_new_events_with_a_warning_and_a_record() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // Nothing listens there: every attempt fails, and the retry is far off.
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/hook", listener.local_addr().unwrap())
    };
    settings(
        work.path(),
        json!([{"url": closed, "maxQueue": 2, "maxAttempts": 50, "backoffMs": 600000}]),
    );
    let mut warnings = Vec::new();
    for i in 0..4 {
        let (out, _) = hook(
            home.path(),
            work.path(),
            "UserPromptSubmit",
            json!({"prompt": format!("prompt {i}")}),
        );
        assert_eq!(out.status.code(), Some(0), "{:?}", texts(&out));
        warnings.push(texts(&out).1);
    }
    assert!(!warnings[0].contains("dropped"), "{}", warnings[0]);
    assert!(!warnings[1].contains("dropped"), "{}", warnings[1]);
    for w in &warnings[2..] {
        assert!(
            w.contains("UserPromptSubmit event dropped, 2 events already wait for it (maxQueue)"),
            "{w}"
        );
    }
    let s = status(home.path(), work.path());
    assert_eq!(s["pending"], 2, "{s}");
    let drops = s["drops"].as_array().unwrap();
    assert_eq!(drops.len(), 1, "{s}");
    assert_eq!(drops[0]["reason"], "outbox_full");
    assert_eq!(drops[0]["count"], 2);
    assert_eq!(drops[0]["last_event"], "UserPromptSubmit");
    let text = tascer(home.path(), work.path())
        .args(["webhook", "status"])
        .output()
        .unwrap();
    let (stdout, _) = texts(&text);
    assert!(stdout.contains("waiting: 2"), "{stdout}");
    assert!(stdout.contains("dropped: 2 queued event(s)"), "{stdout}");
}

#[test]
fn a_tascer_run_session_delivers_its_hook_events() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(|_| (200, Duration::ZERO));
    settings(work.path(), json!([{"url": receiver.url}]));
    let server = MockServer::start_blocking(
        Scenario::new()
            .turn(Turn::tool("Bash", json!({"command": "echo hi"})))
            .turn(Turn::text("done")),
    )
    .unwrap();
    let out = run_cmd(home.path(), work.path(), &server.url(), "say hi", &[])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));
    let expected = [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ];
    wait_for(30, "the session's events", || {
        receiver.delivered().len() >= expected.len()
    });
    let mut names: Vec<String> = receiver
        .delivered()
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(names, want);
    let events = receiver.delivered();
    let pre = events
        .iter()
        .find(|e| e["hook_event_name"] == "PreToolUse")
        .unwrap();
    assert_eq!(pre["tool_input"]["command"], "echo hi");
    assert_eq!(pre["tascer"]["source"], "tascer");
    assert_eq!(pre["tascer"]["allowed"], true);
    let post = events
        .iter()
        .find(|e| e["hook_event_name"] == "PostToolUse")
        .unwrap();
    assert_eq!(post["tascer"]["status"], "validated");
    let stop = events
        .iter()
        .find(|e| e["hook_event_name"] == "Stop")
        .unwrap();
    assert_eq!(stop["tascer"]["decision"], "finish");
    wait_for(10, "an empty outbox", || {
        status(home.path(), work.path())["pending"] == 0
    });
    assert_eq!(
        receiver.delivered().len(),
        expected.len(),
        "none sent twice"
    );
}

/// The routes of a reviewed session: `git push` denied by tool-approve
/// and the denial upheld by tool-appeal; `make build` approved.
fn reviewer_routes(scenario: Scenario) -> Scenario {
    scenario
        .route(Route::reviewer(
            "tool-approve",
            "git push",
            reviewer_verdict("deny", "pushes to main"),
        ))
        .route(Route::reviewer(
            "tool-appeal",
            "git push",
            reviewer_verdict("deny", "the user did not ask"),
        ))
        .route(Route::reviewer(
            "tool-approve",
            "make build",
            reviewer_verdict("allow", "builds the project"),
        ))
}

/// Settings with the `reviewers` and one webhook for `events`.
fn reviewed_settings(dir: &Path, url: &str, events: Value, reviewers: Value) {
    std::fs::create_dir_all(dir.join(".tascer")).unwrap();
    std::fs::write(
        dir.join(".tascer/settings.json"),
        json!({
            "safety": {"reviewers": reviewers},
            "webhooks": [{"url": url, "events": events}],
        })
        .to_string(),
    )
    .unwrap();
}

/// The delivered `PreToolUse` event of the call `tool_use_id`.
fn pre_event(receiver: &Receiver, tool_use_id: &str) -> Value {
    receiver
        .delivered()
        .into_iter()
        .find(|e| e["hook_event_name"] == "PreToolUse" && e["tool_use_id"] == tool_use_id)
        .unwrap_or_else(|| panic!("no PreToolUse event for {tool_use_id}"))
}

/// Asserts that `agents` are tool-approve's and tool-appeal's blocks of
/// `git push`, each with its reason and `told` as the answer.
fn assert_push_blocked(agents: &Value, told: &str, tool_use_id: &str) {
    let agents = agents.as_array().unwrap();
    assert_eq!(agents.len(), 2, "{agents:?}");
    for (agent, name, problem) in [
        (&agents[0], "tool-approve", "pushes to main"),
        (&agents[1], "tool-appeal", "the user did not ask"),
    ] {
        assert_eq!(agent["agent"], name, "{agent}");
        assert_eq!(agent["level"], "block", "{agent}");
        assert_eq!(agent["verdict"], "deny", "{agent}");
        assert_eq!(agent["outcome"], "decided", "{agent}");
        assert_eq!(agent["problem"], problem, "{agent}");
        assert_eq!(agent["answer"], told, "{agent}");
        assert_eq!(agent["tool_use_id"], tool_use_id, "{agent}");
        assert_eq!(agent["cache_hit"], false, "{agent}");
        assert!(
            agent["model"].is_string() && agent["duration_ms"].is_u64(),
            "{agent}"
        );
    }
}

#[test]
fn tascer_hook_payloads_carry_each_reviewers_verdict_as_agents() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let user_home = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(|_| (200, Duration::ZERO));
    reviewed_settings(
        work.path(),
        &receiver.url,
        json!(["PreToolUse", "Stop"]),
        json!({"toolApprove": {}, "toolAppeal": {}, "intentValidate": {}}),
    );
    let server = MockServer::start_blocking(reviewer_routes(Scenario::new()).route(
        Route::when_system_contains(
            "Tascer reviewer: intent-validate\n",
            reviewer_verdict("incomplete", "Run the build's tests too."),
        ),
    ))
    .unwrap();
    let transcript = work.path().join("t.jsonl");
    let line = json!({"type": "user", "message": {"role": "user", "content": "build it"}});
    std::fs::write(&transcript, format!("{line}\n")).unwrap();
    let hook = |name: &str, extra: Value| -> Value {
        let mut event = json!({
            "hook_event_name": name,
            "session_id": SESSION,
            "transcript_path": transcript.display().to_string(),
            "cwd": work.path().display().to_string(),
            "permission_mode": "default",
        });
        for (k, v) in extra.as_object().unwrap() {
            event[k] = v.clone();
        }
        let mut cmd = tascer(home.path(), work.path());
        cmd.arg("hook")
            .env("ANTHROPIC_API_KEY", "test-key")
            .env("ANTHROPIC_BASE_URL", server.url())
            .env("HOME", user_home.path());
        let out = run_with_stdin(cmd, &event.to_string());
        assert_eq!(out.status.code(), Some(0), "{:?}", texts(&out));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let pre = |id: &str, command: &str| -> Value {
        let input =
            json!({"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": id});
        hook("PreToolUse", input)["hookSpecificOutput"].clone()
    };
    let denied = pre("t-push", "git push origin main");
    assert_eq!(denied["permissionDecision"], "deny", "{denied}");
    let allowed = pre("t-build", "make build");
    assert_eq!(allowed["permissionDecision"], "allow", "{allowed}");
    let stop = hook(
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": "Built."}),
    );
    assert_eq!(stop["decision"], "block", "{stop}");

    wait_for(30, "the three events", || receiver.delivered().len() == 3);
    let push = pre_event(&receiver, "t-push");
    let told = denied["permissionDecisionReason"].as_str().unwrap();
    assert_push_blocked(&push["tascer"]["agents"], told, "t-push");
    assert_eq!(push["tascer"]["answer"]["hookSpecificOutput"], denied);

    let build = pre_event(&receiver, "t-build");
    let agents = build["tascer"]["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1, "{agents:?}");
    assert_eq!(agents[0]["agent"], "tool-approve");
    assert_eq!(agents[0]["level"], "pass");
    assert_eq!(agents[0]["verdict"], "allow");
    assert_eq!(agents[0]["problem"], Value::Null);
    assert_eq!(agents[0]["answer"], Value::Null);
    assert_eq!(agents[0]["tool_use_id"], "t-build");

    // The stop's correction is intent-validate's answer.
    let events = receiver.delivered();
    let stopped = events
        .iter()
        .find(|e| e["hook_event_name"] == "Stop")
        .unwrap();
    let agents = stopped["tascer"]["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1, "{agents:?}");
    assert_eq!(agents[0]["agent"], "intent-validate");
    assert_eq!(agents[0]["level"], "block");
    assert_eq!(agents[0]["verdict"], "incomplete");
    assert_eq!(agents[0]["problem"], "Run the build's tests too.");
    assert_eq!(agents[0]["answer"], stop["reason"]);
    assert_eq!(agents[0]["tool_use_id"], Value::Null);
}

#[test]
fn a_tascer_run_session_carries_each_reviewers_verdict_as_agents() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(|_| (200, Duration::ZERO));
    reviewed_settings(
        work.path(),
        &receiver.url,
        json!(["PreToolUse"]),
        json!({"toolApprove": {}, "toolAppeal": {}}),
    );
    let server = MockServer::start_blocking(reviewer_routes(
        Scenario::new()
            .turn(Turn::new().with_tool_id("t-build", "Bash", json!({"command": "make build"})))
            .turn(Turn::new().with_tool_id(
                "t-push",
                "Bash",
                json!({"command": "git push origin main"}),
            ))
            .turn(Turn::text("done")),
    ))
    .unwrap();
    let out = tascer(home.path(), work.path())
        .env("ANTHROPIC_API_KEY", "test")
        .env("ANTHROPIC_BASE_URL", server.url())
        .args([
            "run",
            "--output-format",
            "stream-json",
            "--permission-mode",
            "default",
            "build it",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{:?}", texts(&out));

    wait_for(30, "both PreToolUse events", || {
        receiver.delivered().len() == 2
    });
    let push = pre_event(&receiver, "t-push");
    assert_eq!(push["tascer"]["allowed"], false, "{push}");
    let told = push["tascer"]["reason"].as_str().unwrap();
    assert!(told.contains("the user did not ask"), "{told}");
    assert_push_blocked(&push["tascer"]["agents"], told, "t-push");
    assert_eq!(push["tascer"]["reviews"].as_array().unwrap().len(), 2);

    let build = pre_event(&receiver, "t-build");
    assert_eq!(build["tascer"]["allowed"], true, "{build}");
    let agents = build["tascer"]["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1, "{agents:?}");
    assert_eq!(agents[0]["level"], "pass");
    assert_eq!(agents[0]["answer"], Value::Null);
}

/// `git` in `repo` with a fixed author.
fn git(repo: &Path, args: &[&str]) {
    let out = common::git_in(repo, args);
    assert!(out.is_ok(), "git {args:?}: {out:?}");
}

/// The children of process `pid` that exited and were not waited for.
fn zombie_children(pid: u32) -> Vec<String> {
    let mut zombies = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: comm may hold spaces, so split after it.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") && fields.get(1) == Some(&pid.to_string().as_str()) {
            zombies.push(stat);
        }
    }
    zombies
}

/// `tascer mcp serve` over stdio on `repo`, asking the mock at `url`, and
/// its process id.
async fn mcp_serve(
    repo: &Path,
    home: &Path,
    url: &str,
) -> (rmcp::service::RunningService<rmcp::RoleClient, ()>, u32) {
    use rmcp::ServiceExt;
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_tascer"));
    cmd.args(["mcp", "serve", "--cwd"])
        .arg(repo)
        .env("TASCER_HOME", home)
        .env("ANTHROPIC_API_KEY", "k")
        .env("ANTHROPIC_BASE_URL", url)
        .env_remove("TASCER_MODEL")
        .env_remove("TASCER_REVIEW_MODEL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL");
    let child = rmcp::transport::TokioChildProcess::new(cmd).unwrap();
    let pid = child.id().unwrap();
    let client = ().serve(child).await.expect("initialize tascer mcp serve");
    (client, pid)
}

async fn mcp_call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    tool: &str,
    args: Value,
) -> Value {
    let mut params = rmcp::model::CallToolRequestParams::new(tool.to_owned());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    serde_json::to_value(client.call_tool(params).await.expect(tool)).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_tool_calls_deliver_mcp_tool_call_events_with_the_verdict_and_agents() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(|_| (200, Duration::ZERO));
    git(repo.path(), &["init", "-q"]);
    std::fs::write(repo.path().join("a.txt"), "one\n").unwrap();
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "-m", "init"]);
    std::fs::create_dir_all(repo.path().join(".tascer")).unwrap();
    std::fs::write(
        repo.path().join(".tascer/settings.json"),
        json!({
            "check": {"lint": ["true"], "test": ["true"], "timeoutSecs": 60},
            "webhooks": [{"url": receiver.url, "events": ["McpToolCall"]}],
        })
        .to_string(),
    )
    .unwrap();
    let model = MockServer::start(Scenario::new().conversation(
        "meant to do: say two",
        vec![Turn::text(
            r#"{"verdict": "DECLINED", "reasons": ["leftover debug print"]}"#,
        )],
    ))
    .await
    .unwrap();
    let (client, server_pid) = mcp_serve(repo.path(), home.path(), &model.url()).await;
    std::fs::write(repo.path().join("a.txt"), "two\n").unwrap();
    let check = mcp_call(&client, "check", json!({})).await;
    assert_eq!(check["structuredContent"]["passed"], true, "{check}");
    let confirm = mcp_call(&client, "confirm", json!({"intent": "say two"})).await;
    assert_eq!(
        confirm["structuredContent"]["verdict"], "DECLINED",
        "{confirm}"
    );

    wait_for(30, "the two McpToolCall events", || {
        receiver.delivered().len() == 2
    });
    // The flusher the server started ends with the outbox empty, and the
    // server, still running, has waited for it.
    wait_for(30, "the flusher to end", || {
        status(home.path(), repo.path())["flusher_running"] == false
    });
    wait_for(10, "no zombie child of the server", || {
        zombie_children(server_pid).is_empty()
    });
    client.cancel().await.unwrap();
    let events = receiver.delivered();
    let event = |tool: &str| {
        events
            .iter()
            .find(|e| e["tool_name"] == tool)
            .unwrap_or_else(|| panic!("no event for {tool}: {events:?}"))
    };
    let check = event("check");
    assert_eq!(check["hook_event_name"], "McpToolCall");
    assert_eq!(check["tascer"]["source"], "tascer-mcp");
    assert_eq!(check["tascer"]["result"]["ok"], true);
    assert_eq!(check["tascer"]["result"]["verdict"], "PASSED");
    assert_eq!(check["tascer"]["agents"], json!([]), "no model asked");

    let confirm = event("confirm");
    assert_eq!(confirm["hook_event_name"], "McpToolCall");
    assert_eq!(confirm["tool_input"], json!({"intent": "say two"}));
    assert_eq!(confirm["cwd"], repo.path().display().to_string());
    assert!(confirm["tascer"]["event_id"].is_string(), "{confirm}");
    let result = &confirm["tascer"]["result"];
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["verdict"], "DECLINED", "{result}");
    assert!(
        result["summary"]
            .as_str()
            .unwrap()
            .contains("leftover debug print"),
        "{result}"
    );
    let agents = confirm["tascer"]["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1, "{agents:?}");
    let agent = &agents[0];
    assert_eq!(agent["agent"], "confirm", "{agent}");
    assert_eq!(agent["level"], "block", "{agent}");
    assert_eq!(agent["verdict"], "DECLINED", "{agent}");
    assert_eq!(agent["outcome"], "decided", "{agent}");
    assert_eq!(agent["problem"], "leftover debug print", "{agent}");
    assert_eq!(agent["answer"], "DECLINED: leftover debug print", "{agent}");
    assert_eq!(agent["model"], "claude-sonnet-4-5", "{agent}");
}
