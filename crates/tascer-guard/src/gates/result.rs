//! The result of one gate run and the verdict of a phase.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::context::Phase;

/// What one gate decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    /// The gate's name.
    pub gate: String,
    /// True when the check passed.
    pub passed: bool,
    /// Human- and model-readable explanation.
    pub message: String,
    /// Wall-clock time the gate took.
    pub duration_ms: u64,
    /// Structured findings (never holding raw secrets).
    #[serde(default)]
    pub findings: Vec<Value>,
}

impl GateResult {
    /// A passing result.
    pub fn pass(gate: impl Into<String>, message: impl Into<String>) -> Self {
        GateResult {
            gate: gate.into(),
            passed: true,
            message: message.into(),
            duration_ms: 0,
            findings: Vec::new(),
        }
    }

    /// A failing result.
    pub fn fail(gate: impl Into<String>, message: impl Into<String>) -> Self {
        GateResult {
            passed: false,
            ..GateResult::pass(gate, message)
        }
    }

    /// Adds structured findings.
    pub fn with_findings(mut self, findings: Vec<Value>) -> Self {
        self.findings = findings;
        self
    }
}

/// The sum of a phase's gate results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateVerdict {
    /// True when every gate passed.
    pub passed: bool,
    /// For a pre phase that failed: the call must be blocked.
    pub block: bool,
    /// For a post phase that failed: the call must be marked failed.
    pub mark_failed: bool,
    /// Text for the model naming the failed gates, when anything failed.
    pub message: Option<String>,
}

impl GateVerdict {
    /// Sums up `results` of `phase`.
    pub fn from_results(phase: Phase, results: &[GateResult]) -> Self {
        let failed: Vec<&GateResult> = results.iter().filter(|r| !r.passed).collect();
        if failed.is_empty() {
            return GateVerdict {
                passed: true,
                block: false,
                mark_failed: false,
                message: None,
            };
        }
        let lead = match phase {
            Phase::Pre => "Blocked by validation gate(s)",
            Phase::Post => "Validation gate(s) failed after the call",
        };
        let details: Vec<String> = failed
            .iter()
            .map(|r| format!("- {}: {}", r.gate, r.message))
            .collect();
        GateVerdict {
            passed: false,
            block: phase == Phase::Pre,
            mark_failed: phase == Phase::Post,
            message: Some(format!("{lead}:\n{}", details.join("\n"))),
        }
    }
}
