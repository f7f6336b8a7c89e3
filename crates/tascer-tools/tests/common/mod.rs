//! Helpers shared by the integration tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tascer_core::{Tool, ToolContext, ToolOutput};
use tascer_tools::{
    BashOutputTool, BashTool, EditTool, GlobTool, GrepTool, KillShellTool, MultiEditTool,
    NotebookEditTool, ReadTool, ToolState, WriteTool,
};
use tokio_util::sync::CancellationToken;

/// A context rooted at `cwd`.
pub fn ctx(cwd: &Path) -> ToolContext {
    ctx_with_env(cwd, HashMap::new())
}

/// A context rooted at `cwd` with extra environment variables.
pub fn ctx_with_env(cwd: &Path, env: HashMap<String, String>) -> ToolContext {
    ToolContext {
        session_id: "test-session".into(),
        tool_use_id: "toolu_test".into(),
        cwd: ToolContext::shared_cwd(cwd),
        env: Arc::new(env),
        cancel: CancellationToken::new(),
        file_access: None,
    }
}

/// One session's tools.
pub struct Tools {
    pub state: ToolState,
    pub read: ReadTool,
    pub write: WriteTool,
    pub edit: EditTool,
    pub bash: BashTool,
    pub glob: GlobTool,
    pub grep: GrepTool,
    pub multi_edit: MultiEditTool,
    pub bash_output: BashOutputTool,
    pub kill_shell: KillShellTool,
    pub notebook_edit: NotebookEditTool,
}

pub fn tools() -> Tools {
    let state = ToolState::new();
    Tools {
        multi_edit: MultiEditTool::new(state.clone()),
        bash_output: BashOutputTool::new(state.clone()),
        kill_shell: KillShellTool::new(state.clone()),
        notebook_edit: NotebookEditTool::new(state.clone()),
        read: ReadTool::new(state.clone()),
        write: WriteTool::new(state.clone()),
        edit: EditTool::new(state.clone()),
        bash: BashTool::new(state.clone()),
        glob: GlobTool::new(),
        grep: GrepTool::new(),
        state,
    }
}

/// Calls a tool.
pub async fn call(tool: &dyn Tool, ctx: &ToolContext, input: Value) -> ToolOutput {
    tool.call(input, ctx).await
}

/// The output's text.
pub fn text(out: &ToolOutput) -> String {
    out.content.to_text()
}

/// A temp dir canonicalized (macOS /tmp symlink safety).
pub fn tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}
