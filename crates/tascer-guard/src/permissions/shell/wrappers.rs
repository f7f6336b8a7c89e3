//! Wrapper commands that run another command: `sudo`, `env`, `timeout`,
//! `xargs`, `find -exec`, `bash -c`, `eval`, …

use super::{ShellWord, base_name};

/// What a command runs besides (or instead of) itself.
#[derive(Debug)]
pub(crate) enum Unwrapped {
    /// Not a wrapper (or a wrapper with nothing to run).
    Plain,
    /// Runs another argv.
    Inner {
        /// The inner argv.
        inner: Vec<ShellWord>,
        /// Whether the wrapper itself must be checked as a command too.
        keep_self: bool,
    },
    /// Runs a script string (`bash -c`, `eval`, `su -c`, `env -S`).
    Script {
        /// The script.
        script: ShellWord,
        /// Whether the wrapper itself must be checked as a command too.
        keep_self: bool,
    },
    /// Runs several argvs (`find -exec … \; -exec … +`).
    Many(Vec<Vec<ShellWord>>),
    /// Runs something that cannot be determined statically.
    Unknown(String),
}

const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish",
];

/// Classifies `argv` (whose name is literal).
pub(crate) fn unwrap(argv: &[ShellWord]) -> Unwrapped {
    let Some(first) = argv.first() else {
        return Unwrapped::Plain;
    };
    let name = base_name(&first.text);
    let args = &argv[1..];
    let result = match name {
        "sudo" => inner_after(
            args,
            "CDghpRrtTUu",
            &[
                "--chdir",
                "--close-from",
                "--group",
                "--host",
                "--prompt",
                "--chroot",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--user",
            ],
            0,
            true,
        ),
        "doas" => inner_after(args, "uC", &[], 0, true),
        "nice" => inner_after(args, "n", &["--adjustment"], 0, false),
        "nohup" | "builtin" => inner_after(args, "", &[], 0, false),
        "time" => inner_after(args, "fo", &["--format", "--output"], 0, false),
        "timeout" => inner_after(args, "sk", &["--signal", "--kill-after"], 1, false),
        "command" => inner_after(args, "", &[], 0, false),
        "exec" => inner_after(args, "a", &[], 0, false),
        "stdbuf" => inner_after(args, "ioe", &["--input", "--output", "--error"], 0, false),
        "ionice" => inner_after(args, "cn", &["--class", "--classdata"], 0, false),
        "chrt" => inner_after(args, "", &[], 1, false),
        "setsid" | "catchsegv" | "unbuffer" | "busybox" | "toybox" => {
            inner_after(args, "", &[], 0, false)
        }
        "taskset" if !has_word(args, &["-p", "--pid", "-a", "--all-tasks"]) => {
            inner_after(args, "", &[], 1, false)
        }
        "prlimit" if !has_word(args, &["-p", "--pid"]) => inner_after(args, "", &[], 0, false),
        "flock" => flock(args),
        "script" => script(args),
        "runuser" | "sg" => match su(args) {
            Unwrapped::Plain if name == "sg" => inner_after(args, "", &[], 1, false),
            Unwrapped::Plain => inner_after(
                args,
                "ugGw",
                &[
                    "--user",
                    "--group",
                    "--supp-group",
                    "--whitelist-environment",
                ],
                0,
                false,
            ),
            other => other,
        },
        "unshare" => inner_after(
            args,
            "SGRw",
            &[
                "--setuid",
                "--setgid",
                "--root",
                "--wd",
                "--propagation",
                "--setgroups",
                "--map-user",
                "--map-group",
            ],
            0,
            false,
        ),
        "chroot" => inner_after(args, "", &["--userspec", "--groups"], 1, false),
        "strace" => inner_after(
            args,
            "eoOpPsSuUXabI",
            &[
                "--output",
                "--attach",
                "--user",
                "--trace",
                "--string-limit",
            ],
            0,
            false,
        ),
        "ltrace" => inner_after(args, "eopunsaAlL", &["--output", "--user"], 0, false),
        "numactl" => inner_after(
            args,
            "CNmlpPibw",
            &[
                "--cpunodebind",
                "--membind",
                "--physcpubind",
                "--preferred",
                "--interleave",
            ],
            0,
            false,
        ),
        "pkexec" => inner_after(args, "", &["--user"], 0, false),
        "fakeroot" => inner_after(
            args,
            "lsi",
            &["--lib", "--faked", "--save-file", "--load-file"],
            0,
            false,
        ),
        "torsocks" => inner_after(
            args,
            "upaP",
            &["--user", "--pass", "--address", "--port"],
            0,
            false,
        ),
        "proxychains" | "proxychains4" => inner_after(args, "f", &[], 0, false),
        "dbus-run-session" => inner_after(args, "", &["--config-file", "--dbus-daemon"], 0, false),
        "xvfb-run" => inner_after(
            args,
            "nsfep",
            &[
                "--server-num",
                "--server-args",
                "--auth-file",
                "--error-file",
                "--xauth-protocol",
            ],
            0,
            false,
        ),
        "systemd-run" => inner_after(
            args,
            "pEuMH",
            &[
                "--unit",
                "--property",
                "--setenv",
                "--description",
                "--slice",
                "--uid",
                "--gid",
                "--working-directory",
                "--nice",
                "--machine",
                "--host",
            ],
            0,
            false,
        ),
        "setpriv" => inner_after(
            args,
            "",
            &[
                "--reuid",
                "--regid",
                "--ruid",
                "--euid",
                "--rgid",
                "--egid",
                "--groups",
                "--inh-caps",
                "--ambient-caps",
                "--bounding-set",
                "--securebits",
                "--selinux-label",
                "--apparmor-profile",
                "--pdeathsig",
            ],
            0,
            false,
        ),
        "nsenter" => inner_after(args, "tSG", &["--target", "--setuid", "--setgid"], 0, false),
        "parallel" => parallel(args),
        "env" => env(args),
        "xargs" => xargs(args),
        "find" => find(args),
        "eval" => eval(args),
        "su" => su(args),
        "watch" => watch(args),
        n if SHELLS.contains(&n) => shell_c(args),
        _ => Unwrapped::Plain,
    };
    match result {
        Unwrapped::Inner { ref inner, .. } if inner.is_empty() => Unwrapped::Plain,
        other => other,
    }
}

