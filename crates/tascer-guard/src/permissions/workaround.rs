//! Workaround detection: repeated denied attempts at the same thing.
//!
//! Every denied call is recorded under its *alike keys*:
//! * `Bash`: for each simple command no allow rule names, its resolved
//!   program plus what it acts on (`cmd:git push`, `cmd:rm victim`; see
//!   [`command_key`]), and `sensitive:<pattern>` for literal arguments
//!   naming sensitive files;
//! * file tools: `path:<canonical path>` and `sensitive:<pattern>`;
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
use super::shell::SimpleCommand;

/// Most distinct alike keys remembered (each holds at most
/// [`PER_KEY`] short descriptions), so the history stays bounded.
const MAX_KEYS: usize = 4096;
/// Most denials remembered per key.
const PER_KEY: usize = 16;

/// What an escalation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
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

/// The alike key of one simple command: its program (the resolved name)
/// and what it acts on — the sub-command for multiplexers (`git push`),
/// else the first argument that is not an option (`rm victim`; a
/// run-time value as written, so `echo "$(pwd)"` and `echo $(rm x)` are
/// not alike).
pub(crate) fn command_key(cmd: &SimpleCommand) -> String {
    let Some(name) = cmd.base_name() else {
        return format!("cmd:{}", cmd.argv.first().map_or("", |w| w.text.as_str()));
    };
    let name = cmd.aliases.first().map_or(name, String::as_str);
    let mut key = format!("cmd:{name}");
    let target = if is_multiplexer(name) {
        cmd.argv
            .get(1)
            .filter(|w| w.literal && !w.text.starts_with('-'))
    } else {
        cmd.argv
            .iter()
            .skip(1)
            .find(|w| !(w.literal && w.text.starts_with('-')))
    };
    if let Some(t) = target {
        key.push(' ');
        key.push_str(&t.text);
    }
    key
}

/// The alike keys of a call. The program keys of simple commands for
/// which `allowed` holds (an allow rule names them and no deny or ask rule
/// does) are left out: they are not what a denial was about, so calls
/// sharing only those are not alike. Sensitive-file keys are kept.
pub(crate) fn alike_keys(
    call: &ToolCall,
    facts: &CallFacts,
    allowed: &dyn Fn(&SimpleCommand) -> bool,
) -> Vec<String> {
    let sensitive = SensitivePatterns::default();
    let mut keys = Vec::new();
    if let Some(analysis) = &facts.shell {
        for cmd in &analysis.commands {
            if !allowed(cmd) {
                keys.push(command_key(cmd));
            }
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
            keys.push(format!("path:{}", p.canonical.display()));
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

/// Denials seen so far, by alike key. It is data: a host that decides
/// each call in a new process (`tascer hook`) keeps it between calls
/// ([`PermissionEngine::denial_history`](super::PermissionEngine::denial_history)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DenialHistory {
    denials: HashMap<String, Vec<String>>,
}

impl DenialHistory {
    /// True when no denial is recorded.
    pub fn is_empty(&self) -> bool {
        self.denials.is_empty()
    }

    /// Records a denial described by `what`.
    pub(crate) fn record(&mut self, keys: &[String], what: &str) {
        for k in keys {
            if self.denials.len() >= MAX_KEYS && !self.denials.contains_key(k) {
                continue;
            }
            let list = self.denials.entry(k.clone()).or_default();
            if list.len() >= PER_KEY {
                list.remove(0);
            }
            list.push(what.to_string());
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
