//! `validate_intent`: asks the reviewer model where an agent's session
//! drifted from the user's request, given a transcript, a Claude Code
//! session (its JSONL transcript) or a stored Tascer session.

use serde_json::{Map, Value, json};
use tascer::reviewer::{AgentLevel, AgentVerdict};
use tascer::{ContentBlock, Message, UserContent};
use tascer_mcp::ServeToolResult;

use crate::claude_sessions::{self, TOOL_RESULT_CHARS};
use crate::error::{GatekeeperError, Result};
use crate::events::note_agent;
use crate::model::{self, GateModel, GateQuestion};
use crate::server::{Server, str_arg, tool_error};

/// How much transcript `validate_intent` sends.
const TRANSCRIPT_BYTES: usize = 150_000;

impl Server {
    /// The `validate_intent` tool.
    pub(crate) async fn validate_intent(&self, args: Map<String, Value>) -> ServeToolResult {
        let dir = self.working_dir(&args).unwrap_or_else(|_| self.cwd.clone());
        let reviewer = match GateModel::for_question(GateQuestion::ValidateIntent, &dir, &self.home)
        {
            Ok(Some(reviewer)) => reviewer,
            Ok(None) => {
                return ServeToolResult::error(format!(
                    "validate_intent needs a model and none is configured: set {}",
                    model::MODEL_ENV_HINT
                ));
            }
            Err(e) => return tool_error(&e),
        };
        let (transcript, source) = match self.intent_transcript(&args) {
            Ok(found) => found,
            Err(e) => return tool_error(&e),
        };
        let transcript = cut_front(transcript);
        let request = str_arg(&args, "request")
            .unwrap_or("(not given separately: take it from the first user message)");
        let prompt = format!("User's request: {request}\n\nTranscript:\n{transcript}");
        let answer = match reviewer.ask(model::INTENT_SYSTEM, prompt).await {
            Ok(answer) => answer,
            Err(e) => {
                let result = tool_error(&e);
                note_agent(&intent_agent(
                    reviewer.model(),
                    0,
                    Err(tascer_core::error_chain(&e)),
                ));
                return result;
            }
        };
        match model::extract_json(&answer.text) {
            Some(mut data) => {
                data["reviewed_by"] = json!(reviewer.name());
                data["model_from"] = json!(reviewer.chosen_by());
                data["transcript_source"] = json!(source);
                let text = drift_text(&data);
                let aligned = data["aligned"].as_bool().unwrap_or(false);
                let judged = if aligned { Ok(None) } else { Ok(Some(&text)) };
                note_agent(&intent_agent(&answer.model, answer.duration_ms, judged));
                ServeToolResult::structured(text, data, false)
            }
            None => {
                let problem = "the answer is not the JSON object asked for".to_owned();
                note_agent(&intent_agent(
                    &answer.model,
                    answer.duration_ms,
                    Err(problem),
                ));
                ServeToolResult::text(answer.text)
            }
        }
    }

    /// The transcript to judge and where it came from: `transcript` (the
    /// text itself), else `transcript_path` (a Claude Code JSONL file,
    /// relative to the working directory), else `session_id` (a Tascer
    /// session, else a Claude Code session of any project), else the
    /// latest Claude Code session of the working directory's project (or
    /// of its git root's).
    fn intent_transcript(&self, args: &Map<String, Value>) -> Result<(String, String)> {
        if let Some(text) = str_arg(args, "transcript") {
            return Ok((text.to_owned(), "transcript".into()));
        }
        let dir = self.working_dir(args)?;
        if let Some(path) = str_arg(args, "transcript_path") {
            let path = dir.join(path);
            let text = claude_sessions::text(&path)?;
            return Ok((text, path.display().to_string()));
        }
        if let Some(id) = str_arg(args, "session_id") {
            if let Some(text) = self.session_transcript(id)? {
                return Ok((text, format!("tascer session {id}")));
            }
            let path = claude_sessions::find(id, &dir)
                .ok_or_else(|| GatekeeperError::NoSession { id: id.to_owned() })?;
            let text = claude_sessions::text(&path)?;
            return Ok((text, path.display().to_string()));
        }
        // Claude Code keys a project by the directory it started in: the
        // working directory, else its git root.
        let path = claude_sessions::latest(&dir)
            .or_else(|| claude_sessions::latest(&tascer_settings::project_root(&dir, None)))
            .ok_or_else(|| GatekeeperError::NoTranscript { dir: dir.clone() })?;
        let text = claude_sessions::text(&path)?;
        Ok((text, path.display().to_string()))
    }

