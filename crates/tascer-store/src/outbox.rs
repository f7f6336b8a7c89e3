//! The webhook outbox: events waiting to be delivered, durable in the
//! store's database so that none is lost when a process ends (or is
//! killed) before delivering it.
//!
//! One row per (event, webhook URL). Whoever delivers ([`claim_due`]
//! rows, POST them, then [`delivered`], [`retry_later`] or [`give_up`])
//! claims rows for a while first, so two deliverers (a session's background
//! task and a detached `tascer webhook flush`) do not send the same row at
//! once. Delivery is at least once: a deliverer that dies after the POST
//! and before [`delivered`] leaves the row to be sent again.
//!
//! The outbox is bounded: each URL holds at most its `max_queue` rows. An
//! event that finds its URL's queue full is not queued, and neither is a
//! row silently forgotten when its attempts run out: both are counted in
//! `webhook_drops` (per URL and reason, with the last event and error),
//! which [`drops`] reads.
//!
//! [`claim_due`]: WebhookOutbox::claim_due
//! [`delivered`]: WebhookOutbox::delivered
//! [`retry_later`]: WebhookOutbox::retry_later
//! [`give_up`]: WebhookOutbox::give_up
//! [`drops`]: WebhookOutbox::drops

use std::sync::Arc;

use rusqlite::{Transaction, params};
use serde::Serialize;

use crate::db::Db;
use crate::error::StoreError;

const TABLES: &[&str] = &["webhook_outbox", "webhook_drops"];

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS webhook_outbox (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        url              TEXT NOT NULL,
        event            TEXT NOT NULL,
        body             TEXT NOT NULL,
        headers          TEXT NOT NULL,
        timeout_ms       INTEGER NOT NULL,
        max_attempts     INTEGER NOT NULL,
        backoff_ms       INTEGER NOT NULL,
        attempts         INTEGER NOT NULL DEFAULT 0,
        next_attempt_ms  INTEGER NOT NULL,
        claimed_until_ms INTEGER NOT NULL DEFAULT 0,
        created_ms       INTEGER NOT NULL,
        last_error       TEXT
    );
    CREATE INDEX IF NOT EXISTS webhook_outbox_by_url ON webhook_outbox (url);
    CREATE TABLE IF NOT EXISTS webhook_drops (
        url        TEXT NOT NULL,
        reason     TEXT NOT NULL,
        count      INTEGER NOT NULL,
        first_ms   INTEGER NOT NULL,
        last_ms    INTEGER NOT NULL,
        last_event TEXT NOT NULL,
        last_error TEXT,
        PRIMARY KEY (url, reason)
    );";

/// Why events were dropped.
pub const DROP_FULL: &str = "outbox_full";
/// Why events were dropped: every attempt failed.
pub const DROP_GAVE_UP: &str = "gave_up";

/// An event to queue for one webhook.
#[derive(Debug, Clone)]
pub struct NewDelivery<'a> {
    /// Where to POST it.
    pub url: &'a str,
    /// The event's name (`PreToolUse`, …), for the drop record.
    pub event: &'a str,
    /// The JSON body.
    pub body: &'a str,
    /// Extra headers, as a JSON object of strings.
    pub headers: &'a str,
    /// Longest wait for the webhook's answer, per attempt.
    pub timeout_ms: u64,
    /// Attempts before the event is given up (and recorded as dropped).
    pub max_attempts: u32,
    /// Wait before the first retry (doubled for each further one).
    pub backoff_ms: u64,
    /// Most rows this URL may hold.
    pub max_queue: u64,
}

/// What [`WebhookOutbox::enqueue`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enqueued {
    /// Queued under this row id.
    Queued(i64),
    /// Not queued: the URL already holds `queued` rows (its `max_queue`);
    /// counted in `webhook_drops`.
    Dropped {
        /// Rows waiting for the URL.
        queued: u64,
    },
}

