//! Integration tests against real MCP servers (reference servers from
//! `scripts/install-test-deps`, a python mini server) and sdk tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tascer_core::{Tool, ToolOutput, ToolResultContent};
use tascer_mcp::{McpManager, McpOptions, McpServerConfig, McpStatus, SdkServer};

use common::{ctx, mini_server, node, reference_server};

fn find(tools: &[Arc<dyn Tool>], name: &str) -> Arc<dyn Tool> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .cloned()
        .unwrap_or_else(|| {
            let names: Vec<_> = tools.iter().map(|t| t.name().to_owned()).collect();
            panic!("no tool {name} in {names:?}")
        })
}

fn one(name: &str, config: McpServerConfig) -> BTreeMap<String, McpServerConfig> {
    BTreeMap::from([(name.to_owned(), config)])
}

fn opts(tool_timeout: Duration) -> McpOptions {
    McpOptions {
        startup_timeout: Duration::from_secs(20),
        tool_timeout,
        ..McpOptions::default()
    }
}

#[tokio::test]
async fn everything_list_and_call_tools() {
    let Some(script) = reference_server("server-everything", "everything_list_and_call_tools")
    else {
        return;
    };
    let mgr = McpManager::connect_all(
        one("every thing", node(&script, &["stdio"])),
        Duration::from_secs(20),
    )
    .await;
    let statuses = mgr.statuses();
    assert_eq!(statuses.len(), 1);
    assert_eq!(statuses[0].status, McpStatus::Connected, "{statuses:?}");
    assert!(statuses[0].tools.iter().any(|t| t == "echo"));
    let init = serde_json::to_value(&statuses).unwrap();
    assert_eq!(init[0]["name"], "every thing");
    assert_eq!(init[0]["status"], "connected");
    assert!(init[0]["server_info"]["name"].is_string());

    let tools = mgr.tools().await;
    let echo = find(&tools, "mcp__every_thing__echo");
    assert!(echo.is_read_only());
    assert!(echo.description().contains("Echo"));
    assert_eq!(echo.input_schema()["required"], json!(["message"]));
    let out = echo.call(json!({"message": "hi there"}), &ctx()).await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.content.to_text().contains("hi there"), "{out:?}");

    let sum = find(&tools, "mcp__every_thing__get-sum");
    let out = sum.call(json!({"a": 2, "b": 3}), &ctx()).await;
    assert!(out.content.to_text().contains('5'), "{out:?}");

    let image = find(&tools, "mcp__every_thing__get-tiny-image");
    let out = image.call(json!({}), &ctx()).await;
    let ToolResultContent::Blocks(blocks) = &out.content else {
        panic!("expected blocks: {out:?}");
    };
    assert!(
        blocks
            .iter()
            .any(|b| matches!(b, tascer_core::ContentBlock::Image { .. }))
    );

    // Bad arguments: the server reports an error, the connection survives.
    let out = echo.call(json!({"nope": 1}), &ctx()).await;
    assert!(out.is_error, "{out:?}");
    let health = mgr.health().await;
    assert!(health[0].1.is_ok(), "{health:?}");
}

#[tokio::test]
async fn everything_resources() {
    let Some(script) = reference_server("server-everything", "everything_resources") else {
        return;
    };
    let mgr = McpManager::connect_all(
        one("ev", node(&script, &["stdio"])),
        Duration::from_secs(20),
    )
    .await;
    let tools = mgr.tools().await;
    let list = find(&tools, "ListMcpResourcesTool");
    let out = list.call(json!({"server": "ev"}), &ctx()).await;
    assert!(!out.is_error, "{out:?}");
    let raw = out.raw.unwrap();
    let first = &raw[0];
    assert_eq!(first["server"], "ev");
    let uri = first["uri"].as_str().unwrap().to_owned();

    let read = find(&tools, "ReadMcpResourceTool");
    let out = read.call(json!({"server": "ev", "uri": uri}), &ctx()).await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.raw.unwrap()["contents"][0]["text"].is_string());

    let out = read
        .call(json!({"server": "nope", "uri": uri}), &ctx())
        .await;
    assert!(out.is_error);
    assert!(out.content.to_text().contains("no MCP server named 'nope'"));
}

#[tokio::test]
async fn everything_per_call_timeout() {
    let Some(script) = reference_server("server-everything", "everything_per_call_timeout") else {
        return;
    };
    let mgr = McpManager::connect_with(
        one("ev", node(&script, &["stdio"])),
        opts(Duration::from_millis(500)),
    )
    .await;
    let tools = mgr.tools().await;
    let long = find(&tools, "mcp__ev__trigger-long-running-operation");
    let start = Instant::now();
    let out = long.call(json!({"duration": 5, "steps": 5}), &ctx()).await;
    assert!(start.elapsed() < Duration::from_secs(4));
    assert!(out.is_error);
    assert!(out.content.to_text().contains("timed out"), "{out:?}");
    // Still usable afterwards.
    let out = find(&tools, "mcp__ev__echo")
        .call(json!({"message": "after"}), &ctx())
        .await;
    assert!(!out.is_error, "{out:?}");
}

