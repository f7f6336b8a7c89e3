//! `Bash(…)` specifiers: exact, legacy prefix (`:*`) and glob forms,
//! matched against one parsed simple command.

use super::shell::{self, SimpleCommand, base_name};
use super::wildcard::wildcard_match;

/// How a command specifier matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandMatch {
    /// It matches.
    Yes,
    /// It does not.
    No,
    /// It might, depending on values only known at run time.
    Maybe,
}

/// A parsed `Bash(…)` specifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandPattern {
    /// `Bash`, `Bash()`, `Bash(*)`: every command.
    Any,
    /// `Bash(git status)`: exactly this argv.
    Exact(Vec<String>),
    /// `Bash(npm run test:*)`: argv starting with these words. The last
    /// word also matches a word that continues it after a `:`
    /// (`test` matches `test:unit`).
    Prefix(Vec<String>),
    /// `Bash(git * main)`: a `*` wildcard over the argv joined by spaces.
    Glob(String),
}

impl CommandPattern {
    /// Parses the text between the parentheses.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let spec = spec.trim();
        if spec.is_empty() || spec == "*" {
            return Ok(CommandPattern::Any);
        }
        if let Some(prefix) = spec.strip_suffix(":*") {
            let words = literal_words(prefix)?;
            if words.is_empty() {
                return Err("empty prefix before `:*`".into());
            }
            return Ok(CommandPattern::Prefix(words));
        }
        if spec.contains('*') {
            let normalized = spec.split_whitespace().collect::<Vec<_>>().join(" ");
            return Ok(CommandPattern::Glob(normalized));
        }
        Ok(CommandPattern::Exact(literal_words(spec)?))
    }

    /// Matches one simple command. With `loose`, a command named by a path
    /// (`/bin/rm`) is also tried under its base name (`rm`) and under its
    /// [aliases](SimpleCommand::aliases) (`nc.openbsd` as `nc`, a symlink
    /// under its target's name) — used for deny and ask rules; allow rules
    /// match the name as written.
    pub fn matches(&self, cmd: &SimpleCommand, loose: bool) -> CommandMatch {
        if *self == CommandPattern::Any {
            return CommandMatch::Yes;
        }
        let words: Vec<(Option<String>, bool)> = cmd
            .argv
            .iter()
            .map(|w| (w.literal.then(|| w.text.clone()), w.glob))
            .collect();
        let mut best = self.match_words(&words);
        if !loose || best == CommandMatch::Yes {
            return best;
        }
        let Some(Some(first)) = words.first().map(|w| w.0.clone()) else {
            return best;
        };
        let mut names: Vec<String> = cmd.aliases.clone();
        if first.contains('/') {
            names.push(base_name(&first).to_string());
        }
        for name in names {
            let mut alt = words.clone();
            alt[0].0 = Some(name);
            match self.match_words(&alt) {
                CommandMatch::Yes => return CommandMatch::Yes,
                CommandMatch::Maybe => best = CommandMatch::Maybe,
                CommandMatch::No => {}
            }
        }
        best
    }

    fn match_words(&self, words: &[(Option<String>, bool)]) -> CommandMatch {
        match self {
            CommandPattern::Any => CommandMatch::Yes,
            CommandPattern::Exact(expected) => {
                for (i, (w, _)) in words.iter().enumerate() {
                    match (w, expected.get(i)) {
                        (None, _) => return CommandMatch::Maybe,
                        (Some(_), None) => return CommandMatch::No,
                        (Some(a), Some(b)) if a != b => return CommandMatch::No,
                        _ => {}
                    }
                }
                if words.len() == expected.len() {
                    CommandMatch::Yes
                } else {
                    CommandMatch::No
                }
            }
            CommandPattern::Prefix(prefix) => {
                for (i, p) in prefix.iter().enumerate() {
                    let last = i + 1 == prefix.len();
                    match words.get(i) {
                        None => return CommandMatch::No,
                        Some((None, _)) => return CommandMatch::Maybe,
                        Some((Some(w), _)) => {
                            let ok = w == p
                                || (last
                                    && w.strip_prefix(p.as_str())
                                        .is_some_and(|rest| rest.starts_with(':')));
                            if !ok {
                                return CommandMatch::No;
                            }
                        }
                    }
                }
                CommandMatch::Yes
            }
            CommandPattern::Glob(pattern) => {
                if let Some(dynamic) = words.iter().position(|w| w.0.is_none()) {
                    // Only a Maybe when the known words before the first
                    // run-time one could still start a match.
                    let known = words[..dynamic]
                        .iter()
                        .filter_map(|w| w.0.as_deref())
                        .collect::<Vec<_>>()
                        .join(" ");
                    let fixed = pattern.split('*').next().unwrap_or("");
                    let n = known.len().min(fixed.len());
                    return if known.as_bytes()[..n] == fixed.as_bytes()[..n] {
                        CommandMatch::Maybe
                    } else {
                        CommandMatch::No
                    };
                }
                let joined = words
                    .iter()
                    .filter_map(|w| w.0.as_deref())
                    .collect::<Vec<_>>()
                    .join(" ");
                if wildcard_match(pattern, &joined) {
                    CommandMatch::Yes
                } else {
                    CommandMatch::No
                }
            }
        }
    }
}

/// Splits a specifier into literal argv words with shell quoting rules.
fn literal_words(spec: &str) -> Result<Vec<String>, String> {
    let analysis = shell::analyze(spec);
    if !analysis.is_fully_resolved() {
        return Err(format!(
            "command pattern must be literal: {}",
            analysis.unresolved.join("; ")
        ));
    }
    match analysis.commands.as_slice() {
        [one] if one.via.is_empty() => Ok(one.argv.iter().map(|w| w.text.clone()).collect()),
        [] => Ok(Vec::new()),
        _ => Err("command pattern must be a single literal simple command (no substitutions, lists or pipes)".into()),
    }
}
