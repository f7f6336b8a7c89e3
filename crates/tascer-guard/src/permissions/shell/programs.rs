//! What a program runs besides itself, judged from its argv: code the
//! permission check cannot see (inline interpreter code, script files,
//! start-up files), shell command lines hidden in options (`git -c
//! core.pager=…`, `tar --to-command=…`, `alias x=…`), and git's global
//! options and aliases in front of the real sub-command.

use super::runs::{Runs, push_script};
use super::{ShellWord, base_name};

const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh",
];

/// Environment variables whose value is a command line some program runs.
pub(crate) const COMMAND_VARS: &[&str] = &[
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "EDITOR",
    "VISUAL",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_PAGER",
    "PAGER",
    "MANPAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_PROXY_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
];

/// Environment variables that make programs load code from elsewhere.
pub(crate) const LOADING_VARS: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "LD_PRELOAD",
    "LD_AUDIT",
    "LD_LIBRARY_PATH",
    "NODE_OPTIONS",
    "PERL5OPT",
    "PERL5LIB",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "RUBYOPT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    // Run (or expanded, `$(…)` included) by an interactive shell at each
    // prompt: code, on a schedule the analysis cannot follow.
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS2",
];

/// True when an assignment to `name` makes programs load code the
/// analysis cannot see.
pub(crate) fn is_loading_var(name: &str) -> bool {
    LOADING_VARS.contains(&name)
        || name.starts_with("BASH_FUNC_")
        || name.starts_with("GIT_CONFIG_")
}

/// Other names under which deny rules must see a program: distribution
/// names (`nc.openbsd` → `nc`), versioned interpreters (`python3.12` →
/// `python3`).
pub(crate) fn aliases(name: &str) -> Vec<String> {
    let base = base_name(name);
    let mut out = Vec::new();
    match base {
        "netcat" | "ncat" | "nc.openbsd" | "nc.traditional" => out.push("nc".to_string()),
        _ => {}
    }
    if let Some(v) = base.strip_prefix("python")
        && v.starts_with(|c: char| c.is_ascii_digit())
    {
        let major = if v.starts_with('2') {
            "python2"
        } else {
            "python3"
        };
        if base != major {
            out.push(major.to_string());
        }
        out.push("python".to_string());
    } else if let Some((stem, suffix)) = base.split_once('.')
        && !stem.is_empty()
        && !matches!(
            suffix,
            "sh" | "bash" | "py" | "pl" | "rb" | "js" | "mjs" | "ts" | "php" | "lua" | "exe"
        )
        && !out.iter().any(|o| o == stem)
    {
        out.push(stem.to_string());
    }
    out
}

fn interpreter_name(name: &str) -> Option<&'static str> {
    let n = name;
    let family = if n.starts_with("python") || n.starts_with("pypy") {
        "python"
    } else {
        match n {
            "perl" | "perl5" => "perl",
            "ruby" | "jruby" => "ruby",
            "node" | "nodejs" => "node",
            "bun" => "bun",
            "deno" => "deno",
            "php" => "php",
            "lua" | "luajit" => "lua",
            "Rscript" => "R",
            "osascript" => "osascript",
            "tclsh" | "wish" => "tcl",
            "pwsh" | "powershell" => "pwsh",
            "irb" => "ruby",
            "jshell" => "java",
            _ => return None,
        }
    };
    Some(family)
}

