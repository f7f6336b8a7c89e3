//! Which gates run for which tool: the settings file's `validation` value.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::builtin::BuiltinOptions;
use super::context::Phase;
use super::error::GateError;

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
    /// When true, a call that produced no evidence counts as failed.
    pub require_proof: bool,
    /// When true, gate failures are reported to the model.
    pub tell_model_on_failure: bool,
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
}

/// Validation for every tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ValidationConfig {
    /// Used for tools without an entry in `per_tool`.
    pub defaults: ToolValidation,
    /// Per tool name; replaces `defaults` entirely for that tool.
    pub per_tool: BTreeMap<String, ToolValidation>,
    /// Options of the built-in gates.
    pub gates: BuiltinOptions,
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

    /// Parses a `validation` value itself, merging over the defaults.
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
        Ok(config)
    }

    /// The validation of `tool_name`.
    pub fn for_tool(&self, tool_name: &str) -> &ToolValidation {
        self.per_tool.get(tool_name).unwrap_or(&self.defaults)
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
