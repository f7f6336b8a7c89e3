#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The analyser never panics and never allows what it cannot resolve.

use tascer_guard::permissions::shell::analyze;

#[test]
fn pathological_inputs_do_not_panic() {
    let deep_subst = format!("{}rm x{}", "$(echo ".repeat(50), ")".repeat(50));
    let deep_bash = (0..10).fold("rm x".to_string(), |acc, _| {
        format!("bash -c {}", shell_quote(&acc))
    });
    let inputs = [
        "",
        " ",
        "#comment",
        ";;",
        "|",
        "&&",
        "$(",
        "`",
        "\"",
        "'",
        "${",
        "$((",
        "<<",
        "cat <<EOF",
        "\\",
        "((((((((((",
        "))))",
        "{ }",
        "f() {",
        "case",
        "for",
        "\u{0}",
        "é $(ü) 'ö'",
        "echo $'\\u{110000}'",
        "echo $'\\xZZ\\777\\U0001F600'",
        deep_subst.as_str(),
        deep_bash.as_str(),
    ];
    for input in inputs {
        let _ = analyze(input);
    }
    // Unclosed parentheses make the parser backtrack exponentially: the
    // analyser refuses them quickly instead.
    let start = std::time::Instant::now();
    let a = analyze(&format!("{}ls", "( ".repeat(40)));
    assert!(!a.is_fully_resolved());
    let a = analyze(&format!("{}ls)", "(".repeat(40)));
    assert!(!a.is_fully_resolved());
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
    let a = analyze(&deep_bash);
    assert!(!a.is_fully_resolved(), "deep nesting must be unresolved");
    let a = analyze(&deep_subst);
    assert!(
        !a.is_fully_resolved(),
        "deep substitution must be unresolved"
    );
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn normalizes_quoting() {
    for cmd in [
        "'r''m' x",
        "r\\m x",
        "\"rm\" x",
        "$'\\x72\\x6d' x",
        "r''m x",
    ] {
        let a = analyze(cmd);
        assert_eq!(a.commands[0].name(), Some("rm"), "{cmd}");
        assert!(a.is_fully_resolved());
    }
}
