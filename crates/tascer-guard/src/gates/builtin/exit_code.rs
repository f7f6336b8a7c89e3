//! `exit_code_zero`: a Bash call exited with status 0.

use futures::future::BoxFuture;
use serde_json::Value;

use crate::gates::context::GateContext;
use crate::gates::gate::Gate;
use crate::gates::result::GateResult;

const NAME: &str = "exit_code_zero";

pub(crate) struct ExitCodeZero;

impl Gate for ExitCodeZero {
    fn name(&self) -> &str {
        NAME
    }

    fn check<'a>(&'a self, ctx: &'a GateContext) -> BoxFuture<'a, GateResult> {
        Box::pin(async move {
            let Some(output) = &ctx.output else {
                return GateResult::fail(NAME, "no tool output to check");
            };
            let code = output.raw.as_ref().and_then(|raw| {
                ["exitCode", "exit_code", "code"]
                    .iter()
                    .find_map(|k| raw.get(*k).and_then(Value::as_i64))
            });
            match code {
                Some(0) => GateResult::pass(NAME, "exit code 0"),
                Some(c) => GateResult::fail(NAME, format!("exit code {c}")),
                None if output.is_error => GateResult::fail(NAME, "the tool reported an error"),
                None => GateResult::pass(NAME, "no exit code; the tool reported no error"),
            }
        })
    }
}
