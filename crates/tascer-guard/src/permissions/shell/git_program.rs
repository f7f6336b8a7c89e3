//! What `git` runs besides itself: commands in configuration keys (`-c
//! core.pager=…`, `GIT_CONFIG_*`), aliases, and the real sub-command behind
//! global options (`git -C . push` → `git push`).

use super::ShellWord;
use super::runs::{Runs, push_script};

/// git configuration keys whose value is a command git runs.
fn git_key_runs_command(key: &str) -> bool {
    const EXACT: &[&str] = &[
        "core.fsmonitor",
        "core.editor",
        "core.sshcommand",
        "core.pager",
        "core.askpass",
        "core.gitproxy",
        "core.alternaterefscommand",
        "sequence.editor",
        "diff.external",
        "credential.helper",
        "gpg.program",
        "uploadpack.packobjectshook",
        "interactive.difffilter",
        "web.browser",
        "sendemail.smtpserver",
        "sendemail.tocmd",
        "sendemail.cccmd",
    ];
    const SUFFIX: &[&str] = &[
        ".command",
        ".textconv",
        ".driver",
        ".clean",
        ".smudge",
        ".process",
        ".helper",
        ".program",
        ".cmd",
        ".uploadpack",
        ".receivepack",
        ".proxy",
    ];
    EXACT.contains(&key) || key.starts_with("pager.") || SUFFIX.iter().any(|s| key.ends_with(s))
}

/// git configuration keys that make git load code or config the analysis
/// cannot see.
fn git_key_loads(key: &str) -> bool {
    key == "core.hookspath"
        || key == "include.path"
        || (key.starts_with("includeif.") && key.ends_with(".path"))
        || (key.starts_with("protocol.") && key.ends_with(".allow"))
        || key == "core.worktree"
        || key == "safe.directory"
}

/// git's global options, configuration-driven commands and aliases.
pub(super) fn git(argv: &[ShellWord]) -> Runs {
    let mut out = Runs::default();
    let mut aliases: Vec<(String, ShellWord)> = Vec::new();
    let mut i = 1;
    let mut changed = false;
    while i < argv.len() {
        let w = &argv[i];
        let t = w.text.as_str();
        if !w.literal && t.starts_with('-') {
            out.opaque
                .push((format!("git option `{t}` known only at run time"), None));
            break;
        }
        if !t.starts_with('-') {
            break;
        }
        changed = true;
        let (opt, inline) = match t.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v)),
            _ => (t, None),
        };
        let takes_value = matches!(
            opt,
            "-C" | "-c"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--super-prefix"
                | "--config-env"
                | "--list-cmds"
                | "--attr-source"
        );
        let value = if takes_value && inline.is_none() {
            i += 1;
            argv.get(i)
        } else {
            None
        };
        match opt {
            "-c" => {
                if let Some(v) = value {
                    git_config(&mut out, &mut aliases, v);
                }
            }
            "--config-env" => out.opaque.push((
                "`git --config-env` takes configuration from the environment".into(),
                None,
            )),
            "--exec-path" if inline.is_some() => out.opaque.push((
                "`git --exec-path=…` chooses where git's sub-command programs come from".into(),
                None,
            )),
            _ => {}
        }
        i += 1;
    }
    let mut rest: Vec<ShellWord> = argv.get(i..).map(<[ShellWord]>::to_vec).unwrap_or_default();
    // Expand aliases defined on the command line (a few levels).
    for _ in 0..4 {
        let Some(sub) = rest.first().filter(|w| w.literal) else {
            break;
        };
        let Some((_, value)) = aliases.iter().find(|(n, _)| *n == sub.text) else {
            break;
        };
        changed = true;
        if !value.literal {
            out.opaque
                .push(("a git alias known only at run time".into(), None));
            break;
        }
        if let Some(cmd) = value.text.strip_prefix('!') {
            out.scripts
                .push(("git alias".into(), ShellWord::literal(cmd)));
            rest.remove(0);
            // The alias's arguments go to the shell command: no sub-command.
            rest.insert(0, ShellWord::literal("alias"));
            break;
        }
        let words = shlex::split(&value.text).unwrap_or_default();
        rest.splice(0..1, words.into_iter().map(ShellWord::literal));
    }
    git_subcommand(&mut out, &rest, i);
    if changed {
        let mut new = vec![argv[0].clone()];
        new.extend(rest);
        out.rewrite = Some(new);
    }
    out
}

