//! [`ShellCommandPolicy`]: command rules with examples plus the built-in
//! dangerous-command checks, applied to every simple command of a `Bash`
//! call.

use std::path::Path;

use serde::Deserialize;
use tascer_core::Behavior;

use super::call::ToolCall;
use super::command_pattern::{CommandMatch, CommandPattern};
use super::danger::{self, Danger};
use super::error::PermissionError;
use super::facts::CallFacts;
use super::policy::{Policy, PolicyVerdict};
use super::sensitive::SensitivePatterns;
use super::shell::{self, ShellAnalysis};

/// One command rule of a shell policy.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandRule {
    /// The pattern, in `Bash(…)` specifier syntax (`git push:*`,
    /// `npm run *`, `make test`).
    pub pattern: String,
    /// What a matching command gets.
    pub decision: Behavior,
    /// Commands the rule must match (checked when loaded).
    pub match_examples: Vec<String>,
    /// Commands the rule must not match (checked when loaded).
    pub not_match_examples: Vec<String>,
    parsed: CommandPattern,
}

impl CommandRule {
    /// A rule without examples.
    pub fn new(pattern: &str, decision: Behavior) -> Result<Self, PermissionError> {
        let parsed = CommandPattern::parse(pattern).map_err(|reason| {
            PermissionError::Rule(super::error::RuleError::new(pattern, reason))
        })?;
        Ok(CommandRule {
            pattern: pattern.to_string(),
            decision,
            match_examples: Vec::new(),
            not_match_examples: Vec::new(),
            parsed,
        })
    }

    /// Adds examples and checks them.
    pub fn with_examples<S: Into<String>>(
        mut self,
        matching: impl IntoIterator<Item = S>,
        not_matching: impl IntoIterator<Item = S>,
    ) -> Result<Self, PermissionError> {
        self.match_examples = matching.into_iter().map(Into::into).collect();
        self.not_match_examples = not_matching.into_iter().map(Into::into).collect();
        self.validate()?;
        Ok(self)
    }

    /// Checks the examples.
    pub fn validate(&self) -> Result<(), PermissionError> {
        for ex in &self.match_examples {
            if self.matches_command(ex) != CommandMatch::Yes {
                return Err(PermissionError::Example {
                    rule: self.pattern.clone(),
                    example: ex.clone(),
                    problem: "should match but does not".into(),
                });
            }
        }
        for ex in &self.not_match_examples {
            if self.matches_command(ex) == CommandMatch::Yes {
                return Err(PermissionError::Example {
                    rule: self.pattern.clone(),
                    example: ex.clone(),
                    problem: "should not match but does".into(),
                });
            }
        }
        Ok(())
    }

    /// Matches a whole command string (any of its simple commands).
    pub fn matches_command(&self, command: &str) -> CommandMatch {
        self.matches_analysis(&shell::analyze(command))
    }

