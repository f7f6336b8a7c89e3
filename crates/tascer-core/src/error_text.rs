//! Errors as text for people: an error and every cause under it.

/// `err` and its causes (its [`source`](std::error::Error::source) chain),
/// joined by `": "`: `cannot open the ledger in x: no such table: y`. The
/// same text `anyhow` writes for `{:#}`, so a message reads the same
/// whether a library or the binary formats it.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn joins_every_cause() {
        let err = Outer(std::io::Error::other("inner"));
        assert_eq!(error_chain(&err), "outer: inner");
    }
}
