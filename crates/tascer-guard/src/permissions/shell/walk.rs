//! Walks the brush-parser AST and collects simple commands.

use brush_parser::ast::{
    AndOr, AndOrList, Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList,
    ExtendedTestExpr, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, Pipeline, RedirectList,
};
use brush_parser::{Parser, ParserOptions};

use super::programs;
use super::words::{self, Resolved};
use super::wrappers::{self, Unwrapped};
use super::{MAX_DEPTH, OpaqueCode, ShellAnalysis, ShellWord, SimpleCommand, base_name};

/// Longest command string the analyser parses.
const MAX_SOURCE_LEN: usize = 256 * 1024;
/// Most unclosed `(` the analyser hands to the parser.
const MAX_UNCLOSED_PARENS: usize = 10;

/// Counts `(` left unclosed, ignoring quoted text and escapes.
fn unclosed_parens(src: &str) -> usize {
    let mut open = 0usize;
    let mut chars = src.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => {
                chars.next();
            }
            (Some('"'), '"') => quote = None,
            (None, '\'' | '"') => quote = Some(c),
            (_, '(') => open += 1,
            (_, ')') => open = open.saturating_sub(1),
            _ => {}
        }
    }
    open
}

/// Collects the simple commands of a program.
pub(crate) struct Walker {
    out: ShellAnalysis,
}

impl Walker {
    /// Analyses `source` from scratch.
    pub(crate) fn run(source: &str) -> ShellAnalysis {
        let mut w = Walker {
            out: ShellAnalysis::default(),
        };
        w.source(source, 0, &[]);
        w.out
    }

    fn unresolved(&mut self, reason: impl Into<String>) {
        self.out.unresolved.push(reason.into());
    }

    fn source(&mut self, src: &str, depth: usize, via: &[String]) {
        if depth > MAX_DEPTH {
            self.unresolved(format!("nesting deeper than {MAX_DEPTH} levels"));
            return;
        }
        if src.len() > MAX_SOURCE_LEN {
            self.unresolved(format!("command longer than {MAX_SOURCE_LEN} bytes"));
            return;
        }
        if unclosed_parens(src) > MAX_UNCLOSED_PARENS {
            // The parser backtracks exponentially on many unclosed `(`.
            self.unresolved("too many unclosed parentheses");
            return;
        }
        let opts = ParserOptions::default();
        let mut parser = Parser::new(std::io::Cursor::new(src), &opts);
        match parser.parse_program() {
            Ok(program) => {
                for cc in &program.complete_commands {
                    self.list(cc, depth, via);
                }
            }
            Err(e) => self.unresolved(format!("cannot parse `{src}`: {e}")),
        }
    }

    fn list(&mut self, list: &CompoundList, depth: usize, via: &[String]) {
        for item in &list.0 {
            self.and_or(&item.0, depth, via);
        }
    }

    fn and_or(&mut self, a: &AndOrList, depth: usize, via: &[String]) {
        self.pipeline(&a.first, depth, via);
        for next in &a.additional {
            match next {
                AndOr::And(p) | AndOr::Or(p) => self.pipeline(p, depth, via),
            }
        }
    }

    fn pipeline(&mut self, p: &Pipeline, depth: usize, via: &[String]) {
        let mut stages = Vec::new();
        for cmd in &p.seq {
            let start = self.out.commands.len();
            self.command(cmd, depth, via);
            let names = self.out.commands[start..]
                .iter()
                .filter_map(|c| c.base_name().map(str::to_string))
                .collect();
            stages.push(names);
        }
        if stages.len() > 1 {
            self.out.pipelines.push(stages);
        }
    }

