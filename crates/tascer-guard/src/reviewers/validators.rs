//! The validators — `plan-validate`, `style-drift`, `claude-md-validate`:
//! which calls go to which, what each is told, and what a refusal asks of
//! the agent.
//!
//! They review calls that would run (after the permission decision),
//! only those that change what they know:
//!
//! - `claude-md-validate`: a `Write`, `Edit` or `MultiEdit` of a file
//!   named `CLAUDE.md` or `CLAUDE.local.md`, wherever it is;
//! - `plan-validate`: a `Write`, `Edit` or `MultiEdit` of a `.md` file in
//!   Claude Code's plans directory (`$CLAUDE_CONFIG_DIR/plans`, else
//!   `~/.claude/plans`), and `ExitPlanMode`;
//! - `style-drift`: an `Edit` or `MultiEdit` of a file in the workspace
//!   (the working directory and the additional directories), or a `Write`
//!   over an existing one.
//!
//! A call goes to one validator at most, in that order. The match
//! ([`validation_for`]) looks at the tool name first: every other call
//! costs a string comparison, and a path is resolved only for the three
//! file tools when a validator is on.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tascer_core::ToolCall;
use tokio::io::AsyncReadExt;

use super::{ReviewerKind, ReviewersConfig};
use crate::permissions::paths::{canonicalize, is_within};

/// The file names `claude-md-validate` checks.
pub const CLAUDE_MD_NAMES: &[&str] = &["CLAUDE.md", "CLAUDE.local.md"];

/// Most bytes of an existing file read for a validator (16 KiB).
pub const FILE_READ_LIMIT: usize = 16 * 1024;

/// The file tools a validator may review.
const FILE_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit"];

/// A call a validator reviews.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Validation {
    /// Which validator.
    pub kind: ReviewerKind,
    /// The file whose current content the validator is shown (canonical):
    /// the file the call changes, or — for an `ExitPlanMode` without a
    /// `plan` — the newest plan file. `None` for none.
    pub file: Option<PathBuf>,
}

/// Where the match looks: the user's home (for `~`), the canonical plans
/// directory, and the workspace's canonical directories (asked for only
/// when `style-drift` needs them).
pub struct Places<'a> {
    /// The user's home directory.
    pub home: Option<&'a Path>,
    /// Claude Code's plans directory, canonical.
    pub plans_dir: Option<&'a Path>,
    /// The working directory and the additional directories, canonical.
    pub working_dirs: &'a dyn Fn() -> Vec<PathBuf>,
}

impl std::fmt::Debug for Places<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Places")
            .field("home", &self.home)
            .field("plans_dir", &self.plans_dir)
            .finish_non_exhaustive()
    }
}

/// True for the tools a validator may review: `Write`, `Edit`,
/// `MultiEdit`, `ExitPlanMode` (the first, cheap test).
pub fn may_change(tool: &str) -> bool {
    tool == "ExitPlanMode" || FILE_TOOLS.contains(&tool)
}

/// The validator `call` goes to, if any is on and matches (module docs).
pub fn validation_for(
    config: &ReviewersConfig,
    call: &ToolCall,
    places: &Places<'_>,
) -> Option<Validation> {
    let tool = call.tool_name.as_str();
    if tool == "ExitPlanMode" {
        config.plan_validate.as_ref()?;
        let has_plan = call
            .input
            .get("plan")
            .and_then(Value::as_str)
            .is_some_and(|p| !p.trim().is_empty());
        let file = match has_plan {
            true => None,
            false => places.plans_dir.and_then(newest_plan),
        };
        return Some(Validation {
            kind: ReviewerKind::PlanValidate,
            file,
        });
    }
    if !FILE_TOOLS.contains(&tool) || !config.validates_changes() {
        return None;
    }
    let raw = call.input.get("file_path").and_then(Value::as_str)?;
    let path = canonicalize(Path::new(raw), &call.cwd, places.home);
    let named = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| CLAUDE_MD_NAMES.contains(&n))
    };
    let found = |kind| {
        Some(Validation {
            kind,
            file: Some(path.clone()),
        })
    };
    if config.claude_md_validate.is_some() && (named(Path::new(raw)) || named(&path)) {
        return found(ReviewerKind::ClaudeMdValidate);
    }
    if config.plan_validate.is_some()
        && path.extension().is_some_and(|e| e == "md")
        && places
            .plans_dir
            .is_some_and(|d| is_within(&path, d) && path != d)
    {
        return found(ReviewerKind::PlanValidate);
    }
    if config.style_drift.is_some()
        && (tool != "Write" || path.is_file())
        && (places.working_dirs)().iter().any(|d| is_within(&path, d))
    {
        return found(ReviewerKind::StyleDrift);
    }
    None
}