/// A queued event, claimed for delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Row id.
    pub id: i64,
    /// Where to POST it.
    pub url: String,
    /// The event's name.
    pub event: String,
    /// The JSON body.
    pub body: String,
    /// Extra headers (a JSON object of strings).
    pub headers: String,
    /// Longest wait per attempt.
    pub timeout_ms: u64,
    /// Attempts made so far (before this one).
    pub attempts: u32,
    /// Attempts allowed.
    pub max_attempts: u32,
    /// Wait before the first retry.
    pub backoff_ms: u64,
}

/// Events dropped for one URL and reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DropRecord {
    /// The webhook.
    pub url: String,
    /// [`DROP_FULL`] or [`DROP_GAVE_UP`].
    pub reason: String,
    /// How many events.
    pub count: u64,
    /// When the first was dropped, ms since the Unix epoch.
    pub first_ms: i64,
    /// When the last was dropped.
    pub last_ms: i64,
    /// The last dropped event's name.
    pub last_event: String,
    /// The last delivery error (for [`DROP_GAVE_UP`]).
    pub last_error: Option<String>,
}

/// The webhook outbox tables in the store's database.
#[derive(Debug, Clone)]
pub struct WebhookOutbox {
    db: Arc<Db>,
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl WebhookOutbox {
    /// The outbox over an open database; creates its tables if missing.
    pub fn with_db(db: Arc<Db>) -> Result<Self, StoreError> {
        db.ensure_schema(TABLES, SCHEMA)?;
        Ok(WebhookOutbox { db })
    }

    /// The same outbox over a connection of its own (SQLite's WAL keeps
    /// the two consistent): a deliverer's bookkeeping then never queues
    /// behind the writes of the connection this one shares.
    pub fn reopen(&self) -> Result<Self, StoreError> {
        Self::with_db(Arc::new(Db::open(self.db.path())?))
    }

    /// The database it lives in.
    pub fn db(&self) -> &Arc<Db> {
        &self.db
    }

    /// Queues an event for one webhook (due at once), unless the URL's
    /// queue is full: then the drop is counted instead.
    pub fn enqueue(&self, new: &NewDelivery<'_>, now_ms: i64) -> Result<Enqueued, StoreError> {
        self.db.write(|tx| {
            let queued: i64 = tx
                .prepare_cached("SELECT COUNT(*) FROM webhook_outbox WHERE url = ?1")?
                .query_row(params![new.url], |r| r.get(0))?;
            if to_u64(queued) >= new.max_queue {
                record_drop(tx, new.url, DROP_FULL, new.event, None, now_ms)?;
                return Ok(Enqueued::Dropped {
                    queued: to_u64(queued),
                });
            }
            tx.prepare_cached(
                "INSERT INTO webhook_outbox (url, event, body, headers, timeout_ms,
                     max_attempts, backoff_ms, next_attempt_ms, created_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
            )?
            .execute(params![
                new.url,
                new.event,
                new.body,
                new.headers,
                to_i64(new.timeout_ms),
                new.max_attempts,
                to_i64(new.backoff_ms),
                now_ms
            ])?;
            Ok(Enqueued::Queued(tx.last_insert_rowid()))
        })
    }

    /// Claims up to `limit` rows that are due (their next attempt has come
    /// and no one else holds them), oldest first, for as long as sending
    /// them one after another could take (the sum of their timeouts) plus
    /// `margin_ms`.
    pub fn claim_due(
        &self,
        now_ms: i64,
        limit: usize,
        margin_ms: u64,
    ) -> Result<Vec<Delivery>, StoreError> {
        self.db.write(|tx| {
            let rows = {
                let mut stmt = tx.prepare_cached(
                    "SELECT id, url, event, body, headers, timeout_ms, attempts, max_attempts,
                            backoff_ms
                     FROM webhook_outbox
                     WHERE next_attempt_ms <= ?1 AND claimed_until_ms <= ?1
                     ORDER BY id LIMIT ?2",
                )?;
                stmt.query_map(
                    params![now_ms, i64::try_from(limit).unwrap_or(i64::MAX)],
                    |r| {
                        Ok(Delivery {
                            id: r.get(0)?,
                            url: r.get(1)?,
                            event: r.get(2)?,
                            body: r.get(3)?,
                            headers: r.get(4)?,
                            timeout_ms: to_u64(r.get(5)?),
                            attempts: r.get(6)?,
                            max_attempts: r.get(7)?,
                            backoff_ms: to_u64(r.get(8)?),
                        })
                    },
                )?
                .collect::<Result<Vec<_>, _>>()?
            };
            let busy: u64 = rows.iter().map(|r| r.timeout_ms).sum::<u64>() + margin_ms;
            let until = now_ms.saturating_add(to_i64(busy));
            let mut claim =
                tx.prepare_cached("UPDATE webhook_outbox SET claimed_until_ms = ?2 WHERE id = ?1")?;
            for row in &rows {
                claim.execute(params![row.id, until])?;
            }
            Ok(rows)
        })
    }

    /// The rows were delivered: they leave the outbox (one transaction).
    pub fn delivered(&self, ids: &[i64]) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        self.db.write(|tx| {
            let mut delete = tx.prepare_cached("DELETE FROM webhook_outbox WHERE id = ?1")?;
            for id in ids {
                delete.execute(params![id])?;
            }
            Ok(())
        })
    }