    fn matches_analysis(&self, analysis: &ShellAnalysis) -> CommandMatch {
        let mut result = CommandMatch::No;
        for cmd in &analysis.commands {
            match self.parsed.matches(cmd, self.decision != Behavior::Allow) {
                CommandMatch::Yes => return CommandMatch::Yes,
                CommandMatch::Maybe => result = CommandMatch::Maybe,
                CommandMatch::No => {}
            }
        }
        result
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConfigFile {
    #[serde(default = "yes", alias = "dangerous_defaults")]
    dangerous_defaults: bool,
    #[serde(default)]
    rules: Vec<ConfigRule>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigRule {
    pattern: String,
    decision: Behavior,
    #[serde(default, rename = "match")]
    match_examples: Vec<String>,
    #[serde(default, rename = "not_match", alias = "notMatch")]
    not_match_examples: Vec<String>,
}

/// Command rules and dangerous-command checks for `Bash` calls.
///
/// For one call: any simple command hitting a deny rule or a dangerous
/// deny check → deny; any hitting an ask rule or dangerous ask check, or
/// any part that cannot be resolved statically → ask; every simple command
/// allowed by an allow rule → allow; otherwise no opinion.
#[derive(Debug, Clone)]
pub struct ShellCommandPolicy {
    rules: Vec<CommandRule>,
    dangerous_defaults: bool,
    sensitive: Option<SensitivePatterns>,
}

impl Default for ShellCommandPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl ShellCommandPolicy {
    /// Dangerous-command checks on, no rules.
    pub fn new() -> Self {
        ShellCommandPolicy {
            rules: Vec::new(),
            dangerous_defaults: true,
            sensitive: Some(SensitivePatterns::default()),
        }
    }

    /// Sets the sensitive path patterns whose appearance as a command
    /// argument or redirection target makes the command ask (`None`: no
    /// check). Default: [`SensitivePatterns::default`].
    pub fn sensitive_paths(mut self, patterns: Option<SensitivePatterns>) -> Self {
        self.sensitive = patterns;
        self
    }

    /// Turns the built-in dangerous-command checks on or off.
    pub fn dangerous_defaults(mut self, on: bool) -> Self {
        self.dangerous_defaults = on;
        self
    }

    /// Adds a rule.
    pub fn rule(mut self, rule: CommandRule) -> Self {
        self.rules.push(rule);
        self
    }

    /// The rules.
    pub fn rules(&self) -> &[CommandRule] {
        &self.rules
    }

    /// Loads a policy from JSON:
    /// `{"dangerousDefaults": true, "rules": [{"pattern": "git push:*",
    /// "decision": "ask", "match": ["git push origin"], "not_match":
    /// ["git pull"]}]}`. Every example is checked; a failing one is an
    /// error naming the rule and the example.
    pub fn from_json(text: &str, origin: &str) -> Result<Self, PermissionError> {
        let config: ConfigFile =
            serde_json::from_str(text).map_err(|e| PermissionError::Config {
                origin: origin.to_string(),
                message: format!("line {} column {}: {e}", e.line(), e.column()),
            })?;
        let mut policy = ShellCommandPolicy::new().dangerous_defaults(config.dangerous_defaults);
        for r in config.rules {
            let rule = CommandRule::new(&r.pattern, r.decision)?
                .with_examples(r.match_examples, r.not_match_examples)?;
            policy.rules.push(rule);
        }
        Ok(policy)
    }

    /// Loads a policy file (see [`from_json`](Self::from_json)).
    pub fn from_file(path: &Path) -> Result<Self, PermissionError> {
        let text = std::fs::read_to_string(path).map_err(|e| PermissionError::Config {
            origin: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::from_json(&text, &path.display().to_string())
    }

    /// The verdict for an analysed command.
    pub fn verdict(&self, analysis: &ShellAnalysis) -> PolicyVerdict {
        let mut asks = Vec::new();
        for cmd in &analysis.commands {
            for rule in self.rules.iter().filter(|r| r.decision == Behavior::Deny) {
                match rule.parsed.matches(cmd, true) {
                    CommandMatch::Yes => {
                        return PolicyVerdict::Deny {
                            reason: format!(
                                "`{}` matches the denied command pattern `{}`",
                                cmd.display(),
                                rule.pattern
                            ),
                        };
                    }
                    CommandMatch::Maybe => asks.push(format!(
                        "`{}` may match the denied command pattern `{}`",
                        cmd.display(),
                        rule.pattern
                    )),
                    CommandMatch::No => {}
                }
            }
        }
        if self.dangerous_defaults {
            for finding in danger::findings(analysis) {
                match finding {
                    Danger::Deny(reason) => {
                        return PolicyVerdict::Deny {
                            reason: format!("dangerous command: {reason}"),
                        };
                    }
                    Danger::Ask(reason) => asks.push(format!("dangerous command: {reason}")),
                }
            }
        }
        if let Some(sensitive) = &self.sensitive {
            asks.extend(sensitive_arguments(analysis, sensitive));
        }
        for cmd in &analysis.commands {
            for rule in self.rules.iter().filter(|r| r.decision == Behavior::Ask) {
                if rule.parsed.matches(cmd, true) != CommandMatch::No {
                    asks.push(format!(
                        "`{}` matches the command pattern `{}` that always asks",
                        cmd.display(),
                        rule.pattern
                    ));
                }
            }
        }
        if !analysis.is_fully_resolved() {
            asks.push(format!(
                "the command cannot be fully resolved: {}",
                analysis.unresolved.join("; ")
            ));
        }
        if !asks.is_empty() {
            return PolicyVerdict::Ask {
                reason: asks.join("; "),
            };
        }
        let allow_rules: Vec<&CommandRule> = self
            .rules
            .iter()
            .filter(|r| r.decision == Behavior::Allow)
            .collect();
        if !allow_rules.is_empty()
            && !analysis.commands.is_empty()
            && analysis.commands.iter().all(|cmd| {
                allow_rules
                    .iter()
                    .any(|r| r.parsed.matches(cmd, false) == CommandMatch::Yes)
            })
        {
            return PolicyVerdict::Allow;
        }
        PolicyVerdict::Abstain
    }
}

/// Asks for every literal argument or redirection target that names a
/// sensitive path (`cat ~/.ssh/id_rsa`, `cp .env /tmp`, `> secrets.txt`).
fn sensitive_arguments(analysis: &ShellAnalysis, sensitive: &SensitivePatterns) -> Vec<String> {
    let mut asks = Vec::new();
    for cmd in &analysis.commands {
        let words = cmd.argv.iter().skip(1).chain(cmd.writes.iter());
        for word in words.filter(|w| w.literal) {
            let text = word
                .text
                .split_once('=')
                .map_or(word.text.as_str(), |(_, v)| v);
            if text.is_empty() {
                continue;
            }
            if let Some(pattern) = sensitive.matching(std::path::Path::new(text)) {
                asks.push(format!(
                    "`{}` touches `{text}`, which matches the sensitive pattern `{pattern}`",
                    cmd.display()
                ));
            }
        }
    }
    asks
}

impl Policy for ShellCommandPolicy {
    fn name(&self) -> &str {
        "shell-command"
    }

    fn check(&self, call: &ToolCall) -> PolicyVerdict {
        match call.command() {
            Some(command) => self.verdict(&shell::analyze(command)),
            None => PolicyVerdict::Abstain,
        }
    }

    fn check_with_facts(&self, call: &ToolCall, facts: &CallFacts) -> PolicyVerdict {
        match &facts.shell {
            Some(analysis) => self.verdict(analysis),
            None => self.check(call),
        }
    }
}
