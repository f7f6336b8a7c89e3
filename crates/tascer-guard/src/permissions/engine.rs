//! [`PermissionEngine`]: the one place a tool call's permission is decided.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Mutex, RwLock};
use tascer_core::Behavior;

use super::cache::{DecisionCache, cache_key};
use super::call::ToolCall;
use super::callback::{AskAnswer, Asker, CanUseTool, CanUseToolRequest, CanUseToolResult};
use super::decision::{DecisionSource, HookPermission, PermissionDecision};
use super::error::PermissionError;
use super::evaluate::{Inputs, evaluate};
use super::facts::CallFacts;
use super::file_policy::FileAccessConfig;
use super::mode::{PermissionMode, ToolClass};
use super::paths::canonicalize;
use super::policy::Policy;
use super::rule::{PermissionRule, PermissionRules, RuleOrigin};
use super::update::PermissionRuleValue;
use super::workaround::{DenialHistory, Escalation, WorkaroundConfig, alike_keys};
use tascer_settings::ClaudeSettingsFiles;

mod builder;
mod updates;

pub use builder::PermissionEngineBuilder;

/// Decides whether tool calls may run. Cheap to share (`Arc`), safe to use
/// from many tasks; the mode and session rules can change at run time.
pub struct PermissionEngine {
    rules: PermissionRules,
    pub(super) session_rules: RwLock<PermissionRules>,
    mode: RwLock<PermissionMode>,
    bypass_disabled: bool,
    policies: Vec<Arc<dyn Policy>>,
    can_use_tool: Option<CanUseTool>,
    pub(super) settings_files: Option<ClaudeSettingsFiles>,
    additional_dirs: Vec<PathBuf>,
    pub(super) home: Option<PathBuf>,
    cache: Option<DecisionCache>,
    cache_callback: bool,
    workaround: WorkaroundConfig,
    pub(super) tracker: Mutex<DenialHistory>,
    custom_policies: bool,
    sensitive: super::sensitive::SensitivePatterns,
}

impl std::fmt::Debug for PermissionEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionEngine")
            .field("mode", &self.mode())
            .field("rules", &self.rules)
            .field(
                "policies",
                &self.policies.iter().map(|p| p.name()).collect::<Vec<_>>(),
            )
            .field("can_use_tool", &self.can_use_tool.is_some())
            .finish_non_exhaustive()
    }
}

impl PermissionEngine {
    /// A builder with no rules, `default` mode, no policies.
    pub fn builder() -> PermissionEngineBuilder {
        PermissionEngineBuilder {
            rules: PermissionRules::new(),
            mode: PermissionMode::Default,
            bypass_disabled: false,
            policies: Vec::new(),
            can_use_tool: None,
            settings_files: None,
            additional_dirs: Vec::new(),
            home: None,
            cache: true,
            cache_callback: false,
            workaround: WorkaroundConfig::default(),
            default_policies: false,
            path_classes: None,
            auto_approve: None,
            low_risk: None,
            file_access: FileAccessConfig::default(),
        }
    }

    /// The current mode.
    pub fn mode(&self) -> PermissionMode {
        *self.mode.read()
    }

    /// Switches the mode (clears the decision cache).
    pub fn set_mode(&self, mode: PermissionMode) -> Result<(), PermissionError> {
        if mode == PermissionMode::BypassPermissions && self.bypass_disabled {
            return Err(PermissionError::BypassDisabled);
        }
        *self.mode.write() = mode;
        self.clear_cache();
        Ok(())
    }

    /// Adds a rule for the rest of the session (clears the decision cache).
    pub fn add_session_rule(&self, behavior: Behavior, rule: &str) -> Result<(), PermissionError> {
        let parsed = PermissionRule::parse_with(rule, &RuleOrigin::session())?;
        self.session_rules.write().push(behavior, parsed);
        self.clear_cache();
        Ok(())
    }

    /// Adds a session rule that comes from `origin` (a slash command's
    /// `allowed-tools`), to be taken back with
    /// [`remove_session_rules_from`](Self::remove_session_rules_from).
    pub fn add_scoped_rule(
        &self,
        behavior: Behavior,
        rule: &str,
        origin: &RuleOrigin,
    ) -> Result<(), PermissionError> {
        let parsed = PermissionRule::parse_with(rule, origin)?;
        self.session_rules.write().push(behavior, parsed);
        self.clear_cache();
        Ok(())
    }

