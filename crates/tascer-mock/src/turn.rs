//! One scripted model answer ([`Turn`]) and the faults ([`Fault`]) a turn
//! injects before it: the leaf types that scenarios, routes and replies
//! share.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tascer_core::Usage;

/// One scripted model answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Visible text of the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Extended-thinking text (Anthropic only; ignored for OpenAI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Tool calls the model makes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Searches the provider runs on its side (Anthropic's `web_search`
    /// server tool), answered before the text: each one a
    /// `server_tool_use` block and its `web_search_tool_result` block
    /// (Anthropic wire only; ignored for OpenAI).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub web_searches: Vec<WebSearchCall>,
    /// Stop reason override (Anthropic spelling, e.g. `max_tokens`); default
    /// `tool_use` when there are tool calls, else `end_turn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Reported usage; default estimates from the request and answer sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// A cost the provider reports for the answer, USD: OpenAI-wire answers
    /// carry it as `usage.cost`, as OpenRouter's usage accounting does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Delay before the normal answer (not applied to faults).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub latency_ms: u64,
    /// Faults served, in order, to successive attempts at this turn before
    /// the normal answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<Fault>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Turn {
    /// An empty turn (answers with no content).
    pub fn new() -> Self {
        Self::default()
    }

    /// A turn answering with text.
    pub fn text(t: impl Into<String>) -> Self {
        Self::new().with_text(t)
    }

    /// A turn making one tool call.
    pub fn tool(name: impl Into<String>, input: Value) -> Self {
        Self::new().with_tool(name, input)
    }

    /// Sets the answer text.
    pub fn with_text(mut self, t: impl Into<String>) -> Self {
        self.text = Some(t.into());
        self
    }

    /// Adds a tool call with a generated id.
    pub fn with_tool(mut self, name: impl Into<String>, input: Value) -> Self {
        self.tool_calls.push(ToolCall {
            id: None,
            name: name.into(),
            input,
        });
        self
    }

    /// Adds a provider-side web search for `query` finding `results`
    /// (`(title, url)` pairs).
    pub fn with_web_search(mut self, query: impl Into<String>, results: &[(&str, &str)]) -> Self {
        self.web_searches.push(WebSearchCall {
            query: query.into(),
            results: results
                .iter()
                .map(|(title, url)| WebSearchHit {
                    title: (*title).to_string(),
                    url: (*url).to_string(),
                })
                .collect(),
        });
        self
    }

    /// Adds a tool call with a fixed id.
    pub fn with_tool_id(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        input: Value,
    ) -> Self {
        self.tool_calls.push(ToolCall {
            id: Some(id.into()),
            name: name.into(),
            input,
        });
        self
    }

    /// Sets the thinking text.
    pub fn with_thinking(mut self, t: impl Into<String>) -> Self {
        self.thinking = Some(t.into());
        self
    }

    /// Appends a fault served before the normal answer.
    pub fn with_fault(mut self, f: Fault) -> Self {
        self.faults.push(f);
        self
    }

    /// Sets the delay before the normal answer.
    pub fn with_latency_ms(mut self, ms: u64) -> Self {
        self.latency_ms = ms;
        self
    }

    /// Sets the reported usage.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Sets the cost reported with the answer (OpenAI wire: `usage.cost`).
    pub fn with_cost_usd(mut self, usd: f64) -> Self {
        self.cost_usd = Some(usd);
        self
    }

    /// Overrides the stop reason (Anthropic spelling).
    pub fn with_stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }

    /// The effective stop reason, in Anthropic spelling.
    pub fn effective_stop_reason(&self) -> String {
        match &self.stop_reason {
            Some(r) => r.clone(),
            None if self.tool_calls.is_empty() => "end_turn".to_string(),
            None => "tool_use".to_string(),
        }
    }
}

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// Fixed id; generated (unique per served call) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Tool input (a JSON object).
    #[serde(default = "empty_object")]
    pub input: Value,
}

/// One scripted provider-side web search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSearchCall {
    /// The query the model searched for.
    pub query: String,
    /// What the search found.
    #[serde(default)]
    pub results: Vec<WebSearchHit>,
}

/// One result of a [`WebSearchCall`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSearchHit {
    /// The page's title.
    pub title: String,
    /// The page's URL.
    pub url: String,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// What goes wrong on one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultKind {
    /// HTTP 429 with a `retry-after` header.
    RateLimit {
        /// Seconds in the `retry-after` header.
        retry_after_s: u64,
    },
    /// A 5xx error.
    ServerError {
        /// The status code (500..=599).
        status: u16,
    },
    /// HTTP 529 `overloaded_error`.
    Overloaded,
    /// Streaming: a few events, then the body ends without the terminal
    /// event. Non-streaming: the JSON body cut in half.
    TruncatedStream,
    /// Streaming: a delta whose data is not valid JSON, then the end.
    /// Non-streaming: an invalid JSON body.
    MalformedDelta,
    /// Streaming: the first `events` events of the answer (never its final
    /// one), then the connection is aborted (no end of the chunked body),
    /// as when a proxy or the provider drops it. Non-streaming: the JSON
    /// body cut in half.
    CloseAfter {
        /// Events sent before the connection drops.
        events: u32,
    },
    /// Streaming: a few events, then an error inside the stream (an
    /// Anthropic `event: error` with `api_error`, an OpenAI chunk with an
    /// `error` object of type `server_error`), then the end. Non-streaming:
    /// HTTP 500.
    StreamError,
    /// The request is accepted and never answered (no status, no headers).
    Hang,
    /// Streaming: the headers and the first `events` events, then nothing
    /// more while the connection stays open. Non-streaming: like `Hang`.
    StallAfter {
        /// Events sent before the stream goes silent.
        events: u32,
    },
}

