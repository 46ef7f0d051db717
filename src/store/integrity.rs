//! The shoe-integrity verdicts beside the log: written once per finished shoe (with an
//! audit row when the shoe is suspicious), read back by `recall`.

use super::{audit, Store, StoreError};
use crate::integrity::shoe::Verdict;
use sqlx::Connection;

impl Store {
    /// Records `verdict` on its shoe's row unless one is there already; a suspicious
    /// verdict gets an audit row (`shoe_suspicious`, actor `system`) in the same
    /// transaction. Returns whether it was new: after a crash, recovery judges the last
    /// shoe again and this makes the second write a no-op.
    pub async fn record_shoe_verdict(&mut self, verdict: &Verdict) -> Result<bool, StoreError> {
        let json = serde_json::to_string(verdict)?;
        let mut tx = self.conn.begin_with("BEGIN IMMEDIATE").await?;
        let done = sqlx::query(
            "UPDATE shoes SET integrity = ? WHERE table_id = ? AND shoe = ? AND integrity IS NULL",
        )
        .bind(&json)
        .bind(&self.table)
        .bind(i64::from(verdict.shoe))
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if done == 1 && verdict.suspicious() {
            let mut entry = audit::AuditEntry::new("system", audit::actions::SHOE_SUSPICIOUS);
            entry.subject = format!("{} shoe {}", self.table, verdict.shoe);
            entry.reason = verdict.reasons.join("; ");
            entry.detail = serde_json::json!({"table": self.table, "verdict": verdict});
            audit::append(&mut tx, &entry).await?;
        }
        tx.commit().await?;
        Ok(done == 1)
    }
}
