//! `tascer policy check`: every recorded tool call of some sessions
//! re-judged under new settings, without running anything; the calls
//! whose outcome changes, with totals (docs/policy-check.md).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use serde_json::{Value, json};
use tascer::guard::permissions::{PermissionDecision, PermissionMode};
use tascer::ledger::ToolRecord;
use tascer::policy_check::{Change, Judge, RecordedCall, SKIPPED_DECIDERS};
use tascer::{Behavior, Options, SessionStore};
use tascer_ledger::audit::open_ledger;
use tascer_store::parse_since;

use crate::args::PolicyCheckArgs;
use crate::table::table;

/// Longest input and reason shown in the table, in characters.
const CELL_CHARS: usize = 60;

/// Exit code when a call that was allowed would be refused.
const NEWLY_REFUSED_EXIT: u8 = 1;
/// Exit code on an error (bad settings, an unknown session).
const ERROR_EXIT: u8 = 2;

/// `tascer policy check --settings NEW (SESSION…|--all) [--since TIME]
/// [--permission-mode MODE] [--json]`: exit 0 when no allowed call would
/// be refused, 1 when one would, 2 on an error.
pub fn check(args: &PolicyCheckArgs) -> anyhow::Result<ExitCode> {
    match run_check(args) {
        Ok(code) => Ok(code),
        // A reader that went away ends the command as `main` says.
        Err(err) if crate::closed_pipe(&err) => Err(err),
        Err(err) => {
            eprintln!("error: {}", message(&err));
            Ok(ExitCode::from(ERROR_EXIT))
        }
    }
}

/// The error and its causes on one line, each cause said once (a cause
/// whose text its error already quotes is left out).
fn message(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        if text.is_empty() {
            text = part;
        } else if !text.contains(&part) {
            text = format!("{text}: {part}");
        }
    }
    text
}

/// One call re-judged.
struct Judged {
    call: RecordedCall,
    after: PermissionDecision,
    change: Change,
}

/// How many calls of each kind.
#[derive(Default)]
struct Totals {
    unchanged: usize,
    newly_refused: usize,
    newly_asked: usize,
    newly_allowed: usize,
    /// Calls with no permission decision on record (not judged).
    undecided: usize,
}

fn run_check(args: &PolicyCheckArgs) -> anyhow::Result<ExitCode> {
    let mode = args
        .permission_mode
        .as_deref()
        .map(|m| {
            m.parse::<PermissionMode>()
                .map_err(|e| anyhow::anyhow!("{e}"))
        })
        .transpose()?;
    let since = args
        .since
        .as_deref()
        .map(|t| parse_since(t, chrono::Utc::now()))
        .transpose()?;
    let mut options = Options::new();
    options.settings = Some(args.settings.clone());
    options.claude_settings = args.claude_settings;
    options.additional_directories = args.add_dir.clone();
    check_settings(&options)?;
    options.setting_sources = crate::run::setting_sources(args.setting_sources.as_deref())?;

    let home = tascer::tascer_home();
    let ledger = open_ledger(&home)?;
    let store = SessionStore::open_in_home(&home)?;
    let sessions = match args.all {
        true => ledger.store().sessions()?,
        false => args.sessions.clone(),
    };
    let mut judge = Judge::new(options, home.clone());
    let mut judged = Vec::new();
    let mut totals = Totals::default();
    for id in &sessions {
        let records = ledger.store().tool_calls(id)?;
        let info = store.session(id)?;
        if records.is_empty() && info.is_none() && ledger.store().entries(id)?.is_empty() {
            anyhow::bail!("no session {id} is recorded in {}", home.display());
        }
        let project = project_dir(info.map(|s| s.cwd), &records)?;
        for record in &records {
            if since.as_ref().is_some_and(|s| record.started_at < *s) {
                continue;
            }
            let call = RecordedCall::from_record(id, record, &project);
            let Some(_) = call.behavior else {
                totals.undecided += 1;
                continue;
            };
            let in_mode = mode.or(call.mode).unwrap_or_default();
            let after = judge
                .judge(&project, &call.tool_call(), in_mode)
                .with_context(|| format!("the settings for the project {}", project.display()))?;
            let change = call.change(after.behavior);
            totals.count(change);
            if change != Change::Unchanged {
                judged.push(Judged {
                    call,
                    after,
                    change,
                });
            }
        }
    }
    if args.json {
        print_json(&sessions, mode, &judged, &totals)?;
    } else {
        print_table(mode, &judged, &totals)?;
    }
    Ok(match totals.newly_refused {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::from(NEWLY_REFUSED_EXIT),
    })
}

/// Reads the new settings alone (no settings file), so that what is wrong
/// with them is said even when no session has a call to re-judge.
fn check_settings(options: &Options) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let mut alone = Judge::new(options.clone(), tascer::tascer_home());
    alone
        .engine(&cwd)
        .with_context(|| format!("--settings {}", options.settings.as_deref().unwrap_or("")))?;
    Ok(())
}

/// The directory a session ran in: the store's record of it, else its
/// first call's.
fn project_dir(cwd: Option<String>, records: &[ToolRecord]) -> anyhow::Result<PathBuf> {
    let recorded = cwd.or_else(|| {
        records.iter().find_map(|r| {
            r.context
                .get("cwd")
                .and_then(Value::as_str)
                .map(String::from)
        })
    });
    match recorded {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => std::env::current_dir().context("cannot read the working directory"),
    }
}

