//! Workaround detection: repeated denied attempts at the same thing.
//!
//! Every denied call is recorded under its *alike keys*:
//! * `Bash`: `cmd:<name>` for each simple command — plus the sub-command
//!   for multiplexers such as `git push`, `npm run`, `cargo publish` —
//!   and `sensitive:<pattern>` for literal arguments naming sensitive files;
//! * file tools: `dir:<canonical parent directory>` and
//!   `sensitive:<pattern>`;
//! * `WebFetch`: `web:<host>`; other tools: `tool:<name>`.
//!
//! Once a key has collected [`WorkaroundConfig::threshold`] denials, the
//! next call sharing it escalates (ask a human, or stop the session) with a
//! message naming the earlier denials.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::call::ToolCall;
use super::facts::CallFacts;
use super::sensitive::SensitivePatterns;

/// What an escalation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Escalation {
    /// Force a human decision (an allowed call becomes ask).
    Ask,
    /// Deny with `interrupt: true` so the loop stops the session.
    StopSession,
}

/// Workaround detection settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkaroundConfig {
    /// Off switch.
    pub enabled: bool,
    /// Denials of alike calls before the next one escalates (default 3).
    pub threshold: usize,
    /// What the escalation does (default ask).
    pub escalation: Escalation,
}

impl Default for WorkaroundConfig {
    fn default() -> Self {
        WorkaroundConfig {
            enabled: true,
            threshold: 3,
            escalation: Escalation::Ask,
        }
    }
}

const MULTIPLEXERS: &[&str] = &[
    "git",
    "npm",
    "pnpm",
    "yarn",
    "cargo",
    "go",
    "docker",
    "kubectl",
    "gh",
    "pip",
    "pip3",
    "apt",
    "apt-get",
    "brew",
    "systemctl",
    "aws",
    "gcloud",
    "az",
    "terraform",
    "make",
    "npx",
    "python",
    "python3",
    "uv",
    "poetry",
    "helm",
    "bun",
    "deno",
];

/// True when `name`'s second word is a sub-command worth keeping.
pub(crate) fn is_multiplexer(name: &str) -> bool {
    MULTIPLEXERS.contains(&name)
}

/// The alike keys of a call.
pub(crate) fn alike_keys(call: &ToolCall, facts: &CallFacts) -> Vec<String> {
    let sensitive = SensitivePatterns::default();
    let mut keys = Vec::new();
    if let Some(analysis) = &facts.shell {
        for cmd in &analysis.commands {
            let Some(name) = cmd.base_name() else {
                keys.push("cmd:<dynamic>".to_string());
                continue;
            };
            let mut key = format!("cmd:{name}");
            if is_multiplexer(name)
                && let Some(sub) = cmd
                    .argv
                    .get(1)
                    .filter(|w| w.literal && !w.text.starts_with('-'))
            {
                key.push(' ');
                key.push_str(&sub.text);
            }
            keys.push(key);
            for w in cmd
                .argv
                .iter()
                .skip(1)
                .chain(&cmd.writes)
                .filter(|w| w.literal)
            {
                if let Some(p) = sensitive.matching(Path::new(&w.text)) {
                    keys.push(format!("sensitive:{p}"));
                }
            }
        }
    } else if !facts.paths.is_empty() {
        for p in &facts.paths {
            let dir = if p.is_dir {
                p.canonical.as_path()
            } else {
                p.canonical.parent().unwrap_or(&p.canonical)
            };
            keys.push(format!("dir:{}", dir.display()));
            if let Some(pat) = sensitive
                .matching(&p.canonical)
                .or_else(|| sensitive.matching(&p.lexical))
            {
                keys.push(format!("sensitive:{pat}"));
            }
        }
    } else if let Some(host) = &facts.host {
        keys.push(format!("web:{host}"));
    } else {
        keys.push(format!("tool:{}", call.tool_name));
    }
    keys.sort();
    keys.dedup();
    keys
}

/// Denials seen so far, by alike key.
#[derive(Debug, Default)]
pub(crate) struct WorkaroundTracker {
    denials: HashMap<String, Vec<String>>,
}

impl WorkaroundTracker {
    /// Records a denial described by `what`.
    pub(crate) fn record(&mut self, keys: &[String], what: &str) {
        for k in keys {
            let list = self.denials.entry(k.clone()).or_default();
            if list.len() < 16 {
                list.push(what.to_string());
            }
        }
    }

    /// The key (and its earlier denials) that makes this call escalate.
    pub(crate) fn check(&self, keys: &[String], threshold: usize) -> Option<(String, Vec<String>)> {
        keys.iter().find_map(|k| {
            self.denials
                .get(k)
                .filter(|d| d.len() >= threshold.max(1))
                .map(|d| (k.clone(), d.clone()))
        })
    }
}
