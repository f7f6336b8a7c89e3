//! Model providers for Tascer over plain HTTP: the Anthropic Messages API and
//! OpenAI-compatible Chat Completions, streamed or not, with retries,
//! fallback on overload, and cost accounting.
//!
//! Build a [`ProviderConfig`] (e.g. [`ProviderConfig::from_env`]), wrap it in
//! a [`ModelClient`] and call [`ModelClient::send`] with a [`ModelRequest`].
//! Streaming events reach the caller as [`ModelEvent::Stream`] values in
//! Anthropic's SSE event shape, whatever the provider.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tascer_model::ModelError> {
//! use tascer_core::ChatMessage;
//! use tascer_model::{ModelClient, ModelRequest, ProviderConfig};
//! use tokio_util::sync::CancellationToken;
//!
//! let client = ModelClient::new(ProviderConfig::from_env()?)?;
//! let request = ModelRequest {
//!     model: "claude-sonnet-4-5".into(),
//!     messages: vec![ChatMessage::user_text("Hello")],
//!     stream: true,
//!     ..ModelRequest::default()
//! };
//! let response = client.send(&request, None, &CancellationToken::new()).await?;
//! let cost = client.cost_usd(&response.model, &response.usage);
//! # let _ = cost;
//! # Ok(()) }
//! ```

mod alias;
mod anthropic;
mod anthropic_stream;
mod client;
mod config;
mod env;
mod error;
mod openai;
mod openai_stream;
mod price;
mod retry;
mod source;
mod sse;
mod types;

pub use alias::MODEL_ALIASES;
pub use client::ModelClient;
pub use config::{
    ANTHROPIC_DEFAULT_BASE_URL, ANTHROPIC_OAUTH_BETA, API_KEY_VARS, EXTRA_HEADERS_VAR,
    OPENAI_DEFAULT_BASE_URL, OPENROUTER_DEFAULT_BASE_URL, OPENROUTER_REFERER, OPENROUTER_TITLE,
    ProviderConfig, ProviderKind, parse_extra_headers,
};
pub use env::{
    EnvProvider, EnvProviders, OPENROUTER_API_KEY_VAR, OPENROUTER_BASE_URL_VAR, ProviderName,
    is_openrouter_url,
};
pub use error::ModelError;
pub use price::{Price, PriceTable};
pub use source::AnswerSource;
pub use types::{ModelEvent, ModelRequest, ModelResponse};
