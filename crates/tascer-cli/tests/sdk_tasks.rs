//! Background tasks over the control protocol, driven line by line over
//! real pipes: background shells are announced with `system/task_started`,
//! their end with `system/task_notification` (the SDKs' field names), and
//! `get_task_output` / `stop_task` read and stop them; `background_tasks`
//! is refused with a reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::protocol::{Session, request};
use common::sdk::Workspace;
use serde_json::{Value, json};
use tascer_testkit::{Scenario, Turn};

const SLOW: &str = "printf 'tick\\n'; sleep 120";
const FAILING: &str = "printf 'quick\\n'; exit 3";

/// Frames until `done` accepts one, that one included.
fn frames_until(cli: &Session, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let mut frames = Vec::new();
    while !done(&frames) {
        frames.push(cli.next());
    }
    frames
}

fn system<'a>(frames: &'a [Value], subtype: &str) -> Vec<&'a Value> {
    frames
        .iter()
        .filter(|f| f["type"] == "system" && f["subtype"] == subtype)
        .collect()
}

#[test]
fn background_shells_are_tasks_the_sdk_sees_reads_and_stops() {
    let ws = Workspace::new(|_| {
        Scenario::new()
            .turn(
                Turn::new()
                    .with_tool_id(
                        "toolu_slow",
                        "Bash",
                        json!({"command": SLOW, "run_in_background": true}),
                    )
                    .with_tool_id(
                        "toolu_failing",
                        "Bash",
                        json!({"command": FAILING, "run_in_background": true}),
                    ),
            )
            .turn(Turn::text("both started"))
    });
    let mut cli = Session::start(&ws, &["--permission-mode", "bypassPermissions"]);
    cli.initialize(json!({}));
    cli.prompt("start two background commands");

    // Both start; the failing one ends (before or after the result).
    let frames = frames_until(&cli, |fs| {
        fs.iter().any(|f| f["type"] == "result") && !system(fs, "task_notification").is_empty()
    });
    let started = system(&frames, "task_started");
    assert_eq!(started.len(), 2, "{frames:?}");
    let by_call = |id: &str| *started.iter().find(|f| f["tool_use_id"] == id).unwrap();
    let (slow, failing) = (by_call("toolu_slow"), by_call("toolu_failing"));
    for (frame, command) in [(slow, SLOW), (failing, FAILING)] {
        assert_eq!(frame["description"], command);
        assert_eq!(frame["task_type"], "local_bash");
        assert_eq!(frame["is_backgrounded"], true);
        assert!(frame["uuid"].as_str().is_some_and(|u| !u.is_empty()));
        assert!(frame["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    }
    let slow_id = slow["task_id"].as_str().unwrap().to_string();
    let ended = system(&frames, "task_notification");
    assert_eq!(ended.len(), 1, "{frames:?}");
    assert_eq!(ended[0]["task_id"], failing["task_id"]);
    assert_eq!(ended[0]["tool_use_id"], "toolu_failing");
    assert_eq!(ended[0]["status"], "failed");
    assert_eq!(ended[0]["output_file"], "");
    assert_eq!(
        ended[0]["summary"],
        format!("Background command \"{FAILING}\" failed with exit code 3")
    );

    // The ended shell's output can still be read.
    cli.send(request(
        "out_failing",
        json!({"subtype": "get_task_output", "task_id": failing["task_id"]}),
    ));
    let out = cli.reply_to("out_failing");
    assert_eq!(
        out["response"],
        json!({"output": "quick\n", "total_bytes": 6, "truncated": false})
    );

    // The running one: its output so far (polled: it prints first, then
    // sleeps), then stopped.
    let mut output = String::new();
    for attempt in 0..120 {
        let id = format!("out_slow_{attempt}");
        cli.send(request(
            &id,
            json!({"subtype": "get_task_output", "task_id": slow_id}),
        ));
        output = cli.reply_to(&id)["response"]["output"]
            .as_str()
            .unwrap()
            .to_string();
        if !output.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    assert_eq!(output, "tick\n");
    cli.send(request(
        "stop",
        json!({"subtype": "stop_task", "task_id": slow_id}),
    ));
    assert_eq!(cli.reply_to("stop")["response"], json!({}));
    let stopped = cli.until(|f| f["subtype"] == "task_notification");
    assert_eq!(stopped["task_id"], slow_id.as_str());
    assert_eq!(stopped["status"], "stopped");
    assert_eq!(
        stopped["summary"],
        format!("Background command \"{SLOW}\" was stopped")
    );

    cli.send(request(
        "again",
        json!({"subtype": "stop_task", "task_id": slow_id}),
    ));
    let again = cli.reply_to("again");
    assert_eq!(again["subtype"], "error");
    assert!(
        again["error"].as_str().unwrap().contains("is not running"),
        "{again}"
    );
    cli.send(request(
        "unknown",
        json!({"subtype": "get_task_output", "task_id": "bash_99"}),
    ));
    assert_eq!(
        cli.reply_to("unknown")["error"],
        "No task found with ID: bash_99"
    );
    cli.send(request("bg", json!({"subtype": "background_tasks"})));
    let bg = cli.reply_to("bg");
    assert!(
        bg["error"]
            .as_str()
            .unwrap()
            .starts_with("Tascer cannot move a running call to the background"),
        "{bg}"
    );
    let (status, _, stderr) = cli.finish();
    assert!(status.success(), "{stderr}");
}