#[tokio::test]
async fn filesystem_read_and_list() {
    let Some(script) = reference_server("server-filesystem", "filesystem_read_and_list") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("note.txt"), "hello from a file").unwrap();
    let root_s = root.display().to_string();
    let mgr = McpManager::connect_all(
        one("fs", node(&script, &[root_s.as_str()])),
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(
        mgr.statuses()[0].status,
        McpStatus::Connected,
        "{:?}",
        mgr.statuses()
    );
    let tools = mgr.tools().await;
    let read = find(&tools, "mcp__fs__read_text_file");
    let path = root.join("note.txt").display().to_string();
    let out = read.call(json!({"path": path}), &ctx()).await;
    assert!(!out.is_error, "{out:?}");
    assert!(out.content.to_text().contains("hello from a file"));
    let list = find(&tools, "mcp__fs__list_directory");
    let out = list.call(json!({"path": root_s}), &ctx()).await;
    assert!(out.content.to_text().contains("note.txt"), "{out:?}");
    // Outside the allowed root: an error result, not a crash.
    let out = read.call(json!({"path": "/etc/hostname"}), &ctx()).await;
    assert!(out.is_error, "{out:?}");
}

#[tokio::test]
async fn missing_command_and_hang_fail_loudly() {
    let mut configs = BTreeMap::new();
    configs.insert(
        "missing".to_owned(),
        McpServerConfig::Stdio {
            command: "/definitely/not/a/command".into(),
            args: vec![],
            env: BTreeMap::new(),
            permissions: Default::default(),
        },
    );
    configs.insert(
        "hang".to_owned(),
        McpServerConfig::Stdio {
            command: "sleep".into(),
            args: vec!["30".into()],
            env: BTreeMap::new(),
            permissions: Default::default(),
        },
    );
    configs.insert(
        "exits".to_owned(),
        McpServerConfig::Stdio {
            command: "sh".into(),
            args: vec!["-c".into(), "echo boom: bad token >&2; exit 1".into()],
            env: BTreeMap::new(),
            permissions: Default::default(),
        },
    );
    configs.insert(
        "legacy".to_owned(),
        McpServerConfig::Sse {
            url: "http://127.0.0.1:9/sse".into(),
            headers: BTreeMap::new(),
            permissions: Default::default(),
        },
    );
    configs.insert(
        "ghost".to_owned(),
        McpServerConfig::Sdk {
            name: "ghost".into(),
        },
    );
    let start = Instant::now();
    let mgr = McpManager::connect_all(configs, Duration::from_millis(700)).await;
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "not concurrent/bounded"
    );
    let statuses = mgr.statuses();
    assert_eq!(statuses.len(), 5);
    for s in &statuses {
        assert_eq!(s.status, McpStatus::Failed, "{s:?}");
        let err = s.error.as_deref().unwrap();
        match s.name.as_str() {
            "missing" => assert!(err.contains("cannot spawn"), "{err}"),
            "hang" => assert!(err.contains("did not start within"), "{err}"),
            "exits" => assert!(err.contains("boom: bad token"), "{err}"),
            "legacy" => assert!(
                err.contains("cannot connect to http://127.0.0.1:9/sse"),
                "{err}"
            ),
            "ghost" => assert!(err.contains("not registered"), "{err}"),
            other => panic!("unexpected {other}"),
        }
    }
    let json = serde_json::to_value(&statuses).unwrap();
    assert_eq!(json[0]["status"], "failed");
    assert!(json[0]["error"].is_string());
    let health = mgr.health().await;
    assert!(health.iter().all(|(_, h)| h.is_err()));
}

#[tokio::test]
async fn crash_then_restart_on_next_use_bounded() {
    let Some(cfg) = mini_server("crash_then_restart_on_next_use_bounded") else {
        return;
    };
    let mgr = McpManager::connect_with(one("mini", cfg), opts(Duration::from_secs(10))).await;
    assert_eq!(
        mgr.statuses()[0].status,
        McpStatus::Connected,
        "{:?}",
        mgr.statuses()
    );
    let tools = mgr.tools().await;
    let hello = find(&tools, "mcp__mini__hello");
    let die = find(&tools, "mcp__mini__die");
    assert_eq!(
        hello.call(json!({}), &ctx()).await.content.to_text(),
        "hello from hello"
    );

    for round in 1..=3 {
        let out = die.call(json!({}), &ctx()).await;
        assert!(out.is_error, "round {round}: {out:?}");
        let text = out.content.to_text();
        assert!(
            text.contains("restarted on next use"),
            "round {round}: {text}"
        );
        assert_eq!(mgr.statuses()[0].status, McpStatus::Failed);
        // Next use restarts it.
        let out = hello.call(json!({}), &ctx()).await;
        assert!(!out.is_error, "round {round}: {out:?}");
        assert_eq!(mgr.statuses()[0].status, McpStatus::Connected);
    }
    // Fourth crash: no more restarts.
    let out = die.call(json!({}), &ctx()).await;
    assert!(out.is_error);
    let out = hello.call(json!({}), &ctx()).await;
    assert!(out.is_error);
    assert!(
        out.content.to_text().contains("gave up after 3 restarts"),
        "{out:?}"
    );
}

