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

mod agent;
pub mod agents;
mod call_context;
mod client;
pub mod commands;
mod compact;
mod context_cache;
mod duration;
mod error;
mod frontmatter;
mod governance;
mod history;
pub mod host;
mod loop_env;
pub mod memory;
mod options;
mod pipeline;
mod proof;
mod query;
mod records;
pub mod reviewer;
mod session;
mod setup;
pub mod skills;
mod slash;
mod stream;
mod structured;
mod system_prompt;
mod task_tool;
mod toolset;
mod transcript;
mod turn;
mod write_failure;

pub use client::{AgentInfo, Client, CommandInfo, Interrupter};
pub use context_cache::ContextCache;
pub use error::Error;
pub use options::{
    AgentDefinition, DEFAULT_CONTEXT_ENV, Options, OutputFormat, SIGNING_ENV, SystemPrompt,
    signing_from_env,
};
pub use pipeline::GOVERNANCE_TRACE_TARGET;
pub use query::query;
pub use session::default_model;
pub use stream::MessageStream;
pub use system_prompt::default_system_prompt;

pub use tascer_core::*;
pub use tascer_guard as guard;
pub use tascer_ledger as ledger;
pub use tascer_mcp as mcp;
pub use tascer_model::{
    ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse, Price, PriceTable,
    ProviderConfig, ProviderKind,
};
pub use tascer_store as store;
pub use tascer_store::{COMPACTED_HISTORY_PREFIX, SessionInfo, SessionStore, StoreError};
pub use tascer_tools as tools;
pub use tascer_webhook as webhook;

/// The Tascer version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The Tascer home directory: `$TASCER_HOME`, else `~/.tascer`.
pub fn tascer_home() -> std::path::PathBuf {
    tascer_hook_client::tascer_home()
}
