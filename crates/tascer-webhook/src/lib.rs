//! The webhook sink: hook events POSTed to the URLs of the settings'
//! `webhooks` (docs/reviewers.md, "Webhooks").
//!
//! Sending never waits for a webhook: [`Webhooks::send`] writes the event
//! to the durable outbox in the store ([`tascer_store::WebhookOutbox`], one
//! row per URL) and returns. Delivery happens elsewhere: in `tascer run`
//! (or any session of the library) a background task drains the outbox
//! while the session lives ([`Webhooks::start_delivery`]); `tascer hook`,
//! a new process per event, leaves it to a detached `tascer webhook flush`
//! ([`spawn_flusher`]) that runs while rows are waiting and one flusher at
//! a time (a lease in the store). Every attempt has a timeout; a failed one
//! is retried with backoff; an event whose attempts run out, or that finds
//! its URL's queue full, is counted in the store's drop records and logged
//! — never silently lost.
//!
//! A crate of its own, below the agent loop: the loop sends its sessions'
//! hook events here (`tascer run`), and so does the Claude Code host
//! (`tascer-claude`, which builds on the loop). It needs the store (the
//! outbox and the flusher's lease), the settings' webhook shape
//! (`tascer-settings`), [`HookEvent`] and an HTTP client, and nothing of
//! the loop or of governance.

mod deliver;
mod flush;

use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Map, Value, json};
use tascer_core::HookEvent;
pub use tascer_settings::safety::WebhookEvent;
use tascer_settings::safety::WebhookSettings;
use tascer_store::{Db, Enqueued, NewDelivery, StoreError, WebhookOutbox, now_ms};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

pub use deliver::Deliverer;
pub use flush::{
    FLUSHER_LEASE, FlushReport, OutboxStatus, flush, flush_in_background, spawn_flusher, status,
};
pub use tascer_store::DropRecord;
pub use tascer_store::outbox::{DROP_FULL, DROP_GAVE_UP};

/// The version of Tascer sending (the body's `tascer.version`).
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Default longest wait for a webhook's answer, per attempt.
pub const DEFAULT_TIMEOUT_MS: u64 = 5_000;
/// Default most events waiting per URL.
pub const DEFAULT_MAX_QUEUE: u64 = 10_000;
/// Default attempts per event.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 8;
/// Default wait before the first retry.
pub const DEFAULT_BACKOFF_MS: u64 = 1_000;

/// Where an event comes from (the body's `tascer.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A Tascer session (`tascer run`, the library).
    Run,
    /// Claude Code, through `tascer hook`.
    ClaudeCode,
    /// The gatekeeper's tools, through `tascer mcp serve`.
    Mcp,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Source::Run => "tascer",
            Source::ClaudeCode => "claude-code",
            Source::Mcp => "tascer-mcp",
        }
    }
}

/// The configured webhooks of a session, over its store's outbox.
pub struct Webhooks {
    hooks: Vec<WebhookSettings>,
    outbox: WebhookOutbox,
    source: Source,
    wake: Arc<Notify>,
    stop: CancellationToken,
    delivery: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// The delivery task's slot, even if a thread panicked holding it.
/// How long a session's end waits for a delivery under way.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks")
            .field(
                "urls",
                &self.hooks.iter().map(|h| &h.url).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Drop for Webhooks {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(task) = self.delivery.lock().take() {
            task.abort();
        }
    }
}

impl Webhooks {
    /// The sink for `hooks` over the outbox in `db`; `None` when no
    /// webhook is configured.
    pub fn open(
        hooks: Vec<WebhookSettings>,
        db: &Arc<Db>,
        source: Source,
    ) -> Result<Option<Arc<Self>>, StoreError> {
        if hooks.is_empty() {
            return Ok(None);
        }
        Ok(Some(Arc::new(Webhooks {
            hooks,
            outbox: WebhookOutbox::with_db(Arc::clone(db))?,
            source,
            wake: Arc::new(Notify::new()),
            stop: CancellationToken::new(),
            delivery: Mutex::new(None),
        })))
    }