    /// An attempt failed: counted, the error kept, the row due again at
    /// `next_attempt_ms` (and released).
    pub fn retry_later(
        &self,
        id: i64,
        error: &str,
        next_attempt_ms: i64,
    ) -> Result<(), StoreError> {
        self.db.write(|tx| {
            tx.prepare_cached(
                "UPDATE webhook_outbox SET attempts = attempts + 1, last_error = ?2,
                     next_attempt_ms = ?3, claimed_until_ms = 0
                 WHERE id = ?1",
            )?
            .execute(params![id, error, next_attempt_ms])?;
            Ok(())
        })
    }

    /// The row was not sent (an earlier row of its URL just failed): it
    /// is released and due again at `next_attempt_ms`, no attempt counted.
    pub fn postpone(&self, id: i64, next_attempt_ms: i64) -> Result<(), StoreError> {
        self.db.write(|tx| {
            tx.prepare_cached(
                "UPDATE webhook_outbox SET next_attempt_ms = ?2, claimed_until_ms = 0
                 WHERE id = ?1",
            )?
            .execute(params![id, next_attempt_ms])?;
            Ok(())
        })
    }

    /// The last attempt failed: the row leaves the outbox and the drop is
    /// counted with its error.
    pub fn give_up(&self, delivery: &Delivery, error: &str, now_ms: i64) -> Result<(), StoreError> {
        self.db.write(|tx| {
            let n = tx
                .prepare_cached("DELETE FROM webhook_outbox WHERE id = ?1")?
                .execute(params![delivery.id])?;
            if n == 1 {
                record_drop(
                    tx,
                    &delivery.url,
                    DROP_GAVE_UP,
                    &delivery.event,
                    Some(error),
                    now_ms,
                )?;
            }
            Ok(())
        })
    }

    /// Rows waiting, claimed or not.
    pub fn pending(&self) -> Result<u64, StoreError> {
        let n: i64 = self.db.read(|conn| {
            conn.prepare_cached("SELECT COUNT(*) FROM webhook_outbox")?
                .query_row([], |r| r.get(0))
        })?;
        Ok(to_u64(n))
    }

    /// When the next row becomes due (its next attempt, or the end of
    /// its claim), if any row waits.
    pub fn next_due_ms(&self) -> Result<Option<i64>, StoreError> {
        let next: Option<i64> = self.db.read(|conn| {
            conn.prepare_cached(
                "SELECT MIN(MAX(next_attempt_ms, claimed_until_ms)) FROM webhook_outbox",
            )?
            .query_row([], |r| r.get(0))
        })?;
        Ok(next)
    }

