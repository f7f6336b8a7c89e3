//! Shell words written for people and for command policy.

/// `s` as one POSIX shell word: unchanged when it is made of letters,
/// digits and `/._-+` only, else in single quotes (a `'` inside written
/// `'\''`). Used where a command line is shown or judged as text (the
/// gatekeeper's `git commit -m …` that admission sees, the hook command
/// `tascer install` writes).
pub fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(shell_quote("/usr/bin/tascer"), "/usr/bin/tascer");
        assert_eq!(shell_quote("fix it"), "'fix it'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
