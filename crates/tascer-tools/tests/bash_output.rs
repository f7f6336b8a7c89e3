//! BashOutput and KillShell tests (real background processes).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use tascer_core::ToolContext;

async fn start(t: &Tools, c: &ToolContext, command: &str) -> String {
    let out = call(
        &t.bash,
        c,
        json!({"command": command, "run_in_background": true}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    out.raw.unwrap()["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn wait_done(t: &Tools, id: &str) {
    let shell = t.state.background_shells().get(id).unwrap();
    for _ in 0..200 {
        if !shell.is_running() {
            // Let the readers drain the pipes.
            tokio::time::sleep(Duration::from_millis(100)).await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("shell {id} did not finish");
}

async fn output(t: &Tools, c: &ToolContext, input: Value) -> (String, Value) {
    let out = call(&t.bash_output, c, input).await;
    assert!(!out.is_error, "{out:?}");
    (text(&out), out.raw.unwrap())
}

#[tokio::test]
async fn returns_only_new_output_with_status_and_exit_code() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let id = start(
        &t,
        &c,
        "echo first; echo err1 >&2; while [ ! -f go ]; do sleep 0.05; done; echo second; exit 3",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;

    let (txt, raw) = output(&t, &c, json!({"bash_id": id})).await;
    assert_eq!(raw["status"], "running");
    assert_eq!(raw["exitCode"], Value::Null);
    assert_eq!(raw["stdout"], "first\n");
    assert_eq!(raw["stderr"], "err1\n");
    assert!(txt.starts_with("<status>running</status>"), "{txt}");
    assert!(txt.contains("<stdout>\nfirst\n</stdout>"), "{txt}");
    assert!(txt.contains("<stderr>\nerr1\n</stderr>"), "{txt}");
    assert!(!txt.contains("<exit_code>"), "{txt}");

    // Nothing new yet.
    let (txt, raw) = output(&t, &c, json!({"bash_id": id})).await;
    assert_eq!(raw["stdout"], "");
    assert!(txt.contains("(no new output)"), "{txt}");

    std::fs::write(dir.join("go"), "").unwrap();
    wait_done(&t, &id).await;
    let (txt, raw) = output(&t, &c, json!({"bash_id": id})).await;
    assert_eq!(raw["status"], "completed");
    assert_eq!(raw["exitCode"], 3);
    assert_eq!(raw["stdout"], "second\n");
    assert_eq!(raw["stderr"], "");
    assert!(txt.contains("<exit_code>3</exit_code>"), "{txt}");
    assert_eq!(raw["shellId"], id);
}

#[tokio::test]
async fn filter_keeps_matching_lines_and_consumes_the_rest() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let id = start(&t, &c, "printf 'ok 1\\nERROR a\\nok 2\\nERROR b\\n'").await;
    wait_done(&t, &id).await;
    let (_, raw) = output(&t, &c, json!({"bash_id": id, "filter": "^ERROR"})).await;
    assert_eq!(raw["stdout"], "ERROR a\nERROR b\n");
    assert_eq!(raw["stdoutLines"], 2);
    let (_, raw) = output(&t, &c, json!({"bash_id": id})).await;
    assert_eq!(raw["stdout"], "");
}

#[tokio::test]
async fn bash_output_errors() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let out = call(&t.bash_output, &c, json!({"bash_id": "bash_99"})).await;
    assert!(out.is_error);
    assert_eq!(text(&out), "No shell found with ID: bash_99");

    let id = start(&t, &c, "true").await;
    let out = call(&t.bash_output, &c, json!({"bash_id": id, "filter": "("})).await;
    assert!(out.is_error);
    assert!(
        text(&out).starts_with("BashOutput input is invalid: filter is not a valid regular"),
        "{}",
        text(&out)
    );
    let out = call(&t.bash_output, &c, json!({"id": id})).await;
    assert!(text(&out).starts_with("BashOutput input is invalid:"));
}

#[tokio::test]
async fn kill_shell_kills_and_reports_killed() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let id = start(&t, &c, "echo started; sleep 30").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let shell = t.state.background_shells().get(&id).unwrap();
    let pid = shell.pid().unwrap();

    let out = call(&t.kill_shell, &c, json!({"shell_id": id})).await;
    assert!(!out.is_error, "{out:?}");
    assert_eq!(
        text(&out),
        format!("Successfully killed shell: {id} (echo started; sleep 30)")
    );
    let raw = out.raw.unwrap();
    assert_eq!(raw["shell_id"], id);
    assert_eq!(raw["task_type"], "local_bash");
    assert!(!shell.is_running());
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}/cmdline")).exists() || {
            // A zombie may linger briefly until reaped.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            stat.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        }
    );

    let (txt, raw) = output(&t, &c, json!({"bash_id": id})).await;
    assert_eq!(raw["status"], "killed");
    assert_eq!(raw["exitCode"], 128 + 9);
    assert_eq!(raw["stdout"], "started\n");
    assert!(txt.starts_with("<status>killed</status>"), "{txt}");

    // Killing again, or killing something unknown, is an error.
    let out = call(&t.kill_shell, &c, json!({"shell_id": id})).await;
    assert!(out.is_error);
    assert_eq!(
        text(&out),
        format!("Shell {id} is not running, so cannot be killed (status: killed).")
    );
    let out = call(&t.kill_shell, &c, json!({"shell_id": "bash_404"})).await;
    assert!(out.is_error);
    assert_eq!(text(&out), "No shell found with ID: bash_404");
    let out = call(&t.kill_shell, &c, json!({})).await;
    assert!(text(&out).starts_with("KillShell input is invalid:"));
}

#[tokio::test]
async fn kill_shell_refuses_completed_shell() {
    let (_d, dir) = tempdir();
    let t = tools();
    let c = ctx(&dir);
    let id = start(&t, &c, "exit 0").await;
    wait_done(&t, &id).await;
    let out = call(&t.kill_shell, &c, json!({"shell_id": id})).await;
    assert!(out.is_error);
    assert!(
        text(&out).ends_with("(status: completed)."),
        "{}",
        text(&out)
    );
}