/// Classifies `argv` (whose name is literal).
pub(crate) fn runs(argv: &[ShellWord]) -> Runs {
    let Some(first) = argv.first() else {
        return Runs::default();
    };
    let name = base_name(&first.text);
    match name {
        "." | "source" => {
            if argv.len() > 1 {
                Runs::opaque(format!("`{name}` runs the commands of a file"), Some(1))
            } else {
                Runs::default()
            }
        }
        n if SHELLS.contains(&n) => shell_without_c(name, argv),
        "git" => super::git_program::git(argv),
        "awk" | "gawk" | "mawk" | "nawk" => awk(name, argv),
        "sed" | "gsed" => sed(argv),
        "tar" | "gtar" | "bsdtar" => tar(argv),
        "make" | "gmake" => make(argv),
        "vim" | "vi" | "nvim" | "ex" | "view" | "gvim" | "vimdiff" => vim(name, argv),
        "gdb" => gdb(argv),
        "alias" => alias(argv),
        "trap" => trap(argv),
        "complete" | "compgen" => option_code(name, argv, &["-C"], "a completion command"),
        "bind" => option_code(name, argv, &["-x"], "a key binding's command"),
        "mapfile" | "readarray" => option_code(name, argv, &["-C"], "a callback"),
        "fc" => Runs::opaque("`fc` runs commands from the shell's history", None),
        "hash" => hash(argv),
        "enable" if argv.iter().any(|w| w.text == "-f") => {
            Runs::opaque("`enable -f` loads a builtin from a shared object", None)
        }
        "deno" => deno(argv),
        _ => match interpreter_name(name) {
            Some(family) => interpreter(name, family, argv),
            None => Runs::default(),
        },
    }
}

