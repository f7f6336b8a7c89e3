//! `push`: `git push` (to `remote` and `branch` when given) once admission
//! lets the command run; git's output is returned and recorded.

use std::time::Instant;

use serde_json::{Map, Value, json};
use tascer_mcp::ServeToolResult;

use crate::git;
use crate::server::{Server, elapsed_ms, str_arg, tool_error};

impl Server {
    /// The `push` tool.
    pub(crate) async fn push(&self, args: Map<String, Value>) -> ServeToolResult {
        let repo = match self.repo(&args).await {
            Ok(r) => r,
            Err(e) => return tool_error(&e),
        };
        let mut git_args = vec!["push"];
        if let Some(remote) = str_arg(&args, "remote") {
            git_args.push(remote);
            if let Some(branch) = str_arg(&args, "branch") {
                git_args.push(branch);
            }
        }
        let command = format!("git {}", git_args.join(" "));
        let refused = match self.admitter(&repo, "push") {
            Ok(admitter) => admitter.commands(&[command.as_str()]).await,
            Err(refused) => Some(refused),
        };
        if let Some(refused) = refused {
            return self.refused("push", &repo, &refused);
        }
        let started = Instant::now();
        let out = match git::git(&repo, &git_args).await {
            Ok(o) => o,
            Err(e) => return tool_error(&e),
        };
        let duration_ms = elapsed_ms(started);
        let output = format!("{}{}", out.stdout, out.stderr).trim().to_owned();
        tracing::info!(repo = %repo.display(), code = out.code, "git push: {output}");
        let data = json!({
            "command": command,
            "exit_code": out.code,
            "output": output,
            "repo": repo.display().to_string(),
        });
        let on_record = self.record("mcp.push", out.ok(), &output, duration_ms, data.clone());
        let text = format!("{command} exited {}\n{output}", out.code);
        Self::recorded(
            ServeToolResult::structured(text, data, !out.ok()),
            on_record,
        )
    }
}
