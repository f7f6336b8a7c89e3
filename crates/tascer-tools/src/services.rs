//! The services a host plugs into the tools through [`ToolState`]: who
//! answers AskUserQuestion ([`UserAnswerer`]), what answers WebFetch's
//! prompt ([`Summarizer`]) and what WebSearch searches with
//! ([`SearchBackend`]), with the data they take and give.
//!
//! [`ToolState`]: crate::ToolState

use std::collections::BTreeMap;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One choice of a [`Question`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionOption {
    /// The option's short display text (1-5 words).
    pub label: String,
    /// What the option means or implies.
    pub description: String,
}

/// A multiple-choice question for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// The complete question, ending with a question mark.
    pub question: String,
    /// Very short label shown as a chip or tag (at most 12 characters).
    pub header: String,
    /// The available choices (2-4). The user may also answer in their own words.
    #[schemars(length(min = 2, max = 4))]
    pub options: Vec<QuestionOption>,
    /// Set to true to allow the user to select several options.
    #[serde(rename = "multiSelect", default)]
    pub multi_select: bool,
}

/// Asks the user questions on behalf of the model (a terminal prompt, a UI,
/// a host callback). Configure one with
/// [`ToolState::with_user_answerer`](crate::ToolState::with_user_answerer).
pub trait UserAnswerer: Send + Sync {
    /// Returns the answers keyed by question text; several selected labels
    /// are joined with `", "`. Questions left out count as unanswered. An
    /// `Err` (e.g. the user dismissed the dialog) is shown to the model as
    /// the tool's error.
    fn answer<'a>(
        &'a self,
        questions: &'a [Question],
    ) -> BoxFuture<'a, Result<BTreeMap<String, String>, String>>;
}

/// Answers a prompt about fetched content, typically with a small, fast
/// model. Configure one with
/// [`ToolState::with_summarizer`](crate::ToolState::with_summarizer).
pub trait Summarizer: Send + Sync {
    /// Answers `prompt` about `content` (markdown). An `Err` is shown to the
    /// model as the tool's error.
    fn summarize<'a>(
        &'a self,
        content: &'a str,
        prompt: &'a str,
    ) -> BoxFuture<'a, Result<String, String>>;
}

/// The system prompt of the model that answers WebFetch's prompt (for a
/// [`Summarizer`] over a model; see [`summary_request`]).
pub const SUMMARY_SYSTEM: &str = "You answer questions about one web page, using only the page's \
     content given to you. Be concise. Quote at most 125 characters of the page verbatim, in \
     quotation marks; say it plainly when the page does not answer the question.";

/// The user message that asks a model WebFetch's `prompt` about a page's
/// `content` (markdown): the page between markers, then the prompt.
pub fn summary_request(content: &str, prompt: &str) -> String {
    format!(
        "Web page content:\n---\n{content}\n---\n\nAnswer this about the page above, \
         using only its content:\n{prompt}"
    )
}

/// What to search for. Backends may use the domain lists to narrow the
/// search; [`WebSearchTool`](crate::WebSearchTool) filters the results by
/// them in any case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    /// The query text.
    pub query: String,
    /// Only results from these domains (and their subdomains), if not empty.
    pub allowed_domains: Vec<String>,
    /// Never results from these domains (and their subdomains).
    pub blocked_domains: Vec<String>,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    /// Page title.
    pub title: String,
    /// Page URL.
    pub url: String,
    /// Short excerpt, if the backend gives one.
    pub snippet: Option<String>,
}

/// A web search service.
pub trait SearchBackend: Send + Sync {
    /// Short name for the raw output, e.g. `brave`.
    fn name(&self) -> &str;
    /// Runs the search. An `Err` is shown to the model as the tool's error.
    fn search<'a>(
        &'a self,
        request: &'a SearchRequest,
    ) -> BoxFuture<'a, Result<Vec<SearchHit>, String>>;
}
