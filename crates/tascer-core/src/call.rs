//! One tool call the model asked for: what governance decides about.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// Tool name (`Bash`, `Read`, `mcp__server__tool`, …).
    pub tool_name: String,
    /// The tool input as the model sent it.
    pub input: Value,
    /// The `tool_use` id.
    pub tool_use_id: String,
    /// The session's working directory when the call was made.
    pub cwd: PathBuf,
    /// Session id.
    pub session_id: String,
}

impl ToolCall {
    /// A call with empty ids.
    pub fn new(tool_name: impl Into<String>, input: Value, cwd: impl Into<PathBuf>) -> Self {
        ToolCall {
            tool_name: tool_name.into(),
            input,
            tool_use_id: String::new(),
            cwd: cwd.into(),
            session_id: String::new(),
        }
    }

    /// A string field of the input.
    pub fn input_str(&self, key: &str) -> Option<&str> {
        self.input.get(key).and_then(Value::as_str)
    }

    /// The `command` of a `Bash` call.
    pub fn command(&self) -> Option<&str> {
        if self.tool_name == "Bash" {
            self.input_str("command")
        } else {
            None
        }
    }
}
