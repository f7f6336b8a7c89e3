//! Tascer's gatekeeper: the MCP server of `tascer mcp serve`.
//!
//! It offers MCP clients (an agent, an editor, a CI job) a gate chain for a
//! git repository (the call's `working_dir`, else the server's), bound to
//! one working-tree state: `check` runs the project's lint and test
//! commands, `confirm` is a binary gate that needs a passing check of the
//! same state and a reviewer model's verdict on the diff (no model:
//! DECLINED, unless `mcpServe.confirmWithoutModel` says otherwise),
//! `commit` runs check and confirm for the state as it is and commits it
//! when both pass, `push` pushes. `validate_intent` asks a model where a
//! session (a Claude Code transcript, or a Tascer session) drifted from
//! the user's request; `sessions_list`, `session_report` and
//! `session_verify` read Tascer's session store and signed ledger.
//!
//! Every command the tools run and every file `confirm` approves is first
//! admitted by Tascer's admission ([`tascer::host::HostGovernance`], the one
//! `tascer hook` uses), and every gate is recorded in the ledger, so
//! `tascer report` and `tascer verify` cover them.
//!
//! ```no_run
//! # async fn run() -> Result<(), tascer_mcp::ServeError> {
//! let spec = tascer_gatekeeper::server_spec(".".into(), tascer::tascer_home());
//! tascer_mcp::serve_stdio(spec).await
//! # }
//! ```
//!
//! The tools and their arguments are described in `docs/mcp.md`.

mod admit;
mod check_plan;
mod claude_sessions;
mod decision;
mod error;
mod events;
mod git;
mod model;
mod server;
mod spec;
mod tools;

pub use error::{GatekeeperError, Result};
pub use spec::server_spec;

/// Serves the gatekeeper ([`server_spec`] over `cwd` and `home`) on
/// standard input and output until the client disconnects.
pub async fn serve_stdio(
    cwd: std::path::PathBuf,
    home: std::path::PathBuf,
) -> std::result::Result<(), tascer_mcp::ServeError> {
    tascer_mcp::serve_stdio(server_spec(cwd, home)).await
}