    /// Every drop record, by URL and reason.
    pub fn drops(&self) -> Result<Vec<DropRecord>, StoreError> {
        let rows = self.db.read(|conn| -> rusqlite::Result<Vec<DropRecord>> {
            let mut stmt = conn.prepare_cached(
                "SELECT url, reason, count, first_ms, last_ms, last_event, last_error
                 FROM webhook_drops ORDER BY url, reason",
            )?;
            stmt.query_map([], |r| {
                Ok(DropRecord {
                    url: r.get(0)?,
                    reason: r.get(1)?,
                    count: to_u64(r.get(2)?),
                    first_ms: r.get(3)?,
                    last_ms: r.get(4)?,
                    last_event: r.get(5)?,
                    last_error: r.get(6)?,
                })
            })?
            .collect()
        })?;
        Ok(rows)
    }
}

fn record_drop(
    tx: &Transaction<'_>,
    url: &str,
    reason: &str,
    event: &str,
    error: Option<&str>,
    now_ms: i64,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO webhook_drops (url, reason, count, first_ms, last_ms, last_event, last_error)
         VALUES (?1, ?2, 1, ?3, ?3, ?4, ?5)
         ON CONFLICT (url, reason) DO UPDATE SET count = count + 1, last_ms = excluded.last_ms,
             last_event = excluded.last_event,
             last_error = COALESCE(excluded.last_error, last_error)",
    )?
    .execute(params![url, reason, now_ms, event, error])?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn outbox() -> (tempfile::TempDir, WebhookOutbox) {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open(dir.path().join("t.db")).unwrap());
        (dir, WebhookOutbox::with_db(db).unwrap())
    }

    fn new(url: &str, max_queue: u64) -> NewDelivery<'_> {
        NewDelivery {
            url,
            event: "PreToolUse",
            body: "{}",
            headers: "{}",
            timeout_ms: 1000,
            max_attempts: 2,
            backoff_ms: 100,
            max_queue,
        }
    }

    #[test]
    fn a_full_queue_drops_new_events_and_counts_them() {
        let (_dir, outbox) = outbox();
        for _ in 0..2 {
            assert!(matches!(
                outbox.enqueue(&new("http://a", 2), 10).unwrap(),
                Enqueued::Queued(_)
            ));
        }
        assert_eq!(
            outbox.enqueue(&new("http://a", 2), 11).unwrap(),
            Enqueued::Dropped { queued: 2 }
        );
        outbox.enqueue(&new("http://a", 2), 12).unwrap();
        // Another URL has its own queue.
        assert!(matches!(
            outbox.enqueue(&new("http://b", 2), 12).unwrap(),
            Enqueued::Queued(_)
        ));
        assert_eq!(outbox.pending().unwrap(), 3);
        let drops = outbox.drops().unwrap();
        assert_eq!(drops.len(), 1);
        assert_eq!(drops[0].url, "http://a");
        assert_eq!(drops[0].reason, DROP_FULL);
        assert_eq!(drops[0].count, 2);
        assert_eq!((drops[0].first_ms, drops[0].last_ms), (11, 12));
    }

    #[test]
    fn claimed_rows_are_not_claimed_twice_until_released() {
        let (_dir, outbox) = outbox();
        outbox.enqueue(&new("http://a", 10), 100).unwrap();
        let first = outbox.claim_due(100, 10, 4_000).unwrap();
        assert_eq!(first.len(), 1);
        assert!(outbox.claim_due(200, 10, 4_000).unwrap().is_empty());
        // Claimed for its timeout (1000) plus the margin.
        assert_eq!(outbox.next_due_ms().unwrap(), Some(5_100));
        outbox.retry_later(first[0].id, "HTTP 500", 1_000).unwrap();
        assert!(outbox.claim_due(999, 10, 4_000).unwrap().is_empty());
        let again = outbox.claim_due(1_000, 10, 4_000).unwrap();
        assert_eq!(again[0].attempts, 1);
        outbox.give_up(&again[0], "HTTP 500", 1_001).unwrap();
        assert_eq!(outbox.pending().unwrap(), 0);
        let drops = outbox.drops().unwrap();
        assert_eq!(drops[0].reason, DROP_GAVE_UP);
        assert_eq!(drops[0].last_error.as_deref(), Some("HTTP 500"));
        assert_eq!(outbox.next_due_ms().unwrap(), None);
    }
}