/// Skips options (and `skip_positional` positional words such as
/// `timeout`'s duration), returning the rest as the inner command.
fn inner_after(
    args: &[ShellWord],
    short_with_arg: &str,
    long_with_arg: &[&str],
    skip_positional: usize,
    keep_self: bool,
) -> Unwrapped {
    match skip_options(args, short_with_arg, long_with_arg) {
        Ok(i) => {
            let start = i + skip_positional;
            if start > args.len() {
                return Unwrapped::Plain;
            }
            if args[i..start].iter().any(|w| !w.literal) {
                return Unwrapped::Unknown("dynamic wrapper argument".into());
            }
            Unwrapped::Inner {
                inner: args[start..].to_vec(),
                keep_self,
            }
        }
        Err(reason) => Unwrapped::Unknown(reason),
    }
}

/// Index of the first non-option word.
fn skip_options(
    args: &[ShellWord],
    short_with_arg: &str,
    long_with_arg: &[&str],
) -> Result<usize, String> {
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if !w.literal {
            if w.text.starts_with('-') {
                return Err(format!("dynamic option `{}`", w.text));
            }
            return Ok(i);
        }
        let t = w.text.as_str();
        if t == "--" {
            return Ok(i + 1);
        }
        if let Some(long) = t.strip_prefix("--") {
            if !long.contains('=')
                && long_with_arg
                    .iter()
                    .any(|l| l.trim_start_matches("--") == long)
            {
                i += 1;
            }
            i += 1;
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            let body = &t[1..];
            // `nice -10`: a numeric option.
            if body.chars().all(|c| c.is_ascii_digit()) {
                i += 1;
                continue;
            }
            for (pos, c) in body.char_indices() {
                if short_with_arg.contains(c) {
                    if pos + c.len_utf8() == body.len() {
                        i += 1; // value is the next word
                    }
                    break;
                }
            }
            i += 1;
            continue;
        }
        return Ok(i);
    }
    Ok(i)
}

