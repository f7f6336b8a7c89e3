//! A scripted mock LLM model server, for tests and for `tascer demo`.
//!
//! [`MockServer`] speaks the Anthropic Messages API (`POST /v1/messages`)
//! and OpenAI Chat Completions (`POST /v1/chat/completions`), streaming and
//! not, and plays a [`Scenario`]: the request whose history holds *n*
//! assistant messages gets turn *n*. Turns can inject [`Fault`]s (rate
//! limits, 5xx, overload, truncated or malformed streams, dropped
//! connections, errors inside a stream, requests never answered, streams
//! that go silent) before their normal answer. [`Route`]s answer side
//! requests (a reviewer's, a classifier's) by what they contain. Every
//! request is recorded ([`MockServer::requests`], or
//! `GET /_mock/requests`), and [`check_tool_pairing`] checks the tool
//! call/result invariant of a recorded body. A turn's text and tool inputs
//! may hold `{{system:MARKER}}`, filled with the rest of the request's
//! system prompt line holding `MARKER` (e.g. the working directory the
//! model was told).
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use tascer_mock::{MockServer, Scenario, Turn};
//! let scenario = Scenario::new()
//!     .turn(Turn::tool("Read", serde_json::json!({"file_path": "a.txt"})))
//!     .turn(Turn::text("Done."));
//! let server = MockServer::start(scenario).await?;
//! // point ANTHROPIC_BASE_URL at server.url() ...
//! # Ok(()) }
//! ```
//!
//! The binary `tascer-mock --scenario FILE` serves a scenario file. The
//! test kit (`tascer-testkit`) re-exports all of this next to its other
//! fixtures; the `tascer` binary depends on this crate alone for its demo.

mod anthropic;
mod http;
mod openai;
mod pairing;
mod reply;
mod request;
mod route;
mod scenario;
mod server;
mod template;
mod turn;

pub use pairing::check_tool_pairing;
pub use request::RecordedRequest;
pub use route::{REVIEWER_MARK, Route, reviewer_requests, reviewer_verdict};
pub use scenario::{Conversation, Scenario, ScenarioError};
pub use server::{DEFAULT_MODEL, MockServer};
pub use tascer_core::Usage;
pub use turn::{Fault, FaultKind, ToolCall, Turn, WebSearchCall, WebSearchHit};
