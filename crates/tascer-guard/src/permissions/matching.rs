//! Matching rules against a call.

use super::call::ToolCall;
use super::command_pattern::CommandMatch;
use super::facts::CallFacts;
use super::rule::{PermissionRule, RuleSpecifier};
use super::shell::SimpleCommand;

/// A deny or ask rule that applies to a call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hit<'a> {
    /// The rule.
    pub rule: &'a PermissionRule,
    /// True when it only might apply (run-time values decide).
    pub maybe: bool,
}

/// Commands that never do anything and need no allow rule.
fn is_noop(cmd: &SimpleCommand) -> bool {
    cmd.argv.len() == 1 && matches!(cmd.name(), Some(":" | "true" | "false"))
}

/// The first rule of `rules` that matches (or may match) the call, in the
/// loose sense used for deny and ask lists.
pub(crate) fn first_hit<'a>(
    rules: &'a [PermissionRule],
    call: &ToolCall,
    facts: &CallFacts,
) -> Option<Hit<'a>> {
    let mut maybe = None;
    for rule in rules.iter().filter(|r| r.applies_to(&call.tool_name)) {
        match loose_match(rule, call, facts) {
            CommandMatch::Yes => return Some(Hit { rule, maybe: false }),
            CommandMatch::Maybe if maybe.is_none() => maybe = Some(Hit { rule, maybe: true }),
            _ => {}
        }
    }
    maybe
}

fn loose_match(rule: &PermissionRule, call: &ToolCall, facts: &CallFacts) -> CommandMatch {
    match &rule.specifier {
        RuleSpecifier::Any => CommandMatch::Yes,
        RuleSpecifier::Command(pattern) => {
            let Some(analysis) = &facts.shell else {
                return CommandMatch::Maybe;
            };
            let mut result = CommandMatch::No;
            for cmd in &analysis.commands {
                match pattern.matches(cmd, true) {
                    CommandMatch::Yes => return CommandMatch::Yes,
                    CommandMatch::Maybe => result = CommandMatch::Maybe,
                    CommandMatch::No => {}
                }
            }
            result
        }
        RuleSpecifier::Path(pattern) => {
            let home = facts.home.as_deref();
            let hit = facts.paths.iter().any(|p| {
                pattern.matches(&p.canonical, &call.cwd, home)
                    || pattern.matches(&p.lexical, &call.cwd, home)
                    || (p.is_dir && pattern.matches(&p.canonical.join("_"), &call.cwd, home))
            });
            if hit {
                CommandMatch::Yes
            } else {
                CommandMatch::No
            }
        }
        RuleSpecifier::Domain(domain) => match &facts.host {
            Some(host) => bool_match(domain_matches(domain, host)),
            None => CommandMatch::Maybe,
        },
        RuleSpecifier::Content(content) => bool_match(content_matches(content, call)),
    }
}

fn bool_match(b: bool) -> CommandMatch {
    if b {
        CommandMatch::Yes
    } else {
        CommandMatch::No
    }
}

/// The result of checking allow rules.
#[derive(Debug)]
pub(crate) enum AllowCheck<'a> {
    /// Allowed by these rules.
    Allowed(Vec<&'a PermissionRule>),
    /// Not allowed; for Bash, the simple commands no rule allowed.
    NotAllowed(Vec<SimpleCommand>),
}

/// Checks allow rules strictly: a Bash call is allowed only when it was
/// fully resolved and every simple command is allowed by some rule; a file
/// call only when every path it touches is allowed.
pub(crate) fn allowed_by<'a>(
    rules: &'a [PermissionRule],
    call: &ToolCall,
    facts: &CallFacts,
) -> AllowCheck<'a> {
    let applicable: Vec<&PermissionRule> = rules
        .iter()
        .filter(|r| r.applies_to(&call.tool_name))
        .collect();
    if let Some(whole) = applicable.iter().find(|r| r.is_whole_tool()) {
        return AllowCheck::Allowed(vec![whole]);
    }
    if let Some(analysis) = &facts.shell {
        let mut used = Vec::new();
        let mut missing = Vec::new();
        for cmd in &analysis.commands {
            let found = applicable.iter().find(|r| match &r.specifier {
                RuleSpecifier::Command(p) => p.matches(cmd, false) == CommandMatch::Yes,
                _ => false,
            });
            match found {
                Some(r) => used.push(*r),
                None if is_noop(cmd) => {}
                None => missing.push(cmd.clone()),
            }
        }
        if missing.is_empty() && !used.is_empty() && analysis.is_fully_resolved() {
            used.dedup_by(|a, b| std::ptr::eq(*a, *b));
            return AllowCheck::Allowed(used);
        }
        return AllowCheck::NotAllowed(missing);
    }
    for rule in applicable {
        let ok = match &rule.specifier {
            RuleSpecifier::Path(pattern) => {
                !facts.paths.is_empty()
                    && facts
                        .paths
                        .iter()
                        .all(|p| pattern.matches(&p.canonical, &call.cwd, facts.home.as_deref()))
            }
            RuleSpecifier::Domain(domain) => facts
                .host
                .as_deref()
                .is_some_and(|h| domain_matches(domain, h)),
            RuleSpecifier::Content(content) => content_matches(content, call),
            RuleSpecifier::Any => true,
            RuleSpecifier::Command(_) => false,
        };
        if ok {
            return AllowCheck::Allowed(vec![rule]);
        }
    }
    AllowCheck::NotAllowed(Vec::new())
}

fn domain_matches(domain: &str, host: &str) -> bool {
    match domain.strip_prefix("*.") {
        Some(parent) => host == parent || host.ends_with(&format!(".{parent}")),
        None => host == domain,
    }
}

fn content_matches(content: &str, call: &ToolCall) -> bool {
    let keys: &[&str] = match call.tool_name.as_str() {
        "Agent" | "Task" => &["subagent_type"],
        "Skill" => &["skill", "name", "command"],
        "WebSearch" => &["query"],
        _ => &[],
    };
    keys.iter().any(|k| call.input_str(k) == Some(content))
}
