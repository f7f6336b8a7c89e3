//! Rendering a run's messages: text for people, JSON for machines.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use tascer::{ContentBlock, Message, ResultMessage, ToolResultContent, UserContent};

use crate::args::PrintFormat;

/// Renders messages as they arrive.
pub struct Renderer {
    format: PrintFormat,
    spinner: Option<ProgressBar>,
    streamed_text: bool,
    color: bool,
}

impl Renderer {
    /// A renderer for this format.
    pub fn new(format: PrintFormat) -> Self {
        Renderer {
            format,
            spinner: None,
            streamed_text: false,
            color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    /// Renders one message.
    pub fn render(&mut self, message: &Message) -> std::io::Result<()> {
        match self.format {
            PrintFormat::StreamJson => {
                let mut out = std::io::stdout().lock();
                serde_json::to_writer(&mut out, message)?;
                out.write_all(b"\n")?;
                out.flush()
            }
            PrintFormat::Json => {
                if let Message::Result(result) = message {
                    let mut out = std::io::stdout().lock();
                    serde_json::to_writer(&mut out, &Message::Result(result.clone()))?;
                    out.write_all(b"\n")?;
                }
                Ok(())
            }
            PrintFormat::Text => self.render_text(message),
        }
    }

    /// Clears the spinner.
    pub fn finish(&mut self) {
        self.stop_spinner();
    }

    fn start_spinner(&mut self) {
        if self.spinner.is_some() || !std::io::stderr().is_terminal() {
            return;
        }
        let spinner = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
            spinner.set_style(style);
        }
        spinner.set_message("thinking…");
        spinner.enable_steady_tick(Duration::from_millis(100));
        self.spinner = Some(spinner);
    }

    fn stop_spinner(&mut self) {
        if let Some(spinner) = self.spinner.take() {
            spinner.finish_and_clear();
        }
    }

    fn dim(&self, text: &str) -> String {
        if self.color {
            format!("\x1b[2m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn render_text(&mut self, message: &Message) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        match message {
            Message::System(system) if system.subtype == "init" => {
                drop(out);
                // A server that failed to start is said out loud, never
                // silently dropped.
                let servers = system.data.get("mcp_servers").and_then(|s| s.as_array());
                for server in servers.into_iter().flatten() {
                    if server.get("status").and_then(|s| s.as_str()) == Some("failed") {
                        let name = server.get("name").and_then(|n| n.as_str()).unwrap_or("?");
                        let error = server.get("error").and_then(|e| e.as_str()).unwrap_or("");
                        eprintln!("⚠ MCP server {name} failed to start: {error}");
                    }
                }
                self.start_spinner();
            }
            Message::System(system) if system.subtype == "api_retry" => {
                if self.streamed_text {
                    // The failed attempt's partial text stays on screen;
                    // the retry's answer starts on a fresh line.
                    writeln!(out)?;
                    out.flush()?;
                    self.streamed_text = false;
                }
                drop(out);
                self.stop_spinner();
                eprintln!("{}", self.dim(&format!("  ↻ {}", retry_line(&system.data))));
                self.start_spinner();
            }
            Message::System(system) if system.subtype == "local_command_output" => {
                drop(out);
                self.stop_spinner();
                let content = system.data.get("content").and_then(|c| c.as_str());
                println!("{}", content.unwrap_or_default());
            }
            Message::System(_) => {}
            Message::StreamEvent(event) => {
                let delta = event
                    .event
                    .get("delta")
                    .filter(|d| d.get("type").and_then(|t| t.as_str()) == Some("text_delta"))
                    .and_then(|d| d.get("text"))
                    .and_then(|t| t.as_str());
                if let Some(text) = delta {
                    drop(out);
                    self.stop_spinner();
                    let mut out = std::io::stdout().lock();
                    out.write_all(text.as_bytes())?;
                    out.flush()?;
                    self.streamed_text = true;
                }
            }
            Message::Assistant(assistant) => {
                drop(out);
                self.stop_spinner();
                let mut out = std::io::stdout().lock();
                for block in &assistant.message.content {
                    match block {
                        ContentBlock::Text { text } if !self.streamed_text => {
                            writeln!(out, "{text}")?;
                        }
                        ContentBlock::Text { .. } => writeln!(out)?,
                        ContentBlock::ToolUse { name, input, .. } => {
                            writeln!(out, "⏺ {name}({})", summarize_input(input))?;
                        }
                        _ => {}
                    }
                }
                self.streamed_text = false;
            }
            Message::User(user) => {
                if let UserContent::Blocks(blocks) = &user.message.content {
                    for block in blocks {
                        if let ContentBlock::ToolResult {
                            content, is_error, ..
                        } = block
                        {
                            let line = summarize_result(content, is_error.unwrap_or(false));
                            writeln!(out, "{}", self.dim(&format!("  ⎿  {line}")))?;
                        }
                    }
                }
                drop(out);
                self.start_spinner();
            }
            Message::Result(result) => {
                drop(out);
                self.stop_spinner();
                eprintln!("{}", run_closing_line(result));
            }
        }
        Ok(())
    }
}

/// The one-line summary of a finished turn.
pub fn closing_line(result: &ResultMessage) -> String {
    let status = if result.is_error {
        let why = result
            .errors
            .first()
            .cloned()
            .or_else(|| result.result.clone())
            .unwrap_or_else(|| "error".into());
        format!("✗ {why}")
    } else {
        "✓ done".to_string()
    };
    with_totals(&status, result)
}

/// The closing line of `tascer run` in text mode: like [`closing_line`],
/// except that an API error is only named, because the error itself comes
/// after it as the run's last stderr line.
fn run_closing_line(result: &ResultMessage) -> String {
    if result.is_error && result.terminal_reason == "api_error" {
        with_totals("✗ stopped by an API error", result)
    } else {
        closing_line(result)
    }
}

/// `status` followed by the run's turns, tokens, cost, time and session.
fn with_totals(status: &str, result: &ResultMessage) -> String {
    let tokens = result.usage.total_tokens();
    let secs = result.duration_ms as f64 / 1000.0;
    format!(
        "{status} · {} turn{} · {tokens} tokens · {} · {secs:.1}s · session {}",
        result.num_turns,
        if result.num_turns == 1 { "" } else { "s" },
        tascer::format_cost(result.total_cost_usd, &result.unpriced_models),
        result.session_id
    )
}

fn summarize_input(input: &serde_json::Value) -> String {
    let main = [
        "command",
        "file_path",
        "notebook_path",
        "pattern",
        "url",
        "query",
        "path",
        "bash_id",
        "shell_id",
        "description",
    ]
    .iter()
    .find_map(|k| input.get(*k).and_then(|v| v.as_str()));
    let todos = input
        .get("todos")
        .and_then(|t| t.as_array())
        .map(|t| format!("{} todos", t.len()));
    let text = match (main, todos) {
        (Some(s), _) => s.to_string(),
        (None, Some(t)) => t,
        (None, None) => input.to_string(),
    };
    shorten(&text.replace('\n', " "), 80)
}

fn summarize_result(content: &ToolResultContent, is_error: bool) -> String {
    let text = content.to_text();
    let lines = text.lines().count();
    let first = text.lines().next().unwrap_or("").trim();
    let mut line = shorten(first, 100);
    if lines > 1 {
        line.push_str(&format!(" (+{} lines)", lines - 1));
    }
    if line.is_empty() {
        line = "(no output)".into();
    }
    if is_error {
        format!("error: {line}")
    } else {
        line
    }
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// One line for a `system/api_retry` frame: what failed (the HTTP status, or
/// the connection error when there was no response), and when and how often
/// it is retried.
fn retry_line(data: &serde_json::Map<String, serde_json::Value>) -> String {
    let error = data.get("error").and_then(|e| e.as_str()).unwrap_or("");
    let failed = match data.get("error_status").and_then(|s| s.as_u64()) {
        Some(status) if error.is_empty() => format!("API error (HTTP {status})"),
        Some(status) => format!("API error (HTTP {status}): {error}"),
        None if error.is_empty() => "request failed".to_owned(),
        None => error.to_owned(),
    };
    let attempt = data.get("attempt").and_then(|a| a.as_u64());
    let max = data.get("max_retries").and_then(|m| m.as_u64());
    let delay = data.get("retry_delay_ms").and_then(|d| d.as_u64());
    let mut line = format!("{failed}; retrying");
    if let Some(delay) = delay {
        line.push_str(&format!(" in {:.1} s", delay as f64 / 1000.0));
    }
    if let (Some(attempt), Some(max)) = (attempt, max) {
        line.push_str(&format!(" (retry {attempt} of {max})"));
    }
    line.push('…');
    line
}

#[cfg(test)]
mod retry_line_tests {
    use super::retry_line;
    use serde_json::{Map, Value, json};

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn a_connection_failure_says_what_failed_not_null() {
        let line = retry_line(&object(json!({
            "attempt": 1, "max_retries": 3, "retry_delay_ms": 1200,
            "error_status": null,
            "error": "connection to http://127.0.0.1:9/v1/messages failed: connection refused"
        })));
        assert!(!line.contains("null"), "{line}");
        assert_eq!(
            line,
            "connection to http://127.0.0.1:9/v1/messages failed: connection refused; \
             retrying in 1.2 s (retry 1 of 3)…"
        );
    }

    #[test]
    fn an_http_failure_names_the_status() {
        let line = retry_line(&object(json!({
            "attempt": 2, "max_retries": 3, "retry_delay_ms": 500,
            "error_status": 529, "error": "overloaded_error: Overloaded"
        })));
        assert_eq!(
            line,
            "API error (HTTP 529): overloaded_error: Overloaded; retrying in 0.5 s (retry 2 of 3)…"
        );
    }
}