    fn command(&mut self, cmd: &Command, depth: usize, via: &[String]) {
        match cmd {
            Command::Simple(sc) => {
                let mut argv = Vec::new();
                let mut writes = Vec::new();
                let items = sc
                    .prefix
                    .iter()
                    .flat_map(|p| p.0.iter().map(|i| (i, true)))
                    .collect::<Vec<_>>();
                for (item, _) in &items {
                    self.item(item, true, &mut argv, &mut writes, depth, via);
                }
                if let Some(w) = &sc.word_or_name {
                    let r = words::resolve(&w.value);
                    if let Some(word) = self.take(r, depth, via) {
                        argv.push(word);
                    }
                }
                if let Some(suffix) = &sc.suffix {
                    for item in &suffix.0 {
                        self.item(item, false, &mut argv, &mut writes, depth, via);
                    }
                }
                if !argv.is_empty() {
                    self.emit(argv, writes, via.to_vec(), depth);
                }
            }
            Command::Compound(cc, redirects) => {
                self.compound(cc, depth, via);
                self.redirect_list(redirects.as_ref(), depth, via);
            }
            Command::Function(f) => {
                let start = self.out.commands.len();
                self.compound(&f.body.0, depth, via);
                self.redirect_list(f.body.1.as_ref(), depth, via);
                let name = f.fname.value.as_str();
                let self_calls = self.out.commands[start..]
                    .iter()
                    .filter(|c| c.name() == Some(name))
                    .count();
                if self_calls >= 2 {
                    self.out.fork_bombs.push(name.to_string());
                }
            }
            Command::ExtendedTest(t, redirects) => {
                self.test_expr(&t.expr, depth, via);
                self.redirect_list(redirects.as_ref(), depth, via);
            }
        }
    }

