//! Reading a server-sent-event response through a provider's assembler.

use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use crate::error::{ModelError, transport_cause};
use crate::types::{ModelEvent, Parsed};

/// Turns one provider's SSE events into a [`Parsed`] answer.
pub(crate) trait StreamAssembler {
    /// Feeds one event (`name` is the SSE `event:` field, maybe empty);
    /// returns the Anthropic-shaped events to forward.
    fn on_event(&mut self, name: &str, data: &str) -> Result<Vec<Value>, ModelError>;
    /// True once the final event (`message_stop` / `[DONE]`) was seen.
    fn is_done(&self) -> bool;
    /// The answer; a `TruncatedStream` error when the final event is missing.
    fn finish(self) -> Result<Parsed, ModelError>;
}

/// Reads `response` to its end (or its final event) through `assembler`,
/// forwarding events to `events`. Waiting longer than `idle` for the next
/// event is a [`ModelError::Timeout`].
pub(crate) async fn read_stream<A: StreamAssembler>(
    response: reqwest::Response,
    mut assembler: A,
    provider: &'static str,
    events: Option<&UnboundedSender<ModelEvent>>,
    idle: Duration,
) -> Result<Parsed, ModelError> {
    let status = response.status().as_u16();
    let mut stream = response.bytes_stream().eventsource();
    let mut count = 0usize;
    loop {
        let Ok(next) = tokio::time::timeout(idle, stream.next()).await else {
            return Err(ModelError::Timeout {
                provider,
                after: idle,
                waiting: format!("no stream event after {count} events"),
            });
        };
        let Some(item) = next else { break };
        match item {
            Ok(event) => {
                count += 1;
                for value in assembler.on_event(&event.event, &event.data)? {
                    if let Some(tx) = events {
                        let _ = tx.send(ModelEvent::Stream(value));
                    }
                }
                if assembler.is_done() {
                    break;
                }
            }
            Err(EventStreamError::Transport(e)) => {
                return Err(ModelError::TruncatedStream {
                    provider,
                    status,
                    detail: format!(
                        "connection failed after {count} events: {}",
                        transport_cause(&e)
                    ),
                });
            }
            Err(e) => {
                return Err(ModelError::MalformedStream {
                    provider,
                    status,
                    detail: format!("invalid SSE after {count} events: {e}"),
                });
            }
        }
    }
    assembler.finish()
}