fn git_config(out: &mut Runs, aliases: &mut Vec<(String, ShellWord)>, w: &ShellWord) {
    if !w.literal {
        out.opaque
            .push(("git configuration known only at run time".into(), None));
        return;
    }
    let (key, value) = w.text.split_once('=').unwrap_or((w.text.as_str(), "true"));
    let key = key.to_ascii_lowercase();
    if let Some(name) = key.strip_prefix("alias.") {
        aliases.push((name.to_string(), ShellWord::literal(value)));
    } else if git_key_runs_command(&key) {
        let cmd = value.strip_prefix('!').unwrap_or(value);
        out.scripts
            .push((format!("git -c {key}"), ShellWord::literal(cmd)));
    } else if git_key_loads(&key) {
        out.opaque.push((
            format!("git configuration `{key}` makes git run or load code from elsewhere"),
            None,
        ));
    }
}

/// Sub-commands that run commands given to them.
fn git_subcommand(out: &mut Runs, rest: &[ShellWord], offset: usize) {
    let Some(sub) = rest.first() else {
        return;
    };
    let args = &rest[1..];
    let joined = |ws: &[ShellWord]| -> ShellWord {
        if ws.iter().all(|w| w.literal) {
            ShellWord::literal(
                ws.iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        } else {
            ShellWord::dynamic("<run-time text>")
        }
    };
    if rest.iter().any(|w| w.text.starts_with("ext::")) {
        out.opaque
            .push(("an `ext::` URL makes git run a command".into(), None));
    }
    match sub.text.as_str() {
        "submodule" => {
            if let Some(p) = args.iter().position(|w| w.text == "foreach") {
                let cmd: Vec<ShellWord> = args[p + 1..]
                    .iter()
                    .skip_while(|w| w.text.starts_with("--"))
                    .cloned()
                    .collect();
                let script = joined(&cmd);
                push_script(
                    out,
                    "git submodule foreach",
                    &script,
                    &script.text.clone(),
                    offset,
                );
            }
        }
        "rebase" | "difftool" | "mergetool" | "filter-branch" | "filter-repo" => {
            let mut j = 0;
            while j < args.len() {
                let t = args[j].text.as_str();
                let takes = matches!(t, "--exec" | "-x" | "--extcmd" | "--tool" | "-t")
                    || t.ends_with("-filter");
                if let Some((o, v)) = t.split_once('=')
                    && (matches!(o, "--exec" | "--extcmd") || o.ends_with("-filter"))
                {
                    push_script(out, "git", &args[j], v, offset);
                } else if takes && !matches!(t, "--tool" | "-t") {
                    if let Some(v) = args.get(j + 1) {
                        push_script(out, "git", v, &v.text, offset);
                    }
                    j += 1;
                }
                j += 1;
            }
        }
        "bisect" if args.first().is_some_and(|w| w.text == "run") => {
            out.argvs.push(args[1..].to_vec());
        }
        "config" => {
            // Writing configuration that executes, for a later command.
            let words: Vec<&ShellWord> = args.iter().filter(|w| !w.text.starts_with('-')).collect();
            if let Some(key) = words.first()
                && words.len() >= 2
            {
                let k = key.text.to_ascii_lowercase();
                if !key.literal
                    || k.starts_with("alias.")
                    || git_key_runs_command(&k)
                    || git_key_loads(&k)
                {
                    out.opaque.push((
                        format!(
                            "`git config {}` stores configuration that makes git run commands",
                            key.text
                        ),
                        None,
                    ));
                }
            }
        }
        "-c" => {}
        _ => {}
    }
}
