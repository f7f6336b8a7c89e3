//! Delivering the outbox: claim what is due, POST it (each URL's events
//! in order, URLs side by side), then delete it, schedule a retry, or give
//! it up and count the drop.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tascer_store::{Delivery, StoreError, WebhookOutbox, now_ms};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Rows claimed at a time.
const BATCH: usize = 16;
/// Added to a batch's claim beyond the sum of its timeouts.
const CLAIM_MARGIN_MS: u64 = 10_000;
/// Longest wait between retries.
const MAX_BACKOFF_MS: u64 = 300_000;
/// Longest sleep of the background task between two looks at the outbox
/// (rows another process queued do not wake it).
const IDLE_POLL: Duration = Duration::from_secs(30);
/// After being woken, the background task waits this long for more
/// events, so that one pass delivers a burst (fewer store writes beside
/// the session's own).
const GATHER: Duration = Duration::from_millis(50);

/// Delivers outbox rows over HTTP.
pub struct Deliverer {
    outbox: WebhookOutbox,
    http: reqwest::Client,
}

/// What one pass over the due rows did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pass {
    /// Rows delivered.
    pub delivered: u64,
    /// Rows whose attempt failed and that wait for a retry.
    pub retried: u64,
    /// Rows given up (their attempts ran out).
    pub dropped: u64,
}

impl Pass {
    fn add(&mut self, other: Pass) {
        self.delivered += other.delivered;
        self.retried += other.retried;
        self.dropped += other.dropped;
    }

    fn handled(&self) -> u64 {
        self.delivered + self.retried + self.dropped
    }
}

/// The wait before retry number `attempts` (1 for the first retry):
/// `backoff_ms` doubled for each earlier retry, at most five minutes.
pub(crate) fn backoff_ms(backoff_ms: u64, attempts: u32) -> u64 {
    let factor = 1u64 << attempts.saturating_sub(1).min(20);
    backoff_ms.saturating_mul(factor).min(MAX_BACKOFF_MS)
}

impl Deliverer {
    /// A deliverer for `outbox`.
    pub fn new(outbox: WebhookOutbox) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("tascer/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Deliverer { outbox, http })
    }

    /// The outbox.
    pub fn outbox(&self) -> &WebhookOutbox {
        &self.outbox
    }

    /// Delivers every row due now, batch after batch.
    pub async fn deliver_due(&self) -> Result<Pass, StoreError> {
        let mut total = Pass::default();
        loop {
            let rows = self.outbox.claim_due(now_ms(), BATCH, CLAIM_MARGIN_MS)?;
            if rows.is_empty() {
                return Ok(total);
            }
            let mut by_url: BTreeMap<String, Vec<Delivery>> = BTreeMap::new();
            for row in rows {
                by_url.entry(row.url.clone()).or_default().push(row);
            }
            let passes = futures::future::join_all(
                by_url.into_values().map(|rows| self.send_in_order(rows)),
            )
            .await;
            for pass in passes {
                total.add(pass?);
            }
        }
    }

    /// One URL's rows, one after another: after a failure the rest wait
    /// for their next round, so the URL gets its events in order.
    async fn send_in_order(&self, rows: Vec<Delivery>) -> Result<Pass, StoreError> {
        let mut pass = Pass::default();
        let mut delivered = Vec::new();
        // After a failure, when the failed row is due again.
        let mut held_until: Option<i64> = None;
        for row in rows {
            if let Some(next) = held_until {
                // Not sent: due with the failed row, no attempt counted.
                self.outbox.postpone(row.id, next)?;
                continue;
            }
            match self.post(&row).await {
                Ok(()) => {
                    delivered.push(row.id);
                    pass.delivered += 1;
                }
                Err(error) => {
                    let attempts = row.attempts + 1;
                    if attempts >= row.max_attempts {
                        tracing::warn!(
                            "webhook {}: {} event dropped after {attempts} failed attempts: {error}",
                            row.url,
                            row.event
                        );
                        self.outbox.give_up(&row, &error, now_ms())?;
                        pass.dropped += 1;
                    } else {
                        let next = now_ms().saturating_add(
                            i64::try_from(backoff_ms(row.backoff_ms, attempts)).unwrap_or(i64::MAX),
                        );
                        self.outbox.retry_later(row.id, &error, next)?;
                        pass.retried += 1;
                        held_until = Some(next);
                    }
                }
            }
        }
        // Recorded together: until then the rows stay claimed, so no one
        // else sends them.
        self.outbox.delivered(&delivered)?;
        Ok(pass)
    }

    /// One attempt: a 2xx answer within the row's timeout is a delivery.
    async fn post(&self, row: &Delivery) -> Result<(), String> {
        let headers: BTreeMap<String, String> =
            serde_json::from_str(&row.headers).unwrap_or_default();
        let mut request = self
            .http
            .post(&row.url)
            .timeout(Duration::from_millis(row.timeout_ms))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(row.body.clone());
        for (name, value) in &headers {
            request = request.header(name.as_str(), value.as_str());
        }
        match request.send().await {
            Ok(response) if response.status().is_success() => Ok(()),
            Ok(response) => Err(format!("HTTP {}", response.status().as_u16())),
            Err(err) if err.is_timeout() => Err(format!(
                "no answer within {} ms (timeoutMs)",
                row.timeout_ms
            )),
            Err(err) => Err(format!("request failed: {err}")),
        }
    }

    /// Delivers until `stop` is cancelled (a pass under way is finished
    /// first): whenever an event is queued (`wake`), when the next retry
    /// is due, and at least every 30 s.
    pub async fn run(self, wake: Arc<Notify>, stop: CancellationToken) {
        while !stop.is_cancelled() {
            match self.deliver_due().await {
                Ok(pass) if pass.handled() > 0 => {
                    tracing::debug!(?pass, "webhook delivery pass");
                }
                Ok(_) => {}
                Err(err) => tracing::warn!("webhook delivery: {err}"),
            }
            let wait = match self.outbox.next_due_ms() {
                Ok(Some(due)) => {
                    Duration::from_millis(u64::try_from(due - now_ms()).unwrap_or(0)).min(IDLE_POLL)
                }
                _ => IDLE_POLL,
            };
            if wait.is_zero() {
                tokio::task::yield_now().await;
                continue;
            }
            tokio::select! {
                _ = wake.notified() => {
                    tokio::select! {
                        _ = tokio::time::sleep(GATHER) => {}
                        _ = stop.cancelled() => {}
                    }
                }
                _ = tokio::time::sleep(wait) => {}
                _ = stop.cancelled() => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        assert_eq!(backoff_ms(1000, 1), 1000);
        assert_eq!(backoff_ms(1000, 2), 2000);
        assert_eq!(backoff_ms(1000, 4), 8000);
        assert_eq!(backoff_ms(1000, 40), MAX_BACKOFF_MS);
    }
}
