//! Which gates run for which tool: the settings file's `validation` value.
//!
//! A tool's gates are the `defaults` followed by its own `per_tool` entry's
//! (unless the entry says `"inherit_defaults": false`); its evidence kinds
//! are the union of both. The section also carries the switches of what a
//! call's record captures: the git state, the environment allowlist and
//! the records' proof hashes.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::builtin::BuiltinOptions;
use super::context::Phase;
use super::error::GateError;
use super::result::GateResult;

/// Evidence to capture for a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum EvidenceKind {
    /// The tool's standard output.
    Stdout,
    /// The tool's standard error.
    Stderr,
    /// The diff of changed files.
    Diff,
    /// The changed files' content.
    File,
}

impl EvidenceKind {
    /// Every kind, in the order records list them.
    pub const ALL: [EvidenceKind; 4] = [
        EvidenceKind::Stdout,
        EvidenceKind::Stderr,
        EvidenceKind::Diff,
        EvidenceKind::File,
    ];

    /// The kind's name as configured and recorded (`stdout`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::Stdout => "stdout",
            EvidenceKind::Stderr => "stderr",
            EvidenceKind::Diff => "diff",
            EvidenceKind::File => "file",
        }
    }
}

/// The validation of one tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolValidation {
    /// Gates run before the call; a failure blocks it.
    pub pre_gates: Vec<String>,
    /// Gates run after the call; a failure marks it failed.
    pub post_gates: Vec<String>,
    /// Evidence to capture.
    pub evidence: Vec<EvidenceKind>,
    /// Per-gate timeout in milliseconds.
    pub timeout_ms: u64,
    /// When true (and proofs are generated), a call that ran is failed
    /// unless its record holds every configured evidence kind the call
    /// can produce: [`proof_check`](Self::proof_check) says which.
    pub require_proof: bool,
    /// When true, gate failures are reported to the model.
    pub tell_model_on_failure: bool,
    /// For a `per_tool` entry: true (the default) adds its gates and
    /// evidence to the `defaults`; false replaces the defaults for the
    /// tool. Ignored in `defaults` itself.
    pub inherit_defaults: bool,
}

/// Default per-gate timeout.
pub const DEFAULT_GATE_TIMEOUT_MS: u64 = 30_000;

impl Default for ToolValidation {
    fn default() -> Self {
        ToolValidation {
            pre_gates: Vec::new(),
            post_gates: Vec::new(),
            evidence: Vec::new(),
            timeout_ms: DEFAULT_GATE_TIMEOUT_MS,
            require_proof: false,
            tell_model_on_failure: true,
            inherit_defaults: true,
        }
    }
}

impl ToolValidation {
    /// The gates of `phase`.
    pub fn gates(&self, phase: Phase) -> &[String] {
        match phase {
            Phase::Pre => &self.pre_gates,
            Phase::Post => &self.post_gates,
        }
    }

    /// True when the entry configures no gate and no evidence.
    fn adds_nothing(&self) -> bool {
        self.pre_gates.is_empty() && self.post_gates.is_empty() && self.evidence.is_empty()
    }

    /// This entry over `defaults`: the defaults' gates, then this entry's
    /// (each gate once), the evidence kinds of both, this entry's scalars.
    fn over(&self, defaults: &ToolValidation) -> ToolValidation {
        fn joined<T: Clone + PartialEq>(first: &[T], then: &[T]) -> Vec<T> {
            let mut out = first.to_vec();
            for item in then {
                if !out.contains(item) {
                    out.push(item.clone());
                }
            }
            out
        }
        ToolValidation {
            pre_gates: joined(&defaults.pre_gates, &self.pre_gates),
            post_gates: joined(&defaults.post_gates, &self.post_gates),
            evidence: joined(&defaults.evidence, &self.evidence),
            ..self.clone()
        }
    }

    /// The proof check of a call that ran (`require_proof`): `None` when
    /// the tool does not require proof; else a `require_proof` result that
    /// fails when proofs are off or a configured evidence kind the call
    /// could produce is `missing` (its record lacks it).
    pub fn proof_check(&self, proofs_on: bool, missing: &[EvidenceKind]) -> Option<GateResult> {
        if !self.require_proof {
            return None;
        }
        if !proofs_on {
            return Some(GateResult::fail(
                PROOF_CHECK,
                "proof required, but proofs are off (generate_proofs is false)",
            ));
        }
        if missing.is_empty() {
            let kinds: Vec<&str> = self.evidence.iter().map(|k| k.as_str()).collect();
            let what = if kinds.is_empty() {
                "the record is sealed".to_string()
            } else {
                format!(
                    "the record is sealed with its evidence ({})",
                    kinds.join(", ")
                )
            };
            return Some(GateResult::pass(PROOF_CHECK, what));
        }
        let kinds: Vec<&str> = missing.iter().map(|k| k.as_str()).collect();
        Some(GateResult::fail(
            PROOF_CHECK,
            format!(
                "proof required, but no {} evidence could be captured",
                kinds.join(", ")
            ),
        ))
    }
}

/// The name the proof check's result is recorded under.
pub const PROOF_CHECK: &str = "require_proof";

