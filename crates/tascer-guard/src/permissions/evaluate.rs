//! The static part of a decision: rules, policies and the mode, in the
//! order of Claude Code's evaluation (§4.2), without the callback.
//!
//! 1. deny rules → deny
//! 2. policy deny verdicts → deny
//! 3. ask rules (and deny rules that only *might* match, and code the
//!    analysis cannot see while there are Bash deny rules) → ask;
//!    `AskUserQuestion`/`ExitPlanMode` always ask
//! 4. policy ask verdicts → ask
//! 5. the mode: `bypassPermissions` allows; `plan` denies tools that change
//!    anything; `acceptEdits` allows edits (and `mkdir touch rm mv cp`)
//!    inside the working directories; `auto` allows edits and read-only
//!    shell commands inside them; read-only tools inside the working
//!    directories are allowed in every mode
//! 6. allow rules, then policy allow verdicts → allow
//! 7. otherwise ask

use std::path::{Path, PathBuf};

use tascer_core::Behavior;

use super::call::ToolCall;
use super::command_pattern::{CommandMatch, CommandPattern};
use super::decision::{DecisionSource, PermissionDecision};
use super::facts::CallFacts;
use super::matching::{AllowCheck, Hit, allowed_by, first_hit};
use super::mode::{PermissionMode, ToolClass};
use super::paths::{canonicalize, is_within};
use super::policy::{Policy, PolicyVerdict};
use super::rule::{PermissionRule, PermissionRules, RuleSpecifier};
use super::suggest::suggestions;

/// Everything the static evaluation needs.
pub(crate) struct Inputs<'a> {
    pub rules: &'a [&'a PermissionRules],
    pub policies: &'a [std::sync::Arc<dyn Policy>],
    pub mode: PermissionMode,
    pub working_dirs: &'a [PathBuf],
    pub home: Option<&'a Path>,
}

fn rule_source(rule: &PermissionRule) -> DecisionSource {
    DecisionSource::Rule {
        rule: rule.raw.clone(),
        source_file: rule.origin.source_file.clone(),
    }
}

/// The rule lists of every source, by behavior.
struct RuleLists {
    deny: Vec<PermissionRule>,
    ask: Vec<PermissionRule>,
    allow: Vec<PermissionRule>,
}

impl RuleLists {
    fn of(inp: &Inputs<'_>) -> Self {
        let list = |b: Behavior| {
            inp.rules
                .iter()
                .flat_map(move |r| r.list(b).iter())
                .cloned()
                .collect()
        };
        RuleLists {
            deny: list(Behavior::Deny),
            ask: list(Behavior::Ask),
            allow: list(Behavior::Allow),
        }
    }
}

/// Each policy's verdict on a call, by policy name.
type Verdicts<'a> = Vec<(&'a str, PolicyVerdict)>;

/// Runs steps 1–7, in order: the first step that decides, decides.
pub(crate) fn evaluate(inp: &Inputs<'_>, call: &ToolCall, facts: &CallFacts) -> PermissionDecision {
    let rules = RuleLists::of(inp);
    // 1. deny rules (a rule that only might match waits for step 3)
    let maybe_deny = match first_hit(&rules.deny, call, facts) {
        Some(hit) if !hit.maybe => {
            return PermissionDecision::new(
                Behavior::Deny,
                rule_source(hit.rule),
                format!("denied by rule `{}`", hit.rule.raw),
            );
        }
        other => other,
    };
    // 2. policy denials (the policies are asked only past step 1)
    let verdicts: Verdicts<'_> = inp
        .policies
        .iter()
        .map(|p| (p.name(), p.check_with_facts(call, facts)))
        .collect();
    if let Some(d) = policy_deny(&verdicts) {
        return d;
    }
    // 3. ask rules
    if let Some(d) = ask_rules(maybe_deny, &rules, call, facts) {
        return d;
    }
    // 4. policy asks
    if let Some(d) = policy_ask(&verdicts) {
        return d;
    }
    // 5. mode
    if let Some(d) = by_mode(inp, call, facts) {
        return d;
    }
    // 6. allow rules, policy allows
    let missing = match allow_rules(&rules.allow, call, facts) {
        Ok(d) => return d,
        Err(missing) => missing,
    };
    if let Some(d) = policy_allow(&verdicts) {
        return d;
    }
    // 7. ask
    ask_by_default(call, facts, &missing)
}

