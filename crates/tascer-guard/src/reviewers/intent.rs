//! The checks `intent-validate` runs when the agent is about to stop, in
//! the order it runs them, and the course correction a failed one sends
//! back: its reason starts with the check's name (`re-asked: …`), so the
//! agent and the ledger both say which check failed.

use super::excerpt::CORRECTION_PREFIX;

/// One check of `intent-validate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StopCheck {
    /// Its name, which starts the reason of a failed check (`re-asked`).
    pub name: &'static str,
    /// What it catches, as the reviewer is told.
    pub catches: &'static str,
    /// What the correction tells the agent before the reviewer's reason.
    pub lead: &'static str,
}

/// The checks, in order.
pub const STOP_CHECKS: &[StopCheck] = &[
    StopCheck {
        name: "re-asked",
        catches: "the agent asks the user a question the conversation already answers (the \
                  user said it, or a file or tool result the agent saw shows it)",
        lead: "do not ask the user what the conversation already answers.",
    },
    StopCheck {
        name: "off-topic",
        catches: "the agent asks the user a question unrelated to their request",
        lead: "the question is not about the user's request.",
    },
    StopCheck {
        name: "unrequested",
        catches: "the agent did, or proposes to do, something nobody asked for: changes, \
                  commands or actions outside the request",
        lead: "this goes beyond what the user asked for.",
    },
    StopCheck {
        name: "incomplete",
        catches: "work the request asks for is missing, wrong, or only claimed (the \
                  conversation does not show it done)",
        lead: "the work does not yet match the request.",
    },
];

impl StopCheck {
    /// The check a reviewer's reason names (`re-asked: …`, any case);
    /// `None` when it names none.
    pub fn named_in(reason: &str) -> Option<&'static StopCheck> {
        let (head, _) = reason.trim_start().split_once(':')?;
        let head = head.trim().trim_matches('`');
        STOP_CHECKS
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(head))
    }
}

/// The checks as the system prompt lists them: `1. re-asked — …`.
pub(crate) fn checks_text() -> String {
    STOP_CHECKS
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{}. {} — {}.", i + 1, c.name, c.catches))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The course correction for a failed stop: the prefix, what the failed
/// check means (the generic "does not yet match" when the reason names no
/// check), then the reviewer's reason.
pub(crate) fn correction(reason: &str) -> String {
    let lead =
        StopCheck::named_in(reason).map_or("the work does not yet match the request.", |c| c.lead);
    format!("{CORRECTION_PREFIX} {lead} {reason}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_correction_says_which_check_failed() {
        let c = correction("re-asked: the user said tabs; use tabs.");
        assert_eq!(
            c,
            "Tascer intent-validate: do not ask the user what the conversation already \
             answers. re-asked: the user said tabs; use tabs."
        );
        assert!(correction("Unrequested: revert the CI change.").contains("beyond what"));
        assert!(correction("off-topic: drop the question.").contains("not about"));
        let plain = correction("Run the tests.");
        assert_eq!(
            plain,
            "Tascer intent-validate: the work does not yet match the request. Run the tests."
        );
        assert_eq!(
            StopCheck::named_in("incomplete: add the tests").map(|c| c.name),
            Some("incomplete")
        );
        assert_eq!(StopCheck::named_in("note: whatever"), None);
        let listed = checks_text();
        for check in STOP_CHECKS {
            assert!(listed.contains(&format!(". {} — ", check.name)), "{listed}");
        }
    }
}
