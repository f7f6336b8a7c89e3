//! The default system prompt and the environment block every session's
//! prompt carries, whatever prompt the caller supplies (as Claude Code
//! appends its environment section to a replaced system prompt).

use std::path::Path;
use std::process::Command;

/// How Tascer's default prompt asks the model to work (the environment
/// block follows it).
const INSTRUCTIONS: &str = "You are Tascer, an agent that completes software tasks with the tools \
     you are given.\n\
     Use the tools to inspect and change files and to run commands; do not guess at file \
     contents. Keep going until the task is done, then reply with a short summary.\n\
     Every tool call is checked against the session's permissions and recorded.";

/// At most this many lines of `git status --short` go into the block.
const MAX_STATUS_LINES: usize = 40;

/// Tascer's default system prompt for a session in `cwd`: how to work, and
/// the environment (working directory, git, platform, date), as Claude
/// Code's prompt states it.
pub fn default_system_prompt(cwd: &Path, today: &str) -> String {
    format!("{INSTRUCTIONS}\n\n{}", environment_block(cwd, today, None))
}

/// The session's system prompt before memory files: the caller's prompt
/// (or Tascer's instructions), then always the environment block, with the
/// model when it is known.
pub(crate) fn session_system_prompt(
    prompt: &crate::SystemPrompt,
    cwd: &Path,
    today: &str,
    model: &str,
) -> String {
    let env = environment_block(cwd, today, Some(model));
    match prompt {
        crate::SystemPrompt::Default => format!("{INSTRUCTIONS}\n\n{env}"),
        crate::SystemPrompt::Replace(text) if text.trim().is_empty() => env,
        crate::SystemPrompt::Replace(text) => format!("{text}\n\n{env}"),
        crate::SystemPrompt::Append(text) => format!("{INSTRUCTIONS}\n\n{env}\n\n{text}"),
    }
}

/// The environment block: working directory, whether it is a git
/// repository (with its branch and short status), platform, OS version,
/// today's date and, when given, the model.
pub fn environment_block(cwd: &Path, today: &str, model: Option<&str>) -> String {
    let git = git_state(cwd);
    let mut out = format!(
        "<env>\n\
         Working directory: {cwd}\n\
         Is directory a git repo: {repo}\n\
         Platform: {os}\n\
         OS Version: {version}\n\
         Today's date: {today}\n\
         </env>",
        cwd = cwd.display(),
        repo = if git.is_some() { "Yes" } else { "No" },
        os = std::env::consts::OS,
        version = os_version(),
    );
    if let Some(model) = model.filter(|m| !m.is_empty()) {
        out.push_str(&format!("\nYou are powered by the model {model}."));
    }
    if let Some(Some(status)) = git {
        out.push_str(
            "\n\ngitStatus: This is the git status at the start of the conversation. Note that \
             this status is a snapshot in time, and will not update during the conversation.\n",
        );
        out.push_str(&status);
    }
    out
}

/// `None` outside a git repository; `Some(None)` inside one when `git`
/// could not say more; else the branch and short status.
fn git_state(cwd: &Path) -> Option<Option<String>> {
    if !cwd.ancestors().any(|d| d.join(".git").exists()) {
        return None;
    }
    let output = Command::new("git")
        .arg("-C")
        .arg(cwd)
        .args(["--no-optional-locks", "status", "--short", "--branch"])
        .stdin(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(Some(describe_status(&String::from_utf8_lossy(
        &output.stdout,
    ))))
}

/// `git status --short --branch` as the block states it: the branch, then
/// the changed files (at most [`MAX_STATUS_LINES`]), or `(clean)`.
fn describe_status(text: &str) -> String {
    let mut lines = text.lines();
    let branch = lines
        .next()
        .and_then(|l| l.strip_prefix("## "))
        .map(|b| b.strip_prefix("No commits yet on ").unwrap_or(b))
        .map(|b| b.split("...").next().unwrap_or(b).trim().to_string())
        .unwrap_or_else(|| "(unknown)".to_string());
    let changes: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
    let mut out = format!("Current branch: {branch}\n\nStatus:\n");
    if changes.is_empty() {
        out.push_str("(clean)");
    } else {
        let shown = changes.len().min(MAX_STATUS_LINES);
        out.push_str(&changes[..shown].join("\n"));
        if changes.len() > shown {
            out.push_str(&format!("\n… and {} more", changes.len() - shown));
        }
    }
    out
}

/// The kernel's name and release (`Linux 6.1.0`), or the OS family.
fn os_version() -> String {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|r| format!("Linux {}", r.trim()))
        .or_else(|| {
            Command::new("uname")
                .arg("-sr")
                .stdin(std::process::Stdio::null())
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        });
    release
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| std::env::consts::OS.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SystemPrompt;

    #[test]
    fn prompt_names_the_working_directory_and_git_state() {
        let dir = std::env::temp_dir();
        let prompt = default_system_prompt(&dir, "2026-01-01");
        assert!(prompt.contains(&format!("Working directory: {}", dir.display())));
        assert!(prompt.contains("Today's date: 2026-01-01"));
        assert!(prompt.contains("Is directory a git repo:"));
        assert!(prompt.contains("OS Version: "));
    }

    #[test]
    fn a_replaced_or_empty_prompt_still_gets_the_environment() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let empty = session_system_prompt(
            &SystemPrompt::Replace(String::new()),
            dir.path(),
            "2026-01-01",
            "m-1",
        );
        assert!(empty.starts_with("<env>\nWorking directory: "), "{empty}");
        assert!(empty.contains("Is directory a git repo: No"));
        assert!(empty.contains("You are powered by the model m-1."));
        assert!(!empty.contains("You are Tascer"));
        let mine = session_system_prompt(
            &SystemPrompt::Replace("Be brief.".into()),
            dir.path(),
            "2026-01-01",
            "m-1",
        );
        assert!(mine.starts_with("Be brief.\n\n<env>"), "{mine}");
    }

    #[test]
    fn git_status_names_the_branch_and_caps_the_files() {
        let text = "## main...origin/main [ahead 1]\n M a.rs\n?? b.rs\n";
        assert_eq!(
            describe_status(text),
            "Current branch: main\n\nStatus:\n M a.rs\n?? b.rs"
        );
        assert_eq!(
            describe_status("## No commits yet on fresh\n"),
            "Current branch: fresh\n\nStatus:\n(clean)"
        );
        assert_eq!(
            describe_status("## topic\n"),
            "Current branch: topic\n\nStatus:\n(clean)"
        );
        let many: String = (0..50).map(|i| format!("?? f{i}\n")).collect();
        let out = describe_status(&format!("## x\n{many}"));
        assert!(out.ends_with("… and 10 more"), "{out}");
    }
}
