//! Standard output and the requests we send the SDK: one writer task puts
//! one frame per line on stdout (flushed after each), and every request
//! gets a random UUID and waits for the `control_response` that echoes it.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use serde::Serialize;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};

use crate::wire;

/// What pending requests fail with when standard input closes (Claude
/// Code's words, claude-compat §9.4).
pub const CLOSED_BEFORE_RESPONSE: &str = "Tool permission stream closed before response received";
/// What a request sent after standard input closed fails with.
pub const STREAM_CLOSED: &str = "Stream closed";

/// Why a request to the SDK brought no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The SDK answered with `subtype: error`.
    #[error("{0}")]
    Sdk(String),
    /// Standard input closed: the SDK can no longer answer.
    #[error("{0}")]
    Closed(&'static str),
}

type Answer = Result<Value, RequestError>;

/// Requests waiting for their answer, and whether any can still come.
#[derive(Default)]
struct Pending {
    closed: bool,
    waiting: HashMap<String, oneshot::Sender<Answer>>,
}

enum Out {
    Line(String),
    Flush(oneshot::Sender<()>),
}

/// The protocol's side of stdout: frames out, requests and their answers.
/// Cheap to clone; every clone writes to the same stdout.
#[derive(Clone)]
pub struct Control {
    out: mpsc::UnboundedSender<Out>,
    pending: Arc<Mutex<Pending>>,
}

impl Control {
    /// A control channel writing to `out` (from a task of its own;
    /// [`flush`](Self::flush) waits for it).
    pub fn start<W>(mut out: W) -> Control
    where
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, mut rx) = mpsc::unbounded_channel::<Out>();
        tokio::spawn(async move {
            let mut broken = false;
            while let Some(item) = rx.recv().await {
                match item {
                    Out::Line(line) if !broken => {
                        let written = async {
                            out.write_all(line.as_bytes()).await?;
                            out.write_all(b"\n").await?;
                            out.flush().await
                        };
                        if let Err(err) = written.await {
                            // The SDK stopped reading: nothing more can reach it.
                            tracing::warn!("cannot write to standard output: {err}");
                            broken = true;
                        }
                    }
                    Out::Line(_) => {}
                    Out::Flush(done) => {
                        let _ = out.flush().await;
                        let _ = done.send(());
                    }
                }
            }
        });
        Control {
            out: tx,
            pending: Arc::default(),
        }
    }

    /// Writes one frame as one line.
    pub fn send(&self, frame: &impl Serialize) {
        match serde_json::to_string(frame) {
            // The writer only stops when every sender is gone.
            Ok(line) => {
                let _ = self.out.send(Out::Line(line));
            }
            Err(err) => tracing::error!("cannot encode a frame: {err}"),
        }
    }

    /// Waits until everything sent so far is written and flushed.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.out.send(Out::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }

    /// Sends `request` to the SDK and waits for its answer. Dropping the
    /// future before the answer withdraws the request
    /// (`control_cancel_request`).
    pub async fn request(&self, request: Value) -> Result<Value, RequestError> {
        let request_id = tascer::new_id();
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.pending.lock();
            if pending.closed {
                return Err(RequestError::Closed(STREAM_CLOSED));
            }
            pending.waiting.insert(request_id.clone(), tx);
        }
        // Answered requests are no longer waiting, so the guard withdraws
        // only one whose answer is abandoned.
        let _withdraw = Withdraw {
            control: self,
            request_id: &request_id,
        };
        self.send(&wire::request(&request_id, request));
        rx.await
            .unwrap_or(Err(RequestError::Closed(CLOSED_BEFORE_RESPONSE)))
    }

    /// Hands an answer to the request it belongs to; answers to unknown or
    /// withdrawn requests are ignored.
    pub fn resolve(&self, request_id: &str, outcome: Result<Value, String>) {
        let waiter = self.pending.lock().waiting.remove(request_id);
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(outcome.map_err(RequestError::Sdk));
            }
            None => tracing::debug!("ignoring a control_response to unknown request {request_id}"),
        }
    }

    /// Standard input closed: pending requests fail, later ones too.
    pub fn close(&self) {
        let waiting = {
            let mut pending = self.pending.lock();
            pending.closed = true;
            std::mem::take(&mut pending.waiting)
        };
        for (_, waiter) in waiting {
            let _ = waiter.send(Err(RequestError::Closed(CLOSED_BEFORE_RESPONSE)));
        }
    }

    /// Number of requests waiting for an answer.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.pending.lock().waiting.len()
    }
}

/// Withdraws a request whose answer is no longer awaited.
struct Withdraw<'a> {
    control: &'a Control,
    request_id: &'a str,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        let was_waiting = self
            .control
            .pending
            .lock()
            .waiting
            .remove(self.request_id)
            .is_some();
        if was_waiting {
            self.control.send(&wire::cancel(self.request_id));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use serde_json::json;
    use tokio::io::AsyncBufReadExt;

    use super::*;

    /// A control channel whose stdout is a pipe the test reads.
    fn channel() -> (
        Control,
        tokio::io::Lines<tokio::io::BufReader<tokio::io::DuplexStream>>,
    ) {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let control = Control::start(ours);
        (control, tokio::io::BufReader::new(theirs).lines())
    }

    async fn next_frame(
        lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::io::DuplexStream>>,
    ) -> Value {
        let line = lines.next_line().await.unwrap().unwrap();
        serde_json::from_str(&line).unwrap()
    }

    #[tokio::test]
    async fn answers_reach_the_request_with_the_same_id() {
        let (control, mut lines) = channel();
        let asking = tokio::spawn({
            let control = control.clone();
            async move { control.request(json!({"subtype": "can_use_tool"})).await }
        });
        let frame = next_frame(&mut lines).await;
        assert_eq!(frame["type"], "control_request");
        let id = frame["request_id"].as_str().unwrap().to_string();
        assert_eq!(id.len(), 36, "a UUID: {id}");
        control.resolve("someone-else", Ok(json!({"behavior": "deny"})));
        control.resolve(&id, Ok(json!({"behavior": "allow"})));
        assert_eq!(asking.await.unwrap().unwrap(), json!({"behavior": "allow"}));
    }

    #[tokio::test]
    async fn closing_rejects_pending_and_later_requests() {
        let (control, mut lines) = channel();
        let asking = tokio::spawn({
            let control = control.clone();
            async move { control.request(json!({"subtype": "hook_callback"})).await }
        });
        next_frame(&mut lines).await;
        control.close();
        assert_eq!(
            asking.await.unwrap(),
            Err(RequestError::Closed(CLOSED_BEFORE_RESPONSE))
        );
        assert_eq!(
            control.request(json!({"subtype": "hook_callback"})).await,
            Err(RequestError::Closed(STREAM_CLOSED))
        );
    }

    #[tokio::test]
    async fn an_abandoned_request_is_withdrawn() {
        let (control, mut lines) = channel();
        let abandoned = tokio::time::timeout(
            Duration::from_millis(50),
            control.request(json!({"subtype": "hook_callback"})),
        )
        .await;
        assert!(abandoned.is_err(), "nobody answered");
        let request = next_frame(&mut lines).await;
        let cancel = next_frame(&mut lines).await;
        assert_eq!(cancel["type"], "control_cancel_request");
        assert_eq!(cancel["request_id"], request["request_id"]);
        assert_eq!(control.waiting(), 0);
    }
}