/// A fault, repeated `times` attempts, optionally only for one model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawFault", into = "RawFault")]
pub struct Fault {
    /// What goes wrong.
    pub kind: FaultKind,
    /// How many successive attempts get this fault (at least 1).
    pub times: u32,
    /// Only requests for this model get the fault; others skip it without
    /// consuming it.
    pub model: Option<String>,
}

impl Fault {
    fn of(kind: FaultKind) -> Self {
        Fault {
            kind,
            times: 1,
            model: None,
        }
    }

    /// HTTP 429 with `retry-after: <retry_after_s>`.
    pub fn rate_limit(retry_after_s: u64) -> Self {
        Self::of(FaultKind::RateLimit { retry_after_s })
    }

    /// A 5xx error with the given status.
    pub fn server_error(status: u16) -> Self {
        Self::of(FaultKind::ServerError { status })
    }

    /// HTTP 529 overloaded.
    pub fn overloaded() -> Self {
        Self::of(FaultKind::Overloaded)
    }

    /// A stream (or body) that ends early.
    pub fn truncated_stream() -> Self {
        Self::of(FaultKind::TruncatedStream)
    }

    /// A stream (or body) with invalid JSON.
    pub fn malformed_delta() -> Self {
        Self::of(FaultKind::MalformedDelta)
    }

    /// A stream that drops its connection after `events` events.
    pub fn close_after(events: u32) -> Self {
        Self::of(FaultKind::CloseAfter { events })
    }

    /// A stream carrying an error event (or error chunk).
    pub fn stream_error() -> Self {
        Self::of(FaultKind::StreamError)
    }

    /// A request that is never answered.
    pub fn hang() -> Self {
        Self::of(FaultKind::Hang)
    }

    /// A stream that goes silent after `events` events.
    pub fn stall_after(events: u32) -> Self {
        Self::of(FaultKind::StallAfter { events })
    }

    /// Repeats the fault for `n` successive attempts.
    pub fn times(mut self, n: u32) -> Self {
        self.times = n.max(1);
        self
    }

    /// Applies the fault only to requests for `model`.
    pub fn for_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Whether a request for `model` is subject to this fault.
    pub fn applies_to(&self, model: &str) -> bool {
        self.model.as_deref().is_none_or(|m| m == model)
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RawKind {
    RateLimit,
    ServerError,
    Overloaded,
    TruncatedStream,
    MalformedDelta,
    CloseAfter,
    StreamError,
    Hang,
    StallAfter,
}

/// The JSON shape of a fault.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFault {
    kind: RawKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry_after_s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    events: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    times: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
}

impl TryFrom<RawFault> for Fault {
    type Error = String;

    fn try_from(raw: RawFault) -> Result<Self, String> {
        if raw.retry_after_s.is_some() && !matches!(raw.kind, RawKind::RateLimit) {
            return Err("fault field `retry_after_s` is only valid for kind `rate_limit`".into());
        }
        if raw.status.is_some() && !matches!(raw.kind, RawKind::ServerError) {
            return Err("fault field `status` is only valid for kind `server_error`".into());
        }
        if raw.events.is_some() && !matches!(raw.kind, RawKind::CloseAfter | RawKind::StallAfter) {
            return Err(
                "fault field `events` is only valid for kinds `close_after` and `stall_after`"
                    .into(),
            );
        }
        let kind = match raw.kind {
            RawKind::RateLimit => FaultKind::RateLimit {
                retry_after_s: raw.retry_after_s.unwrap_or(1),
            },
            RawKind::ServerError => {
                let status = raw.status.unwrap_or(500);
                if !(500..=599).contains(&status) {
                    return Err(format!(
                        "fault `server_error` has status {status}; it must be a 5xx status"
                    ));
                }
                FaultKind::ServerError { status }
            }
            RawKind::Overloaded => FaultKind::Overloaded,
            RawKind::TruncatedStream => FaultKind::TruncatedStream,
            RawKind::MalformedDelta => FaultKind::MalformedDelta,
            RawKind::CloseAfter => FaultKind::CloseAfter {
                events: raw.events.unwrap_or(3),
            },
            RawKind::StreamError => FaultKind::StreamError,
            RawKind::Hang => FaultKind::Hang,
            RawKind::StallAfter => FaultKind::StallAfter {
                events: raw.events.unwrap_or(3),
            },
        };
        let times = raw.times.unwrap_or(1);
        if times == 0 {
            return Err("fault field `times` must be at least 1".into());
        }
        Ok(Fault {
            kind,
            times,
            model: raw.model,
        })
    }
}

impl From<Fault> for RawFault {
    fn from(f: Fault) -> Self {
        let (kind, retry_after_s, status, events) = match f.kind {
            FaultKind::RateLimit { retry_after_s } => {
                (RawKind::RateLimit, Some(retry_after_s), None, None)
            }
            FaultKind::ServerError { status } => (RawKind::ServerError, None, Some(status), None),
            FaultKind::Overloaded => (RawKind::Overloaded, None, None, None),
            FaultKind::TruncatedStream => (RawKind::TruncatedStream, None, None, None),
            FaultKind::MalformedDelta => (RawKind::MalformedDelta, None, None, None),
            FaultKind::CloseAfter { events } => (RawKind::CloseAfter, None, None, Some(events)),
            FaultKind::StreamError => (RawKind::StreamError, None, None, None),
            FaultKind::Hang => (RawKind::Hang, None, None, None),
            FaultKind::StallAfter { events } => (RawKind::StallAfter, None, None, Some(events)),
        };
        RawFault {
            kind,
            retry_after_s,
            status,
            events,
            times: (f.times != 1).then_some(f.times),
            model: f.model,
        }
    }
}
