//! `command_allowed`: Bash commands must not start with a denied argv
//! prefix and, when an allow-list is configured, every program they start
//! must begin with an allowed one.
//!
//! The command is read with the shell parser the permission rules use
//! ([`crate::permissions::shell`]): every program it would start — in
//! lists and pipelines, inside `$(…)`, a wrapper such as `timeout 5 …` and
//! the command it runs — is checked by its argv after quote removal. A
//! denied prefix is read the same way. The permission rules are the first
//! line; this gate is a cheap second one.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::gates::context::GateContext;
use crate::gates::gate::Gate;
use crate::gates::result::GateResult;
use crate::permissions::shell::{self, SimpleCommand};

const NAME: &str = "command_allowed";

/// Options of `command_allowed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CommandAllowedOptions {
    /// Denied argv prefixes, each written as a command line, e.g.
    /// `"git push --force"`.
    pub deny: Vec<String>,
    /// Allowed argv prefixes, written the same way. Empty (the default):
    /// no allow-list, only `deny` applies. Otherwise every program the
    /// command starts (wrappers such as `timeout` or `bash -c` included)
    /// must begin with one of them; `deny` still wins.
    pub allow: Vec<String>,
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
            allow: Vec::new(),
        }
    }
}

/// Prefixes as written, each with its argv words.
type Prefixes = Vec<(String, Vec<String>)>;

pub(crate) struct CommandAllowed {
    deny: Prefixes,
    allow: Prefixes,
}

/// Each prefix with its words; prefixes without any are dropped.
fn parse_prefixes(list: Vec<String>) -> Prefixes {
    list.into_iter()
        .map(|d| {
            let argv = prefix_words(&d);
            (d, argv)
        })
        .filter(|(_, argv)| !argv.is_empty())
        .collect()
}

/// The first of `prefixes` that `argv` begins with.
fn first_match<'p>(prefixes: &'p Prefixes, argv: &[String]) -> Option<&'p str> {
    prefixes
        .iter()
        .find(|(_, prefix)| {
            argv.len() >= prefix.len() && argv.iter().zip(prefix).all(|(a, p)| a == p)
        })
        .map(|(rule, _)| rule.as_str())
}

impl CommandAllowed {
    pub(crate) fn new(options: CommandAllowedOptions) -> Self {
        CommandAllowed {
            deny: parse_prefixes(options.deny),
            allow: parse_prefixes(options.allow),
        }
    }

    /// The first denied prefix a program `command` starts begins with, and
    /// that program's command line.
    fn denied(&self, command: &str) -> Option<(&str, String)> {
        argvs(command)
            .into_iter()
            .find_map(|(argv, shown)| first_match(&self.deny, &argv).map(|rule| (rule, shown)))
    }

    /// With an allow-list: the command line of the first program `command`
    /// starts that begins with no allowed prefix.
    fn not_allowed(&self, command: &str) -> Option<String> {
        if self.allow.is_empty() {
            return None;
        }
        argvs(command)
            .into_iter()
            .find(|(argv, _)| first_match(&self.allow, argv).is_none())
            .map(|(_, shown)| shown)
    }
}

/// The argv of every program `command` starts, each with its command line
/// as shown in a finding. A line the shell parser cannot read at all is
/// split at whitespace instead, so a denied prefix is still found in it
/// (the gate fails closed on text it cannot parse).
fn argvs(command: &str) -> Vec<(Vec<String>, String)> {
    let found: Vec<(Vec<String>, String)> = programs(command)
        .iter()
        .map(|cmd| {
            let argv = words(cmd).into_iter().map(str::to_string).collect();
            (argv, cmd.display())
        })
        .collect();
    if !found.is_empty() {
        return found;
    }
    command
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| {
            let argv = line.split_whitespace().map(str::to_string).collect();
            (argv, line.to_string())
        })
        .collect()
}

/// Every program `command` starts: its simple commands, then the wrappers
/// that run some of them. When the whole text does not parse, each line is
/// read on its own (the shell runs the lines before a broken one).
fn programs(command: &str) -> Vec<SimpleCommand> {
    let analysis = shell::analyze(command);
    if analysis.commands.is_empty() && !analysis.is_fully_resolved() && command.contains('\n') {
        return command.lines().flat_map(programs).collect();
    }
    let mut all = analysis.commands;
    all.extend(analysis.wrappers);
    all
}

/// A command's argv words, quotes removed (a word known only at run time
/// as written).
fn words(cmd: &SimpleCommand) -> Vec<&str> {
    cmd.argv.iter().map(|w| w.text.as_str()).collect()
}

