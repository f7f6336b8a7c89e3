//! [`Matcher`]: which hooks of an event run for a given tool name (or
//! source / reason / trigger …).

use std::fmt;

use regex::Regex;

/// A hook matcher. Empty, `*` or absent matches everything; anything else
/// is a regular expression that must match the **whole** subject (so
/// `Bash` is an exact name, `Edit|Write` a list, `mcp__memory__.*` a
/// pattern).
#[derive(Clone)]
pub struct Matcher {
    source: Option<String>,
    regex: Option<Regex>,
}

impl Matcher {
    /// A matcher that matches everything.
    pub fn any() -> Matcher {
        Matcher {
            source: None,
            regex: None,
        }
    }

    /// Compiles a matcher. `None`, `""` and `"*"` match everything.
    pub fn new(pattern: Option<&str>) -> Result<Matcher, regex::Error> {
        let Some(p) = pattern else {
            return Ok(Matcher::any());
        };
        let trimmed = p.trim();
        if trimmed.is_empty() || trimmed == "*" {
            return Ok(Matcher {
                source: Some(p.to_string()),
                regex: None,
            });
        }
        let regex = Regex::new(&format!("^(?:{trimmed})$"))?;
        Ok(Matcher {
            source: Some(p.to_string()),
            regex: Some(regex),
        })
    }

    /// The pattern as configured (`None` when absent).
    pub fn pattern(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// True when the matcher matches everything.
    pub fn is_any(&self) -> bool {
        self.regex.is_none()
    }

    /// True when `subject` matches. A `None` subject (events that ignore
    /// matchers) always matches.
    pub fn matches(&self, subject: Option<&str>) -> bool {
        match (&self.regex, subject) {
            (None, _) | (_, None) => true,
            (Some(re), Some(s)) => re.is_match(s),
        }
    }
}

impl fmt::Debug for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Matcher").field(&self.source).finish()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn forms() {
        let m = Matcher::new(Some("Bash")).unwrap();
        assert!(m.matches(Some("Bash")));
        assert!(!m.matches(Some("BashOutput")));
        assert!(!m.matches(Some("MyBash")));
        let m = Matcher::new(Some("Edit|Write")).unwrap();
        assert!(m.matches(Some("Edit")) && m.matches(Some("Write")));
        assert!(!m.matches(Some("Read")));
        let m = Matcher::new(Some("mcp__memory__.*")).unwrap();
        assert!(m.matches(Some("mcp__memory__save")));
        assert!(!m.matches(Some("mcp__other__save")));
        for any in [None, Some(""), Some("*")] {
            assert!(Matcher::new(any).unwrap().matches(Some("Anything")));
        }
        assert!(Matcher::new(Some("(")).is_err());
        assert!(m.matches(None));
    }
}
