//! MCP servers' questions (elicitation) in a session, answered by whoever
//! can answer, in this order:
//!
//! 1. the session's Elicitation hooks — settings hooks, or an SDK host's
//!    callbacks (`hook_callback` control requests); a hook that answers
//!    decides;
//! 2. the session's [`Options::elicitor`](crate::Options::elicitor): the
//!    SDK host (`elicitation` control request, the SDKs' `onElicitation`)
//!    or the person at the terminal (`tascer run`);
//! 3. the session's ElicitationResult hooks, which see the answer before
//!    it is sent and may replace it.
//!
//! [`SessionElicitor`] is the one place that composes this chain. A
//! session with neither does not offer elicitation, and servers that ask
//! anyway are declined (see `tascer_mcp`).

use std::sync::Arc;

use futures::future::BoxFuture;
use tascer_mcp::{ElicitationRequest, ElicitationResponse, Elicitor};

use crate::governance::Governance;
use crate::loop_env::LoopEnv;

/// The session's Elicitation hooks, then its other answerer, then its
/// ElicitationResult hooks.
pub(crate) struct SessionElicitor {
    governance: Arc<Governance>,
    env: LoopEnv,
    /// Whether the session has Elicitation hooks.
    hooks_answer: bool,
    /// Asked when no hook answered.
    next: Option<Arc<dyn Elicitor>>,
}

impl SessionElicitor {
    /// The elicitor of a session: its Elicitation hooks (when it has some)
    /// followed by `next`; `None` when neither can answer.
    pub fn for_session(
        governance: &Arc<Governance>,
        env: &LoopEnv,
        next: Option<Arc<dyn Elicitor>>,
    ) -> Option<Arc<dyn Elicitor>> {
        let hooks_answer = governance.answers_elicitation();
        if !hooks_answer && next.is_none() {
            return None;
        }
        Some(Arc::new(SessionElicitor {
            governance: Arc::clone(governance),
            env: env.clone(),
            hooks_answer,
            next,
        }))
    }

    /// The answer of the hooks, else of `next`.
    async fn answer(&self, request: &ElicitationRequest) -> ElicitationResponse {
        if self.hooks_answer
            && let Some(answer) = self.governance.on_elicitation(&self.env, request).await
        {
            return answer;
        }
        match &self.next {
            Some(next) => next.elicit(request.clone()).await,
            None => ElicitationResponse::Decline(format!(
                "no Elicitation hook answered the question of MCP server '{}', and no \
                 one else can in this run (no terminal, no SDK host)",
                request.server
            )),
        }
    }
}

impl Elicitor for SessionElicitor {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse> {
        Box::pin(async move {
            let answer = self.answer(&request).await;
            self.governance
                .on_elicitation_result(&self.env, &request, answer)
                .await
        })
    }
}