    /// Removes every session rule whose origin names `source_file`.
    pub fn remove_session_rules_from(&self, source_file: &str) {
        let mut guard = self.session_rules.write();
        let rules = &mut *guard;
        for list in [&mut rules.allow, &mut rules.ask, &mut rules.deny] {
            list.retain(|r| r.origin.source_file.as_deref() != Some(source_file));
        }
        drop(guard);
        self.clear_cache();
    }

    /// The session rules added so far.
    pub fn session_rules(&self) -> PermissionRules {
        self.session_rules.read().clone()
    }

    pub(super) fn clear_cache(&self) {
        if let Some(c) = &self.cache {
            c.clear();
        }
    }

    /// The user's home directory paths are expanded with (`~`), if set.
    pub fn home_dir(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// The canonical working directories of a call: its cwd plus the
    /// additional directories.
    pub fn working_dirs(&self, cwd: &Path) -> Vec<PathBuf> {
        let home = self.home.as_deref();
        let mut dirs = vec![canonicalize(cwd, cwd, home)];
        dirs.extend(
            self.additional_dirs
                .iter()
                .map(|d| canonicalize(d, cwd, home)),
        );
        dirs
    }

    /// True when every file a search finds must be screened (there are
    /// `Read` deny or ask rules, or policies of the caller's own); else
    /// only files that could be protected by the built-in policy (a
    /// sensitive name, a hard link) are.
    pub(crate) fn screens_every_file(&self) -> bool {
        let session = self.session_rules();
        self.custom_policies
            || [&self.rules, &session].iter().any(|r| {
                r.list(Behavior::Deny)
                    .iter()
                    .chain(r.list(Behavior::Ask))
                    .any(|rule| rule.applies_to("Read"))
            })
    }

    /// The sensitive patterns the file-access policy protects (the
    /// built-in ones, widened by path classes).
    pub fn sensitive_patterns(&self) -> &super::sensitive::SensitivePatterns {
        &self.sensitive
    }

    /// Rules, policies and mode only — no cache, callback or workaround
    /// detection. Useful for dry runs ("what would happen?").
    pub fn evaluate(&self, call: &ToolCall) -> PermissionDecision {
        let facts = CallFacts::of(call, self.home.as_deref());
        self.evaluate_with(call, &facts, self.mode())
    }

    /// What rules, policies and `mode` decide for a call, with nothing
    /// else run and nothing changed: no cache, hook, callback, person,
    /// reviewer or workaround detection, and no denial remembered. In
    /// `dontAsk` mode a call left at ask is denied (the mode's own
    /// answer); otherwise it stays at ask, for those deciders to answer.
    /// `bypassPermissions` where the settings disable it is judged in
    /// `default` mode, and the reason says so. For re-judging recorded
    /// calls (`tascer policy check`).
    pub fn evaluate_in_mode(&self, call: &ToolCall, mode: PermissionMode) -> PermissionDecision {
        let bypass_refused = mode == PermissionMode::BypassPermissions && self.bypass_disabled;
        let mode = if bypass_refused {
            PermissionMode::Default
        } else {
            mode
        };
        let facts = CallFacts::of(call, self.home.as_deref());
        let mut d = self.evaluate_with(call, &facts, mode);
        d.tool = call.tool_name.clone();
        if d.behavior == Behavior::Ask && mode == PermissionMode::DontAsk {
            d = self.unanswered(d, mode);
            d.reason = format!("dontAsk mode: {}", d.reason);
        }
        if bypass_refused {
            d.reason = format!(
                "bypassPermissions is disabled by the settings (judged in default mode): {}",
                d.reason
            );
        }
        d
    }

    fn evaluate_with(
        &self,
        call: &ToolCall,
        facts: &CallFacts,
        mode: PermissionMode,
    ) -> PermissionDecision {
        let session = self.session_rules();
        let working_dirs = self.working_dirs(&call.cwd);
        let lists = [&self.rules, &session];
        let inputs = Inputs {
            rules: &lists,
            policies: &self.policies,
            mode,
            working_dirs: &working_dirs,
            home: self.home.as_deref(),
        };
        let mut d = evaluate(&inputs, call, facts);
        d.edit_like = facts.class == ToolClass::Edit
            || (facts.class == ToolClass::Shell
                && facts.shell.as_ref().is_some_and(|a| {
                    a.commands.iter().all(|c| {
                        c.name()
                            .is_some_and(|n| ["mkdir", "touch", "rm", "mv", "cp"].contains(&n))
                    })
                }));
        d
    }

    fn cacheable(&self, call: &ToolCall) -> bool {
        // A command naming a program by path or changing PATH depends on
        // the filesystem (a symlink made after the first call).
        let fs_dependent = call
            .command()
            .is_some_and(|c| c.contains('/') || c.contains("PATH"));
        self.cache.is_some()
            && !fs_dependent
            && self.policies.iter().all(|p| p.cacheable(call))
            && {
                let t = call.tool_name.as_str();
                !(super::mode::READ_TOOLS.contains(&t) || super::mode::EDIT_TOOLS.contains(&t))
            }
    }

    /// Decides a call: cache → rules, policies and mode → workaround
    /// detection → `can_use_tool` for calls left at ask (in `dontAsk` mode
    /// those are denied instead). A decision still at ask is for the caller
    /// to resolve ([`resolve_non_interactive`](Self::resolve_non_interactive)
    /// or [`resolve_with_asker`](Self::resolve_with_asker)).
    pub async fn decide(&self, call: &ToolCall) -> PermissionDecision {
        self.decide_after_hook(call, None).await
    }

    /// [`decide`](Self::decide), taking into account what the PreToolUse
    /// hooks said (claude-compat §4.2): a hook's allow settles a call the
    /// mode or the default would ask about, but not one an ask rule, a deny
    /// rule or a policy stops; a hook's ask turns an allowed call into
    /// an ask; a hook's deny denies it. `None`: no hook had an opinion.
    pub async fn decide_after_hook(
        &self,
        call: &ToolCall,
        hook: Option<&HookPermission>,
    ) -> PermissionDecision {
        let start = Instant::now();
        // Parsing the call (a shell command in particular) is the costly
        // part of a decision: a cache hit does without it.
        let parsed = std::sync::OnceLock::new();
        let facts = || parsed.get_or_init(|| CallFacts::of(call, self.home.as_deref()));
        let key = self
            .cacheable(call)
            .then(|| cache_key(&call.tool_name, &call.input));
        let cached = key
            .as_ref()
            .and_then(|k| self.cache.as_ref().and_then(|c| c.get(k)));
        let mut d = match cached {
            Some(mut hit) => {
                hit.reason = format!("same as an identical earlier call: {}", hit.reason);
                hit.decided_by = DecisionSource::Cache;
                hit
            }
            None => {
                let mut d = self.evaluate_with(call, facts(), self.mode());
                d.alike = self.alike(call, facts());
                if let (Some(k), Some(c)) = (&key, &self.cache) {
                    c.put(k.clone(), &d);
                }
                d
            }
        };
        d.tool = call.tool_name.clone();
        apply_hook(&mut d, hook);

        let escalated = self.escalate(&mut d);

        if d.behavior == Behavior::Ask && !escalated {
            if self.mode() == PermissionMode::DontAsk {
                d = self.deny_for_dont_ask(d);
            } else if self.mode() == PermissionMode::Auto {
                // Nobody is asked: admission gives the ask to the
                // reviewers, or refuses it.
            } else if let Some(cb) = &self.can_use_tool {
                let request = self.request(call, &d, facts());
                let answer = cb(request).await;
                d = self.apply_callback(call, d, answer);
                if self.cache_callback
                    && d.updated_input.is_none()
                    && let (Some(k), Some(c)) = (&key, &self.cache)
                {
                    c.put(k.clone(), &d);
                }
            }
        }
        if d.behavior == Behavior::Deny {
            self.record(&d, call);
        }
        d.duration = start.elapsed();
        d
    }

    fn deny_for_dont_ask(&self, d: PermissionDecision) -> PermissionDecision {
        let mut out = self.resolve_non_interactive(d);
        out.reason = format!("dontAsk mode: {}", out.reason);
        out
    }

    /// Applies workaround detection; true when it escalated.
    fn escalate(&self, d: &mut PermissionDecision) -> bool {
        if !self.workaround.enabled {
            return false;
        }
        let hit = self
            .tracker
            .lock()
            .check(&d.alike, self.workaround.threshold);
        let Some((key, earlier)) = hit else {
            return false;
        };
        let message = escalation_message(&key, &earlier);
        match self.workaround.escalation {
            Escalation::Ask => {
                if d.behavior == Behavior::Deny {
                    d.reason = format!("{}; {message}", d.reason);
                    return false;
                }
                d.behavior = Behavior::Ask;
                d.decided_by = DecisionSource::Workaround;
                d.reason = message;
                // A human must see it: skip the callback only when there is
                // none; with a callback, it decides (it is the human proxy).
                false
            }
            Escalation::StopSession => {
                d.behavior = Behavior::Deny;
                d.decided_by = DecisionSource::Workaround;
                d.reason = format!("{message}; stopping the session");
                d.interrupt = true;
                true
            }
        }
    }

    /// The alike keys of a call, leaving out simple commands an allow
    /// rule names and no deny or ask rule touches.
    fn alike(&self, call: &ToolCall, facts: &CallFacts) -> Vec<String> {
        use super::command_pattern::CommandMatch;
        use super::rule::RuleSpecifier;
        let session = self.session_rules();
        let lists = [&self.rules, &session];
        let matching = |behavior: Behavior, cmd: &super::shell::SimpleCommand, strict: bool| {
            lists
                .iter()
                .flat_map(|r| r.list(behavior).iter())
                .filter(|r| r.applies_to("Bash"))
                .any(|r| match &r.specifier {
                    RuleSpecifier::Command(p) => {
                        let m = p.matches(cmd, !strict);
                        m == CommandMatch::Yes || (!strict && m == CommandMatch::Maybe)
                    }
                    _ => false,
                })
        };
        let allowed = |cmd: &super::shell::SimpleCommand| {
            matching(Behavior::Allow, cmd, true)
                && !matching(Behavior::Deny, cmd, false)
                && !matching(Behavior::Ask, cmd, false)
        };
        alike_keys(call, facts, &allowed)
    }

    fn record(&self, d: &PermissionDecision, call: &ToolCall) {
        let what = describe(call, &d.reason);
        self.tracker.lock().record(&d.alike, &what);
    }

    /// The denials workaround detection has seen (bounded: see
    /// [`DenialHistory`](super::workaround::DenialHistory)).
    pub fn denial_history(&self) -> super::workaround::DenialHistory {
        self.tracker.lock().clone()
    }

    /// Replaces the denials seen with `history` (kept by a host between
    /// processes).
    pub fn restore_denials(&self, history: super::workaround::DenialHistory) {
        *self.tracker.lock() = history;
    }

    /// Records a denial made outside the engine (e.g. by a hook) for
    /// workaround detection.
    pub fn record_denial(&self, call: &ToolCall, reason: &str) {
        let facts = CallFacts::of(call, self.home.as_deref());
        let keys = self.alike(call, &facts);
        let what = describe(call, reason);
        self.tracker.lock().record(&keys, &what);
    }

    fn request(
        &self,
        call: &ToolCall,
        d: &PermissionDecision,
        facts: &CallFacts,
    ) -> CanUseToolRequest {
        CanUseToolRequest {
            tool_name: call.tool_name.clone(),
            input: call.input.clone(),
            tool_use_id: call.tool_use_id.clone(),
            session_id: call.session_id.clone(),
            cwd: call.cwd.clone(),
            suggestions: d
                .suggestions
                .iter()
                .map(|s| PermissionRuleValue::from_rule(s))
                .collect(),
            decision_reason: d.reason.clone(),
            blocked_path: facts
                .paths
                .first()
                .map(|p| p.canonical.display().to_string()),
            matched_ask_rule: match &d.decided_by {
                DecisionSource::Rule { rule, .. } => Some(rule.clone()),
                _ => None,
            },
        }
    }

    fn apply_callback(
        &self,
        call: &ToolCall,
        mut d: PermissionDecision,
        answer: CanUseToolResult,
    ) -> PermissionDecision {
        d.decided_by = DecisionSource::Callback;
        match answer {
            CanUseToolResult::Allow {
                updated_input,
                updated_permissions,
            } => {
                d.behavior = Behavior::Allow;
                d.reason = "allowed by the can_use_tool callback".into();
                d.updated_input = updated_input.filter(|u| *u != call.input);
                if !updated_permissions.is_empty() {
                    for warning in self.apply_updates(&updated_permissions) {
                        tracing::warn!("{warning}");
                    }
                    let described: Vec<String> =
                        updated_permissions.iter().map(|u| u.describe()).collect();
                    d.reason = format!("{}; it {}", d.reason, described.join("; "));
                }
            }
            CanUseToolResult::Deny { message, interrupt } => {
                d.behavior = Behavior::Deny;
                d.reason = if message.is_empty() {
                    "denied by the can_use_tool callback".into()
                } else {
                    message
                };
                d.interrupt = interrupt;
            }
        }
        d
    }

    /// Resolves an ask by prompting: allow once, allow always (adds the
    /// suggested rules as session allow rules) or deny.
    pub async fn resolve_with_asker(
        &self,
        call: &ToolCall,
        decision: PermissionDecision,
        asker: &dyn Asker,
    ) -> PermissionDecision {
        if decision.behavior != Behavior::Ask {
            return decision;
        }
        let start = Instant::now();
        let facts = CallFacts::of(call, self.home.as_deref());
        let request = self.request(call, &decision, &facts);
        let answer = asker.ask(&request).await;
        let mut d = decision;
        d.decided_by = DecisionSource::User;
        match answer {
            AskAnswer::AllowOnce => {
                d.behavior = Behavior::Allow;
                d.reason = "allowed once by the user".into();
            }
            AskAnswer::AllowAlways => {
                for rule in &d.suggestions {
                    if let Err(e) = self.add_session_rule(Behavior::Allow, rule) {
                        tracing::warn!("cannot add session rule {rule}: {e}");
                    }
                }
                d.behavior = Behavior::Allow;
                d.reason = format!(
                    "allowed by the user for this session ({})",
                    d.suggestions.join(", ")
                );
            }
            AskAnswer::Deny { message } => {
                d.behavior = Behavior::Deny;
                d.reason = if message.is_empty() {
                    "denied by the user".into()
                } else {
                    message
                };
                self.record(&d, call);
            }
        }
        d.duration += start.elapsed();
        d
    }
}

/// Folds a PreToolUse hook's permission decision into the engine's.
fn apply_hook(d: &mut PermissionDecision, hook: Option<&HookPermission>) {
    let Some(hook) = hook else {
        return;
    };
    let by_rule_or_policy = matches!(
        d.decided_by,
        DecisionSource::Rule { .. } | DecisionSource::Policy { .. }
    );
    let reason = |default: &str| hook.reason.clone().unwrap_or_else(|| default.into());
    match hook.behavior {
        Behavior::Allow => {
            if d.behavior == Behavior::Ask && !by_rule_or_policy {
                d.behavior = Behavior::Allow;
                d.decided_by = DecisionSource::Hook {
                    name: hook.name.clone(),
                };
                d.reason = reason("allowed by a PreToolUse hook");
            }
        }
        Behavior::Ask => {
            if d.behavior == Behavior::Allow {
                d.behavior = Behavior::Ask;
                d.decided_by = DecisionSource::Hook {
                    name: hook.name.clone(),
                };
                d.reason = reason("a PreToolUse hook asked for confirmation");
            }
        }
        Behavior::Deny => {
            d.behavior = Behavior::Deny;
            d.decided_by = DecisionSource::Hook {
                name: hook.name.clone(),
            };
            d.reason = reason("denied by a PreToolUse hook");
        }
    }
}

/// How many earlier denials an escalation quotes.
const QUOTED_DENIALS: usize = 3;
/// Longest quoted command or reason, in characters.
const QUOTE_CHARS: usize = 160;

/// `text` cut to `max` characters, with `…` when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// How an escalation message starts.
const WORKAROUND: &str = "this looks like a workaround";

/// The first part of a reason, without an escalation message wherever a
/// wrapper put it (`…; this looks like…`, or inside another reason such as
/// the `auto` mode's `(needs approval …: this looks like…)`), cut short:
/// what a denial records for workaround detection, so recorded reasons
/// never quote each other.
pub(super) fn short_reason(reason: &str) -> String {
    let own = match reason.find(WORKAROUND) {
        Some(at) => reason[..at]
            .trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ';' | ':' | '(' | ',')),
        None => reason,
    };
    cut(own, QUOTE_CHARS)
}