#[tokio::test]
async fn list_changed_refreshes_tools_and_is_error_maps() {
    let Some(cfg) = mini_server("list_changed_refreshes_tools") else {
        return;
    };
    let mgr = McpManager::connect_with(one("mini", cfg), opts(Duration::from_secs(10))).await;
    let tools = mgr.tools().await;
    assert!(!tools.iter().any(|t| t.name() == "mcp__mini__extra"));
    let out = find(&tools, "mcp__mini__fail")
        .call(json!({}), &ctx())
        .await;
    assert!(out.is_error);
    assert_eq!(out.content.to_text(), "it failed");

    let out = find(&tools, "mcp__mini__grow")
        .call(json!({}), &ctx())
        .await;
    assert!(!out.is_error, "{out:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let tools = mgr.tools().await;
        if tools.iter().any(|t| t.name() == "mcp__mini__extra") {
            break;
        }
        assert!(Instant::now() < deadline, "tools never refreshed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(mgr.statuses()[0].tools.iter().any(|t| t == "extra"));
}

#[tokio::test]
async fn mini_server_per_call_timeout() {
    let Some(cfg) = mini_server("mini_server_per_call_timeout") else {
        return;
    };
    let mgr = McpManager::connect_with(one("mini", cfg), opts(Duration::from_millis(300))).await;
    let tools = mgr.tools().await;
    let out = find(&tools, "mcp__mini__slow")
        .call(json!({"seconds": 2}), &ctx())
        .await;
    assert!(out.is_error);
    assert!(
        out.content
            .to_text()
            .contains("tools/call timed out after 0.3s"),
        "{out:?}"
    );
}

#[tokio::test]
async fn sdk_in_process_tools() {
    let calc = SdkServer::new("calc").read_only_tool(
        "add",
        "Adds two numbers",
        json!({"a": "number", "b": "number"}),
        |input: Value| async move {
            let a = input["a"].as_f64().unwrap_or(0.0);
            let b = input["b"].as_f64().unwrap_or(0.0);
            ToolOutput::text(format!("{}", a + b))
        },
    );
    let mut configs = BTreeMap::new();
    configs.insert(
        "calc".to_owned(),
        McpServerConfig::Sdk {
            name: "calc".into(),
        },
    );
    let mgr = McpManager::connect_with(
        configs,
        McpOptions {
            sdk_servers: vec![calc],
            ..McpOptions::default()
        },
    )
    .await;
    let statuses = mgr.statuses();
    assert_eq!(statuses.len(), 1);
    assert_eq!(statuses[0].status, McpStatus::Connected);
    assert_eq!(statuses[0].tools, vec!["add".to_owned()]);
    let tools = mgr.tools().await;
    assert_eq!(tools.len(), 1, "no resource tools without remote servers");
    let add = find(&tools, "mcp__calc__add");
    assert!(add.is_read_only());
    assert_eq!(add.input_schema()["required"], json!(["a", "b"]));
    let out = add.call(json!({"a": 1, "b": 2}), &ctx()).await;
    assert_eq!(out, ToolOutput::text("3"));
    let out = add.call(json!({"a": 1}), &ctx()).await;
    assert!(out.is_error);
    assert!(
        out.content
            .to_text()
            .contains("missing required field \"b\"")
    );
}

/// Kills the child when the test ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn everything_streamable_http() {
    let Some(script) = reference_server("server-everything", "everything_streamable_http") else {
        return;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _child = KillOnDrop(
        std::process::Command::new("node")
            .arg(&script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "http server did not come up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let config = McpServerConfig::Http {
        url: format!("http://127.0.0.1:{port}/mcp"),
        headers: BTreeMap::from([("X-Test".to_owned(), "1".to_owned())]),
        oauth: None,
        permissions: Default::default(),
    };
    let mgr = McpManager::connect_all(one("web", config), Duration::from_secs(20)).await;
    assert_eq!(
        mgr.statuses()[0].status,
        McpStatus::Connected,
        "{:?}",
        mgr.statuses()
    );
    let tools = mgr.tools().await;
    let out = find(&tools, "mcp__web__echo")
        .call(json!({"message": "over http"}), &ctx())
        .await;
    assert!(out.content.to_text().contains("over http"), "{out:?}");
}
