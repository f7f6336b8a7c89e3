//! The gate decisions: whether `confirm` confirms a working-tree state
//! (a passing check of that very state, changes to confirm, admission of
//! the changed files, then the reviewer model's verdict when one is
//! configured; every failure declines), and whether `commit` may commit it
//! (a CONFIRMED confirm of that very state).

use std::path::Path;

use serde_json::{Map, Value};
use tascer::reviewer::{AgentLevel, AgentVerdict};

use crate::error::text;
use crate::events::note_agent;
use crate::git;
use crate::model::{self, GateModel, GateQuestion, MODEL_DIFF_BYTES};
use crate::server::{ConfirmRecord, Server, str_arg};

/// `confirm`'s binary answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The state may be committed.
    Confirmed,
    /// It may not.
    Declined,
}

impl Verdict {
    /// `CONFIRMED` or `DECLINED`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Confirmed => "CONFIRMED",
            Verdict::Declined => "DECLINED",
        }
    }
}

/// A `confirm` decision and what it rests on.
#[derive(Debug, Clone)]
pub(crate) struct Decision {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, one reason per entry.
    pub reasons: Vec<String>,
    /// The reviewer model (`provider/model`), when one was asked.
    pub reviewed_by: Option<String>,
    /// The working-tree digest decided on (`None` when it could not be read).
    pub digest: Option<String>,
    /// Where the reviewer's model was chosen (`mcpServe.models.confirm in
    /// …`, an environment variable, `default`), when one was asked.
    pub model_from: Option<String>,
}

impl Decision {
    /// Declined for `reason`, without a reviewer.
    fn declined(reason: String, digest: Option<String>) -> Decision {
        Decision {
            verdict: Verdict::Declined,
            reasons: vec![reason],
            reviewed_by: None,
            digest,
            model_from: None,
        }
    }
}

/// The reason a passing check opens a confirmation with.
const CHECK_PASSED: &str = "check passed for this working-tree state";

impl Server {
    /// The confirm decision for `repo` in its current state (`intent` of
    /// `args` goes to the reviewer).
    pub(crate) async fn decide(&self, repo: &Path, args: &Map<String, Value>) -> Decision {
        let digest = match git::tree_digest(repo).await {
            Ok(d) => d,
            Err(e) => {
                return Decision::declined(
                    format!("cannot read the working tree: {}", text(&e)),
                    None,
                );
            }
        };
        if let Err(reason) = self.ready_to_confirm(repo, &digest).await {
            return Decision::declined(reason, Some(digest));
        }
        let reviewer = match GateModel::for_question(GateQuestion::Confirm, repo, &self.home) {
            Ok(Some(reviewer)) => reviewer,
            Ok(None) => return self.unreviewed(repo, digest),
            Err(e) => {
                return Decision::declined(
                    format!("cannot choose confirm's model: {}", text(&e)),
                    Some(digest),
                );
            }
        };
        let diff = match git::review_diff(repo, MODEL_DIFF_BYTES).await {
            Ok(d) => d,
            Err(e) => {
                return Decision::declined(
                    format!("cannot read the diff: {}", text(&e)),
                    Some(digest),
                );
            }
        };
        let intent = str_arg(args, "intent").unwrap_or("(not given)");
        let prompt = format!("What the change is meant to do: {intent}\n\nDiff:\n{diff}");
        let reviewed_by = Some(reviewer.name());
        let (decision, agent) = match reviewer.ask(model::CONFIRM_SYSTEM, prompt).await {
            Ok(answer) => {
                let (decision, malformed) = reviewed(&answer.text, reviewed_by, digest);
                let agent = confirm_agent(&decision, &answer.model, answer.duration_ms, malformed);
                (decision, agent)
            }
            Err(e) => {
                let decision = Decision {
                    verdict: Verdict::Declined,
                    reasons: vec![text(&e), "fails closed: no review, no confirmation".into()],
                    reviewed_by,
                    digest: Some(digest),
                    model_from: None,
                };
                let agent = confirm_agent(&decision, reviewer.model(), 0, true);
                (decision, agent)
            }
        };
        note_agent(&agent);
        Decision {
            model_from: Some(reviewer.chosen_by().to_owned()),
            ..decision
        }
    }

    /// The decision when no reviewer model is configured: DECLINED (fail
    /// closed), unless `mcpServe.confirmWithoutModel` is `true`, which lets
    /// the passing check alone confirm (and the reasons say so).
    fn unreviewed(&self, repo: &Path, digest: String) -> Decision {
        let no_model = format!(
            "no reviewer model is configured ({})",
            model::MODEL_ENV_HINT
        );
        match tascer_settings::confirm_without_model(repo, &self.home) {
            Ok(Some((file, true))) => Decision {
                verdict: Verdict::Confirmed,
                reasons: vec![
                    CHECK_PASSED.into(),
                    format!(
                        "{no_model}, so the diff was not reviewed: this confirmation rests on \
                         the check alone (mcpServe.confirmWithoutModel in {})",
                        file.display()
                    ),
                ],
                reviewed_by: None,
                digest: Some(digest),
                model_from: None,
            },
            Ok(_) => Decision::declined(
                format!(
                    "{no_model}: confirm fails closed without a review (set \
                     {{\"mcpServe\": {{\"confirmWithoutModel\": true}}}} in Tascer's settings \
                     to confirm on a passing check alone)"
                ),
                Some(digest),
            ),
            Err(e) => Decision::declined(
                format!("{no_model}, and {}", tascer_core::error_chain(&e)),
                Some(digest),
            ),
        }
    }