/// Step 2: the first policy that denies.
fn policy_deny(verdicts: &Verdicts<'_>) -> Option<PermissionDecision> {
    let (name, reason) = verdicts.iter().find_map(|(name, v)| match v {
        PolicyVerdict::Deny { reason } => Some((name, reason)),
        _ => None,
    })?;
    Some(PermissionDecision::new(
        Behavior::Deny,
        policy_source(name),
        reason.clone(),
    ))
}

/// Step 3: a deny rule that might match, code the analysis cannot see
/// while there are Bash deny rules, an ask rule, or a tool that always
/// needs the user.
fn ask_rules(
    maybe_deny: Option<Hit<'_>>,
    rules: &RuleLists,
    call: &ToolCall,
    facts: &CallFacts,
) -> Option<PermissionDecision> {
    if let Some(hit) = maybe_deny {
        return Some(with_suggestions(
            PermissionDecision::new(
                Behavior::Ask,
                rule_source(hit.rule),
                format!(
                    "the command may match the deny rule `{}` (parts of it are only known at run time)",
                    hit.rule.raw
                ),
            ),
            call,
            facts,
            &[],
        ));
    }
    if let Some(d) = opaque_code(&rules.deny, &rules.allow, facts) {
        return Some(d);
    }
    if let Some(hit) = first_hit(&rules.ask, call, facts) {
        return Some(with_suggestions(
            PermissionDecision::new(
                Behavior::Ask,
                rule_source(hit.rule),
                format!("rule `{}` requires confirmation", hit.rule.raw),
            ),
            call,
            facts,
            &[],
        ));
    }
    if matches!(call.tool_name.as_str(), "AskUserQuestion" | "ExitPlanMode") {
        return Some(PermissionDecision::new(
            Behavior::Ask,
            DecisionSource::Default,
            format!("{} always needs the user", call.tool_name),
        ));
    }
    None
}

/// Step 4: the first policy that asks. No allow rules are suggested:
/// they come at step 6, so none could allow the call (a person, a
/// callback or the policy's own settings can).
fn policy_ask(verdicts: &Verdicts<'_>) -> Option<PermissionDecision> {
    let (name, reason) = verdicts.iter().find_map(|(name, v)| match v {
        PolicyVerdict::Ask { reason } => Some((name, reason)),
        _ => None,
    })?;
    Some(PermissionDecision::new(
        Behavior::Ask,
        policy_source(name),
        reason.clone(),
    ))
}

/// Step 5: what the mode allows or denies; read-only tools inside the
/// working directories are allowed in every mode.
fn by_mode(inp: &Inputs<'_>, call: &ToolCall, facts: &CallFacts) -> Option<PermissionDecision> {
    let mode_source = || DecisionSource::Mode {
        mode: inp.mode.to_string(),
    };
    let inside = || {
        facts
            .paths
            .iter()
            .all(|p| within_any(&p.canonical, inp.working_dirs))
    };
    match inp.mode {
        PermissionMode::BypassPermissions => {
            return Some(PermissionDecision::new(
                Behavior::Allow,
                mode_source(),
                "bypassPermissions mode",
            ));
        }
        PermissionMode::Plan if !facts.class.allowed_in_plan() => {
            return Some(PermissionDecision::new(
                Behavior::Deny,
                mode_source(),
                format!(
                    "plan mode: only read-only tools may run, `{}` is not one (finish planning with ExitPlanMode first)",
                    call.tool_name
                ),
            ));
        }
        PermissionMode::Auto => {
            if let Some(d) = by_auto_mode(inp, call, facts, mode_source()) {
                return Some(d);
            }
        }
        PermissionMode::AcceptEdits => {
            if facts.class == ToolClass::Edit && !facts.paths.is_empty() && inside() {
                return Some(PermissionDecision::new(
                    Behavior::Allow,
                    mode_source(),
                    "acceptEdits mode: file edit inside the working directories",
                ));
            }
            if fs_bash_within(call, facts, inp) {
                return Some(PermissionDecision::new(
                    Behavior::Allow,
                    mode_source(),
                    "acceptEdits mode: filesystem command inside the working directories",
                ));
            }
        }
        _ => {}
    }
    (facts.class == ToolClass::ReadOnly && inside()).then(|| {
        PermissionDecision::new(
            Behavior::Allow,
            mode_source(),
            "read-only tool inside the working directories",
        )
    })
}

