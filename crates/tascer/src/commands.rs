//! Slash commands: `/name args` prompts. Custom commands are Markdown
//! files in `.claude/commands/` (project) and `~/.claude/commands/` (user);
//! a file in a subdirectory gets a namespaced name (`git/commit.md` →
//! `/git:commit`). Built-in commands run in the session itself.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use tascer_guard::settings::SettingsSource;

use crate::error::Error;
use crate::frontmatter::{self, NameList};

/// The built-in commands a print-mode user needs, with what they do.
pub const BUILTIN_COMMANDS: &[(&str, &str)] = &[
    (
        "clear",
        "Clear the conversation (the session goes on without its history)",
    ),
    (
        "compact",
        "Summarize the conversation to free context (optional: instructions for the summary)",
    ),
    (
        "context",
        "Show what the context holds: system prompt, memory files, tools, messages",
    ),
    ("cost", "Show the session's cost and token usage"),
];

/// Where a command file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandScope {
    /// `~/.claude/commands/`.
    User,
    /// `.claude/commands/` of the working directory.
    Project,
    /// A plugin's `commands/` (named `<plugin>:<name>`).
    Plugin,
}

/// A custom slash command.
#[derive(Debug, Clone, PartialEq)]
pub struct SlashCommand {
    /// Its name, without the slash (`review`, `git:commit`).
    pub name: String,
    /// What it does (frontmatter `description`, else the body's first line).
    pub description: String,
    /// How to pass arguments (frontmatter `argument-hint`).
    pub argument_hint: Option<String>,
    /// Permission rules allowed while the command runs (frontmatter
    /// `allowed-tools`).
    pub allowed_tools: Vec<String>,
    /// The model for the command's turn (frontmatter `model`).
    pub model: Option<String>,
    /// The prompt template.
    pub body: String,
    /// The file.
    pub path: PathBuf,
    /// Where it comes from.
    pub scope: CommandScope,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Meta {
    description: Option<String>,
    argument_hint: Option<serde_yaml_ng::Value>,
    #[serde(default)]
    allowed_tools: NameList,
    model: Option<String>,
}

/// Loads the commands of `.claude/commands/` under `cwd` (with the
/// `project` source) and of `user_dir/commands/` (with `user`). A project
/// command hides a user command of the same name.
pub fn load(
    cwd: &Path,
    user_dir: Option<&Path>,
    sources: &[SettingsSource],
) -> Result<Vec<SlashCommand>, Error> {
    let mut commands: Vec<SlashCommand> = Vec::new();
    if sources.contains(&SettingsSource::Project) {
        load_dir(
            &cwd.join(".claude").join("commands"),
            CommandScope::Project,
            &mut commands,
        )?;
    }
    if sources.contains(&SettingsSource::User)
        && let Some(dir) = user_dir
    {
        let mut user = Vec::new();
        load_dir(&dir.join("commands"), CommandScope::User, &mut user)?;
        user.retain(|u| !commands.iter().any(|c| c.name == u.name));
        commands.extend(user);
    }
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(commands)
}

/// The commands of a plugin's commands directory (or one `.md` file),
/// named `<plugin>:<name>` as Claude Code names them.
pub(crate) fn load_plugin(path: &Path, plugin: &str) -> Result<Vec<SlashCommand>, Error> {
    let mut commands = Vec::new();
    if path.is_file() {
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        commands.push(read_command(path, stem.into_owned(), CommandScope::Plugin)?);
    } else {
        load_dir(path, CommandScope::Plugin, &mut commands)?;
    }
    for command in &mut commands {
        command.name = format!("{plugin}:{}", command.name);
    }
    Ok(commands)
}

fn load_dir(dir: &Path, scope: CommandScope, out: &mut Vec<SlashCommand>) -> Result<(), Error> {
    for path in markdown_files(dir)? {
        let rel = path.strip_prefix(dir).unwrap_or(&path).with_extension("");
        let name = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(":");
        out.push(read_command(&path, name, scope)?);
    }
    Ok(())
}

/// The `.md` files under `dir`, recursively, sorted. A missing directory
/// has none.
pub(crate) fn markdown_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(Error::Definition(format!(
                    "cannot read the directory {}: {e}",
                    d.display()
                )));
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn read_command(path: &Path, name: String, scope: CommandScope) -> Result<SlashCommand, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::Definition(format!(
            "cannot read the slash command {}: {e}",
            path.display()
        ))
    })?;
    let (meta, body): (Meta, String) = frontmatter::parse(&text, path)?;
    let description = meta
        .description
        .unwrap_or_else(|| first_line(&body).to_string());
    Ok(SlashCommand {
        name,
        description,
        argument_hint: meta.argument_hint.map(|v| hint_text(&v)),
        allowed_tools: meta.allowed_tools.names().unwrap_or_default(),
        model: meta.model,
        body,
        path: path.to_path_buf(),
        scope,
    })
}