    /// A stored Tascer session as text for a reviewer; `None` when the
    /// store has no such session (or there is no store).
    fn session_transcript(&self, id: &str) -> Result<Option<String>> {
        let Some(store) = self.store()? else {
            return Ok(None);
        };
        if store.session(id)?.is_none() {
            return Ok(None);
        }
        let mut out = String::new();
        for m in store.messages(id)? {
            message_text(&m, &mut out);
        }
        Ok(Some(out))
    }
}

/// The `validate_intent` agent's verdict (for the webhooks): `Ok(None)`
/// aligned, `Ok(Some(report))` drift (the report the caller got), `Err`
/// no usable judgement (what went wrong).
fn intent_agent(
    model: &str,
    duration_ms: u64,
    judged: std::result::Result<Option<&String>, String>,
) -> AgentVerdict {
    let (verdict, level) = match &judged {
        Ok(None) => ("ALIGNED", AgentLevel::Pass),
        Ok(Some(_)) => ("DRIFT", AgentLevel::Block),
        Err(_) => ("ERROR", AgentLevel::Error),
    };
    let mut agent = AgentVerdict::new(GateQuestion::ValidateIntent.agent(), model, verdict, level);
    agent.duration_ms = duration_ms;
    match judged {
        Ok(None) => {}
        Ok(Some(report)) => {
            agent.problem = report.lines().next().map(str::to_owned);
            agent.answer = Some(report.clone());
        }
        Err(problem) => {
            agent.outcome = "failed_open".into();
            agent.problem = Some(problem);
        }
    }
    agent
}

/// `transcript`, its start cut so that at most [`TRANSCRIPT_BYTES`] remain.
fn cut_front(transcript: String) -> String {
    if transcript.len() <= TRANSCRIPT_BYTES {
        return transcript;
    }
    let mut cut = transcript.len() - TRANSCRIPT_BYTES;
    while !transcript.is_char_boundary(cut) {
        cut += 1;
    }
    format!("[… start cut]\n{}", &transcript[cut..])
}

/// `ALIGNED: summary` or `DRIFT: summary`, then one line per drift.
fn drift_text(data: &Value) -> String {
    let aligned = data["aligned"].as_bool().unwrap_or(false);
    let summary = data["summary"].as_str().unwrap_or_default();
    let mut text = format!("{}: {summary}", if aligned { "ALIGNED" } else { "DRIFT" });
    for d in data["drift"].as_array().into_iter().flatten() {
        text.push_str(&format!(
            "\n- [{}] {} ({})",
            d["severity"].as_str().unwrap_or("?"),
            d["what"].as_str().unwrap_or_default(),
            d["evidence"].as_str().unwrap_or_default()
        ));
    }
    text
}

/// Appends the lines of one stored message to a transcript.
fn message_text(message: &Message, out: &mut String) {
    match message {
        Message::User(u) => match &u.message.content {
            UserContent::Text(t) => out.push_str(&format!("USER: {t}\n")),
            UserContent::Blocks(blocks) => {
                for b in blocks {
                    match b {
                        ContentBlock::Text { text } => {
                            out.push_str(&format!("USER: {text}\n"));
                        }
                        ContentBlock::ToolResult {
                            content, is_error, ..
                        } => {
                            let text: String =
                                content.to_text().chars().take(TOOL_RESULT_CHARS).collect();
                            let mark = if is_error.unwrap_or(false) {
                                " (error)"
                            } else {
                                ""
                            };
                            out.push_str(&format!("TOOL RESULT{mark}: {text}\n"));
                        }
                        _ => {}
                    }
                }
            }
        },
        Message::Assistant(a) => {
            for b in &a.message.content {
                match b {
                    ContentBlock::Text { text } => {
                        out.push_str(&format!("ASSISTANT: {text}\n"));
                    }
                    ContentBlock::ToolUse { name, input, .. } => {
                        out.push_str(&format!("TOOL CALL {name}: {input}\n"));
                    }
                    _ => {}
                }
            }
        }
        Message::Result(r) => out.push_str(&format!(
            "RESULT: {}\n",
            serde_json::to_string(&r).unwrap_or_default()
        )),
        Message::System(_) | Message::StreamEvent(_) => {}
    }
}