/// The most recently modified `.md` file directly in `plans_dir`.
fn newest_plan(plans_dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(plans_dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
            Some((meta.modified().ok()?, e.path()))
        })
        .max()
        .map(|(_, path)| path)
}

/// The start of a file as a validator sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileText {
    /// Its text (invalid UTF-8 replaced), at most [`FILE_READ_LIMIT`]
    /// bytes of it.
    pub text: String,
    /// True when the file is longer than what was read.
    pub truncated: bool,
}

/// Reads at most [`FILE_READ_LIMIT`] bytes of `path`; `None` when it
/// cannot be read (a new file, a directory, no permission) — the call is
/// reviewed without it.
pub async fn read_capped(path: &Path) -> Option<FileText> {
    let file = tokio::fs::File::open(path).await.ok()?;
    let mut bytes = Vec::with_capacity(4096);
    let limit = u64::try_from(FILE_READ_LIMIT).unwrap_or(u64::MAX) + 1;
    file.take(limit).read_to_end(&mut bytes).await.ok()?;
    let truncated = bytes.len() > FILE_READ_LIMIT;
    bytes.truncate(FILE_READ_LIMIT);
    Some(FileText {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        truncated,
    })
}

/// What the validator `kind` is asked (the middle of its system prompt);
/// `None` for the other reviewers.
pub(super) fn task(kind: ReviewerKind) -> Option<&'static str> {
    Some(match kind {
        ReviewerKind::PlanValidate => {
            "An AI coding agent wrote a plan for the user's request (Claude Code's plan mode) \
             and is about to save it or present it. Compare the plan with the user's request \
             and the recent conversation. Answer aligned when the plan does what was asked: \
             every step serves the request and it keeps to what the user said (scope, \
             constraints, choices they made). Answer drift when it departs from the request: \
             it leaves out something asked for, does something else or more than asked \
             (unrequested features, rewrites, refactors, migrations), or ignores a constraint \
             the user gave. Then the reason names what in the plan departs and what the user \
             asked instead."
        }
        ReviewerKind::StyleDrift => {
            "An AI coding agent is about to change a file in the user's project. You see the \
             change and the user's request. Answer focused when every part of the change \
             serves the request (edits the requested work needs count, such as renaming what \
             the user asked to rename). Answer drift when the change also makes cosmetic edits \
             the user did not ask for: reformatting or re-indenting code it does not otherwise \
             change, renaming identifiers, reordering imports, functions or other items, \
             rewriting or removing comments, changing quotes, whitespace or blank lines. Then \
             the reason names those cosmetic edits."
        }
        ReviewerKind::ClaudeMdValidate => {
            "An AI coding agent is about to change a CLAUDE.md file: instructions Claude Code \
             loads into every session. You see the file's current content, the change and the \
             user's request. Check the change against the file's own conventions: it fits the \
             existing structure and headings (new content under a fitting heading, in the \
             same list and heading style), matches the file's tone and brevity (short \
             instructions, no long prose, logs or transcripts), does not contradict an \
             existing instruction without replacing it, and holds no secrets (keys, tokens, \
             passwords). A change the user explicitly asked for may restructure the file; a \
             new file has no conventions yet, so only brevity, clarity and no secrets count. \
             Answer conforms when the change follows them; violates otherwise, with a reason \
             naming what to fix."
        }
        _ => return None,
    })
}

