//! `always_block`: fails every call it is configured for. As a pre-gate it
//! blocks the tool outright (a read-only agent: `Write`, `Edit` and `Bash`
//! with `pre_gates: ["always_block"]`); as a post-gate it marks every call
//! failed.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::gates::context::{GateContext, Phase};
use crate::gates::gate::Gate;
use crate::gates::result::GateResult;

const NAME: &str = "always_block";

/// Options of `always_block`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AlwaysBlockOptions {
    /// The message the model gets; default: `<tool> is not allowed in this
    /// session (always_block)`.
    pub message: Option<String>,
}

pub(crate) struct AlwaysBlock {
    options: AlwaysBlockOptions,
}

impl AlwaysBlock {
    pub(crate) fn new(options: AlwaysBlockOptions) -> Self {
        AlwaysBlock { options }
    }
}

impl Gate for AlwaysBlock {
    fn name(&self) -> &str {
        NAME
    }

    fn check<'a>(&'a self, ctx: &'a GateContext) -> BoxFuture<'a, GateResult> {
        Box::pin(async move {
            let message = match &self.options.message {
                Some(m) => m.clone(),
                None => match ctx.phase {
                    Phase::Pre => format!("{} is not allowed in this session", ctx.tool_name),
                    Phase::Post => format!("{} calls are always failed here", ctx.tool_name),
                },
            };
            GateResult::fail(NAME, message).with_findings(vec![json!({"tool": ctx.tool_name})])
        })
    }
}
