//! Word resolution: quote removal and discovery of nested commands.

use brush_parser::ParserOptions;
use brush_parser::word::{TildeExpr, WordPiece, WordPieceWithSource};

use super::ShellWord;

/// A resolved word plus what it would run when expanded.
#[derive(Debug, Default)]
pub(crate) struct Resolved {
    /// The argv word.
    pub word: Option<ShellWord>,
    /// Command strings run by substitutions inside the word.
    pub nested: Vec<String>,
    /// Reasons parts of the word could not be understood.
    pub unresolved: Vec<String>,
}

struct Acc {
    text: String,
    literal: bool,
    glob: bool,
    nested: Vec<String>,
    unresolved: Vec<String>,
}

/// Resolves one shell word (as written in the source).
pub(crate) fn resolve(raw: &str) -> Resolved {
    let opts = ParserOptions::default();
    match brush_parser::word::parse(raw, &opts) {
        Ok(pieces) => finish(raw, &pieces),
        Err(e) => Resolved {
            word: Some(ShellWord::dynamic(raw)),
            nested: Vec::new(),
            unresolved: vec![format!("cannot parse word `{raw}`: {e}")],
        },
    }
}

/// Scans an expanding here-document body for substitutions.
pub(crate) fn resolve_heredoc(raw: &str) -> Resolved {
    let opts = ParserOptions::default();
    match brush_parser::word::parse_heredoc(raw, &opts) {
        Ok(pieces) => finish(raw, &pieces),
        Err(e) => Resolved {
            word: None,
            nested: Vec::new(),
            unresolved: vec![format!("cannot parse here-document: {e}")],
        },
    }
}

fn finish(raw: &str, pieces: &[WordPieceWithSource]) -> Resolved {
    let mut acc = Acc {
        text: String::new(),
        literal: true,
        glob: false,
        nested: Vec::new(),
        unresolved: Vec::new(),
    };
    walk_pieces(raw, pieces, false, &mut acc);
    let word = if acc.literal {
        // A lone `[` or `[[` (the test command) holds no bracket
        // expression, so it matches nothing but itself.
        let glob = acc.glob && !matches!(acc.text.as_str(), "[" | "[[");
        ShellWord {
            text: acc.text,
            literal: true,
            glob,
        }
    } else {
        ShellWord::dynamic(raw)
    };
    Resolved {
        word: Some(word),
        nested: acc.nested,
        unresolved: acc.unresolved,
    }
}

fn walk_pieces(raw: &str, pieces: &[WordPieceWithSource], in_dq: bool, acc: &mut Acc) {
    for p in pieces {
        let src = raw.get(p.start_index..p.end_index).unwrap_or("");
        match &p.piece {
            WordPiece::Text(t) => {
                if !in_dq {
                    if has_brace_expansion(t) {
                        acc.literal = false;
                    }
                    if t.contains(['*', '?', '[']) {
                        acc.glob = true;
                    }
                }
                acc.text.push_str(t);
            }
            WordPiece::SingleQuotedText(t) => acc.text.push_str(t),
            WordPiece::AnsiCQuotedText(t) => acc.text.push_str(&decode_ansi_c(t)),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                walk_pieces(raw, inner, true, acc);
            }
            WordPiece::TildeExpansion(t) => match t {
                TildeExpr::Home => acc.text.push('~'),
                TildeExpr::UserHome(u) => {
                    acc.text.push('~');
                    acc.text.push_str(u);
                }
                _ => acc.literal = false,
            },
            WordPiece::ParameterExpansion(_) => {
                acc.literal = false;
                // `${X:-$(cmd)}`: look for substitutions inside the braces.
                if src.contains("$(") || src.contains('`') || src.contains("<(") {
                    let inner = src
                        .strip_prefix("${")
                        .and_then(|s| s.strip_suffix('}'))
                        .unwrap_or(src);
                    let r = resolve_heredoc(inner);
                    acc.nested.extend(r.nested);
                    acc.unresolved.extend(r.unresolved);
                }
            }
            WordPiece::CommandSubstitution(cmd) => {
                acc.literal = false;
                acc.nested.push(cmd.clone());
            }
            WordPiece::BackquotedCommandSubstitution(cmd) => {
                acc.literal = false;
                acc.nested.push(unescape_backquoted(cmd));
            }
            WordPiece::EscapeSequence(s) => acc.text.push_str(&unescape(s, in_dq)),
            WordPiece::ArithmeticExpression(e) => {
                acc.literal = false;
                if e.value.contains("$(") || e.value.contains('`') {
                    let r = resolve_heredoc(&e.value);
                    acc.nested.extend(r.nested);
                    acc.unresolved.extend(r.unresolved);
                }
            }
        }
    }
}

/// `{a,b}` or `{1..3}` in unquoted text: bash would expand it into several
/// words, so the word is not a single known value.
fn has_brace_expansion(t: &str) -> bool {
    let Some(open) = t.find('{') else {
        return false;
    };
    let rest = &t[open..];
    let Some(close) = rest.find('}') else {
        return false;
    };
    let body = &rest[..close];
    body.contains(',') || body.contains("..")
}

fn unescape(s: &str, in_dq: bool) -> String {
    let mut chars = s.chars();
    if chars.next() != Some('\\') {
        return s.to_string();
    }
    let rest: String = chars.collect();
    if rest == "\n" {
        return String::new();
    }
    if in_dq {
        match rest.as_str() {
            "$" | "`" | "\"" | "\\" => rest,
            _ => s.to_string(),
        }
    } else {
        rest
    }
}

fn unescape_backquoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&n) = chars.peek()
            && matches!(n, '\\' | '`' | '$')
        {
            out.push(n);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// Decodes the body of a `$'…'` string.
fn decode_ansi_c(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(n) = chars.next() else {
            out.push('\\');
            break;
        };
        match n {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(n),
            'x' => {
                let hex = take_while(&mut chars, 2, |c| c.is_ascii_hexdigit());
                push_code(&mut out, u32::from_str_radix(&hex, 16).ok());
            }
            'u' => {
                let hex = take_while(&mut chars, 4, |c| c.is_ascii_hexdigit());
                push_code(&mut out, u32::from_str_radix(&hex, 16).ok());
            }
            'U' => {
                let hex = take_while(&mut chars, 8, |c| c.is_ascii_hexdigit());
                push_code(&mut out, u32::from_str_radix(&hex, 16).ok());
            }
            '0'..='7' => {
                let mut oct = n.to_string();
                oct.push_str(&take_while(&mut chars, 2, |c| ('0'..='7').contains(&c)));
                push_code(&mut out, u32::from_str_radix(&oct, 8).ok());
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

fn take_while(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    max: usize,
    pred: impl Fn(char) -> bool,
) -> String {
    let mut s = String::new();
    while s.len() < max {
        match chars.peek() {
            Some(&c) if pred(c) => {
                s.push(c);
                chars.next();
            }
            _ => break,
        }
    }
    s
}

fn push_code(out: &mut String, code: Option<u32>) {
    if let Some(c) = code.and_then(char::from_u32) {
        out.push(c);
    }
}
