//! Syntax checks for Python, JavaScript and TypeScript with tree-sitter:
//! a file is valid when its tree holds no ERROR or MISSING node.

use tree_sitter::{Language, Node, Parser};

/// The tree-sitter language of a file extension, if supported.
pub(crate) fn language(ext: &str) -> Option<(Language, &'static str)> {
    Some(match ext {
        "py" | "pyi" => (tree_sitter_python::LANGUAGE.into(), "Python"),
        "js" | "mjs" | "cjs" | "jsx" => (tree_sitter_javascript::LANGUAGE.into(), "JavaScript"),
        "ts" | "mts" | "cts" => (
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            "TypeScript",
        ),
        "tsx" => (tree_sitter_typescript::LANGUAGE_TSX.into(), "TSX"),
        _ => return None,
    })
}

/// Parses `text`; the error names the first broken spot (1-based).
pub(crate) fn check(language: &Language, label: &str, text: &str) -> Result<(), String> {
    let mut parser = Parser::new();
    parser
        .set_language(language)
        .map_err(|e| format!("{label}: grammar unavailable: {e}"))?;
    let tree = parser
        .parse(text, None)
        .ok_or_else(|| format!("{label}: the parser gave up"))?;
    let root = tree.root_node();
    if !root.has_error() {
        return Ok(());
    }
    let at = first_error(root).unwrap_or(root);
    let pos = at.start_position();
    let what = if at.is_missing() {
        format!("missing `{}`", at.kind())
    } else {
        "syntax error".to_string()
    };
    Err(format!(
        "{label}: {what} at line {}, column {}",
        pos.row + 1,
        pos.column + 1
    ))
}

fn first_error(node: Node<'_>) -> Option<Node<'_>> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.has_error()
            && let Some(found) = first_error(child)
        {
            return Some(found);
        }
    }
    None
}
