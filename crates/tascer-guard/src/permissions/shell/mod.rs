//! Shell command analysis: every simple command a `Bash` call would run.
//!
//! The command string is parsed with [`brush_parser`] (a real POSIX/bash
//! parser) and walked through pipelines, `&&`/`||`/`;` lists, subshells,
//! brace groups, control structures, function bodies, command and process
//! substitutions, here-documents, `bash -c`/`sh -c`/`eval` strings (re-parsed
//! recursively, depth-limited) and wrappers such as `sudo`, `env`, `timeout`,
//! `xargs` and `find -exec`. Quoting is normalized, so `'r''m'`, `r\m` and
//! `"rm"` all become the argv word `rm`.
//!
//! Anything whose effect cannot be known statically (a dynamic command name,
//! a parse error, nesting deeper than [`MAX_DEPTH`]) is listed in
//! [`ShellAnalysis::unresolved`]; callers must never allow such a command
//! without asking.

mod git_program;
mod programs;
mod resolve;
mod runs;
mod walk;
mod words;
mod wrappers;

use serde::Serialize;

pub use resolve::resolve_programs;

/// How deep `bash -c`, `eval`, substitutions and wrappers may nest before
/// the analysis gives up (and reports the command as unresolved).
pub const MAX_DEPTH: usize = 8;

/// One argv word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShellWord {
    /// The word with quotes and escapes removed when [`literal`](Self::literal),
    /// else its raw source text.
    pub text: String,
    /// True when the word's value is known statically (no parameter,
    /// command or arithmetic expansion, no brace expansion).
    pub literal: bool,
    /// True when the word holds unquoted glob characters (`*`, `?`, `[`).
    pub glob: bool,
}

impl ShellWord {
    /// A literal word.
    pub fn literal(text: impl Into<String>) -> Self {
        ShellWord {
            text: text.into(),
            literal: true,
            glob: false,
        }
    }

    /// A word whose value is only known at run time.
    pub fn dynamic(raw: impl Into<String>) -> Self {
        ShellWord {
            text: raw.into(),
            literal: false,
            glob: false,
        }
    }
}

/// One simple command the shell would run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SimpleCommand {
    /// The argv, wrappers (`sudo`, `timeout 5`, …) already split off into
    /// their own entries where relevant.
    pub argv: Vec<ShellWord>,
    /// Targets of output redirections (`>`, `>>`, `&>`, `<>`, `>|`).
    pub writes: Vec<ShellWord>,
    /// Wrappers this command was found inside, outermost first
    /// (e.g. `["sudo"]`, `["bash -c"]`).
    pub via: Vec<String>,
    /// Other names deny and ask rules must see the program under: its
    /// distribution or versioned names (`nc.openbsd` → `nc`), and — filled
    /// in by [`resolve_programs`] — the name of the file a symlink or a
    /// changed `PATH` really runs.
    pub aliases: Vec<String>,
}

impl SimpleCommand {
    /// A command with the aliases of its name.
    pub fn new(argv: Vec<ShellWord>, writes: Vec<ShellWord>, via: Vec<String>) -> Self {
        let aliases = argv
            .first()
            .filter(|w| w.literal && !w.glob)
            .map(|w| programs::aliases(&w.text))
            .unwrap_or_default();
        SimpleCommand {
            argv,
            writes,
            via,
            aliases,
        }
    }

    /// The command name (`argv[0]`) when it is literal.
    pub fn name(&self) -> Option<&str> {
        self.argv
            .first()
            .filter(|w| w.literal && !w.glob)
            .map(|w| w.text.as_str())
    }

    /// The command name without its directory (`/bin/rm` → `rm`).
    pub fn base_name(&self) -> Option<&str> {
        self.name().map(base_name)
    }

    /// The argv joined by single spaces (dynamic words as their raw text).
    pub fn display(&self) -> String {
        self.argv
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// True when every argv word is literal.
    pub fn is_literal(&self) -> bool {
        self.argv.iter().all(|w| w.literal)
    }
}

/// The last path component of a command name.
pub fn base_name(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// Code a command runs that the analysis cannot see: inline interpreter
/// code, a script or start-up file, a program file in the workspace,
/// commands stored in git configuration. It may do anything, so it may
/// match every Bash deny rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpaqueCode {
    /// The command that runs it.
    pub command: SimpleCommand,
    /// What cannot be seen (`` `python3 -c` runs inline python code ``).
    pub what: String,
    /// The argv index of the word naming the code (the `-c` string, the
    /// script file); an allow rule exempts the command only when it
    /// names that word. `None`: nothing exempts it but an exact rule.
    pub code_word: Option<usize>,
}

/// The result of analysing one command string.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ShellAnalysis {
    /// Every simple command found, in source order.
    pub commands: Vec<SimpleCommand>,
    /// Why parts of the command could not be resolved statically; empty
    /// when the analysis is complete.
    pub unresolved: Vec<String>,
    /// Pipelines with two or more stages: for each stage the base names of
    /// the commands it runs (used to spot `curl … | sh`).
    pub pipelines: Vec<Vec<Vec<String>>>,
    /// Names of functions that call themselves two or more times (the
    /// `:(){ :|:& };:` fork-bomb shape).
    pub fork_bombs: Vec<String>,
    /// Code that runs but cannot be seen (see [`OpaqueCode`]).
    pub opaque: Vec<OpaqueCode>,
    /// Values assigned to `PATH` (they decide which program a bare name
    /// runs; see [`resolve_programs`]).
    pub path_values: Vec<ShellWord>,
    /// Files read through input redirections (`< file`, `<> file`), in
    /// source order.
    pub reads: Vec<ShellWord>,
    /// Wrappers that hand their work on (`timeout 5 make`, `nohup …`,
    /// `bash -c '…'`), as written: [`commands`](Self::commands) lists the
    /// command they run, not them. For checks that look at every program
    /// the shell starts (the `command_allowed` gate), not for rules.
    pub wrappers: Vec<SimpleCommand>,
}

impl ShellAnalysis {
    /// True when every part of the command was resolved statically.
    pub fn is_fully_resolved(&self) -> bool {
        self.unresolved.is_empty()
    }
}

/// Analyses a shell command string.
pub fn analyze(command: &str) -> ShellAnalysis {
    walk::Walker::run(command)
}
