//! [`Reviewers::validate_change`]: puts a call that would run to the
//! validator it matched ([`super::validators`]) — the change written out
//! (a plan, edits, a diff), the file's current content where it matters,
//! the user's request — and turns a `drift`/`violates` into a refusal
//! that tells the agent what to redo.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};
use tascer_core::ToolCall;

use super::chain::{CallReview, Question, Reviewers};
use super::prompt::{cut, shown, transcript_text};
use super::validators::{FileText, Places, Validation, may_change, refusal, validation_for};
use super::{ReviewOutcome, ReviewerKind};
use crate::permissions::paths::canonicalize;

/// Longest change (new content, edits, diff, plan) shown, in characters.
const CHANGE_CHARS: usize = 12_000;
/// Longest current file content shown, in characters.
const FILE_CHARS: usize = 12_000;

impl Reviewers {
    /// True when a validator (`plan-validate`, `style-drift`,
    /// `claude-md-validate`) is on.
    pub fn validates_changes(&self) -> bool {
        self.config.validates_changes()
    }

    /// The validator `call` goes to, if any (see
    /// [`validation_for`](super::validators::validation_for)); `home` for
    /// `~`, `working_dirs` the workspace's canonical directories (asked
    /// for only when needed).
    pub fn validation_for(
        &self,
        call: &ToolCall,
        home: Option<&Path>,
        working_dirs: &dyn Fn() -> Vec<PathBuf>,
    ) -> Option<Validation> {
        if !self.config.validates_changes() || !may_change(&call.tool_name) {
            return None;
        }
        let plans_dir = self
            .plans_dir
            .get_or_init(|| {
                self.claude_config_dir()
                    .map(|d| canonicalize(&d.join("plans"), d, home))
            })
            .as_deref();
        let places = Places {
            home,
            plans_dir,
            working_dirs,
        };
        validation_for(&self.config, call, &places)
    }

    /// Asks the validator of `validation` about `call`, showing `current`
    /// (the start of the file it names, when readable). `None` when that
    /// validator is off. A `drift`/`violates` refuses the call with what
    /// to redo; a failed review is decided by the fail mode (default
    /// open). Past `deadline` the review fails.
    pub async fn validate_change(
        &self,
        validation: &Validation,
        call: &ToolCall,
        current: Option<&FileText>,
        deadline: Option<Instant>,
    ) -> Option<CallReview> {
        let kind = validation.kind;
        let config = self.config.get(kind)?;
        let excerpt = self.excerpt(config);
        let request = excerpt.request.clone();
        let request_text = request.as_deref().map_or("(not available)".into(), shown);
        let file = validation.file.as_deref();
        let change = change_text(kind, call, current, file);
        let user = match kind {
            ReviewerKind::PlanValidate => format!(
                "The user's request:\n{request_text}\n\n{change}\n\nRecent conversation (oldest \
                 first):\n{}",
                transcript_text(&excerpt)
            ),
            ReviewerKind::ClaudeMdValidate => format!(
                "{change}\n\nThe user's request:\n{request_text}\n\nThe file's conventions are \
                 those of its current content above."
            ),
            _ => format!("The user's request:\n{request_text}\n\n{change}"),
        };
        let record = self
            .run(
                config,
                Question {
                    kind,
                    user,
                    key: json!({
                        "tool": call.tool_name,
                        "input": call.input,
                        "file": current.map(|c| &c.text),
                        "request": request,
                    }),
                    call: Some((call.tool_name.clone(), call.tool_use_id.clone())),
                },
                deadline,
            )
            .await;
        let reason = match (record.passed, record.outcome) {
            (false, ReviewOutcome::Decided) => refusal(kind, &record.reason, file),
            _ => record.reason.clone(),
        };
        Some(CallReview {
            allowed: record.passed,
            by: kind,
            reason,
            records: vec![record],
        })
    }
}

/// The change as the validator reads it: what the call writes, with the
/// file's current content (or a diff against it) where there is one. An
/// edit's file is shown to `plan-validate` and `claude-md-validate`, which
/// judge the file as a whole; for `style-drift` the edits say what changes.
fn change_text(
    kind: ReviewerKind,
    call: &ToolCall,
    current: Option<&FileText>,
    file: Option<&Path>,
) -> String {
    let input = &call.input;
    let path = input
        .get("file_path")
        .and_then(Value::as_str)
        .map(String::from)
        .or_else(|| file.map(|f| f.display().to_string()))
        .unwrap_or_default();
    let before = |c: &FileText| {
        let note = if c.truncated { " (its start)" } else { "" };
        format!(
            "The file's current content{note}:\n<<<\n{}\n>>>",
            cut(&c.text, FILE_CHARS)
        )
    };
    match call.tool_name.as_str() {
        "ExitPlanMode" => match input.get("plan").and_then(Value::as_str) {
            Some(plan) if !plan.trim().is_empty() => format!(
                "The plan the agent presents (ExitPlanMode):\n<<<\n{}\n>>>",
                cut(plan, CHANGE_CHARS)
            ),
            _ => match current {
                Some(c) => format!(
                    "The plan the agent presents (ExitPlanMode, from {path}):\n<<<\n{}\n>>>",
                    cut(&c.text, CHANGE_CHARS)
                ),
                None => "The plan the agent presents (ExitPlanMode): (not available)".into(),
            },
        },
        "Write" => {
            let new = input.get("content").and_then(Value::as_str).unwrap_or("");
            match current {
                Some(c) if !c.truncated => format!(
                    "The agent writes {path} over its current content; the change as a \
                     unified diff:\n{}",
                    cut(&unified_diff(&c.text, new), CHANGE_CHARS)
                ),
                Some(c) => format!(
                    "The agent writes {path}.\n{}\n\nThe new content:\n<<<\n{}\n>>>",
                    before(c),
                    cut(new, CHANGE_CHARS)
                ),
                None => format!(
                    "The agent writes {path} (a new file):\n<<<\n{}\n>>>",
                    cut(new, CHANGE_CHARS)
                ),
            }
        }
        _ => {
            let edits = edits_text(input);
            match current.filter(|_| kind != ReviewerKind::StyleDrift) {
                Some(c) => format!("The agent edits {path}.\n{}\n\n{edits}", before(c)),
                None => format!("The agent edits {path}.\n\n{edits}"),
            }
        }
    }
}

/// `Edit`'s `old_string`/`new_string`, or each of `MultiEdit`'s `edits`.
fn edits_text(input: &Value) -> String {
    let one = |edit: &Value| {
        let s = |k: &str| edit.get(k).and_then(Value::as_str).unwrap_or("");
        let all = if edit.get("replace_all").and_then(Value::as_bool) == Some(true) {
            " (every occurrence)"
        } else {
            ""
        };
        format!(
            "old_string{all}:\n<<<\n{}\n>>>\nnew_string:\n<<<\n{}\n>>>",
            s("old_string"),
            s("new_string")
        )
    };
    let text = match input.get("edits").and_then(Value::as_array) {
        Some(edits) => edits
            .iter()
            .enumerate()
            .map(|(i, e)| format!("Edit {}:\n{}", i + 1, one(e)))
            .collect::<Vec<_>>()
            .join("\n\n"),
        None => one(input),
    };
    format!("The change:\n{}", cut(&text, CHANGE_CHARS))
}

/// A unified diff of `old` → `new` (three lines of context).
fn unified_diff(old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header("before", "after")
        .to_string()
}

#[cfg(test)]
#[path = "change_review_tests.rs"]
mod tests;