/// The escalation message: how many alike calls were denied and the last
/// few of them, each cut short (its size is bounded whatever the history).
fn escalation_message(key: &str, earlier: &[String]) -> String {
    let quoted = earlier
        .iter()
        .rev()
        .take(QUOTED_DENIALS)
        .rev()
        .map(|e| cut(e, 2 * QUOTE_CHARS))
        .collect::<Vec<_>>();
    let more = earlier.len().saturating_sub(quoted.len());
    let more = if more > 0 {
        format!(" (and {more} more)")
    } else {
        String::new()
    };
    format!(
        "{WORKAROUND}: {} earlier alike call(s) ({}) were denied: {}{more}",
        earlier.len(),
        cut(key, QUOTE_CHARS),
        quoted.join(" | ")
    )
}

fn describe(call: &ToolCall, reason: &str) -> String {
    let reason = short_reason(reason);
    let what = call
        .command()
        .map(str::to_string)
        .or_else(|| {
            ["file_path", "notebook_path", "path", "url"]
                .iter()
                .find_map(|k| call.input_str(k).map(str::to_string))
        })
        .unwrap_or_default();
    let what = cut(&what, QUOTE_CHARS);
    if what.is_empty() {
        format!("{} ({reason})", call.tool_name)
    } else {
        format!("{} `{what}` ({reason})", call.tool_name)
    }
}
