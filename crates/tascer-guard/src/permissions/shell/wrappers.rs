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

/// A wrapper that runs the command after its options (and a fixed number
/// of positional words, such as `timeout`'s duration).
struct OptionWrapper {
    /// The wrapper's names.
    names: &'static [&'static str],
    /// Short options that take a value.
    short_with_arg: &'static str,
    /// Long options that take a value.
    long_with_arg: &'static [&'static str],
    /// Positional words before the command.
    positional: usize,
    /// Whether the wrapper itself must be checked as a command too.
    keep_self: bool,
}

impl OptionWrapper {
    /// The command it runs, or what it runs that cannot be told.
    fn unwrap(&self, args: &[ShellWord]) -> Unwrapped {
        inner_after(
            args,
            self.short_with_arg,
            self.long_with_arg,
            self.positional,
            self.keep_self,
        )
    }
}

/// `OptionWrapper` with the defaults: no options with values, nothing
/// positional, not checked itself.
const fn wrapper(names: &'static [&'static str]) -> OptionWrapper {
    OptionWrapper {
        names,
        short_with_arg: "",
        long_with_arg: &[],
        positional: 0,
        keep_self: false,
    }
}

/// The wrappers that run the command after their options.
const OPTION_WRAPPERS: &[OptionWrapper] = &[
    OptionWrapper {
        short_with_arg: "CDghpRrtTUu",
        long_with_arg: &[
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
        keep_self: true,
        ..wrapper(&["sudo"])
    },
    OptionWrapper {
        short_with_arg: "uC",
        keep_self: true,
        ..wrapper(&["doas"])
    },
    OptionWrapper {
        short_with_arg: "n",
        long_with_arg: &["--adjustment"],
        ..wrapper(&["nice"])
    },
    wrapper(&["nohup", "builtin"]),
    OptionWrapper {
        short_with_arg: "fo",
        long_with_arg: &["--format", "--output"],
        ..wrapper(&["time"])
    },
    OptionWrapper {
        short_with_arg: "sk",
        long_with_arg: &["--signal", "--kill-after"],
        positional: 1,
        ..wrapper(&["timeout"])
    },
    wrapper(&["command"]),
    OptionWrapper {
        short_with_arg: "a",
        ..wrapper(&["exec"])
    },
    OptionWrapper {
        short_with_arg: "ioe",
        long_with_arg: &["--input", "--output", "--error"],
        ..wrapper(&["stdbuf"])
    },
    OptionWrapper {
        short_with_arg: "cn",
        long_with_arg: &["--class", "--classdata"],
        ..wrapper(&["ionice"])
    },
    OptionWrapper {
        positional: 1,
        ..wrapper(&["chrt"])
    },
    wrapper(&["setsid", "catchsegv", "unbuffer", "busybox", "toybox"]),
    OptionWrapper {
        short_with_arg: "SGRw",
        long_with_arg: &[
            "--setuid",
            "--setgid",
            "--root",
            "--wd",
            "--propagation",
            "--setgroups",
            "--map-user",
            "--map-group",
        ],
        ..wrapper(&["unshare"])
    },
    OptionWrapper {
        long_with_arg: &["--userspec", "--groups"],
        positional: 1,
        ..wrapper(&["chroot"])
    },
    OptionWrapper {
        short_with_arg: "eoOpPsSuUXabI",
        long_with_arg: &[
            "--output",
            "--attach",
            "--user",
            "--trace",
            "--string-limit",
        ],
        ..wrapper(&["strace"])
    },
    OptionWrapper {
        short_with_arg: "eopunsaAlL",
        long_with_arg: &["--output", "--user"],
        ..wrapper(&["ltrace"])
    },
    OptionWrapper {
        short_with_arg: "CNmlpPibw",
        long_with_arg: &[
            "--cpunodebind",
            "--membind",
            "--physcpubind",
            "--preferred",
            "--interleave",
        ],
        ..wrapper(&["numactl"])
    },
    OptionWrapper {
        long_with_arg: &["--user"],
        ..wrapper(&["pkexec"])
    },
    OptionWrapper {
        short_with_arg: "lsi",
        long_with_arg: &["--lib", "--faked", "--save-file", "--load-file"],
        ..wrapper(&["fakeroot"])
    },
    OptionWrapper {
        short_with_arg: "upaP",
        long_with_arg: &["--user", "--pass", "--address", "--port"],
        ..wrapper(&["torsocks"])
    },
    OptionWrapper {
        short_with_arg: "f",
        ..wrapper(&["proxychains", "proxychains4"])
    },
    OptionWrapper {
        long_with_arg: &["--config-file", "--dbus-daemon"],
        ..wrapper(&["dbus-run-session"])
    },
    OptionWrapper {
        short_with_arg: "nsfep",
        long_with_arg: &[
            "--server-num",
            "--server-args",
            "--auth-file",
            "--error-file",
            "--xauth-protocol",
        ],
        ..wrapper(&["xvfb-run"])
    },
    OptionWrapper {
        short_with_arg: "pEuMH",
        long_with_arg: &[
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
        ..wrapper(&["systemd-run"])
    },
    OptionWrapper {
        long_with_arg: &[
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
        ..wrapper(&["setpriv"])
    },
    OptionWrapper {
        short_with_arg: "tSG",
        long_with_arg: &["--target", "--setuid", "--setgid"],
        ..wrapper(&["nsenter"])
    },
];

/// `runuser` when it is not given a `-c` script.
const RUNUSER: OptionWrapper = OptionWrapper {
    short_with_arg: "ugGw",
    long_with_arg: &[
        "--user",
        "--group",
        "--supp-group",
        "--whitelist-environment",
    ],
    ..wrapper(&["runuser"])
};

/// `sg` when it is not given a `-c` script.
const SG: OptionWrapper = OptionWrapper {
    positional: 1,
    ..wrapper(&["sg"])
};

/// Classifies `argv` (whose name is literal).
pub(crate) fn unwrap(argv: &[ShellWord]) -> Unwrapped {
    let Some(first) = argv.first() else {
        return Unwrapped::Plain;
    };
    let name = base_name(&first.text);
    let args = &argv[1..];
    let result = match OPTION_WRAPPERS.iter().find(|w| w.names.contains(&name)) {
        Some(wrapper) => wrapper.unwrap(args),
        None => unwrap_special(name, args),
    };
    match result {
        Unwrapped::Inner { ref inner, .. } if inner.is_empty() => Unwrapped::Plain,
        other => other,
    }
}

/// The wrappers whose command line has a shape of its own.
fn unwrap_special(name: &str, args: &[ShellWord]) -> Unwrapped {
    match name {
        "taskset" if !has_word(args, &["-p", "--pid", "-a", "--all-tasks"]) => {
            inner_after(args, "", &[], 1, false)
        }
        "prlimit" if !has_word(args, &["-p", "--pid"]) => inner_after(args, "", &[], 0, false),
        "flock" => flock(args),
        "script" => script(args),
        "runuser" | "sg" => match su(args) {
            Unwrapped::Plain if name == "sg" => SG.unwrap(args),
            Unwrapped::Plain => RUNUSER.unwrap(args),
            other => other,
        },
        "parallel" => parallel(args),
        "env" => env(args),
        "xargs" => xargs(args),
        "find" => find(args),
        "eval" => eval(args),
        "su" => su(args),
        "watch" => watch(args),
        n if SHELLS.contains(&n) => shell_c(args),
        _ => Unwrapped::Plain,
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
