//! A message appended to a session on PostgreSQL: on its own
//! (`append_message`) or in the same transaction as ledger entries
//! (`append_entries`).

use super::error::Failure;
use super::{Tx, exists};
use crate::backend::{MessageRow, Totals, now};

/// A message to append, owned so a retried transaction can write it again.
pub(super) struct OwnedMessage {
    /// The session the message is appended to.
    pub(super) session_id: String,
    row: MessageRow,
    totals: Option<Totals>,
    ts: String,
}

impl OwnedMessage {
    /// Copies the message, its session and totals, stamped now.
    pub(super) fn new(session_id: &str, row: &MessageRow, totals: Option<&Totals>) -> Self {
        OwnedMessage {
            session_id: session_id.to_string(),
            row: row.clone(),
            totals: totals.cloned(),
            ts: now(),
        }
    }

    /// True when this very message is already stored (a previous attempt
    /// committed before its connection dropped).
    pub(super) async fn stored(&self, tx: &Tx<'_>) -> Result<bool, Failure> {
        exists(
            tx,
            "SELECT 1 FROM messages WHERE session_id = $1 AND uuid = $2 AND data = $3",
            &[&self.session_id, &self.row.uuid, &self.row.data],
        )
        .await
    }

    /// Appends the message at the next seq of its session and records the
    /// totals (when given) on the session row. The caller holds the
    /// session's messages lock.
    pub(super) async fn insert(&self, tx: &Tx<'_>) -> Result<(), Failure> {
        let (session_id, message, ts) = (&self.session_id, &self.row, &self.ts);
        let next = tx
            .prepare_cached("SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = $1")
            .await?;
        let seq: i64 = tx.query_one(&next, &[session_id]).await?.try_get(0)?;
        let insert = tx
            .prepare_cached(
                "INSERT INTO messages (session_id, seq, uuid, kind, data, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .await?;
        let kind = message.kind.to_string();
        tx.execute(
            &insert,
            &[session_id, &seq, &message.uuid, &kind, &message.data, ts],
        )
        .await?;
        let update = tx
            .prepare_cached(
                "UPDATE sessions SET updated_at = $2,
                     first_prompt = COALESCE(first_prompt, $3),
                     num_turns = COALESCE($4, num_turns),
                     total_cost_usd = COALESCE($5, total_cost_usd),
                     status = COALESCE($6, status)
                 WHERE id = $1",
            )
            .await?;
        let turns = self.totals.as_ref().map(|t| i64::from(t.num_turns));
        let cost = self.totals.as_ref().map(|t| t.total_cost_usd);
        let status = self.totals.as_ref().map(|t| t.status.clone());
        tx.execute(
            &update,
            &[session_id, ts, &message.prompt, &turns, &cost, &status],
        )
        .await?;
        Ok(())
    }
}
