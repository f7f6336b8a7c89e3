//! MCP servers' questions (elicitation) in a session, answered by whoever
//! can answer, in this order:
//!
//! 1. the session's Elicitation hooks — settings hooks, or an SDK host's
//!    callbacks (`hook_callback` control requests); a hook that answers
//!    decides;
//! 2. the session's [`Options::elicitor`](crate::Options::elicitor): the
//!    SDK host (`elicitation` control request, the SDKs' `onElicitation`)
//!    or the person at the terminal (`tascer run`).
//!
//! [`SessionElicitor`] is the one place that composes this chain. A
//! session with neither does not offer elicitation, and servers that ask
//! anyway are declined (see `tascer_mcp`).

use std::sync::Arc;

use futures::future::BoxFuture;
use tascer_mcp::{ElicitationRequest, ElicitationResponse, Elicitor};

use crate::governance::Governance;
use crate::loop_env::LoopEnv;

/// The session's Elicitation hooks, then its other answerer.
pub(crate) struct SessionElicitor {
    /// The session's hooks, when some can answer.
    hooks: Option<(Arc<Governance>, LoopEnv)>,
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
        let hooks = governance
            .answers_elicitation()
            .then(|| (Arc::clone(governance), env.clone()));
        if hooks.is_none() && next.is_none() {
            return None;
        }
        Some(Arc::new(SessionElicitor { hooks, next }))
    }
}

impl Elicitor for SessionElicitor {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse> {
        Box::pin(async move {
            if let Some((governance, env)) = &self.hooks
                && let Some(answer) = governance.on_elicitation(env, &request).await
            {
                return answer;
            }
            match &self.next {
                Some(next) => next.elicit(request).await,
                None => ElicitationResponse::Decline(format!(
                    "no Elicitation hook answered the question of MCP server '{}', and no \
                     one else can in this run (no terminal, no SDK host)",
                    request.server
                )),
            }
        })
    }
}
