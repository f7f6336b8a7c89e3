#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A hanging `tests_pass` command is killed with its process group.

use std::time::{Duration, Instant};

use serde_json::json;
use tascer_guard::gates::{BuiltinOptions, GateContext, GateRegistry, Phase};

#[tokio::test]
async fn hanging_tests_command_is_killed_on_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let mut opts = BuiltinOptions::default();
    // A background grandchild in the same group writes its pid, then the
    // shell hangs too.
    opts.tests_pass.command = Some(format!(
        "sleep 60 & echo $! > {}; sleep 60",
        pidfile.display()
    ));
    opts.tests_pass.timeout_ms = 500;
    let registry = GateRegistry::with_builtins(&opts).unwrap();
    let gate = registry.get("tests_pass").unwrap();
    let ctx = GateContext::new(
        Phase::Post,
        "Write",
        json!({"file_path": "a.rs", "content": ""}),
        dir.path().to_path_buf(),
    );
    let started = Instant::now();
    let r = gate.check(&ctx).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!r.passed);
    assert!(r.message.contains("timed out"), "{}", r.message);

    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut alive = true;
    for _ in 0..50 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie awaiting its reaper.
        if stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z") {
            alive = false;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!alive, "grandchild {pid} survived the timeout");
}
