//! The review cache: LLM reviewer verdicts kept for a while, by key, so
//! that an identical question is not asked twice — also across processes
//! (`tascer hook` runs once per Claude Code event).
//!
//! A row holds the verdict and reason of one decided review under a key
//! the caller derives from what was asked (a digest), and when it expires.
//! Expired rows are never returned and are deleted as new ones are put;
//! the table never holds more than [`MAX_ROWS`] rows (the oldest go
//! first).

use std::sync::Arc;

use rusqlite::{OptionalExtension, params};

use crate::db::Db;
use crate::error::StoreError;
use crate::lease::now_ms;

/// Most rows the cache keeps.
pub const MAX_ROWS: i64 = 10_000;

const TABLES: &[&str] = &["review_cache"];

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS review_cache (
        key        TEXT PRIMARY KEY,
        reviewer   TEXT NOT NULL,
        verdict    TEXT NOT NULL,
        reason     TEXT NOT NULL,
        model      TEXT NOT NULL,
        created_ms INTEGER NOT NULL,
        expires_ms INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS review_cache_by_expiry ON review_cache (expires_ms);";

/// A cached verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedReview {
    /// The reviewer that gave it.
    pub reviewer: String,
    /// Its verdict.
    pub verdict: String,
    /// Its reason.
    pub reason: String,
    /// The model that gave it.
    pub model: String,
}

/// The review cache table in the store's database.
#[derive(Debug, Clone)]
pub struct ReviewCacheStore {
    db: Arc<Db>,
}

impl ReviewCacheStore {
    /// The cache over an open database; creates its table if missing.
    pub fn with_db(db: Arc<Db>) -> Result<Self, StoreError> {
        db.ensure_schema(TABLES, SCHEMA)?;
        Ok(ReviewCacheStore { db })
    }

    /// The verdict stored under `key`, unless it has expired.
    pub fn get(&self, key: &str) -> Result<Option<CachedReview>, StoreError> {
        let now = now_ms();
        let row = self.db.read(|conn| {
            conn.prepare_cached(
                "SELECT reviewer, verdict, reason, model FROM review_cache
                 WHERE key = ?1 AND expires_ms > ?2",
            )?
            .query_row(params![key, now], |r| {
                Ok(CachedReview {
                    reviewer: r.get(0)?,
                    verdict: r.get(1)?,
                    reason: r.get(2)?,
                    model: r.get(3)?,
                })
            })
            .optional()
        })?;
        Ok(row)
    }

    /// Stores a verdict under `key` for `ttl_ms` milliseconds (replacing
    /// what was there), deletes expired rows, and keeps at most
    /// [`MAX_ROWS`].
    pub fn put(&self, key: &str, review: &CachedReview, ttl_ms: u64) -> Result<(), StoreError> {
        let now = now_ms();
        let expires = now.saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX));
        self.db.write(|tx| {
            tx.prepare_cached("DELETE FROM review_cache WHERE expires_ms <= ?1")?
                .execute(params![now])?;
            tx.prepare_cached(
                "INSERT OR REPLACE INTO review_cache
                     (key, reviewer, verdict, reason, model, created_ms, expires_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                key,
                review.reviewer,
                review.verdict,
                review.reason,
                review.model,
                now,
                expires
            ])?;
            tx.prepare_cached(
                "DELETE FROM review_cache WHERE key IN (
                     SELECT key FROM review_cache ORDER BY created_ms DESC LIMIT -1 OFFSET ?1)",
            )?
            .execute(params![MAX_ROWS])?;
            Ok(())
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn review(verdict: &str) -> CachedReview {
        CachedReview {
            reviewer: "tool-approve".into(),
            verdict: verdict.into(),
            reason: "fine".into(),
            model: "m".into(),
        }
    }

    #[test]
    fn a_verdict_is_returned_until_it_expires_and_then_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(Db::open(dir.path().join("t.db")).unwrap());
        let cache = ReviewCacheStore::with_db(Arc::clone(&db)).unwrap();
        assert_eq!(cache.get("k").unwrap(), None);
        cache.put("k", &review("allow"), 60_000).unwrap();
        assert_eq!(cache.get("k").unwrap(), Some(review("allow")));
        cache.put("k", &review("deny"), 60_000).unwrap();
        assert_eq!(cache.get("k").unwrap(), Some(review("deny")), "replaced");

        cache.put("short", &review("allow"), 1).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(cache.get("short").unwrap(), None, "expired");
        // The next put deletes it.
        cache.put("other", &review("allow"), 60_000).unwrap();
        let rows: i64 = db
            .read(|c| c.query_row("SELECT COUNT(*) FROM review_cache", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(rows, 2);
        // Another connection to the same file sees the same verdicts.
        let other = ReviewCacheStore::with_db(Arc::new(Db::open(db.path()).unwrap())).unwrap();
        assert_eq!(other.get("k").unwrap(), Some(review("deny")));
    }
}
