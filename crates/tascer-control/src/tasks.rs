//! Background tasks as the SDKs see them: each background shell (`Bash`
//! with `run_in_background`) is a task of type `local_bash`, announced with
//! a `system/task_started` frame and, when it ends, a
//! `system/task_notification` frame (`completed`, `failed` or `stopped`);
//! `get_task_output` reads the end of its output and `stop_task` kills it.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use serde_json::{Map, Value, json};
use tascer::tools::{BackgroundShell, ShellStatus, TaskListener};

use crate::channel::Control;

/// The most output `get_task_output` returns (its end), as Claude Code.
const OUTPUT_TAIL_BYTES: usize = 8 * 1024;

/// The session's background tasks, told by the Bash tool.
pub(crate) struct Tasks {
    control: Control,
    session_id: OnceLock<String>,
    shells: Mutex<HashMap<String, Arc<BackgroundShell>>>,
}

impl Tasks {
    /// Tasks whose frames go out on `control`.
    pub(crate) fn new(control: Control) -> Arc<Tasks> {
        Arc::new(Tasks {
            control,
            session_id: OnceLock::new(),
            shells: Mutex::new(HashMap::new()),
        })
    }

    /// The session id the frames carry, once the session is open.
    pub(crate) fn set_session_id(&self, id: &str) {
        let _ = self.session_id.set(id.to_string());
    }

    fn frame(&self, subtype: &str, fields: Value) -> Value {
        let mut frame = json!({
            "type": "system",
            "subtype": subtype,
            "uuid": tascer::new_id(),
            "session_id": self.session_id.get().cloned().unwrap_or_default(),
        });
        if let (Some(frame), Value::Object(fields)) = (frame.as_object_mut(), fields) {
            frame.extend(fields);
        }
        frame
    }

    fn shell(&self, request: &Map<String, Value>) -> Result<Arc<BackgroundShell>, String> {
        let id = request
            .get("task_id")
            .and_then(Value::as_str)
            .ok_or("task_id is required")?;
        self.shells
            .lock()
            .get(id)
            .cloned()
            .ok_or_else(|| format!("No task found with ID: {id}"))
    }

    /// `get_task_output {task_id}`: the end of the shell's output.
    pub(crate) fn output(&self, request: &Map<String, Value>) -> Result<Value, String> {
        let (output, total_bytes, truncated) = self.shell(request)?.output_tail(OUTPUT_TAIL_BYTES);
        Ok(json!({"output": output, "total_bytes": total_bytes, "truncated": truncated}))
    }

    /// `stop_task {task_id}`: kills a running shell (its notification says
    /// `stopped`); a shell that already ended is an error.
    pub(crate) fn stop(&self, request: &Map<String, Value>) -> Result<Value, String> {
        let shell = self.shell(request)?;
        if !shell.is_running() {
            return Err(format!(
                "Task {} is not running (status: {})",
                shell.id(),
                shell.status().as_str()
            ));
        }
        shell.kill();
        Ok(json!({}))
    }
}

impl TaskListener for Tasks {
    fn started(&self, shell: &Arc<BackgroundShell>, tool_use_id: &str) {
        self.shells
            .lock()
            .insert(shell.id().to_string(), Arc::clone(shell));
        self.control.send(&self.frame(
            "task_started",
            json!({
                "task_id": shell.id(),
                "tool_use_id": tool_use_id,
                "description": shell.command(),
                "task_type": "local_bash",
                "is_backgrounded": true,
            }),
        ));
    }

    fn ended(&self, shell: &Arc<BackgroundShell>, tool_use_id: &str) {
        let code = shell.exit_code().unwrap_or(-1);
        let (status, how) = match shell.status() {
            ShellStatus::Killed => ("stopped", "was stopped".to_string()),
            _ if code == 0 => ("completed", "completed (exit code 0)".to_string()),
            _ => ("failed", format!("failed with exit code {code}")),
        };
        self.control.send(&self.frame(
            "task_notification",
            json!({
                "task_id": shell.id(),
                "tool_use_id": tool_use_id,
                "status": status,
                // Tascer keeps a shell's output in memory (get_task_output
                // reads it), not in a file.
                "output_file": "",
                "summary": format!("Background command \"{}\" {how}", shell.command()),
            }),
        ));
    }
}