impl Totals {
    fn count(&mut self, change: Change) {
        match change {
            Change::Unchanged => self.unchanged += 1,
            Change::NewlyRefused => self.newly_refused += 1,
            Change::NewlyAsked => self.newly_asked += 1,
            Change::NewlyAllowed => self.newly_allowed += 1,
        }
    }

    fn line(&self) -> String {
        let mut line = format!(
            "{} unchanged, {} newly refused, {} newly asked, {} newly allowed",
            self.unchanged, self.newly_refused, self.newly_asked, self.newly_allowed
        );
        if self.undecided > 0 {
            line.push_str(&format!(
                "; {} without a recorded decision (not judged)",
                self.undecided
            ));
        }
        line
    }

    fn json(&self) -> Value {
        json!({
            "unchanged": self.unchanged,
            "newly_refused": self.newly_refused,
            "newly_asked": self.newly_asked,
            "newly_allowed": self.newly_allowed,
            "undecided": self.undecided,
        })
    }
}

fn print_table(
    mode: Option<PermissionMode>,
    judged: &[Judged],
    totals: &Totals,
) -> anyhow::Result<()> {
    if !judged.is_empty() {
        let mut rows = vec![[
            "SESSION".to_string(),
            "TOOL".into(),
            "INPUT".into(),
            "BEFORE → AFTER".into(),
            "REASON".into(),
        ]];
        rows.extend(judged.iter().map(|j| {
            [
                j.call.session_id.chars().take(8).collect(),
                j.call.tool.clone(),
                short_input(&j.call.input),
                format!(
                    "{} → {}",
                    recorded_behavior(&j.call),
                    j.after.behavior.as_str()
                ),
                cut(j.after.reason.lines().next().unwrap_or_default()),
            ]
        }));
        let mut stdout = std::io::stdout().lock();
        std::io::Write::write_all(&mut stdout, table(&rows).as_bytes())?;
        outln!();
    }
    outln!("{}", totals.line());
    let mode = match mode {
        Some(m) => format!("--permission-mode {m}"),
        None => "each call's recorded mode".into(),
    };
    outln!(
        "Judged by rules, policies, sandbox and mode ({mode}); not run: {}.",
        SKIPPED_DECIDERS.join(", ")
    );
    Ok(())
}

fn print_json(
    sessions: &[String],
    mode: Option<PermissionMode>,
    judged: &[Judged],
    totals: &Totals,
) -> anyhow::Result<()> {
    let changes: Vec<Value> = judged
        .iter()
        .map(|j| {
            json!({
                "session_id": j.call.session_id,
                "tool_use_id": j.call.tool_use_id,
                "tool": j.call.tool,
                "input": j.call.input,
                "cwd": j.call.cwd,
                "started_at": j.call.started_at,
                "change": j.change,
                "before": {
                    "behavior": j.call.behavior,
                    "decided_by": j.call.decided_by,
                    "reason": j.call.reason,
                    "mode": j.call.mode.map(PermissionMode::as_str),
                },
                "after": {
                    "behavior": j.after.behavior,
                    "decided_by": j.after.decided_by,
                    "reason": j.after.reason,
                },
            })
        })
        .collect();
    let out = json!({
        "sessions": sessions,
        "mode": mode.map(PermissionMode::as_str),
        "skipped_deciders": SKIPPED_DECIDERS,
        "totals": totals.json(),
        "changes": changes,
    });
    outln!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// The recorded behavior, with who decided when it is telling.
fn recorded_behavior(call: &RecordedCall) -> String {
    let behavior = call.behavior.map_or("?", Behavior::as_str);
    match call.decider_kind() {
        "" => behavior.to_string(),
        kind => format!("{behavior} ({kind})"),
    }
}

/// The part of an input that says what the call does: a command, a path,
/// a pattern, a URL, else the JSON; cut short.
fn short_input(input: &Value) -> String {
    let named = [
        "command",
        "file_path",
        "notebook_path",
        "path",
        "pattern",
        "url",
    ]
    .iter()
    .find_map(|k| input.get(*k).and_then(Value::as_str));
    match named {
        Some(text) => cut(text),
        None => cut(&input.to_string()),
    }
}

/// `text` on one line, cut to [`CELL_CHARS`] with `…`.
fn cut(text: &str) -> String {
    let one_line = text.replace(['\n', '\r'], " ");
    match one_line.char_indices().nth(CELL_CHARS) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_input_names_the_command_or_path() {
        assert_eq!(short_input(&json!({"command": "rm -rf x"})), "rm -rf x");
        assert_eq!(short_input(&json!({"file_path": "a.txt"})), "a.txt");
        let long = "x".repeat(100);
        assert_eq!(
            short_input(&json!({"command": long})).chars().count(),
            CELL_CHARS + 1
        );
    }

    #[test]
    fn project_dir_is_the_stored_one() {
        assert_eq!(
            project_dir(Some("/w".into()), &[]).ok(),
            Some(PathBuf::from("/w"))
        );
    }
}
