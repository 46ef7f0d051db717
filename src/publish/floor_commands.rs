//! The table's side of the floor's dispute commands (`broker::floor`): a subscription on
//! `croupier.<id>.floor`; each request's signature checked with `[publish] floor_key`,
//! then applied through the table's own `propose` / `confirm` — the same preview, the same
//! confirmation by hash, the same two-person rule and the same `resolve` and audit rows as
//! from the panel, with the actor `floor:<badge>`. Every request is answered with JSON:
//! `{"ok": true, …}` or `{"ok": false, "code", "message"}`.

use crate::broker::floor::{self, Action, Command};
use crate::broker::PublishSection;
use crate::table::TableHandle;
use futures::StreamExt;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::task::JoinHandle;
use tracing::{info, warn};

/// Starts answering the floor for `table` (call inside a runtime); abort to stop.
pub fn start(
    config: PublishSection,
    table: String,
    key: Vec<u8>,
    handle: TableHandle,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut backoff = Duration::from_millis(250);
        let client = loop {
            match crate::broker::connect(
                &config.nats_url,
                config.credentials.as_deref(),
                &format!("croupier table {table} floor commands"),
            )
            .await
            {
                Ok(c) => break c,
                Err(e) => {
                    warn!(%table, error = %e, "floor commands: the broker is unreachable");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
            }
        };
        let mut sub = loop {
            match client.subscribe(floor::subject(&table)).await {
                Ok(s) => break s,
                Err(e) => {
                    warn!(%table, error = %e, "floor commands: cannot subscribe");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        };
        info!(%table, "answering the floor's signed dispute commands");
        while let Some(msg) = sub.next().await {
            let answer = answer(&table, &key, &handle, &msg.payload).await;
            if let Some(reply) = msg.reply {
                if let Err(e) = client.publish(reply, answer.to_string().into()).await {
                    warn!(%table, error = %e, "floor commands: cannot answer");
                }
            }
        }
    })
}

fn refuse(code: &str, message: impl std::fmt::Display) -> Value {
    json!({"ok": false, "code": code, "message": message.to_string()})
}

async fn answer(table: &str, key: &[u8], handle: &TableHandle, body: &[u8]) -> Value {
    let command: Command = match serde_json::from_slice(body) {
        Ok(c) => c,
        Err(e) => return refuse("bad_request", e),
    };
    // Before anything else: a command without this table's key is nobody's.
    if !command.verify(key) {
        warn!(%table, badge = %command.badge, "floor command refused: bad signature");
        return refuse(
            "bad_signature",
            "the command is not signed with this table's floor key",
        );
    }
    if command.table != table {
        return refuse(
            "wrong_table",
            format!("the command is for {}", command.table),
        );
    }
    let by = command.actor();
    match command.action {
        Action::Propose { resolution, reason } => {
            match handle
                .propose(command.dispute, resolution, reason, by)
                .await
            {
                Ok(preview) => json!({"ok": true, "preview": preview}),
                Err(e) => refuse(e.code(), e),
            }
        }
        Action::Confirm { proposal } => match handle.confirm(command.dispute, proposal, by).await {
            Ok(seq) => json!({"ok": true, "seq": seq}),
            Err(e) => refuse(e.code(), e),
        },
    }
}