/// Step 5 in `auto` mode: edits inside the working directories (not of
/// the files that configure git, Tascer or Claude Code: an edit there
/// could lift the profile or run a command later) and read-only shell
/// commands (see [`read_only`](super::read_only)) run;
/// whatever else reaches this step is left to the allow rules, then asks
/// (admission gives that ask to the reviewers, or refuses it).
fn by_auto_mode(
    inp: &Inputs<'_>,
    call: &ToolCall,
    facts: &CallFacts,
    source: DecisionSource,
) -> Option<PermissionDecision> {
    let inside = !facts.paths.is_empty()
        && facts
            .paths
            .iter()
            .all(|p| within_any(&p.canonical, inp.working_dirs) && !configures_tools(&p.canonical));
    if facts.class == ToolClass::Edit && inside {
        return Some(PermissionDecision::new(
            Behavior::Allow,
            source,
            "auto mode: file edit inside the working directories",
        ));
    }
    let shell = facts.shell.as_ref()?;
    super::read_only::is_read_only(shell, &call.cwd, inp.home, inp.working_dirs).then(|| {
        PermissionDecision::new(
            Behavior::Allow,
            source,
            "auto mode: read-only command inside the working directories",
        )
    })
}

/// Directories whose files configure what runs or what is allowed
/// (git's configuration and hooks, Tascer's and Claude Code's settings):
/// `auto` does not approve edits there on its own.
const CONFIGURING_DIRS: &[&str] = &[".git", ".tascer", ".claude"];

/// True when `path` is inside one of [`CONFIGURING_DIRS`].
fn configures_tools(path: &Path) -> bool {
    path.components().any(|c| {
        CONFIGURING_DIRS
            .iter()
            .any(|d| c.as_os_str() == std::ffi::OsStr::new(d))
    })
}