/// A shell not given `-c`: it runs a script file, or reads its program
/// from standard input.
fn shell_without_c(name: &str, argv: &[ShellWord]) -> Runs {
    let mut i = 1;
    while i < argv.len() {
        let w = &argv[i];
        let t = w.text.as_str();
        if !w.literal {
            return Runs::opaque(format!("`{name}` runs a script named at run time"), Some(i));
        }
        if matches!(t, "--version" | "--help") {
            return Runs::default();
        }
        if matches!(t, "--rcfile" | "--init-file") {
            return Runs::opaque(
                format!("`{name} {t}` runs the commands of a file"),
                Some(i + 1),
            );
        }
        if t == "--" {
            i += 1;
            break;
        }
        if t.starts_with("--") {
            i += 1;
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            if t[1..].contains('s') {
                return Runs::opaque(
                    format!("`{name} -s` reads its program from standard input"),
                    None,
                );
            }
            if t.ends_with('o') || t.ends_with('O') {
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    script_or_stdin(name, argv, i)
}

/// A program that runs the script file at `argv[i]`, or reads its program
/// from standard input when there is none.
fn script_or_stdin(name: &str, argv: &[ShellWord], i: usize) -> Runs {
    match argv.get(i) {
        Some(file) => Runs::opaque(
            format!("`{name}` runs the script file `{}`", file.text),
            Some(i),
        ),
        None => Runs::opaque(
            format!("`{name}` reads its program from standard input"),
            None,
        ),
    }
}

/// Inline code and script files of language interpreters.
fn interpreter(name: &str, family: &str, argv: &[ShellWord]) -> Runs {
    // Short options that take the code, short options that take another
    // value, long options that take the code.
    let (code_short, value_short, code_long): (&str, &str, &[&str]) = match family {
        "python" => ("cm", "WXQ", &[]),
        "perl" => ("eE", "IMmdx", &[]),
        "ruby" => ("e", "IrCEF", &[]),
        "node" | "bun" => (
            "epr",
            "",
            &["--eval", "--print", "--require", "--import", "--loader"],
        ),
        "php" => ("rBRFE", "cdz", &[]),
        "lua" => ("el", "", &[]),
        "R" => ("e", "", &["--file"]),
        "osascript" => ("e", "l", &[]),
        "pwsh" => ("cfe", "", &["-Command", "-File", "-EncodedCommand"]),
        _ => ("", "", &[]),
    };
    let mut i = 1;
    while i < argv.len() {
        let w = &argv[i];
        let t = w.text.as_str();
        if !w.literal {
            if t.starts_with('-') {
                return Runs::opaque(
                    format!("`{name}` is given an option known only at run time"),
                    Some(i),
                );
            }
            break;
        }
        if matches!(t, "--version" | "-V" | "-v" | "--help" | "-h" | "-version") {
            return Runs::default();
        }
        if t == "--" {
            i += 1;
            break;
        }
        if t == "-" {
            return Runs::opaque(
                format!("`{name}` reads its program from standard input"),
                None,
            );
        }
        if let Some(long) = code_long
            .iter()
            .find(|l| t == **l || t.strip_prefix(**l).is_some_and(|r| r.starts_with('=')))
        {
            return Runs::opaque(
                format!("`{name} {long}` runs inline {family} code"),
                Some(i),
            );
        }
        if t.starts_with("--") {
            i += 1;
            continue;
        }
        if t.starts_with('-') && t.len() > 1 {
            let body = &t[1..];
            for (pos, c) in body.char_indices() {
                if code_short.contains(c) {
                    let what = if family == "python" && c == 'm' {
                        format!("`{name} -m` runs a module")
                    } else {
                        format!("`{name} -{c}` runs inline {family} code")
                    };
                    return Runs::opaque(what, Some(i));
                }
                if value_short.contains(c) {
                    if pos + c.len_utf8() == body.len() {
                        i += 1;
                    }
                    break;
                }
            }
            i += 1;
            continue;
        }
        break;
    }
    script_or_stdin(name, argv, i)
}

fn deno(argv: &[ShellWord]) -> Runs {
    match argv.get(1).map(|w| w.text.as_str()) {
        Some("--version" | "-V" | "--help" | "-h" | "fmt" | "lint" | "info" | "doc") => {
            Runs::default()
        }
        Some(sub) => Runs::opaque(
            format!("`deno {sub}` runs code the check cannot see"),
            Some(1),
        ),
        None => Runs::opaque("`deno` reads its program from standard input", None),
    }
}

/// True when an awk program runs commands (`system()`, `| "cmd"`,
/// `"cmd" | getline`).
fn awk_runs_commands(program: &str) -> bool {
    program.contains("system") || program.replace("||", "").contains('|')
}

fn awk(name: &str, argv: &[ShellWord]) -> Runs {
    let mut i = 1;
    while i < argv.len() {
        let w = &argv[i];
        let t = w.text.as_str();
        if !w.literal {
            return Runs::opaque(format!("`{name}` program known only at run time"), Some(i));
        }
        if matches!(t, "-f" | "--file")
            || t.starts_with("--file=")
            || (t.starts_with("-f") && t.len() > 2)
        {
            return Runs::opaque(format!("`{name} -f` runs a program file"), Some(i));
        }
        if matches!(t, "-e" | "--source") {
            return match argv.get(i + 1) {
                Some(p) if p.literal && !awk_runs_commands(&p.text) => Runs::default(),
                _ => Runs::opaque(format!("`{name}` program runs commands"), Some(i + 1)),
            };
        }
        if matches!(t, "-v" | "-F") {
            i += 2;
            continue;
        }
        if t == "--" {
            i += 1;
            break;
        }
        if t.starts_with('-') && t.len() > 1 {
            i += 1;
            continue;
        }
        break;
    }
    match argv.get(i) {
        Some(p) if awk_runs_commands(&p.text) => Runs::opaque(
            format!("the `{name}` program runs commands (`system`, pipes)"),
            Some(i),
        ),
        _ => Runs::default(),
    }
}

/// True when a sed script uses GNU sed's `e` command or the `e` flag of
/// `s`, which run shell commands.
pub(crate) fn sed_executes(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let n = chars.len();
    while i < n {
        // Skip separators and the address.
        while i < n && matches!(chars[i], ';' | '\n' | ' ' | '\t' | '{' | '}') {
            i += 1;
        }
        while i < n {
            let c = chars[i];
            if c.is_ascii_digit() || matches!(c, '$' | ',' | '!' | '~' | '+' | ' ') {
                i += 1;
            } else if c == '/' || c == '\\' {
                let delim = if c == '\\' {
                    i += 1;
                    chars.get(i).copied().unwrap_or('/')
                } else {
                    '/'
                };
                i += 1;
                while i < n && chars[i] != delim {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                while i < n && matches!(chars[i], 'I' | 'M') {
                    i += 1;
                }
            } else {
                break;
            }
        }
        if i >= n {
            break;
        }
        let cmd = chars[i];
        i += 1;
        match cmd {
            'e' => return true,
            's' | 'y' => {
                let Some(&delim) = chars.get(i) else {
                    break;
                };
                i += 1;
                let mut parts = 0;
                while i < n && parts < 2 {
                    if chars[i] == '\\' {
                        i += 2;
                        continue;
                    }
                    if chars[i] == delim {
                        parts += 1;
                    }
                    i += 1;
                }
                let start = i;
                while i < n && !matches!(chars[i], ';' | '\n' | '}') {
                    i += 1;
                }
                let flags: String = chars[start..i.min(n)].iter().collect();
                // `w file` ends the flags; only letters before it count.
                let flags = flags.split('w').next().unwrap_or("");
                if cmd == 's' && flags.contains('e') {
                    return true;
                }
            }
            'a' | 'i' | 'c' | 'r' | 'R' | 'w' | 'W' | 'b' | 't' | 'T' | ':' => {
                // These take the rest of the line.
                while i < n && chars[i] != '\n' {
                    i += 1;
                }
            }
            _ => {}
        }
    }
    false
}

fn sed(argv: &[ShellWord]) -> Runs {
    let mut scripts = Vec::new();
    let mut first_free = None;
    let mut i = 1;
    let mut after_dashdash = false;
    while i < argv.len() {
        let w = &argv[i];
        let t = w.text.as_str();
        if !after_dashdash && w.literal && t.starts_with('-') && t.len() > 1 {
            if t == "--" {
                after_dashdash = true;
            } else if matches!(t, "-e" | "--expression") {
                scripts.push(i + 1);
                i += 1;
            } else if t.starts_with("--expression=") || (t.starts_with("-e") && t.len() > 2) {
                scripts.push(i);
            } else if matches!(t, "-f" | "--file")
                || t.starts_with("--file=")
                || (t.starts_with("-f") && t.len() > 2)
            {
                return Runs::opaque("`sed -f` runs a script file", Some(i));
            } else if matches!(t, "-l" | "--line-length") {
                i += 1;
            } else if t.contains('f') && !t.starts_with("--") {
                return Runs::opaque("`sed -f` runs a script file", Some(i));
            } else if t.contains('e') && !t.starts_with("--") {
                scripts.push(i + 1);
                i += 1;
            }
        } else if first_free.is_none() {
            first_free = Some(i);
        }
        i += 1;
    }
    if scripts.is_empty()
        && let Some(f) = first_free
    {
        scripts.push(f);
    }
    for s in scripts {
        match argv.get(s) {
            Some(w) if !w.literal => {
                return Runs::opaque("a `sed` script known only at run time", Some(s));
            }
            Some(w) => {
                let text = w
                    .text
                    .strip_prefix("--expression=")
                    .or_else(|| w.text.strip_prefix("-e"))
                    .unwrap_or(&w.text);
                if sed_executes(text) {
                    return Runs::opaque("the `sed` script runs shell commands (`e`)", Some(s));
                }
            }
            None => {}
        }
    }
    Runs::default()
}

fn tar(argv: &[ShellWord]) -> Runs {
    let mut out = Runs::default();
    let mut i = 1;
    while i < argv.len() {
        let w = &argv[i];
        let t = w.text.as_str();
        let script_long = [
            "--to-command",
            "--use-compress-program",
            "--info-script",
            "--new-volume-script",
            "--rsh-command",
        ];
        if let Some(v) = t.strip_prefix("--checkpoint-action=") {
            if let Some(cmd) = v.strip_prefix("exec=") {
                push_script(&mut out, "tar --checkpoint-action", w, cmd, i);
            }
        } else if let Some((opt, v)) = t.split_once('=')
            && script_long.contains(&opt)
        {
            push_script(&mut out, "tar", w, v, i);
        } else if script_long.contains(&t) || matches!(t, "-I" | "-F") {
            if let Some(v) = argv.get(i + 1) {
                push_script(&mut out, "tar", v, &v.text, i + 1);
            }
            i += 1;
        }
        i += 1;
    }
    out
}

fn make(argv: &[ShellWord]) -> Runs {
    for (i, w) in argv.iter().enumerate().skip(1) {
        let t = w.text.as_str();
        if matches!(t, "-f" | "--file" | "--makefile")
            || t.starts_with("--file=")
            || t.starts_with("--makefile=")
            || (t.starts_with("-f") && t.len() > 2)
        {
            return Runs::opaque("`make -f` runs the recipes of a chosen file", Some(i));
        }
        if t == "-E" || t == "--eval" || t.starts_with("--eval=") {
            return Runs::opaque("`make --eval` runs inline rules", Some(i));
        }
    }
    Runs::default()
}

fn vim(name: &str, argv: &[ShellWord]) -> Runs {
    for (i, w) in argv.iter().enumerate().skip(1) {
        let t = w.text.as_str();
        if matches!(t, "-c" | "--cmd" | "-S" | "-s" | "-u") || (t.starts_with('+') && t.len() > 1) {
            return Runs::opaque(format!("`{name} {t}` runs editor commands"), Some(i));
        }
    }
    Runs::default()
}

fn gdb(argv: &[ShellWord]) -> Runs {
    for (i, w) in argv.iter().enumerate().skip(1) {
        let t = w.text.trim_start_matches('-');
        if matches!(
            t,
            "ex" | "x" | "eval-command" | "command" | "batch" | "iex" | "ix"
        ) {
            return Runs::opaque("`gdb` runs debugger commands", Some(i));
        }
    }
    Runs::default()
}

/// `alias name=value`: the value is a command line the name will run.
fn alias(argv: &[ShellWord]) -> Runs {
    let mut out = Runs::default();
    for (i, w) in argv.iter().enumerate().skip(1) {
        if let Some((_, value)) = w.text.split_once('=') {
            push_script(&mut out, "alias", w, value, i);
        }
    }
    out
}

/// `trap HANDLER SIGNAL…`: the handler's string is code the shell runs
/// later (on the signal, at `EXIT`, before each command for `DEBUG`), out
/// of the analysis's sight. Listing (`-l`, `-p`) and resetting (`-`, an
/// empty handler, signals alone) run nothing.
fn trap(argv: &[ShellWord]) -> Runs {
    let mut args = argv.iter().enumerate().skip(1).peekable();
    match args.peek().map(|(_, w)| w.text.as_str()) {
        Some("-l" | "-p" | "-lp" | "-pl") => return Runs::default(),
        Some("--") => {
            args.next();
        }
        _ => {}
    }
    let rest: Vec<(usize, &ShellWord)> = args.collect();
    let Some(&(i, handler)) = rest.first() else {
        return Runs::default();
    };
    let resets = handler.literal && (handler.text.is_empty() || handler.text == "-");
    let signals_only = rest.len() == 1 && handler.literal && is_signal(&handler.text);
    if resets || signals_only {
        return Runs::default();
    }
    Runs::opaque(
        "a `trap` handler's string, code the shell runs later, on a signal or at exit",
        Some(i),
    )
}

/// True for a signal name or number as `trap` takes it.
fn is_signal(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '+' || c == '-')
}

/// A builtin that takes a string of code after one of `options` (`complete
/// -C CMD`, `bind -x '"\C-x": CMD'`, `mapfile -C CALLBACK`): opaque when
/// the option is given.
fn option_code(name: &str, argv: &[ShellWord], options: &[&str], what: &str) -> Runs {
    let given = argv.iter().enumerate().skip(1).find(|(_, w)| {
        options
            .iter()
            .any(|o| w.text == *o || (w.text.starts_with(o) && w.text.len() > o.len()))
    });
    match given {
        Some((i, w)) => Runs::opaque(
            format!(
                "`{name} {}` runs {what}, code the check does not read",
                &w.text[..2]
            ),
            Some(i + 1),
        ),
        None => Runs::default(),
    }
}

/// `hash -p PATH NAME`: NAME will run PATH.
fn hash(argv: &[ShellWord]) -> Runs {
    let mut out = Runs::default();
    if let Some(i) = argv.iter().position(|w| w.text == "-p") {
        match argv.get(i + 1) {
            Some(p) if p.literal => out.argvs.push(vec![p.clone()]),
            Some(_) => out.opaque.push((
                "`hash -p` names a program known only at run time".into(),
                None,
            )),
            None => {}
        }
    }
    out
}
