//! Tascer: a governed, provable agent runtime.
//!
//! This crate runs the model ⇄ tools loop. [`query`] runs one prompt and
//! yields its [`Message`]s as a stream; [`Client`] keeps a session open for
//! many prompts, with interrupt. Sessions are written to the embedded
//! [`SessionStore`] as they happen and can be resumed, continued or forked.
//!
//! ```no_run
//! use futures::StreamExt;
//! use tascer::{Message, Options, query};
//!
//! # async fn run() {
//! let options = Options::new().model("claude-sonnet-4-5").max_turns(10);
//! let mut stream = query("List the files here", options);
//! while let Some(message) = stream.next().await {
//!     if let Message::Result(result) = message {
//!         println!("{}", result.result.unwrap_or_default());
//!     }
//! }
//! # }
//! ```

// The files, from the entry points down to the leaves; each imports only
// files listed after it or in its own group (no import circles):
//
// Entry points: `query` and `Client`, and the stream of a turn's messages.
mod client; //        Client: a session kept open for many prompts
mod query; //         query: one prompt, its messages as a stream
pub mod replay; //    a recorded session run again offline through a Client, its divergences reported
mod stream; //        MessageStream

// A session and its turns.
mod claude_transcript; // the Claude Code–format transcript the SDKs' session helpers read
mod compact; //       compaction: the model summarizes the conversation
mod resume_at; //     resume_session_at: a resumed session forked at a message
mod session; //       Session and Session::start, in named steps
mod slash; //         `/name args` prompts: custom and built-in commands
mod toolset; //       the session's tools: built-in, custom, MCP, Skill, Task
mod turn; //          one turn: prompt, model calls and tool calls, result

// One agent (the main loop or a subagent) and the pipeline of a tool call.
mod agent; //         call the model, emit its answer, run the tools it asks for
mod pipeline; //      one tool call: context, admission, the tool, review, record
mod task_tool; //     the Task tool: runs a subagent

// Governance: admission around the calls, hooks around the session.
mod call_context; //  the context a call is recorded with (git state, env)
mod call_evidence; // the evidence a call's record keeps (stdout, stderr, diff, file)
mod elicitation; //   MCP servers' questions: Elicitation hooks, then the host or terminal
mod file_checkpoint; // file checkpoints: what writing tools changed, for rewind_files
mod governance; //    session-level hook events, denials, webhooks, stop review
pub mod host; //      admission for hosts that run tools themselves
pub mod host_sandbox; // a host's Bash commands rewritten to run sandboxed
pub mod observe; //   what the loop and the hosts tell an Observer (telemetry)
pub mod policy_check; // recorded calls re-judged under other settings
pub mod reviewer; //  the LLM reviewers' model calls, cache and transcript
mod rewind; //        rewind_files: restore the files as they were at a prompt
mod sampling; //      MCP servers' sampling requests answered by the session's model
mod sandbox_setup; // the OS sandbox of the Bash tool, from the settings
mod setup; //         governance parts from options and settings
mod transcript; //    what reviewers see of a loop session's conversation
mod web_services; //  WebFetch's small model and the provider's web search

// The handles every agent of a session shares, and its ledger.
mod agent_log; //     each agent's verdict as the webhooks carry it
mod loop_env; //      LoopEnv: client, store, ledger, sink, costs
mod observed; //      the session's observer and what the loop tells it
mod proof; //         the session's ledger writer
mod records; //       what the ledger records of decisions and verdicts
pub mod run_record; // what a session records at its start for a replay
mod write_failure; // the first write a session could not make

// What the session's files and options configure.
pub mod agents; //    subagent definition files
pub mod commands; //  slash command files
mod error; //         Error
mod frontmatter; //   the YAML front matter of those files
pub mod memory; //    CLAUDE.md / AGENTS.md memory files
mod options; //       Options
mod plugin_parts; //  a plugin's hooks and MCP servers, from their files
pub mod plugins; //   plugin directories: commands, skills, agents, hooks, MCP servers
pub mod skills; //    skills and the Skill tool
mod structured; //    structured output: the final answer against a schema
mod system_prompt; // the default system prompt

// Small leaves.
mod context_cache; // ContextCache: git-state capturers sessions may share
mod duration; //      milliseconds and microseconds, saturating
mod history; //       how a user message joins the conversation

pub use claude_transcript::{claude_transcript_line, claude_transcript_lines};
pub use client::{AgentInfo, Client, CommandInfo, Interrupter, Rewinder};
pub use context_cache::ContextCache;
pub use error::Error;
pub use options::{
    AgentDefinition, DEFAULT_CONTEXT_ENV, Options, OutputFormat, PluginDir, SIGNING_ENV,
    SystemPrompt, signing_from_env,
};
pub use pipeline::GOVERNANCE_TRACE_TARGET;
pub use query::query;
pub use rewind::{RewindError, RewindSummary};
pub use session::{default_model, default_model_for};
pub use stream::MessageStream;
pub use system_prompt::{default_system_prompt, environment_block};

pub use tascer_core::*;
pub use tascer_guard as guard;
pub use tascer_ledger as ledger;
pub use tascer_mcp as mcp;
pub use tascer_model::{
    EnvProvider, EnvProviders, ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse,
    Price, PriceTable, ProviderConfig, ProviderKind, ProviderName,
};
pub use tascer_store as store;
pub use tascer_store::{COMPACTED_HISTORY_PREFIX, SessionInfo, SessionStore, StoreError};
pub use tascer_tools as tools;
pub use tascer_webhook as webhook;

/// The Tascer version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub use toolset::mcp_token_dir;
pub use web_services::WEB_FETCH_MODEL_ENV;

/// The Tascer home directory: `$TASCER_HOME`, else `~/.tascer`.
pub fn tascer_home() -> std::path::PathBuf {
    tascer_hook_client::tascer_home()
}