/// Step 6a: the allow rules that cover the call, or the simple commands
/// no allow rule covers.
fn allow_rules(
    allow: &[PermissionRule],
    call: &ToolCall,
    facts: &CallFacts,
) -> Result<PermissionDecision, Vec<super::shell::SimpleCommand>> {
    let rules = match allowed_by(allow, call, facts) {
        AllowCheck::Allowed(rules) => rules,
        AllowCheck::NotAllowed(missing) => return Err(missing),
    };
    let names = rules
        .iter()
        .map(|r| r.raw.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let mut d = PermissionDecision::new(
        Behavior::Allow,
        rule_source(rules[0]),
        format!("allowed by rule `{names}`"),
    );
    if rules.len() > 1 {
        d.decided_by = DecisionSource::Rule {
            rule: names,
            source_file: rules[0].origin.source_file.clone(),
        };
    }
    Ok(d)
}

/// Step 6b: the first policy that allows.
fn policy_allow(verdicts: &Verdicts<'_>) -> Option<PermissionDecision> {
    let (name, _) = verdicts.iter().find(|(_, v)| *v == PolicyVerdict::Allow)?;
    Some(PermissionDecision::new(
        Behavior::Allow,
        policy_source(name),
        format!("allowed by policy `{name}`"),
    ))
}

/// Step 7: nothing decided; ask, saying what no rule covers.
fn ask_by_default(
    call: &ToolCall,
    facts: &CallFacts,
    missing: &[super::shell::SimpleCommand],
) -> PermissionDecision {
    let reason = match &facts.shell {
        Some(a) if !a.is_fully_resolved() => format!(
            "the command cannot be fully resolved ({}), so no allow rule applies",
            a.unresolved.join("; ")
        ),
        Some(_) if !missing.is_empty() => format!(
            "no allow rule covers {}",
            missing
                .iter()
                .map(|c| format!("`{}`", c.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => format!("no rule allows `{}`", call.tool_name),
    };
    with_suggestions(
        PermissionDecision::new(Behavior::Ask, DecisionSource::Default, reason),
        call,
        facts,
        missing,
    )
}

fn policy_source(name: &str) -> DecisionSource {
    DecisionSource::Policy {
        name: name.to_string(),
    }
}

/// Most deny rules an opaque-code reason names.
const NAMED_RULES: usize = 4;

/// Step 3b: code the analysis cannot see (inline interpreter code, a
/// script file, git configuration that runs commands, …) may match every
/// Bash deny rule, so it asks — in every mode, `bypassPermissions`
/// included — unless an allow rule names that command (see
/// [`names_opaque`]). Only when there are Bash deny rules.
fn opaque_code(
    deny: &[PermissionRule],
    allow: &[PermissionRule],
    facts: &CallFacts,
) -> Option<PermissionDecision> {
    let analysis = facts.shell.as_ref()?;
    if analysis.opaque.is_empty() {
        return None;
    }
    let bash_denies: Vec<&PermissionRule> = deny
        .iter()
        .filter(|r| r.applies_to("Bash") && matches!(r.specifier, RuleSpecifier::Command(_)))
        .collect();
    if bash_denies.is_empty() {
        return None;
    }
    let hidden = analysis
        .opaque
        .iter()
        .find(|o| !allow.iter().any(|r| names_opaque(r, o)))?;
    let mut rules = bash_denies
        .iter()
        .take(NAMED_RULES)
        .map(|r| format!("`{}`", r.raw))
        .collect::<Vec<_>>()
        .join(", ");
    if bash_denies.len() > NAMED_RULES {
        rules.push_str(&format!(" and {} more", bash_denies.len() - NAMED_RULES));
    }
    Some(PermissionDecision::new(
        Behavior::Ask,
        DecisionSource::Policy {
            name: "opaque-code".into(),
        },
        format!(
            "`{}` runs code the permission check cannot see ({}), so it may do what the deny rules {rules} forbid; this holds in every mode. To allow it, add an allow rule naming this exact command",
            cut_display(&hidden.command.display()),
            hidden.what
        ),
    ))
}

/// True when `rule` (an allow rule) names the command that runs opaque
/// code: an exact `Bash(…)` rule matching it, or a prefix rule that
/// covers the word naming the code (`Bash(python3 -m pytest:*)` names
/// `python3 -m pytest -q`, `Bash(python3:*)` does not name
/// `python3 -c …`).
fn names_opaque(rule: &PermissionRule, opaque: &super::shell::OpaqueCode) -> bool {
    let RuleSpecifier::Command(pattern) = &rule.specifier else {
        return false;
    };
    if !rule.applies_to("Bash") || pattern.matches(&opaque.command, false) != CommandMatch::Yes {
        return false;
    }
    match pattern {
        CommandPattern::Exact(_) => true,
        CommandPattern::Prefix(words) => opaque.code_word.is_some_and(|i| words.len() > i),
        _ => false,
    }
}

fn cut_display(text: &str) -> String {
    match text.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

fn with_suggestions(
    mut d: PermissionDecision,
    call: &ToolCall,
    facts: &CallFacts,
    missing: &[super::shell::SimpleCommand],
) -> PermissionDecision {
    d.suggestions = suggestions(call, facts, missing);
    d
}

fn within_any(path: &Path, dirs: &[PathBuf]) -> bool {
    dirs.iter().any(|d| is_within(path, d))
}

/// The filesystem commands `acceptEdits` approves.
const FS_COMMANDS: &[&str] = &["mkdir", "touch", "rm", "mv", "cp"];

/// True when every simple command is `mkdir`/`touch`/`rm`/`mv`/`cp` on
/// literal paths inside the working directories.
fn fs_bash_within(call: &ToolCall, facts: &CallFacts, inp: &Inputs<'_>) -> bool {
    let Some(analysis) = &facts.shell else {
        return false;
    };
    if !analysis.is_fully_resolved() || analysis.commands.is_empty() {
        return false;
    }
    analysis.commands.iter().all(|cmd| {
        cmd.via.is_empty()
            && cmd.name().is_some_and(|n| FS_COMMANDS.contains(&n))
            && cmd.writes.is_empty()
            && cmd.argv.iter().skip(1).all(|w| {
                w.literal
                    && !w.glob
                    && (w.text.starts_with('-')
                        || within_any(
                            &canonicalize(Path::new(&w.text), &call.cwd, inp.home),
                            inp.working_dirs,
                        ))
            })
    })
}
