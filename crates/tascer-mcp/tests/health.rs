//! The background health check: a stdio server killed between calls is
//! found dead by its ping and restarted before the next call, with no
//! call paying for it; a server turned off is not checked, and its tools
//! leave the tool list.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use tascer_mcp::{McpManager, McpOptions, McpServerConfig, McpStatus};

/// The mini server behind `sh`, which writes the server's pid to
/// `pid_file` at each start.
fn server_writing_its_pid(pid_file: &Path) -> Option<McpServerConfig> {
    let McpServerConfig::Stdio { args, .. } = common::mini_server("health")? else {
        return None;
    };
    let script = format!(
        "echo $$ > '{}'; exec python3 '{}'",
        pid_file.display(),
        args[0]
    );
    Some(McpServerConfig::Stdio {
        command: "sh".into(),
        args: vec!["-c".into(), script],
        env: BTreeMap::new(),
        permissions: Default::default(),
    })
}

fn read_pid(pid_file: &Path) -> Option<i32> {
    std::fs::read_to_string(pid_file).ok()?.trim().parse().ok()
}

/// Waits until `pid_file` names a pid other than `old` (a restart).
async fn wait_for_new_pid(pid_file: &Path, old: i32) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        match read_pid(pid_file) {
            Some(pid) if pid != old => return Some(pid),
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    None
}

async fn manager(config: McpServerConfig, interval: Duration) -> McpManager {
    let options = McpOptions {
        startup_timeout: Duration::from_secs(20),
        tool_timeout: Duration::from_secs(20),
        health_interval: Some(interval),
        ..McpOptions::default()
    };
    McpManager::connect_with(BTreeMap::from([("mini".to_owned(), config)]), options).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_between_calls_is_restarted_by_the_health_check() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let Some(config) = server_writing_its_pid(&pid_file) else {
        return;
    };
    let manager = manager(config, Duration::from_millis(200)).await;
    assert_eq!(manager.statuses()[0].status, McpStatus::Connected);
    let first = read_pid(&pid_file).expect("the server wrote its pid");

    // SIGKILL: the server cannot say goodbye; only the check finds out.
    std::process::Command::new("kill")
        .args(["-9", &first.to_string()])
        .status()
        .unwrap();
    let second = wait_for_new_pid(&pid_file, first)
        .await
        .expect("the health check restarted the killed server without any call");
    assert_ne!(first, second);

    // The restarted server serves the next call at once.
    let deadline = Instant::now() + Duration::from_secs(10);
    while manager.statuses()[0].status != McpStatus::Connected && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let tools = manager.tools().await;
    let hello = tools
        .iter()
        .find(|t| t.name() == "mcp__mini__hello")
        .expect("the restarted server's tools are listed");
    let out = hello.call(json!({}), &common::ctx()).await;
    assert!(!out.is_error, "{}", out.content.to_text());
    assert!(
        out.content.to_text().contains("hello from hello"),
        "{}",
        out.content.to_text()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_turned_off_is_not_restarted_and_offers_no_tools() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let Some(config) = server_writing_its_pid(&pid_file) else {
        return;
    };
    let manager = manager(config, Duration::from_millis(100)).await;
    assert!(
        manager
            .tools()
            .await
            .iter()
            .any(|t| t.name() == "mcp__mini__hello")
    );
    let first = read_pid(&pid_file).unwrap();

    manager.set_enabled("mini", false).await.unwrap();
    assert_eq!(manager.statuses()[0].status, McpStatus::Disabled);
    assert!(
        !manager
            .tools()
            .await
            .iter()
            .any(|t| t.name().starts_with("mcp__mini__")),
        "a server turned off keeps no tools in the list"
    );
    // Several check intervals pass: nothing restarts it.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(read_pid(&pid_file), Some(first));
    assert_eq!(manager.statuses()[0].status, McpStatus::Disabled);

    manager.set_enabled("mini", true).await.unwrap();
    assert!(
        manager
            .tools()
            .await
            .iter()
            .any(|t| t.name() == "mcp__mini__hello")
    );
}