    /// Queues `event` for every webhook that wants it: `input` is the
    /// event as a hook receives it (its `hook_event_name` is set here),
    /// `tascer` what Tascer decided about it. Returns true when anything
    /// was queued. A full queue or a store that cannot be written is
    /// logged (and the drop recorded); it never fails the caller.
    pub fn send(&self, event: HookEvent, input: Value, tascer: Value) -> bool {
        self.send_event(WebhookEvent::Hook(event), input, tascer)
    }

    /// [`send`](Self::send) for any event a webhook may receive: a hook
    /// event or `McpToolCall` (the gatekeeper's tool calls).
    pub fn send_event(&self, event: WebhookEvent, input: Value, tascer: Value) -> bool {
        let mut body = match input {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        body.insert("hook_event_name".into(), json!(event.as_str()));
        let mut meta = match tascer {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => Map::from_iter([("data".to_string(), other)]),
        };
        meta.insert("event_id".into(), json!(tascer_core::new_id()));
        meta.insert("source".into(), json!(self.source.as_str()));
        meta.insert(
            "ts".into(),
            json!(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        );
        meta.insert("version".into(), json!(VERSION));
        body.insert("tascer".into(), Value::Object(meta));
        let body = Value::Object(body).to_string();
        let mut queued = false;
        for hook in &self.hooks {
            if hook.events.as_ref().is_some_and(|e| !e.contains(&event)) {
                continue;
            }
            let headers = serde_json::to_string(&hook.headers).unwrap_or_else(|_| "{}".into());
            let new = NewDelivery {
                url: &hook.url,
                event: event.as_str(),
                body: &body,
                headers: &headers,
                timeout_ms: hook.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
                max_attempts: hook.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
                backoff_ms: hook.backoff_ms.unwrap_or(DEFAULT_BACKOFF_MS),
                max_queue: hook.max_queue.unwrap_or(DEFAULT_MAX_QUEUE),
            };
            match self.outbox.enqueue(&new, now_ms()) {
                Ok(Enqueued::Queued(_)) => queued = true,
                Ok(Enqueued::Dropped { queued: n }) => tracing::warn!(
                    "webhook {}: {} event dropped, {n} events already wait for it (maxQueue); \
                     `tascer webhook status` counts the drops",
                    hook.url,
                    event.as_str()
                ),
                Err(err) => tracing::warn!(
                    "webhook {}: cannot queue the {} event: {err}",
                    hook.url,
                    event.as_str()
                ),
            }
        }
        if queued {
            self.wake.notify_one();
        }
        queued
    }

    /// Starts delivering in the background on the current runtime, until
    /// this sink is dropped (what is left waits in the outbox for the
    /// next deliverer).
    pub fn start_delivery(&self) {
        // Its own connection: the session's writes never queue behind a
        // delivery's bookkeeping in this process (SQLite's WAL keeps the
        // two consistent).
        let outbox = match self.outbox.reopen() {
            Ok(outbox) => outbox,
            Err(err) => {
                tracing::warn!("webhooks are queued but not delivered by this session: {err}");
                return;
            }
        };
        let deliverer = match Deliverer::new(outbox) {
            Ok(d) => d,
            Err(err) => {
                tracing::warn!("webhooks are queued but not delivered by this session: {err}");
                return;
            }
        };
        let wake = Arc::clone(&self.wake);
        let stop = self.stop.clone();
        let task = tokio::spawn(async move { deliverer.run(wake, stop).await });
        *self.delivery.lock() = Some(task);
    }

    /// Stops the background delivery, letting a POST under way finish
    /// (for up to two seconds) so it is not sent again by the next
    /// deliverer. What is left waits in the outbox.
    pub async fn stop_delivery(&self) {
        self.stop.cancel();
        let task = self.delivery.lock().take();
        if let Some(mut task) = task
            && tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
    }
}