    fn test_expr(&mut self, e: &ExtendedTestExpr, depth: usize, via: &[String]) {
        match e {
            ExtendedTestExpr::And(a, b) | ExtendedTestExpr::Or(a, b) => {
                self.test_expr(a, depth, via);
                self.test_expr(b, depth, via);
            }
            ExtendedTestExpr::Not(a) | ExtendedTestExpr::Parenthesized(a) => {
                self.test_expr(a, depth, via)
            }
            ExtendedTestExpr::UnaryTest(_, w) => self.scan(&w.value, depth, via),
            ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.scan(&a.value, depth, via);
                self.scan(&b.value, depth, via);
            }
        }
    }

    fn compound(&mut self, cc: &CompoundCommand, depth: usize, via: &[String]) {
        match cc {
            CompoundCommand::Arithmetic(a) => self.scan_text(&a.expr.value, depth, via),
            CompoundCommand::ArithmeticForClause(a) => {
                for e in [&a.initializer, &a.condition, &a.updater]
                    .into_iter()
                    .flatten()
                {
                    self.scan_text(&e.value, depth, via);
                }
                self.list(&a.body.list, depth, via);
            }
            CompoundCommand::BraceGroup(b) => self.list(&b.list, depth, via),
            CompoundCommand::Subshell(s) => self.list(&s.list, depth, via),
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.scan(&w.value, depth, via);
                }
                self.list(&f.body.list, depth, via);
            }
            CompoundCommand::CaseClause(c) => {
                self.scan(&c.value.value, depth, via);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.scan(&p.value, depth, via);
                    }
                    if let Some(l) = &item.cmd {
                        self.list(l, depth, via);
                    }
                }
            }
            CompoundCommand::IfClause(i) => {
                self.list(&i.condition, depth, via);
                self.list(&i.then, depth, via);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c, depth, via);
                    }
                    self.list(&e.body, depth, via);
                }
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.list(&w.0, depth, via);
                self.list(&w.1.list, depth, via);
            }
            CompoundCommand::Coprocess(c) => self.command(&c.body, depth, via),
        }
    }

    fn item(
        &mut self,
        item: &CommandPrefixOrSuffixItem,
        in_prefix: bool,
        argv: &mut Vec<ShellWord>,
        writes: &mut Vec<ShellWord>,
        depth: usize,
        via: &[String],
    ) {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(r) => self.redirect(r, writes, depth, via),
            CommandPrefixOrSuffixItem::Word(w) => {
                let r = words::resolve(&w.value);
                if let Some(word) = self.take(r, depth, via) {
                    argv.push(word);
                }
            }
            CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                let r = words::resolve(&w.value);
                let word = self.take(r, depth, via);
                if let Some(word) = word {
                    if in_prefix {
                        self.assignment(&word, depth, via);
                    } else {
                        argv.push(word);
                    }
                }
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                self.list(&sub.list, depth + 1, via);
                argv.push(ShellWord::dynamic("<process substitution>"));
            }
        }
    }

    fn redirect_list(&mut self, list: Option<&RedirectList>, depth: usize, via: &[String]) {
        let mut writes = Vec::new();
        for r in list.map(|l| l.0.as_slice()).unwrap_or_default() {
            self.redirect(r, &mut writes, depth, via);
        }
        if !writes.is_empty() {
            // Redirections of a compound command: record them on a
            // synthetic no-op so that dangerous targets are still seen.
            self.push(SimpleCommand::new(
                vec![ShellWord::literal(":")],
                writes,
                via.to_vec(),
            ));
        }
    }

    fn redirect(
        &mut self,
        r: &IoRedirect,
        writes: &mut Vec<ShellWord>,
        depth: usize,
        via: &[String],
    ) {
        match r {
            IoRedirect::File(_, kind, target) => match target {
                IoFileRedirectTarget::Filename(w) => {
                    let resolved = words::resolve(&w.value);
                    if let Some(word) = self.take(resolved, depth, via) {
                        if matches!(
                            kind,
                            IoFileRedirectKind::Read | IoFileRedirectKind::ReadAndWrite
                        ) {
                            self.out.reads.push(word.clone());
                        }
                        if matches!(
                            kind,
                            IoFileRedirectKind::Write
                                | IoFileRedirectKind::Append
                                | IoFileRedirectKind::Clobber
                                | IoFileRedirectKind::ReadAndWrite
                        ) {
                            writes.push(word);
                        }
                    }
                }
                IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                    self.list(&sub.list, depth + 1, via)
                }
                IoFileRedirectTarget::Duplicate(w) => self.scan(&w.value, depth, via),
                IoFileRedirectTarget::Fd(_) => {}
            },
            IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    let r = words::resolve_heredoc(&doc.doc.value);
                    let _ = self.take(r, depth, via);
                }
            }
            IoRedirect::HereString(_, w) => self.scan(&w.value, depth, via),
            IoRedirect::OutputAndError(w, _) => {
                let r = words::resolve(&w.value);
                if let Some(word) = self.take(r, depth, via) {
                    writes.push(word);
                }
            }
        }
    }

    /// Resolves a word only for the commands it would run.
    fn scan(&mut self, raw: &str, depth: usize, via: &[String]) {
        let r = words::resolve(raw);
        let _ = self.take(r, depth, via);
    }

    /// Scans free text (arithmetic) for substitutions.
    fn scan_text(&mut self, raw: &str, depth: usize, via: &[String]) {
        if raw.contains("$(") || raw.contains('`') {
            let r = words::resolve_heredoc(raw);
            let _ = self.take(r, depth, via);
        }
    }

    /// Records what a resolved word runs and returns the word.
    fn take(&mut self, r: Resolved, depth: usize, via: &[String]) -> Option<ShellWord> {
        self.out.unresolved.extend(r.unresolved);
        for nested in &r.nested {
            let mut v = via.to_vec();
            v.push("$(…)".into());
            self.source(nested, depth + 1, &v);
        }
        r.word
    }

    /// Records a simple command, unwrapping wrappers.
    fn emit(
        &mut self,
        argv: Vec<ShellWord>,
        writes: Vec<ShellWord>,
        via: Vec<String>,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            self.unresolved(format!("nesting deeper than {MAX_DEPTH} levels"));
            return;
        }
        let Some(first) = argv.first() else {
            return;
        };
        if !first.literal || first.glob {
            self.unresolved(format!("dynamic command name `{}`", first.text));
            self.push(SimpleCommand::new(argv, writes, via));
            return;
        }
        let name = base_name(&first.text).to_string();
        if matches!(
            name.as_str(),
            "export" | "declare" | "typeset" | "readonly" | "local" | "env"
        ) {
            // Assignments made here reach the commands run later.
            for w in argv[1..]
                .iter()
                .take_while(|w| name != "env" || w.text.starts_with('-') || w.text.contains('='))
            {
                if w.text.contains('=') && !w.text.starts_with('-') {
                    self.assignment(w, depth, &via);
                }
            }
        }
        match wrappers::unwrap(&argv) {
            Unwrapped::Plain => self.plain(argv, writes, via, depth),
            Unwrapped::Inner { inner, keep_self } => {
                let mut v = via.clone();
                v.push(name);
                if keep_self {
                    self.push(SimpleCommand::new(argv, writes.clone(), via));
                } else {
                    self.wrapper(argv, via);
                }
                self.emit(inner, writes, v, depth + 1);
            }
            Unwrapped::Script { script, keep_self } => {
                let mut v = via.clone();
                v.push(format!("{name} -c"));
                if keep_self {
                    self.push(SimpleCommand::new(argv, writes, via));
                } else {
                    self.wrapper(argv, via.clone());
                    if !writes.is_empty() {
                        self.push(SimpleCommand::new(
                            vec![ShellWord::literal(":")],
                            writes,
                            via,
                        ));
                    }
                }
                if script.literal {
                    self.source(&script.text, depth + 1, &v);
                } else {
                    self.unresolved(format!("dynamic script `{}`", script.text));
                }
            }
            Unwrapped::Many(runs) => {
                let mut v = via.clone();
                v.push(name);
                self.push(SimpleCommand::new(argv, writes, via));
                for run in runs {
                    self.emit(run, Vec::new(), v.clone(), depth + 1);
                }
            }
            Unwrapped::Unknown(reason) => {
                self.unresolved(reason);
                self.push(SimpleCommand::new(argv, writes, via));
            }
        }
    }

    /// A command that is not a wrapper: what it runs besides itself.
    fn plain(
        &mut self,
        argv: Vec<ShellWord>,
        writes: Vec<ShellWord>,
        via: Vec<String>,
        depth: usize,
    ) {
        let runs = programs::runs(&argv);
        let argv = runs.rewrite.unwrap_or(argv);
        let name = argv.first().map(|w| base_name(&w.text).to_string());
        let cmd = SimpleCommand::new(argv, writes, via.clone());
        for (what, code_word) in runs.opaque {
            self.out.opaque.push(OpaqueCode {
                command: cmd.clone(),
                what,
                code_word,
            });
        }
        self.push(cmd);
        let mut v = via;
        v.push(name.unwrap_or_default());
        for (label, script) in runs.scripts {
            let mut v = v.clone();
            v.push(label);
            self.source(&script.text, depth + 1, &v);
        }
        for run in runs.argvs {
            self.emit(run, Vec::new(), v.clone(), depth + 1);
        }
    }

    fn push(&mut self, cmd: SimpleCommand) {
        self.out.commands.push(cmd);
    }

    /// Keeps a wrapper that hands its work on (see
    /// [`ShellAnalysis::wrappers`](super::ShellAnalysis::wrappers)).
    fn wrapper(&mut self, argv: Vec<ShellWord>, via: Vec<String>) {
        self.out
            .wrappers
            .push(SimpleCommand::new(argv, Vec::new(), via));
    }

    /// An assignment (`NAME=value`, in front of a command, alone, or
    /// given to `export`/`env`): values some program runs as a command
    /// line are analysed; values that make programs load code from
    /// elsewhere are opaque; `PATH` values are kept for
    /// [`resolve_programs`](super::resolve_programs).
    fn assignment(&mut self, word: &ShellWord, depth: usize, via: &[String]) {
        let Some((name, value)) = word.text.split_once('=') else {
            return;
        };
        let value = ShellWord {
            text: value.to_string(),
            literal: word.literal,
            glob: false,
        };
        let shown = SimpleCommand::new(vec![word.clone()], Vec::new(), via.to_vec());
        if name == "PATH" {
            self.out.path_values.push(value);
        } else if programs::COMMAND_VARS.contains(&name) {
            if value.literal {
                let mut v = via.to_vec();
                v.push(format!("${name}"));
                self.source(&value.text, depth + 1, &v);
            } else {
                self.out.opaque.push(OpaqueCode {
                    command: shown,
                    what: format!("`{name}` holds a command known only at run time"),
                    code_word: None,
                });
            }
        } else if programs::is_loading_var(name) {
            self.out.opaque.push(OpaqueCode {
                command: shown,
                what: format!("`{name}` makes programs run or load code from elsewhere"),
                code_word: None,
            });
        }
    }
}
