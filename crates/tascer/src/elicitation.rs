//! MCP servers' questions (elicitation) in a session: answered by the
//! session's Elicitation hooks — settings hooks, or an SDK host's
//! callbacks (`hook_callback` control requests). Without such hooks the
//! client does not offer elicitation and declines (see `tascer_mcp`).

use std::sync::Arc;

use futures::future::BoxFuture;
use tascer_mcp::{ElicitationRequest, ElicitationResponse, Elicitor};

use crate::governance::Governance;
use crate::loop_env::LoopEnv;

/// Asks the session's Elicitation hooks.
pub(crate) struct HookElicitor {
    governance: Arc<Governance>,
    env: LoopEnv,
}

impl HookElicitor {
    /// The elicitor of a session whose hooks can answer; `None` otherwise.
    pub fn for_session(governance: &Arc<Governance>, env: &LoopEnv) -> Option<Arc<dyn Elicitor>> {
        governance.answers_elicitation().then(|| {
            Arc::new(HookElicitor {
                governance: Arc::clone(governance),
                env: env.clone(),
            }) as Arc<dyn Elicitor>
        })
    }
}

impl Elicitor for HookElicitor {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse> {
        Box::pin(async move {
            match self.governance.on_elicitation(&self.env, &request).await {
                Some(answer) => answer,
                None => ElicitationResponse::Decline(format!(
                    "no Elicitation hook answered the question of MCP server '{}'",
                    request.server
                )),
            }
        })
    }
}