/// Validation for every tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ValidationConfig {
    /// Every tool's gates and evidence; a `per_tool` entry adds to them.
    pub defaults: ToolValidation,
    /// Per tool name: added to `defaults` (or, with `inherit_defaults:
    /// false`, in place of them) for that tool.
    pub per_tool: BTreeMap<String, ToolValidation>,
    /// Options of the built-in gates.
    pub gates: BuiltinOptions,
    /// Whether each call's context records the git state of its
    /// repository (default true).
    pub capture_git_state: bool,
    /// Environment variables recorded in each call's context (never any
    /// other); `None`: the loop's default list.
    pub env_allowlist: Option<Vec<String>>,
    /// Whether each tool record is sealed with its proof hash (default
    /// true). Off, records carry no `proof_hash` and `require_proof`
    /// fails every call that requires it.
    pub generate_proofs: bool,
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_string()).collect()
}

impl Default for ValidationConfig {
    /// Conservative defaults: writing tools are checked against protected
    /// paths before and for syntax and leaked secrets after; Bash is checked
    /// against the deny list before and for leaked secrets after.
    fn default() -> Self {
        let mut per_tool = BTreeMap::new();
        for tool in ["Write", "Edit", "MultiEdit"] {
            per_tool.insert(
                tool.to_string(),
                ToolValidation {
                    pre_gates: strs(&["file_protected"]),
                    post_gates: strs(&["syntax_valid", "no_secrets_leaked"]),
                    evidence: vec![EvidenceKind::Diff],
                    ..ToolValidation::default()
                },
            );
        }
        per_tool.insert(
            "NotebookEdit".to_string(),
            ToolValidation {
                pre_gates: strs(&["file_protected"]),
                post_gates: strs(&["no_secrets_leaked"]),
                evidence: vec![EvidenceKind::Diff],
                ..ToolValidation::default()
            },
        );
        per_tool.insert(
            "Bash".to_string(),
            ToolValidation {
                pre_gates: strs(&["command_allowed"]),
                post_gates: strs(&["no_secrets_leaked"]),
                evidence: vec![EvidenceKind::Stdout, EvidenceKind::Stderr],
                ..ToolValidation::default()
            },
        );
        ValidationConfig {
            defaults: ToolValidation::default(),
            per_tool,
            gates: BuiltinOptions::default(),
            capture_git_state: true,
            env_allowlist: None,
            generate_proofs: true,
        }
    }
}

impl ValidationConfig {
    /// Reads the `validation` key of a settings-file JSON value; a missing
    /// key gives [`ValidationConfig::default`]. Fields left out of the
    /// `validation` value keep their defaults; a `per_tool` entry replaces
    /// the default entry of that tool.
    pub fn from_settings(settings: &Value) -> Result<Self, GateError> {
        match settings.get("validation") {
            None | Some(Value::Null) => Ok(ValidationConfig::default()),
            Some(v) => Self::from_value(v),
        }
    }

    /// Parses a `validation` value itself, merging over the defaults. A
    /// `per_tool` entry that inherits the defaults (a built-in one, or one
    /// written without `"inherit_defaults": false`) takes the `defaults`'
    /// `timeout_ms`, `require_proof` and `tell_model_on_failure` unless it
    /// gives its own.
    pub fn from_value(value: &Value) -> Result<Self, GateError> {
        let parsed: ValidationConfig = serde_json::from_value(value.clone())?;
        let mut config = ValidationConfig::default();
        if value.get("defaults").is_some() {
            config.defaults = parsed.defaults;
        }
        if value.get("gates").is_some() {
            config.gates = parsed.gates;
        }
        config.per_tool.extend(parsed.per_tool);
        let defaults = config.defaults.clone();
        for (tool, entry) in config
            .per_tool
            .iter_mut()
            .filter(|(_, e)| e.inherit_defaults)
        {
            let written = value.pointer(&format!("/per_tool/{}", pointer_escape(tool)));
            let has = |key: &str| written.and_then(|w| w.get(key)).is_some();
            if !has("timeout_ms") {
                entry.timeout_ms = defaults.timeout_ms;
            }
            if !has("require_proof") {
                entry.require_proof = defaults.require_proof;
            }
            if !has("tell_model_on_failure") {
                entry.tell_model_on_failure = defaults.tell_model_on_failure;
            }
        }
        config.capture_git_state = parsed.capture_git_state;
        config.env_allowlist = parsed.env_allowlist;
        config.generate_proofs = parsed.generate_proofs;
        Ok(config)
    }

    /// The validation of `tool_name`: its `per_tool` entry over the
    /// `defaults` (see [`ToolValidation::inherit_defaults`]), else the
    /// `defaults`.
    pub fn for_tool(&self, tool_name: &str) -> Cow<'_, ToolValidation> {
        match self.per_tool.get(tool_name) {
            None => Cow::Borrowed(&self.defaults),
            Some(entry) if !entry.inherit_defaults || self.defaults.adds_nothing() => {
                Cow::Borrowed(entry)
            }
            Some(entry) => Cow::Owned(entry.over(&self.defaults)),
        }
    }

    /// Every configured gate name with where it is configured.
    pub fn gate_names(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut push = |scope: &str, tv: &ToolValidation| {
            for g in &tv.pre_gates {
                out.push((g.clone(), format!("{scope}.pre_gates")));
            }
            for g in &tv.post_gates {
                out.push((g.clone(), format!("{scope}.post_gates")));
            }
        };
        push("defaults", &self.defaults);
        for (tool, tv) in &self.per_tool {
            push(&format!("per_tool.{tool}"), tv);
        }
        out
    }
}

/// `name` escaped for a JSON pointer segment (RFC 6901).
fn pointer_escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
