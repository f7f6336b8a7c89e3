//! `file_exists`: the file a Read/Edit/MultiEdit/NotebookEdit targets exists.

use futures::future::BoxFuture;

use crate::gates::context::GateContext;
use crate::gates::gate::Gate;
use crate::gates::result::GateResult;

const NAME: &str = "file_exists";

pub(crate) struct FileExists;

impl Gate for FileExists {
    fn name(&self) -> &str {
        NAME
    }

    fn check<'a>(&'a self, ctx: &'a GateContext) -> BoxFuture<'a, GateResult> {
        Box::pin(async move {
            let Some(path) = ctx.target_file() else {
                return GateResult::pass(NAME, "the input names no file");
            };
            match tokio::fs::metadata(&path).await {
                Ok(m) if m.is_file() => {
                    GateResult::pass(NAME, format!("{} exists", path.display()))
                }
                Ok(_) => GateResult::fail(NAME, format!("{} is not a file", path.display())),
                Err(e) => GateResult::fail(NAME, format!("{} does not exist: {e}", path.display())),
            }
        })
    }
}
