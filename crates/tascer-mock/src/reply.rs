//! A provider-neutral answer, built from a scenario turn, that the wire
//! modules render as JSON or server-sent events.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tascer_core::Usage;

use crate::template::{fill_text, fill_value};
use crate::turn::{Turn, WebSearchCall};

/// Text of the answer when the history is past the last turn.
pub(crate) const NO_MORE_TURNS: &str = "(mock scenario has no more turns)";

/// Which wire format a request came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    Anthropic,
    OpenAi,
}

/// One tool call of an answer, with its final id.
#[derive(Debug, Clone)]
pub(crate) struct ReplyCall {
    pub id: String,
    pub name: String,
    pub input: Value,
}

/// What the mock model answers.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub id: String,
    pub model: String,
    pub thinking: Option<String>,
    pub text: Option<String>,
    pub tool_calls: Vec<ReplyCall>,
    /// Provider-side web searches, with their `srvtoolu_` ids.
    pub web_searches: Vec<(String, WebSearchCall)>,
    /// Anthropic spelling.
    pub stop_reason: String,
    pub usage: Usage,
    /// The cost reported with the answer (OpenAI wire only).
    pub cost_usd: Option<f64>,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A short id part that is unique within the process and random across runs.
pub(crate) fn unique_suffix() -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let random: String = tascer_core::new_id()
        .chars()
        .filter(|c| *c != '-')
        .take(8)
        .collect();
    format!("{n}{random}")
}

impl Reply {
    /// Builds the answer for `turn` (or the "no more turns" answer when
    /// `turn` is `None`) to a request of `request_size` bytes whose system
    /// prompt is `system` (it fills the turn's placeholders).
    pub(crate) fn build(
        wire: Wire,
        turn: Option<&Turn>,
        turn_index: usize,
        model: String,
        request_size: usize,
        system: &str,
    ) -> Reply {
        let fallback;
        let turn = match turn {
            Some(t) => t,
            None => {
                fallback = Turn::text(NO_MORE_TURNS);
                &fallback
            }
        };
        let (id_prefix, call_prefix) = match wire {
            Wire::Anthropic => ("msg_", "toolu"),
            Wire::OpenAi => ("chatcmpl-", "call"),
        };
        let tool_calls: Vec<ReplyCall> = turn
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| ReplyCall {
                id: c.id.clone().unwrap_or_else(|| {
                    format!("{call_prefix}_{turn_index}_{i}_{}", unique_suffix())
                }),
                name: c.name.clone(),
                input: fill_value(&c.input, system),
            })
            .collect();
        let thinking = match wire {
            Wire::Anthropic => turn.thinking.clone(),
            Wire::OpenAi => None,
        };
        let output_size = turn.text.as_deref().map_or(0, str::len)
            + thinking.as_deref().map_or(0, str::len)
            + tool_calls
                .iter()
                .map(|c| c.name.len() + c.input.to_string().len())
                .sum::<usize>();
        let usage = turn.usage.unwrap_or(Usage {
            input_tokens: (request_size / 4).max(1) as u64,
            output_tokens: (output_size / 4).max(1) as u64,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
        });
        Reply {
            id: format!("{id_prefix}{}", unique_suffix()),
            model,
            thinking,
            text: turn.text.as_deref().map(|t| fill_text(t, system)),
            tool_calls,
            web_searches: match wire {
                Wire::Anthropic => turn
                    .web_searches
                    .iter()
                    .map(|s| (format!("srvtoolu_{}", unique_suffix()), s.clone()))
                    .collect(),
                Wire::OpenAi => Vec::new(),
            },
            stop_reason: turn.effective_stop_reason(),
            usage,
            cost_usd: turn.cost_usd,
        }
    }
}

/// Splits `s` into `n` (or fewer, when `s` is short) non-empty pieces at
/// character boundaries. An empty string gives one empty piece.
pub(crate) fn split_chunks(s: &str, n: usize) -> Vec<&str> {
    let bounds: Vec<usize> = s.char_indices().map(|(i, _)| i).collect();
    let count = bounds.len();
    if count < 2 || n < 2 {
        return vec![s];
    }
    let pieces = n.min(count);
    let mut out = Vec::with_capacity(pieces);
    let mut start = 0;
    for k in 1..pieces {
        let end = bounds[k * count / pieces];
        out.push(&s[start..end]);
        start = end;
    }
    out.push(&s[start..]);
    out
}

/// The current Unix time in seconds.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::split_chunks;

    #[test]
    fn splits_into_pieces() {
        assert_eq!(split_chunks("abcdef", 3), vec!["ab", "cd", "ef"]);
        assert_eq!(split_chunks("ab", 3), vec!["a", "b"]);
        assert_eq!(split_chunks("a", 3), vec!["a"]);
        assert_eq!(split_chunks("", 3), vec![""]);
        assert_eq!(split_chunks("héllo", 2).concat(), "héllo");
    }
}
