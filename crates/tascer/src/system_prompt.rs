//! The default system prompt.

use std::path::Path;

/// Tascer's default system prompt for a session in `cwd`: how to work, and
/// the environment (working directory, git, platform, date), as Claude
/// Code's prompt states it.
pub fn default_system_prompt(cwd: &Path, today: &str) -> String {
    let git = if is_git_repo(cwd) { "Yes" } else { "No" };
    format!(
        "You are Tascer, an agent that completes software tasks with the tools you are given.\n\
         Use the tools to inspect and change files and to run commands; do not guess at file \
         contents. Keep going until the task is done, then reply with a short summary.\n\
         Every tool call is checked against the session's permissions and recorded.\n\
         \n\
         <env>\n\
         Working directory: {cwd}\n\
         Is directory a git repo: {git}\n\
         Platform: {os}\n\
         Today's date: {today}\n\
         </env>",
        cwd = cwd.display(),
        os = std::env::consts::OS,
    )
}

fn is_git_repo(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_names_the_working_directory_and_git_state() {
        let dir = std::env::temp_dir();
        let prompt = default_system_prompt(&dir, "2026-01-01");
        assert!(prompt.contains(&format!("Working directory: {}", dir.display())));
        assert!(prompt.contains("Today's date: 2026-01-01"));
        assert!(prompt.contains("Is directory a git repo:"));
    }
}
