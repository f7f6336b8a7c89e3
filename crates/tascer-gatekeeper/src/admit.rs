//! What the gatekeeper asks Tascer's admission before it acts.
//!
//! Every command `check` runs, and the git commands of `commit` and
//! `push`, are admitted as `Bash` calls; the changes `confirm` approves are
//! admitted as `Write`s of the changed files' contents. All through
//! [`HostGovernance`], the admission `tascer hook` uses for Claude Code's
//! calls, so a command gets the same decision, with the same reason,
//! whether Claude Code runs it or `check` does.
//!
//! Like `tascer hook`, this only adds refusals: what only the permission
//! mode or default would ask about runs (the MCP client chose to call the
//! tool; the project configured its commands). A Tascer rule or policy
//! that asks refuses here, since `tascer mcp serve` has nobody to ask.

use std::path::Path;

use serde_json::{Value, json};
use tascer::ToolCall;
use tascer::host::{HostGovernance, HostStep};
use tascer_guard::hooks::HookCommon;
use tascer_guard::host_answer::HostAnswer;

use crate::error::Result;

/// A call admission refused.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refused {
    /// The call, as a person reads it (`git push origin main`, `write .env`).
    pub call: String,
    /// Tascer's reason, as `tascer hook` gives it to Claude Code.
    pub reason: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.call, self.reason)
    }
}

/// Admission for the calls of one served tool call in one repository.
pub(crate) struct Admitter {
    governance: HostGovernance,
    repo: std::path::PathBuf,
    session_id: String,
    /// The served tool (`check`, `commit`, …), for the calls' ids.
    tool: &'static str,
}

impl Admitter {
    /// Tascer's settings for `repo` (user settings from `home`).
    pub fn load(repo: &Path, home: &Path, session_id: &str, tool: &'static str) -> Result<Self> {
        let settings = tascer::host::load_settings(repo, home)?;
        let mode = settings.mode_for_requested_calls();
        let governance =
            HostGovernance::from_settings(&settings, repo, Some(mode), HostStep::Admit)?;
        Ok(Admitter {
            governance,
            repo: repo.to_path_buf(),
            session_id: session_id.to_owned(),
            tool,
        })
    }

    /// The first of `commands` admission refuses, if any.
    pub async fn commands(&self, commands: &[&str]) -> Option<Refused> {
        for (i, command) in commands.iter().enumerate() {
            let input = json!({"command": command});
            if let Some(refused) = self.admit("Bash", input, i, command).await {
                return Some(refused);
            }
        }
        None
    }

    /// The first of `files` (repository-relative paths of changed files)
    /// whose current content admission would not let be written, if any.
    /// Deleted and unreadable files are not admitted.
    pub async fn writes(&self, files: &[&str]) -> Option<Refused> {
        for (i, file) in files.iter().enumerate() {
            let path = self.repo.join(file);
            let Ok(content) = std::fs::read_to_string(&path) else {
                continue;
            };
            let input = json!({"file_path": path.display().to_string(), "content": content});
            if let Some(refused) = self
                .admit("Write", input, i, &format!("write {file}"))
                .await
            {
                return Some(refused);
            }
        }
        None
    }

    async fn admit(&self, tool: &str, input: Value, n: usize, what: &str) -> Option<Refused> {
        let call = ToolCall {
            tool_name: tool.to_owned(),
            input,
            tool_use_id: format!("mcp-{}-{n}", self.tool),
            cwd: self.repo.clone(),
            session_id: self.session_id.clone(),
        };
        let common = HookCommon {
            session_id: self.session_id.clone(),
            transcript_path: String::new(),
            cwd: self.repo.display().to_string(),
            permission_mode: None,
        };
        let (_, answer) = self.governance.admit(&call, common).await;
        let reason = match answer {
            HostAnswer::Deny { reason } => reason,
            HostAnswer::Ask { reason } => format!(
                "{reason} (tascer mcp serve cannot ask anyone to approve it; an allow rule for \
                 it in Tascer's settings lets it run)"
            ),
            HostAnswer::Run {
                updated_input: Some(_),
            } => "Tascer rewrote this call's input (a PreToolUse hook or the callback); tascer \
                  mcp serve runs only what it was asked to, so it does not run it"
                .to_owned(),
            HostAnswer::Run {
                updated_input: None,
            }
            | HostAnswer::Approve { .. }
            | HostAnswer::HostDecides => return None,
        };
        Some(Refused {
            call: what.to_owned(),
            reason,
        })
    }
}
