//! Shared helpers for the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use tascer_core::ToolContext;
use tascer_mcp::McpServerConfig;
use tokio_util::sync::CancellationToken;

/// `<repo>/.test-deps/node_modules/@modelcontextprotocol/<pkg>/dist/index.js`,
/// or `None` (with a printed SKIP note) when `scripts/install-test-deps`
/// has not been run.
pub fn reference_server(pkg: &str, test: &str) -> Option<PathBuf> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = repo
        .join(".test-deps/node_modules/@modelcontextprotocol")
        .join(pkg)
        .join("dist/index.js");
    if path.exists() && which("node") {
        Some(path)
    } else {
        tascer_testkit::skip(
            test,
            &format!("{} missing (run scripts/install-test-deps)", path.display()),
        );
        None
    }
}

/// True when `cmd` is on PATH.
pub fn which(cmd: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// A stdio config running `node <script> <args…>`.
pub fn node(script: &std::path::Path, args: &[&str]) -> McpServerConfig {
    let mut all = vec![script.display().to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    McpServerConfig::Stdio {
        command: "node".into(),
        args: all,
        env: BTreeMap::new(),
        permissions: Default::default(),
    }
}

/// The python mini server, or `None` with a SKIP note without python3.
pub fn mini_server(test: &str) -> Option<McpServerConfig> {
    if !which("python3") {
        tascer_testkit::skip(test, "python3 not found");
        return None;
    }
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mini_server.py");
    Some(McpServerConfig::Stdio {
        command: "python3".into(),
        args: vec![script.display().to_string()],
        env: BTreeMap::new(),
        permissions: Default::default(),
    })
}

/// A throwaway tool context.
pub fn ctx() -> ToolContext {
    ToolContext {
        session_id: "s".into(),
        tool_use_id: "t".into(),
        cwd: ToolContext::shared_cwd(std::env::temp_dir()),
        env: Arc::new(HashMap::new()),
        cancel: CancellationToken::new(),
        file_access: None,
    }
}