fn env(args: &[ShellWord]) -> Unwrapped {
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if !w.literal {
            return Unwrapped::Unknown(format!("dynamic env argument `{}`", w.text));
        }
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if t == "-S" || t == "--split-string" {
            return match args.get(i + 1) {
                Some(s) => Unwrapped::Script {
                    script: s.clone(),
                    keep_self: false,
                },
                None => Unwrapped::Plain,
            };
        }
        if let Some(s) = t.strip_prefix("--split-string=") {
            return Unwrapped::Script {
                script: ShellWord::literal(s),
                keep_self: false,
            };
        }
        if let Some(s) = t.strip_prefix("-S") {
            return Unwrapped::Script {
                script: ShellWord::literal(s),
                keep_self: false,
            };
        }
        if t == "-u" || t == "-C" || t == "--unset" || t == "--chdir" {
            i += 2;
            continue;
        }
        if t.starts_with('-') || (t.contains('=') && !t.starts_with('=')) {
            i += 1;
            continue;
        }
        break;
    }
    Unwrapped::Inner {
        inner: args.get(i..).map(<[ShellWord]>::to_vec).unwrap_or_default(),
        keep_self: false,
    }
}

fn has_word(args: &[ShellWord], words: &[&str]) -> bool {
    args.iter().any(|w| words.contains(&w.text.as_str()))
}

/// `flock [opts] FILE CMD…`, `flock [opts] FILE -c STRING`, `flock FD`.
fn flock(args: &[ShellWord]) -> Unwrapped {
    let i = match skip_options(args, "wE", &["--timeout", "--conflict-exit-code"]) {
        Ok(i) => i,
        Err(reason) => return Unwrapped::Unknown(reason),
    };
    let rest = args.get(i + 1..).unwrap_or_default();
    match rest.first().map(|w| w.text.as_str()) {
        None => Unwrapped::Plain,
        Some("-c" | "--command") => match rest.get(1) {
            Some(s) => Unwrapped::Script {
                script: s.clone(),
                keep_self: false,
            },
            None => Unwrapped::Plain,
        },
        Some(_) => match skip_options(rest, "wE", &["--timeout", "--conflict-exit-code"]) {
            Ok(j) => Unwrapped::Inner {
                inner: rest[j..].to_vec(),
                keep_self: false,
            },
            Err(reason) => Unwrapped::Unknown(reason),
        },
    }
}

/// `script [opts] -c STRING [file]`.
fn script(args: &[ShellWord]) -> Unwrapped {
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let t = w.text.as_str();
        if let Some(s) = t.strip_prefix("--command=") {
            return Unwrapped::Script {
                script: ShellWord::literal(s),
                keep_self: false,
            };
        }
        let bundle_c = t.starts_with('-') && !t.starts_with("--") && t.ends_with('c');
        if t == "--command" || bundle_c {
            return match args.get(i + 1) {
                Some(s) => Unwrapped::Script {
                    script: s.clone(),
                    keep_self: false,
                },
                None => Unwrapped::Plain,
            };
        }
        i += 1;
    }
    Unwrapped::Plain
}

/// `parallel [opts] CMD… ::: ARGS`: CMD with arguments from the input.
fn parallel(args: &[ShellWord]) -> Unwrapped {
    let i = match skip_options(
        args,
        "jnNSIad",
        &[
            "--jobs",
            "--max-args",
            "--sshlogin",
            "--arg-file",
            "--delimiter",
        ],
    ) {
        Ok(i) => i,
        Err(reason) => return Unwrapped::Unknown(reason),
    };
    let mut inner: Vec<ShellWord> = args[i..]
        .iter()
        .take_while(|w| !w.text.starts_with(":::"))
        .cloned()
        .collect();
    if inner.is_empty() {
        return Unwrapped::Unknown("`parallel` runs commands read from its input".into());
    }
    inner.push(ShellWord::dynamic("<parallel input>"));
    Unwrapped::Inner {
        inner,
        keep_self: false,
    }
}

