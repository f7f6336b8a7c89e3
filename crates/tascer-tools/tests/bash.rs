//! Bash tool tests (real processes).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

/// True while the process exists and is not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

async fn wait_dead(pid: u32) -> bool {
    for _ in 0..40 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn stdout_stderr_and_exit_code() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.bash, &c, json!({"command": "echo hello; echo oops >&2"})).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(text(&out), "hello\noops");
    let raw = out.raw.unwrap();
    assert_eq!(raw["stdout"], "hello\n");
    assert_eq!(raw["stderr"], "oops\n");
    assert_eq!(raw["interrupted"], false);
    assert_eq!(raw["isImage"], false);
    assert_eq!(raw["exitCode"], 0);

    let out = call(
        &t.bash,
        &c,
        json!({"command": "echo partial; exit 7", "description": "fail"}),
    )
    .await;
    assert!(out.is_error);
    assert_eq!(text(&out), "Exit code 7\npartial");
    assert_eq!(out.raw.unwrap()["exitCode"], 7);

    let out = call(&t.bash, &c, json!({"command": "true"})).await;
    assert!(!out.is_error);
    assert_eq!(text(&out), "Tool ran without output or errors");
}

#[tokio::test]
async fn cd_sticks_across_calls() {
    let (_d, dir) = tempdir();
    std::fs::create_dir_all(dir.join("sub/deeper")).unwrap();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.bash, &c, json!({"command": "cd sub"})).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(c.cwd(), dir.join("sub"));
    let out = call(&t.bash, &c, json!({"command": "pwd"})).await;
    assert_eq!(text(&out), dir.join("sub").display().to_string());

    // Even when the command exits with a failure status.
    let out = call(&t.bash, &c, json!({"command": "cd deeper && exit 3"})).await;
    assert!(out.is_error);
    assert_eq!(out.raw.unwrap()["exitCode"], 3);
    assert_eq!(c.cwd(), dir.join("sub/deeper"));

    // A cd inside a subshell does not stick.
    call(&t.bash, &c, json!({"command": "(cd /)"})).await;
    assert_eq!(c.cwd(), dir.join("sub/deeper"));
}

#[tokio::test]
async fn env_from_context() {
    let (_d, dir) = tempdir();
    let t = tools();
    let env = HashMap::from([("TASCER_TEST_VAR".to_string(), "from ctx".to_string())]);
    let c = ctx_with_env(&dir, env);
    let out = call(&t.bash, &c, json!({"command": "echo \"$TASCER_TEST_VAR\""})).await;
    assert_eq!(text(&out), "from ctx");
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let started = Instant::now();
    let out = call(
        &t.bash,
        &c,
        json!({"command": "(sleep 30 & echo $! > child.pid; wait); echo never", "timeout": 1000}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert!(out.is_error);
    assert!(text(&out).contains("timed out"), "{}", text(&out));
    assert!(!text(&out).contains("never"));
    let raw = out.raw.unwrap();
    assert_eq!(raw["interrupted"], true);
    let pid: u32 = std::fs::read_to_string(dir.join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(wait_dead(pid).await, "child {pid} survived the timeout");
}

#[tokio::test]
async fn cancellation_kills_the_group() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let token = c.cancel.clone();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        token.cancel();
    });
    let started = Instant::now();
    let out = call(
        &t.bash,
        &c,
        json!({"command": "sleep 30 & echo $! > child.pid; wait"}),
    )
    .await;
    canceller.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(out.is_error);
    assert_eq!(out.raw.as_ref().unwrap()["interrupted"], true);
    assert!(text(&out).contains("interrupted"), "{}", text(&out));
    let pid: u32 = std::fs::read_to_string(dir.join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(wait_dead(pid).await, "child {pid} survived cancellation");
}

#[tokio::test]
async fn background_child_holding_pipes_does_not_block() {
    let (_d, dir) = tempdir();
    let t = tools();
    let started = Instant::now();
    let out = call(
        &t.bash,
        &ctx(&dir),
        json!({"command": "sleep 3 & echo done"}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(text(&out), "done");
}

#[tokio::test]
async fn long_output_is_truncated() {
    let (_d, dir) = tempdir();
    let t = tools();
    let out = call(
        &t.bash,
        &ctx(&dir),
        json!({"command": "head -c 40000 /dev/zero | tr '\\0' a"}),
    )
    .await;
    let txt = text(&out);
    assert!(
        txt.ends_with("… [output truncated]"),
        "{}",
        &txt[txt.len() - 50..]
    );
    assert_eq!(txt.lines().next().unwrap().len(), 30000);
    assert_eq!(out.raw.unwrap()["stdout"].as_str().unwrap().len(), 40000);
}

#[tokio::test]
async fn run_in_background() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let out = call(
        &t.bash,
        &c,
        json!({"command": "echo bg-out; sleep 0.2", "run_in_background": true}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    let id = out.raw.as_ref().unwrap()["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        text(&out),
        format!("Command running in background with ID: {id}")
    );
    let shell = t.state.background_shells().get(&id).unwrap();
    for _ in 0..100 {
        if !shell.is_running() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(shell.exit_code(), Some(0));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(shell.stdout(), "bg-out\n");

    // A long one can be killed, group and all.
    let out = call(
        &t.bash,
        &c,
        json!({"command": "sleep 30 & echo $! > bg.pid; wait", "run_in_background": true}),
    )
    .await;
    let id = out.raw.unwrap()["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_string();
    let shell = t.state.background_shells().get(&id).unwrap();
    let pidfile = dir.join("bg.pid");
    for _ in 0..100 {
        if std::fs::read_to_string(&pidfile).is_ok_and(|s| s.ends_with('\n')) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(shell.is_running());
    shell.kill();
    assert!(wait_dead(pid).await, "background child {pid} survived kill");
    for _ in 0..100 {
        if !shell.is_running() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(shell.exit_code(), Some(137));
}

#[tokio::test]
async fn invalid_input() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.bash, &c, json!({"cmd": "ls"})).await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("Bash input is invalid: "),
        "{}",
        text(&out)
    );
    let out = call(&t.bash, &c, json!({"command": "ls", "timeout": -5})).await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("Bash input is invalid: "),
        "{}",
        text(&out)
    );
}
