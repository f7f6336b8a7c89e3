//! `command_allowed`: Bash commands must not start with a denied argv prefix.
//!
//! Deliberately simple: the command is cut at `;`, `&&`, `||`, `|` and
//! newlines and each piece split with `shlex`. The permissions module does
//! full shell parsing; this gate is a cheap second line.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::gates::context::GateContext;
use crate::gates::gate::Gate;
use crate::gates::result::GateResult;

const NAME: &str = "command_allowed";

/// Options of `command_allowed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandAllowedOptions {
    /// Denied argv prefixes, each written as a command line, e.g.
    /// `"git push --force"`.
    pub deny: Vec<String>,
}

impl Default for CommandAllowedOptions {
    fn default() -> Self {
        CommandAllowedOptions {
            deny: [
                "rm -rf /",
                "rm -rf /*",
                "rm -rf ~",
                "mkfs",
                "git push --force",
                "git push -f",
                "shutdown",
                "reboot",
            ]
            .iter()
            .map(|s| (*s).to_string())
            .collect(),
        }
    }
}

pub(crate) struct CommandAllowed {
    deny: Vec<(String, Vec<String>)>,
}

impl CommandAllowed {
    pub(crate) fn new(options: CommandAllowedOptions) -> Self {
        let deny = options
            .deny
            .into_iter()
            .map(|d| {
                let argv = split(&d);
                (d, argv)
            })
            .filter(|(_, argv)| !argv.is_empty())
            .collect();
        CommandAllowed { deny }
    }

    fn denied(&self, command: &str) -> Option<(&str, String)> {
        for piece in pieces(command) {
            let argv = split(piece);
            for (rule, prefix) in &self.deny {
                if argv.len() >= prefix.len() && argv.iter().zip(prefix).all(|(a, p)| a == p) {
                    return Some((rule.as_str(), piece.trim().to_string()));
                }
            }
        }
        None
    }
}

fn pieces(command: &str) -> Vec<&str> {
    command
        .split(['\n', ';', '|', '&'])
        .filter(|p| !p.trim().is_empty())
        .collect()
}

fn split(s: &str) -> Vec<String> {
    shlex::split(s).unwrap_or_else(|| s.split_whitespace().map(str::to_string).collect())
}

impl Gate for CommandAllowed {
    fn name(&self) -> &str {
        NAME
    }

    fn check<'a>(&'a self, ctx: &'a GateContext) -> BoxFuture<'a, GateResult> {
        Box::pin(async move {
            let Some(command) = ctx.input.get("command").and_then(Value::as_str) else {
                return GateResult::pass(NAME, "no command in input");
            };
            match self.denied(command) {
                None => GateResult::pass(NAME, "command allowed"),
                Some((rule, piece)) => GateResult::fail(
                    NAME,
                    format!("command `{piece}` matches the denied prefix `{rule}`"),
                )
                .with_findings(vec![json!({ "denied_prefix": rule, "command": piece })]),
            }
        })
    }
}