fn xargs(args: &[ShellWord]) -> Unwrapped {
    let i = match skip_options(
        args,
        "adEILnPs",
        &[
            "--arg-file",
            "--delimiter",
            "--eof",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ],
    ) {
        Ok(i) => i,
        Err(reason) => return Unwrapped::Unknown(reason),
    };
    let mut inner: Vec<ShellWord> = args.get(i..).map(<[ShellWord]>::to_vec).unwrap_or_default();
    if inner.is_empty() {
        inner.push(ShellWord::literal("echo"));
    }
    // The arguments xargs appends come from stdin.
    inner.push(ShellWord::dynamic("<xargs input>"));
    Unwrapped::Inner {
        inner,
        keep_self: false,
    }
}

fn find(args: &[ShellWord]) -> Unwrapped {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let t = args[i].text.as_str();
        if args[i].literal && matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let mut cmd = Vec::new();
            i += 1;
            while i < args.len() {
                let w = &args[i];
                if w.literal && (w.text == ";" || w.text == "+") {
                    break;
                }
                cmd.push(w.clone());
                i += 1;
            }
            if !cmd.is_empty() {
                runs.push(cmd);
            }
        }
        i += 1;
    }
    if runs.is_empty() {
        Unwrapped::Plain
    } else {
        Unwrapped::Many(runs)
    }
}

fn eval(args: &[ShellWord]) -> Unwrapped {
    if args.is_empty() {
        return Unwrapped::Plain;
    }
    if let Some(w) = args.iter().find(|w| !w.literal) {
        return Unwrapped::Unknown(format!("eval of dynamic text `{}`", w.text));
    }
    let script = args
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    Unwrapped::Script {
        script: ShellWord::literal(script),
        keep_self: false,
    }
}

fn su(args: &[ShellWord]) -> Unwrapped {
    for (i, w) in args.iter().enumerate() {
        let t = w.text.as_str();
        if w.literal && (t == "-c" || t == "--command") {
            return match args.get(i + 1) {
                Some(s) => Unwrapped::Script {
                    script: s.clone(),
                    keep_self: true,
                },
                None => Unwrapped::Plain,
            };
        }
        if w.literal
            && let Some(s) = t.strip_prefix("--command=")
        {
            return Unwrapped::Script {
                script: ShellWord::literal(s),
                keep_self: true,
            };
        }
    }
    Unwrapped::Plain
}

fn watch(args: &[ShellWord]) -> Unwrapped {
    match skip_options(args, "nq", &["--interval", "--differences"]) {
        Ok(i) if i < args.len() => {
            let rest = &args[i..];
            if let Some(w) = rest.iter().find(|w| !w.literal) {
                return Unwrapped::Unknown(format!("watch of dynamic text `{}`", w.text));
            }
            let script = rest
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            Unwrapped::Script {
                script: ShellWord::literal(script),
                keep_self: false,
            }
        }
        Ok(_) => Unwrapped::Plain,
        Err(reason) => Unwrapped::Unknown(reason),
    }
}

/// `bash [opts] -c 'script' [name args…]`.
fn shell_c(args: &[ShellWord]) -> Unwrapped {
    let mut has_c = false;
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if !w.literal {
            if has_c {
                return Unwrapped::Unknown(format!("dynamic shell script `{}`", w.text));
            }
            if w.text.starts_with('-') {
                return Unwrapped::Unknown(format!("dynamic shell option `{}`", w.text));
            }
            return Unwrapped::Plain;
        }
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                i += 1;
            }
            i += 1;
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            let body = &t[1..];
            if body.contains('c') && t.starts_with('-') {
                has_c = true;
            }
            if body.ends_with('o') || body.ends_with('O') {
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    if !has_c {
        return Unwrapped::Plain;
    }
    match args.get(i) {
        Some(script) => Unwrapped::Script {
            script: script.clone(),
            keep_self: false,
        },
        None => Unwrapped::Plain,
    }
}