/// `argument-hint: [message]` is a YAML list; show it as written.
fn hint_text(value: &serde_yaml_ng::Value) -> String {
    match value {
        serde_yaml_ng::Value::String(s) => s.clone(),
        serde_yaml_ng::Value::Sequence(items) => items
            .iter()
            .map(|i| format!("[{}]", hint_text(i)))
            .collect::<Vec<_>>()
            .join(" "),
        other => serde_yaml_ng::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}

/// The first non-empty line of `text`, at most 100 characters.
pub(crate) fn first_line(text: &str) -> &str {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    let line = line.unwrap_or("");
    match line.char_indices().nth(100) {
        Some((i, _)) => &line[..i],
        None => line,
    }
}

impl SlashCommand {
    /// The prompt for `/name args`: `$ARGUMENTS` becomes all the arguments,
    /// `$1` … `$9` each one (quotes group words). A template that uses
    /// neither gets the arguments appended as `ARGUMENTS: …`.
    pub fn expand(&self, args: &str) -> String {
        let args = args.trim();
        let positional = split_args(args);
        let mut out = String::with_capacity(self.body.len() + args.len());
        let mut used = false;
        let mut rest = self.body.as_str();
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            if let Some(tail) = after.strip_prefix("ARGUMENTS") {
                out.push_str(args);
                used = true;
                rest = tail;
            } else if let Some(d) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
                let n = (d as usize) - ('0' as usize);
                out.push_str(positional.get(n - 1).map(String::as_str).unwrap_or(""));
                used = true;
                rest = &after[1..];
            } else {
                out.push('$');
                rest = after;
            }
        }
        out.push_str(rest);
        if !used && !args.is_empty() {
            out.push_str(&format!("\n\nARGUMENTS: {args}"));
        }
        out
    }
}

/// Whitespace-separated arguments; `"two words"` and `'two words'` are one.
fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            (None, c) => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(current);
    }
    out
}

/// `Some((name, args))` when `prompt` invokes a slash command: it starts
/// with `/` and a name of letters, digits, `-`, `_`, `.` or `:`. A prompt
/// like `/usr/bin/env is broken` is no command.
pub fn parse_invocation(prompt: &str) -> Option<(&str, &str)> {
    let rest = prompt.trim_start().strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let name = &rest[..end];
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    valid.then(|| (name, rest[end..].trim()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn command(body: &str) -> SlashCommand {
        SlashCommand {
            name: "t".into(),
            description: String::new(),
            argument_hint: None,
            allowed_tools: Vec::new(),
            model: None,
            body: body.into(),
            path: PathBuf::new(),
            scope: CommandScope::Project,
        }
    }

    #[test]
    fn arguments_are_substituted() {
        let c = command("Fix issue #$1 with priority $2: $ARGUMENTS ($3)");
        assert_eq!(
            c.expand(r#"123 "very high""#),
            "Fix issue #123 with priority very high: 123 \"very high\" ()"
        );
        assert_eq!(command("Cost: $5").expand(""), "Cost: ");
        assert_eq!(command("Price in $USD").expand(""), "Price in $USD");
        assert_eq!(
            command("Review the code.").expand("src/a.rs"),
            "Review the code.\n\nARGUMENTS: src/a.rs"
        );
    }

    #[test]
    fn invocations_are_recognised_but_paths_are_not() {
        assert_eq!(
            parse_invocation("/review src/a.rs now"),
            Some(("review", "src/a.rs now"))
        );
        assert_eq!(parse_invocation("  /git:commit"), Some(("git:commit", "")));
        assert_eq!(parse_invocation("/usr/bin/env is broken"), None);
        assert_eq!(parse_invocation("/ nothing"), None);
        assert_eq!(parse_invocation("no slash"), None);
    }
}
