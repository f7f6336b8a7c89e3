//! The replay provider: answers every model request with the next
//! recorded answer (its tool inputs moved to the scratch tree), whatever
//! the request holds; no provider, no network, no cost. With `--until N`
//! the answer holding call N loses the calls after it, and the next
//! request is refused (or, with `--fork`, sent to the live model).

use std::time::Duration;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use tascer_core::{ApiAssistantMessage, ContentBlock, Usage};
use tascer_model::{
    AnswerSource, ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse,
};

use super::paths::PathMap;

/// The provider name of replayed answers.
pub const REPLAY_PROVIDER: &str = "replay";

/// The live model a `--fork` continues with.
pub(crate) struct Live {
    /// Its client.
    pub client: ModelClient,
    /// The model asked.
    pub model: String,
}

/// Where the replay stands.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Progress {
    /// Recorded answers given.
    pub answers: usize,
    /// Tool calls in them.
    pub calls: usize,
    /// Model requests the live model answered (`--fork`).
    pub live_requests: usize,
    /// The replay stopped where it was asked to (`--until`).
    pub stopped: bool,
}

/// Recorded answers as a model provider.
pub(crate) struct ReplayAnswers {
    answers: Vec<ApiAssistantMessage>,
    paths: PathMap,
    until: Option<usize>,
    live: Option<Live>,
    progress: Mutex<Progress>,
}

impl ReplayAnswers {
    /// Gives `answers` in order, inputs moved by `paths`; stops after tool
    /// call `until`, then asks `live` if there is one.
    pub fn new(
        answers: Vec<ApiAssistantMessage>,
        paths: PathMap,
        until: Option<usize>,
        live: Option<Live>,
    ) -> Self {
        ReplayAnswers {
            answers,
            paths,
            until,
            live,
            progress: Mutex::new(Progress::default()),
        }
    }

    /// Where the replay stands.
    pub fn progress(&self) -> Progress {
        *self.progress.lock()
    }

    /// The next recorded answer, or why there is none (`Ok(None)`: the
    /// live model answers from here).
    fn next_recorded(&self) -> Result<Option<ModelResponse>, ModelError> {
        let mut progress = self.progress.lock();
        let reached = self.until.is_some_and(|n| progress.calls >= n);
        if reached || progress.answers >= self.answers.len() {
            progress.stopped |= reached;
            if self.live.is_some() {
                return Ok(None);
            }
            return Err(ModelError::NoAnswer(match self.until {
                Some(n) if reached => format!("replay stopped after tool call {n} (--until {n})"),
                _ => format!(
                    "the recorded session has no answer for model request #{}: it made {} model calls",
                    progress.answers + 1,
                    self.answers.len()
                ),
            }));
        }
        let recorded = &self.answers[progress.answers];
        progress.answers += 1;
        let mut content = Vec::with_capacity(recorded.content.len());
        for block in &recorded.content {
            match block {
                ContentBlock::ToolUse { id, name, input } => {
                    if self.until.is_some_and(|n| progress.calls >= n) {
                        continue;
                    }
                    progress.calls += 1;
                    content.push(ContentBlock::ToolUse {
                        id: id.clone(),
                        name: name.clone(),
                        input: self.paths.to_scratch(input),
                    });
                }
                other => content.push(other.clone()),
            }
        }
        Ok(Some(ModelResponse {
            id: recorded.id.clone(),
            model: recorded.model.clone(),
            content,
            stop_reason: recorded.stop_reason.clone(),
            // Nothing was spent: the answer was on record.
            usage: Usage::default(),
            cost_usd: Some(0.0),
            attempts: 1,
            api_duration: Duration::ZERO,
        }))
    }
}

impl AnswerSource for ReplayAnswers {
    fn name(&self) -> &'static str {
        REPLAY_PROVIDER
    }

    fn answer<'a>(
        &'a self,
        request: &'a ModelRequest,
        events: Option<&'a UnboundedSender<ModelEvent>>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        Box::pin(async move {
            if cancel.is_cancelled() {
                return Err(ModelError::Cancelled);
            }
            if let Some(response) = self.next_recorded()? {
                return Ok(response);
            }
            let Some(live) = &self.live else {
                return Err(ModelError::NoAnswer("no live model".into()));
            };
            self.progress.lock().live_requests += 1;
            let mut live_request = request.clone();
            live_request.model.clone_from(&live.model);
            live.client.send(&live_request, events, cancel).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(calls: &[&str]) -> ApiAssistantMessage {
        ApiAssistantMessage {
            id: "m".into(),
            kind: "message".into(),
            role: "assistant".into(),
            model: "recorded-model".into(),
            content: calls
                .iter()
                .map(|id| ContentBlock::ToolUse {
                    id: (*id).into(),
                    name: "Read".into(),
                    input: json!({"file_path": "/w/a.txt"}),
                })
                .collect(),
            stop_reason: None,
            stop_sequence: None,
            usage: Usage::default(),
        }
    }

    fn ask(source: &ReplayAnswers) -> Result<ModelResponse, ModelError> {
        futures::executor::block_on(source.answer(
            &ModelRequest::default(),
            None,
            &CancellationToken::new(),
        ))
    }

    #[test]
    fn until_cuts_the_answer_at_the_call_and_refuses_the_next_request() {
        let answers = vec![answer(&["a", "b"]), answer(&["c", "d"]), answer(&[])];
        let source = ReplayAnswers::new(answers, PathMap::new("/w", "/s"), Some(3), None);
        let first = ask(&source).unwrap();
        assert_eq!(first.content.len(), 2);
        assert!(
            matches!(&first.content[0], ContentBlock::ToolUse { input, .. }
            if input["file_path"] == "/s/a.txt")
        );
        assert_eq!(first.usage, Usage::default());
        assert_eq!(ask(&source).unwrap().content.len(), 1, "call #3 only");
        let err = ask(&source).unwrap_err();
        assert_eq!(
            err.to_string(),
            "replay stopped after tool call 3 (--until 3)"
        );
        assert!(source.progress().stopped);
        assert_eq!(source.progress().calls, 3);
    }

    #[test]
    fn a_request_past_the_record_is_refused_with_the_count() {
        let source = ReplayAnswers::new(vec![answer(&[])], PathMap::new("/w", "/s"), None, None);
        assert!(ask(&source).is_ok());
        let err = ask(&source).unwrap_err().to_string();
        assert!(err.contains("no answer for model request #2"), "{err}");
        assert!(err.contains("made 1 model calls"), "{err}");
    }
}