/// The words of a denied prefix as written: its outermost command (a
/// wrapper itself, not the command it runs); text that does not parse is
/// split at whitespace.
fn prefix_words(prefix: &str) -> Vec<String> {
    let outermost = programs(prefix).into_iter().find(|c| c.via.is_empty());
    match outermost {
        Some(cmd) => words(&cmd).into_iter().map(str::to_string).collect(),
        None => prefix.split_whitespace().map(str::to_string).collect(),
    }
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
            if let Some((rule, piece)) = self.denied(command) {
                return GateResult::fail(
                    NAME,
                    format!("command `{piece}` matches the denied prefix `{rule}`"),
                )
                .with_findings(vec![json!({ "denied_prefix": rule, "command": piece })]);
            }
            match self.not_allowed(command) {
                None => GateResult::pass(NAME, "command allowed"),
                Some(piece) => {
                    let allowed: Vec<&str> = self.allow.iter().map(|(r, _)| r.as_str()).collect();
                    GateResult::fail(
                        NAME,
                        format!(
                            "command `{piece}` starts with none of the allowed prefixes ({})",
                            allowed.join(", ")
                        ),
                    )
                    .with_findings(vec![json!({ "not_allowed": piece, "allow": allowed })])
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{CommandAllowed, CommandAllowedOptions};

    fn gate(deny: &[&str]) -> CommandAllowed {
        CommandAllowed::new(CommandAllowedOptions {
            deny: deny.iter().map(|d| (*d).to_string()).collect(),
            allow: Vec::new(),
        })
    }

    fn allow_gate(allow: &[&str]) -> CommandAllowed {
        CommandAllowed::new(CommandAllowedOptions {
            allow: allow.iter().map(|d| (*d).to_string()).collect(),
            ..CommandAllowedOptions::default()
        })
    }

    fn denied(gate: &CommandAllowed, command: &str) -> Option<String> {
        gate.denied(command).map(|(rule, _)| rule.to_string())
    }

    #[test]
    fn default_prefixes_are_found_wherever_the_shell_runs_them() {
        let g = CommandAllowed::new(CommandAllowedOptions::default());
        for (command, rule) in [
            ("rm -rf /", "rm -rf /"),
            ("rm -rf /*", "rm -rf /*"),
            ("cd x && rm -rf ~", "rm -rf ~"),
            ("ls | xargs echo; git push -f", "git push -f"),
            ("echo $(git push --force origin)", "git push --force"),
            ("sudo reboot", "reboot"),
            ("timeout 5 'shutdown' now", "shutdown"),
            ("bash -c 'mkfs /dev/sda'", "mkfs"),
            ("git push --force 2>&1", "git push --force"),
            ("true\ngit push -f\necho 'unclosed", "git push -f"),
            ("git push -f 'unclosed", "git push -f"),
        ] {
            assert_eq!(denied(&g, command).as_deref(), Some(rule), "{command}");
        }
        for command in ["git push origin main", "echo reboot", "rm -rf build"] {
            assert_eq!(denied(&g, command), None, "{command}");
        }
    }

    #[test]
    fn a_prefix_naming_a_wrapper_matches_the_wrapper() {
        let g = gate(&["nohup", "timeout 5 make", "sudo rm"]);
        assert_eq!(denied(&g, "nohup sleep 1").as_deref(), Some("nohup"));
        assert_eq!(
            denied(&g, "timeout 5 make deploy").as_deref(),
            Some("timeout 5 make")
        );
        assert_eq!(denied(&g, "timeout 9 make deploy"), None);
        assert_eq!(denied(&g, "sudo rm x").as_deref(), Some("sudo rm"));
    }

    #[test]
    fn an_allow_list_passes_only_commands_whose_programs_all_begin_with_an_allowed_prefix() {
        let g = allow_gate(&["git status", "git diff", "ls", "cargo test"]);
        for command in [
            "git status",
            "git diff --stat HEAD~1",
            "ls -la && git status",
            "cargo test -p tascer",
        ] {
            assert_eq!(g.not_allowed(command), None, "{command}");
        }
        for (command, program) in [
            ("git commit -m x", "git commit -m x"),
            ("ls | xargs rm", "rm <xargs input>"),
            ("echo $(curl example.invalid)", "curl example.invalid"),
            ("bash -c 'ls'", "bash -c ls"),
            ("cargo testx", "cargo testx"),
        ] {
            assert_eq!(
                g.not_allowed(command).as_deref(),
                Some(program),
                "{command}"
            );
        }
        // The deny list still wins over an allowed prefix.
        let g = CommandAllowed::new(CommandAllowedOptions {
            allow: vec!["git".into()],
            ..CommandAllowedOptions::default()
        });
        assert_eq!(
            denied(&g, "git push --force").as_deref(),
            Some("git push --force")
        );
        // Without an allow-list nothing is refused by it.
        assert_eq!(gate(&[]).not_allowed("anything at all"), None);
    }
}