/// The reason a validator's `drift`/`violates` refuses the call with: its
/// own reason and what the agent must do instead (the model reads it
/// after `denied by the <name> reviewer: `).
pub(super) fn refusal(kind: ReviewerKind, reason: &str, file: Option<&Path>) -> String {
    let reason = reason.trim_end_matches('.');
    match kind {
        ReviewerKind::PlanValidate => format!(
            "the plan departs from the user's request: {reason}. Revise the plan so it does what \
             the user asked — no more, no less — and keeps to what they said, then present it \
             again."
        ),
        ReviewerKind::StyleDrift => format!(
            "the edit makes cosmetic changes the user did not ask for: {reason}. Redo the edit \
             without the unrequested cosmetic changes (reformatting, renames, reordering, \
             comment or whitespace rewrites): change only what the request needs."
        ),
        _ => format!(
            "the change to {} does not follow the file's own conventions: {reason}. Rewrite it \
             to fit the file's structure, headings and tone, keep it brief, do not contradict \
             its existing instructions and never put secrets in it.",
            file.and_then(Path::file_name)
                .map_or("CLAUDE.md".into(), |n| n.to_string_lossy())
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::reviewers::{FailMode, ReviewerConfig};

    fn on() -> Option<ReviewerConfig> {
        Some(ReviewerConfig {
            model: None,
            timeout: Duration::from_secs(1),
            fail_mode: FailMode::Open,
            cache_ttl: Duration::ZERO,
            context_messages: 2,
            max_blocks: 1,
        })
    }

    fn all_on() -> ReviewersConfig {
        ReviewersConfig {
            plan_validate: on(),
            style_drift: on(),
            claude_md_validate: on(),
            ..Default::default()
        }
    }

    fn call(cwd: &Path, tool: &str, input: Value) -> ToolCall {
        ToolCall {
            tool_name: tool.into(),
            input,
            tool_use_id: "t".into(),
            cwd: cwd.to_path_buf(),
            session_id: "s".into(),
        }
    }

    /// A workspace with a file, and a Claude directory with a plan.
    struct Fixture {
        _root: tempfile::TempDir,
        ws: PathBuf,
        plans: PathBuf,
        outside: PathBuf,
    }

    fn fixture() -> Fixture {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let ws = base.join("ws");
        let plans = base.join("claude/plans");
        let outside = base.join("elsewhere");
        for d in [&ws, &plans, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(ws.join("main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(outside.join("other.rs"), "x\n").unwrap();
        std::fs::write(plans.join("old.md"), "# Old plan\n").unwrap();
        Fixture {
            _root: root,
            ws,
            plans,
            outside,
        }
    }

    fn kind_of(config: &ReviewersConfig, f: &Fixture, c: &ToolCall) -> Option<ReviewerKind> {
        let ws = f.ws.clone();
        let dirs = move || vec![ws.clone()];
        let places = Places {
            home: None,
            plans_dir: Some(&f.plans),
            working_dirs: &dirs,
        };
        validation_for(config, c, &places).map(|v| v.kind)
    }

    #[test]
    fn each_change_goes_to_its_validator_and_other_calls_to_none() {
        let f = fixture();
        let cfg = all_on();
        let ws = &f.ws;
        let edit = |p: &Path| json!({"file_path": p, "old_string": "a", "new_string": "b"});
        let cases = [
            // CLAUDE.md anywhere, under either name, even in .claude/.
            (
                call(ws, "Edit", edit(&ws.join("CLAUDE.md"))),
                Some(ReviewerKind::ClaudeMdValidate),
            ),
            (
                call(
                    ws,
                    "Write",
                    json!({"file_path": ws.join(".claude/CLAUDE.md"), "content": "x"}),
                ),
                Some(ReviewerKind::ClaudeMdValidate),
            ),
            (
                call(
                    ws,
                    "MultiEdit",
                    json!({"file_path": f.outside.join("CLAUDE.local.md"), "edits": []}),
                ),
                Some(ReviewerKind::ClaudeMdValidate),
            ),
            // A plan file, written or edited; ExitPlanMode.
            (
                call(
                    ws,
                    "Write",
                    json!({"file_path": f.plans.join("new-plan.md"), "content": "# Plan"}),
                ),
                Some(ReviewerKind::PlanValidate),
            ),
            (
                call(ws, "Edit", edit(&f.plans.join("old.md"))),
                Some(ReviewerKind::PlanValidate),
            ),
            (
                call(ws, "ExitPlanMode", json!({"plan": "1. do it"})),
                Some(ReviewerKind::PlanValidate),
            ),
            // A workspace file edited (a relative path too), or written over.
            (
                call(ws, "Edit", edit(&ws.join("main.rs"))),
                Some(ReviewerKind::StyleDrift),
            ),
            (
                call(
                    ws,
                    "Edit",
                    json!({"file_path": "main.rs", "old_string": "a", "new_string": "b"}),
                ),
                Some(ReviewerKind::StyleDrift),
            ),
            (
                call(
                    ws,
                    "Write",
                    json!({"file_path": ws.join("main.rs"), "content": "fn main(){}"}),
                ),
                Some(ReviewerKind::StyleDrift),
            ),
            // Not reviewed: a new file, a file outside the workspace, a
            // text file in the plans directory, other tools.
            (
                call(
                    ws,
                    "Write",
                    json!({"file_path": ws.join("new.rs"), "content": "x"}),
                ),
                None,
            ),
            (call(ws, "Edit", edit(&f.outside.join("other.rs"))), None),
            (
                call(
                    ws,
                    "Write",
                    json!({"file_path": f.plans.join("notes.txt"), "content": "x"}),
                ),
                None,
            ),
            (
                call(ws, "Read", json!({"file_path": ws.join("CLAUDE.md")})),
                None,
            ),
            (
                call(ws, "Bash", json!({"command": "echo x > CLAUDE.md"})),
                None,
            ),
            (
                call(
                    ws,
                    "NotebookEdit",
                    json!({"notebook_path": ws.join("a.ipynb")}),
                ),
                None,
            ),
            (call(ws, "Edit", json!({"old_string": "a"})), None),
        ];
        for (c, expected) in &cases {
            assert_eq!(
                kind_of(&cfg, &f, c),
                *expected,
                "{} {}",
                c.tool_name,
                c.input
            );
        }
    }

    #[test]
    fn a_validator_that_is_off_is_never_matched_and_the_next_one_may_be() {
        let f = fixture();
        let md = call(
            &f.ws,
            "Edit",
            json!({"file_path": f.ws.join("CLAUDE.md"), "old_string": "a", "new_string": "b"}),
        );
        let plan = call(&f.ws, "ExitPlanMode", json!({"plan": "x"}));
        let only_style = ReviewersConfig {
            style_drift: on(),
            ..Default::default()
        };
        // Without claude-md-validate a CLAUDE.md in the workspace is just
        // a workspace file.
        assert_eq!(
            kind_of(&only_style, &f, &md),
            Some(ReviewerKind::StyleDrift)
        );
        assert_eq!(kind_of(&only_style, &f, &plan), None);
        let none = ReviewersConfig {
            tool_approve: on(),
            ..Default::default()
        };
        assert_eq!(kind_of(&none, &f, &md), None);
        assert_eq!(kind_of(&none, &f, &plan), None);
    }

    #[test]
    fn exit_plan_mode_without_a_plan_shows_the_newest_plan_file() {
        let f = fixture();
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(f.plans.join("newer.md"), "# Newer\n").unwrap();
        let ws = f.ws.clone();
        let dirs = move || vec![ws.clone()];
        let places = Places {
            home: None,
            plans_dir: Some(&f.plans),
            working_dirs: &dirs,
        };
        let bare = call(&f.ws, "ExitPlanMode", json!({}));
        let v = validation_for(&all_on(), &bare, &places).unwrap();
        assert_eq!(v.file, Some(f.plans.join("newer.md")));
        let with = call(&f.ws, "ExitPlanMode", json!({"plan": "1. x"}));
        assert_eq!(
            validation_for(&all_on(), &with, &places).unwrap().file,
            None
        );
    }

    #[tokio::test]
    async fn a_file_is_read_up_to_the_limit_and_an_unreadable_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.md");
        std::fs::write(&small, "# Title\n").unwrap();
        let read = read_capped(&small).await.unwrap();
        assert_eq!(read.text, "# Title\n");
        assert!(!read.truncated);
        let big = dir.path().join("big.md");
        std::fs::write(&big, "x".repeat(FILE_READ_LIMIT + 10)).unwrap();
        let read = read_capped(&big).await.unwrap();
        assert_eq!(read.text.len(), FILE_READ_LIMIT);
        assert!(read.truncated);
        assert_eq!(read_capped(&dir.path().join("missing.md")).await, None);
        assert_eq!(read_capped(dir.path()).await, None);
    }
}
