//! Built-in dangerous-command checks of [`ShellCommandPolicy`](super::ShellCommandPolicy).
//!
//! Deny:
//! * `rm` recursive on `/`, `/*`, `~`, `~/`, `$HOME`, `.`-free top-level
//!   system directories (`/etc`, `/usr`, …), or with `--no-preserve-root`;
//! * `chmod`/`chown`/`chgrp` recursive on the same targets;
//! * `mkfs`, `mkfs.*`, `mke2fs`, `mkswap`, `wipefs`;
//! * `dd` with `of=/dev/…` (other than `/dev/null`, `/dev/zero`,
//!   `/dev/stdout`, `/dev/stderr`, `/dev/tty`);
//! * output redirection to such a device (`> /dev/sda`);
//! * fork bombs (a function calling itself twice, `:(){ :|:& };:`).
//!
//! Ask:
//! * a download piped into an interpreter (`curl … | sh`, `wget -O- … | bash`,
//!   `… | python3`);
//! * `shutdown`, `reboot`, `halt`, `poweroff`, `init 0`/`init 6`;
//! * partition editors (`fdisk`, `sfdisk`, `parted`, `cfdisk`, `gdisk`);
//! * `kill -9 -1` / `kill -KILL -1` (every process).

use super::shell::{ShellAnalysis, ShellWord, SimpleCommand};

/// A dangerous-command finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Danger {
    /// Must not run.
    Deny(String),
    /// Must be confirmed.
    Ask(String),
}

const SYSTEM_DIRS: &[&str] = &[
    "/",
    "/*",
    "~",
    "~/",
    "~/*",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib64",
    "/opt",
    "/proc",
    "/root",
    "/sbin",
    "/srv",
    "/sys",
    "/usr",
    "/var",
    "/Users",
    "/System",
    "/Library",
    "/Applications",
];
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
];
const DOWNLOADERS: &[&str] = &["curl", "wget", "fetch", "aria2c", "http", "xh"];
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node", "php",
    "eval", "source",
];

/// Every dangerous finding in `analysis`.
pub(crate) fn findings(analysis: &ShellAnalysis) -> Vec<Danger> {
    let mut out = Vec::new();
    for name in &analysis.fork_bombs {
        out.push(Danger::Deny(format!(
            "fork bomb (function `{name}` calls itself repeatedly)"
        )));
    }
    for cmd in &analysis.commands {
        check_command(cmd, &mut out);
    }
    for stages in &analysis.pipelines {
        let download = stages
            .iter()
            .position(|s| s.iter().any(|n| DOWNLOADERS.contains(&n.as_str())));
        if let Some(i) = download
            && let Some(shell) = stages[i + 1..]
                .iter()
                .flatten()
                .find(|n| INTERPRETERS.contains(&n.as_str()))
        {
            out.push(Danger::Ask(format!(
                "downloaded content is piped into `{shell}`"
            )));
        }
    }
    out
}

fn is_system_target(w: &ShellWord) -> bool {
    if w.literal {
        let t = w.text.trim_end_matches('/');
        let t = if t.is_empty() { "/" } else { t };
        SYSTEM_DIRS.contains(&t) || SYSTEM_DIRS.contains(&w.text.as_str())
    } else {
        let t = w.text.trim_matches('"');
        matches!(
            t,
            "$HOME" | "${HOME}" | "$HOME/" | "${HOME}/" | "$HOME/*" | "${HOME}/*"
        )
    }
}

fn has_flag(args: &[ShellWord], short: char, long: &str) -> bool {
    args.iter().filter(|w| w.literal).any(|w| {
        let t = w.text.as_str();
        t == long || (t.starts_with('-') && !t.starts_with("--") && t.contains(short))
    })
}

fn check_command(cmd: &SimpleCommand, out: &mut Vec<Danger>) {
    for w in &cmd.writes {
        if w.literal && is_device(&w.text) {
            out.push(Danger::Deny(format!(
                "output redirected to device {}",
                w.text
            )));
        }
    }
    let Some(name) = cmd.base_name() else {
        return;
    };
    let args = &cmd.argv[1..];
    match name {
        "rm" => {
            if args
                .iter()
                .any(|w| w.literal && w.text == "--no-preserve-root")
            {
                out.push(Danger::Deny("rm --no-preserve-root".into()));
            }
            let recursive =
                has_flag(args, 'r', "--recursive") || has_flag(args, 'R', "--recursive");
            if recursive && let Some(t) = args.iter().find(|w| is_system_target(w)) {
                out.push(Danger::Deny(format!("recursive rm of {}", t.text)));
            }
        }
        "chmod" | "chown" | "chgrp" => {
            if has_flag(args, 'R', "--recursive")
                && let Some(t) = args.iter().find(|w| is_system_target(w))
            {
                out.push(Danger::Deny(format!("recursive {name} of {}", t.text)));
            }
        }
        "mke2fs" | "mkswap" | "wipefs" => {
            out.push(Danger::Deny(format!("`{name}` destroys file systems")));
        }
        n if n == "mkfs" || n.starts_with("mkfs.") => {
            out.push(Danger::Deny(format!("`{n}` creates a file system")));
        }
        "dd" => {
            if let Some(dev) = args
                .iter()
                .filter(|w| w.literal)
                .filter_map(|w| w.text.strip_prefix("of="))
                .find(|t| is_device(t))
            {
                out.push(Danger::Deny(format!("dd writes to device {dev}")));
            }
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            out.push(Danger::Ask(format!("`{name}` stops the machine")));
        }
        "init" if args.first().is_some_and(|w| w.text == "0" || w.text == "6") => {
            out.push(Danger::Ask("`init` changes the run level".into()));
        }
        "fdisk" | "sfdisk" | "parted" | "cfdisk" | "gdisk" => {
            out.push(Danger::Ask(format!("`{name}` edits partition tables")));
        }
        "kill" | "pkill" if args.iter().any(|w| w.text == "-1") => {
            out.push(Danger::Ask("kill of every process (-1)".into()));
        }
        _ => {}
    }
}

fn is_device(path: &str) -> bool {
    path.starts_with("/dev/") && !HARMLESS_DEVICES.contains(&path) && !path.starts_with("/dev/fd/")
}
