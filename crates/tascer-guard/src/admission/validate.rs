//! The validators' step of admission: a call that would run (allowed, or
//! left to the host to ask) and changes a plan, a `CLAUDE.md` or a
//! workspace file goes to `plan-validate`, `claude-md-validate` or
//! `style-drift` ([`crate::reviewers::validators`]); a `drift`/`violates`
//! refuses it, as `error-acknowledge`'s refusal does.

use std::time::Instant;

use tascer_core::ToolCall;

use super::Admission;
use crate::permissions::PermissionDecision;
use crate::reviewers::ReviewRecord;
use crate::reviewers::validators::read_capped;

impl Admission {
    /// Step 4b: the validator `call` matches, if any is on. Every other
    /// call costs a look at its tool name; the file is read (its first
    /// 16 KiB) only for a matching call, and an unreadable one is reviewed
    /// without it.
    pub(super) async fn check_change(
        &self,
        call: &ToolCall,
        mut decision: PermissionDecision,
        reviews: &mut Vec<ReviewRecord>,
        deadline: Option<Instant>,
    ) -> PermissionDecision {
        let Some(reviewers) = &self.reviewers else {
            return decision;
        };
        if !self.would_run(&decision) || !reviewers.validates_changes() {
            return decision;
        }
        // The input that would run (a hook or the callback may have
        // rewritten it).
        let rewritten;
        let call = match &decision.updated_input {
            Some(input) => {
                rewritten = ToolCall {
                    input: input.clone(),
                    ..call.clone()
                };
                &rewritten
            }
            None => call,
        };
        let permissions = &self.permissions;
        let working_dirs = || permissions.working_dirs(&call.cwd);
        let Some(validation) =
            reviewers.validation_for(call, permissions.home_dir(), &working_dirs)
        else {
            return decision;
        };
        let current = match &validation.file {
            Some(path) => read_capped(path).await,
            None => None,
        };
        if let Some(review) = reviewers
            .validate_change(&validation, call, current.as_ref(), deadline)
            .await
        {
            if !review.allowed {
                decision = self.apply_review(call, decision, &review);
            }
            reviews.extend(review.records);
        }
        decision
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
#[path = "validate_tests.rs"]
mod tests;
