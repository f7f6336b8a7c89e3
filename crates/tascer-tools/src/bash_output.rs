//! `BashOutput` and `KillShell`: read from and stop background shells.

use std::time::Duration;

use futures::future::BoxFuture;
use regex::Regex;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tascer_core::{Tool, ToolContext, ToolOutput};

use crate::error::ToolError;
use crate::state::{ShellStatus, ToolState};
use crate::util::{finish, input_schema, parse_input, truncate_chars};

const OUTPUT_NAME: &str = "BashOutput";
const KILL_NAME: &str = "KillShell";
/// Characters of stdout and of stderr shown to the model per read.
const MAX_OUTPUT_CHARS: usize = 30_000;
/// How long KillShell waits for the shell to exit.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Input of [`BashOutputTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BashOutputInput {
    /// The ID of the background shell to retrieve output from.
    bash_id: String,
    /// Optional regular expression to filter the output lines. Only lines matching this regex
    /// are included in the result; lines that do not match are consumed and will no longer be
    /// available to read.
    #[serde(default)]
    filter: Option<String>,
}

/// Reads new output from a background shell.
#[derive(Debug, Clone)]
pub struct BashOutputTool {
    state: ToolState,
}

impl BashOutputTool {
    /// A `BashOutput` tool reading the shells registered in `state`.
    pub fn new(state: ToolState) -> Self {
        BashOutputTool { state }
    }
}

impl Tool for BashOutputTool {
    fn name(&self) -> &str {
        OUTPUT_NAME
    }

    fn description(&self) -> &str {
        "Retrieves output from a running or completed background bash shell. Returns only the \
         output written since the last check, along with the shell's status (running, completed \
         or killed) and exit code. An optional regex filter keeps only matching lines; lines \
         that do not match are consumed."
    }

    fn input_schema(&self) -> Value {
        input_schema::<BashOutputInput>()
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { finish(self.run(input)) })
    }
}

/// Keeps the lines matching `filter` (all lines when there is none).
fn filter_lines(text: &str, filter: Option<&Regex>) -> String {
    match filter {
        None => text.to_string(),
        Some(re) => {
            let mut out = String::new();
            for line in text.split_inclusive('\n') {
                if re.is_match(line.trim_end_matches(['\n', '\r'])) {
                    out.push_str(line);
                }
            }
            out
        }
    }
}

/// The text shown for one stream, cut to the display cap.
fn shown(text: &str) -> String {
    let trimmed = text.trim_end_matches(['\n', '\r']);
    let (kept, cut) = truncate_chars(trimmed, MAX_OUTPUT_CHARS);
    if cut {
        format!("{kept}\n… [output truncated]")
    } else {
        kept.to_string()
    }
}

fn count_lines(text: &str) -> usize {
    text.lines().count()
}

impl BashOutputTool {
    fn run(&self, input: Value) -> Result<ToolOutput, ToolError> {
        let input: BashOutputInput = parse_input(OUTPUT_NAME, input)?;
        let filter = match &input.filter {
            Some(f) => Some(Regex::new(f).map_err(|e| ToolError::InvalidInput {
                tool: OUTPUT_NAME,
                message: format!("filter is not a valid regular expression: {e}"),
            })?),
            None => None,
        };
        let shell = self
            .state
            .background_shells()
            .get(&input.bash_id)
            .ok_or_else(|| ToolError::msg(format!("No shell found with ID: {}", input.bash_id)))?;
        // Status first: output read after a shell finished is complete.
        let status = shell.status();
        let exit_code = shell.exit_code();
        let (stdout, stderr) = shell.read_new();
        let stdout = filter_lines(&stdout, filter.as_ref());
        let stderr = filter_lines(&stderr, filter.as_ref());

        let mut parts = vec![format!("<status>{}</status>", status.as_str())];
        if let Some(code) = exit_code {
            parts.push(format!("<exit_code>{code}</exit_code>"));
        }
        if !stdout.is_empty() {
            parts.push(format!("<stdout>\n{}\n</stdout>", shown(&stdout)));
        }
        if !stderr.is_empty() {
            parts.push(format!("<stderr>\n{}\n</stderr>", shown(&stderr)));
        }
        if stdout.is_empty() && stderr.is_empty() {
            parts.push("(no new output)".into());
        }
        let timestamp = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        parts.push(format!("<timestamp>{timestamp}</timestamp>"));
        let raw = json!({
            "shellId": shell.id(),
            "command": shell.command(),
            "status": status.as_str(),
            "exitCode": exit_code,
            "stdout": stdout,
            "stderr": stderr,
            "stdoutLines": count_lines(&stdout),
            "stderrLines": count_lines(&stderr),
            "timestamp": timestamp,
        });
        Ok(ToolOutput::text(parts.join("\n\n")).with_raw(raw))
    }
}

/// Input of [`KillShellTool`].
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct KillShellInput {
    /// The ID of the background shell to kill.
    shell_id: String,
}

/// Kills a background shell (its whole process group).
#[derive(Debug, Clone)]
pub struct KillShellTool {
    state: ToolState,
}

impl KillShellTool {
    /// A `KillShell` tool for the shells registered in `state`.
    pub fn new(state: ToolState) -> Self {
        KillShellTool { state }
    }
}

impl Tool for KillShellTool {
    fn name(&self) -> &str {
        KILL_NAME
    }

    fn description(&self) -> &str {
        "Kills a running background bash shell (and every process it started) by its ID. \
         Its output so far stays readable with BashOutput."
    }

    fn input_schema(&self) -> Value {
        input_schema::<KillShellInput>()
    }

    fn call<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { finish(self.run(input).await) })
    }
}

impl KillShellTool {
    async fn run(&self, input: Value) -> Result<ToolOutput, ToolError> {
        let input: KillShellInput = parse_input(KILL_NAME, input)?;
        let id = input.shell_id;
        let shell = self
            .state
            .background_shells()
            .get(&id)
            .ok_or_else(|| ToolError::msg(format!("No shell found with ID: {id}")))?;
        let status = shell.status();
        if status != ShellStatus::Running {
            return Err(ToolError::msg(format!(
                "Shell {id} is not running, so cannot be killed (status: {}).",
                status.as_str()
            )));
        }
        shell.kill();
        let deadline = tokio::time::Instant::now() + KILL_WAIT;
        while shell.is_running() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let message = format!("Successfully killed shell: {id} ({})", shell.command());
        let raw = json!({
            "message": message,
            "shell_id": id,
            "task_id": id,
            "task_type": "local_bash",
            "command": shell.command(),
        });
        Ok(ToolOutput::text(message).with_raw(raw))
    }
}
