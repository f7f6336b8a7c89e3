//! What a gate sees: the call, its output, and the files it changed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tascer_core::ToolOutput;
use tascer_sandbox::CommandSandbox;

/// When a gate runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Before the tool runs; a failure blocks the call.
    Pre,
    /// After the tool ran; a failure marks the call failed.
    Post,
}

/// Everything a gate may look at.
#[derive(Debug, Clone, PartialEq)]
pub struct GateContext {
    /// Pre or post.
    pub phase: Phase,
    /// The tool's name, e.g. `Bash` or `Write`.
    pub tool_name: String,
    /// The tool input as the model sent it.
    pub input: Value,
    /// The tool output (post phase only).
    pub output: Option<ToolOutput>,
    /// The output's text as the model sees it (empty before the tool ran).
    output_text: String,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// Files the call writes or edits (absolute).
    pub changed_files: Vec<PathBuf>,
    /// Secrets known to the session (API keys, tokens) that must never
    /// appear in output or written content.
    pub session_secrets: Vec<String>,
    /// The OS sandbox commands a gate starts run under (as the Bash
    /// tool's do); `None` when the session has none.
    pub sandbox: Option<CommandSandbox>,
}

/// Tools that write the file named by their input.
const WRITING_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

impl GateContext {
    /// A context for `tool_name` called with `input` in `cwd`;
    /// `changed_files` is derived from the input.
    pub fn new(phase: Phase, tool_name: impl Into<String>, input: Value, cwd: PathBuf) -> Self {
        let tool_name = tool_name.into();
        let changed_files = if WRITING_TOOLS.contains(&tool_name.as_str()) {
            target_path(&input, &cwd).into_iter().collect()
        } else {
            Vec::new()
        };
        GateContext {
            phase,
            tool_name,
            input,
            output: None,
            output_text: String::new(),
            cwd,
            changed_files,
            session_secrets: Vec::new(),
            sandbox: None,
        }
    }

    /// Adds the tool output.
    pub fn with_output(mut self, output: ToolOutput) -> Self {
        self.output_text = output.content.to_text();
        self.output = Some(output);
        self
    }

    /// The output's text as the model sees it (post phase only).
    pub fn output_text(&self) -> Option<&str> {
        self.output.as_ref().map(|_| self.output_text.as_str())
    }

    /// Runs the gates' commands under `sandbox`.
    pub fn with_sandbox(mut self, sandbox: Option<CommandSandbox>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Sets the session secrets.
    pub fn with_session_secrets(mut self, secrets: Vec<String>) -> Self {
        self.session_secrets = secrets;
        self
    }

    /// The file the input targets (`file_path` or `notebook_path`),
    /// resolved against `cwd`.
    pub fn target_file(&self) -> Option<PathBuf> {
        target_path(&self.input, &self.cwd)
    }

    /// The raw output, if any.
    pub fn raw(&self) -> Option<&Value> {
        self.output.as_ref().and_then(|o| o.raw.as_ref())
    }

    /// Content the call writes, taken from the input: `content`,
    /// `new_string`, each `edits[].new_string`, `new_source`.
    pub fn written_content(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for key in ["content", "new_string", "new_source"] {
            if let Some(s) = self.input.get(key).and_then(Value::as_str) {
                out.push(s);
            }
        }
        if let Some(edits) = self.input.get("edits").and_then(Value::as_array) {
            out.extend(
                edits
                    .iter()
                    .filter_map(|e| e.get("new_string").and_then(Value::as_str)),
            );
        }
        out
    }

    /// `path` relative to `cwd` when it lies under it, else unchanged.
    pub fn relative<'p>(&self, path: &'p Path) -> &'p Path {
        path.strip_prefix(&self.cwd).unwrap_or(path)
    }
}

fn target_path(input: &Value, cwd: &Path) -> Option<PathBuf> {
    let raw = input
        .get("file_path")
        .or_else(|| input.get("notebook_path"))
        .and_then(Value::as_str)?;
    let p = PathBuf::from(raw);
    Some(if p.is_absolute() { p } else { cwd.join(p) })
}