    /// Whether `repo` at `digest` may be confirmed before any review: the
    /// last check of this server ran on this very state and passed, there
    /// are changes against `HEAD`, and admission would let every changed
    /// file be written as it is. `Err` is the reason to decline.
    async fn ready_to_confirm(&self, repo: &Path, digest: &str) -> Result<(), String> {
        let check = self.repos.lock().get(repo).and_then(|s| s.check.clone());
        let Some(check) = check else {
            return Err(format!(
                "no check has run for {} in this server: call `check` first",
                repo.display()
            ));
        };
        if check.digest != digest {
            return Err("the working tree changed since the last check: call `check` again".into());
        }
        if !check.passed {
            return Err(format!(
                "the last check failed ({})",
                check.failed.join(", ")
            ));
        }
        let changes = match git::changes(repo).await {
            Ok(c) if c.is_empty() => {
                return Err("nothing to confirm: no changes against HEAD".into());
            }
            Ok(c) => c,
            Err(e) => return Err(format!("cannot list changes: {}", text(&e))),
        };
        let written: Vec<&str> = changes
            .iter()
            .filter(|c| c.kind != "deleted")
            .map(|c| c.path.as_str())
            .collect();
        let refused = match self.admitter(repo, "confirm") {
            Ok(admitter) => admitter.writes(&written).await,
            Err(refused) => Some(refused),
        };
        match refused {
            Some(refused) => Err(format!("refused by Tascer: {refused}")),
            None => Ok(()),
        }
    }
}

/// The `confirm` agent's verdict on `decision` (for the webhooks), by
/// `model`; `failed` when there was no usable answer (a provider error, an
/// answer without a verdict): it failed closed.
fn confirm_agent(decision: &Decision, model: &str, duration_ms: u64, failed: bool) -> AgentVerdict {
    let confirmed = decision.verdict == Verdict::Confirmed;
    let level = match (failed, confirmed) {
        (true, _) => AgentLevel::Error,
        (false, true) => AgentLevel::Pass,
        (false, false) => AgentLevel::Block,
    };
    let mut agent = AgentVerdict::new(
        GateQuestion::Confirm.agent(),
        model,
        decision.verdict.as_str(),
        level,
    );
    agent.duration_ms = duration_ms;
    if failed {
        agent.outcome = "failed_closed".into();
    }
    if !confirmed {
        let reasons = decision.reasons.join("; ");
        agent.answer = Some(format!("{}: {reasons}", decision.verdict.as_str()));
        agent.problem = Some(reasons);
    }
    agent
}

/// The decision the reviewer's `answer` holds: its verdict and reasons
/// (a passing check first when it confirms); an answer without a verdict
/// declines (and the second value is true).
fn reviewed(answer: &str, reviewed_by: Option<String>, digest: String) -> (Decision, bool) {
    let parsed = model::extract_json(answer);
    let verdict = parsed
        .as_ref()
        .and_then(|v| v.get("verdict"))
        .and_then(Value::as_str)
        .map(str::to_ascii_uppercase);
    let mut reasons: Vec<String> = parsed
        .as_ref()
        .and_then(|v| v.get("reasons"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|r| r.as_str().map_or_else(|| r.to_string(), str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut malformed = false;
    let verdict = match verdict.as_deref() {
        Some("CONFIRMED") => {
            reasons.insert(0, CHECK_PASSED.into());
            Verdict::Confirmed
        }
        Some("DECLINED") => Verdict::Declined,
        _ => {
            reasons = vec![format!(
                "the reviewer's answer has no verdict: {}",
                answer.chars().take(500).collect::<String>()
            )];
            malformed = true;
            Verdict::Declined
        }
    };
    let decision = Decision {
        verdict,
        reasons,
        reviewed_by,
        digest: Some(digest),
        model_from: None,
    };
    (decision, malformed)
}

/// Why `commit` may not commit the state `digest` after `confirm`, if it
/// may not.
pub(crate) fn commit_refusal(
    confirm: Option<&ConfirmRecord>,
    digest: &str,
) -> Option<&'static str> {
    match confirm {
        None => Some("no `confirm` has passed for this repository: run check, then confirm"),
        Some(c) if c.digest != digest => {
            Some("the working tree changed since `confirm`: run check and confirm again")
        }
        Some(c) if !c.confirmed => Some("the last `confirm` DECLINED this state"),
        Some(_) => None,
    }
}
