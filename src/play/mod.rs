//! Remote play (issue #15): the service in front of the engine for players who are not at
//! the table. It holds the wallet, the journal of wallet requests, the seats players hold
//! and their windows (`table::remote`), and players' launch sessions (`sessions`). The
//! engine never sees a balance: a stake reaches it only after the wallet took it.
//!
//! After every committed log row the reconciler (`run_reconciler`) brings the journal as far
//! as the log allows (rollbacks of stakes that did not make it, one credit per seat and
//! final round); at start it runs once before anything is served, so a crash between a
//! debit and the table's commit ends rolled back or settled, exactly once.

pub mod desk;
pub mod funds;
pub mod history;
pub mod presence;
pub mod rules;
pub mod sessions;

use crate::engine::SeatId;
use crate::table::remote::RemoteSeats;
use crate::table::TableHandle;
use crate::wallet::journal::Journal;
use crate::wallet::ledger::Ledger;
use crate::wallet::Wallet;
use sqlx::SqlitePool;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tracing::warn;

/// Everything remote play needs, shared by the players' API and the reconciler.
pub struct Play {
    /// The wallet (the embedded ledger by default).
    pub wallet: Arc<dyn Wallet>,
    /// The embedded ledger (names of players; balances when it is the wallet).
    pub ledger: Ledger,
    /// The journal of this table's wallet requests.
    pub journal: Journal,
    /// Seats and windows.
    pub remote: Arc<RemoteSeats>,
    /// The table's database pool (players' sessions).
    pub pool: SqlitePool,
    /// The table's id.
    pub table: String,
    /// How long a session the platform opens lasts, hours.
    pub launch_hours: u64,
    /// Seats 1 to this are the demo players' (remote players take the others).
    pub demo_seats: u8,
    /// What the player's page shows to protect the player (`[play]`: the session clock,
    /// the reality check).
    pub protections: Protections,
    /// Serialises each player's money requests (a bet and its replacement never interleave).
    pub money: tokio::sync::Mutex<()>,
    /// Who last placed each seat's bet, and in which betting window (`funds.auto_rebet`).
    marks: std::sync::Mutex<BTreeMap<SeatId, SeatMark>>,
    /// Who is still playing: the players' last requests, the seats freed (`presence`).
    pub presence: presence::Presence,
    /// The game's help (rules, pay tables, exact RTPs), computed once: pricing a side bet
    /// enumerates the shoe.
    pub help: tokio::sync::OnceCell<serde_json::Value>,
}

/// The player protections of `[play]`, as the player's page reads them
/// (`GET /api/play/state`'s `protections`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Protections {
    /// Show the time played since the session began.
    pub session_clock: bool,
    /// Stop every this many minutes of a session to show the time played and the net
    /// result, and ask to continue or leave (0: never).
    pub reality_check_minutes: u64,
}

impl Protections {
    /// The settings of `[play]`.
    pub fn of(section: &crate::table::remote::PlaySection) -> Protections {
        Protections {
            session_clock: section.session_clock,
            reality_check_minutes: section.reality_check_minutes,
        }
    }
}

/// Who placed a seat's bet in a betting window, for the automatic re-bet: a seat the player
/// bet on themselves is never re-bet in that window (even after a withdrawal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeatMark {
    /// The window's round.
    pub round: u64,
    /// `None`: the player; `Some(clipped)`: the automatic re-bet, `clipped` when the
    /// balance could not cover the previous bet (`funds.short_rebet`).
    pub rebet: Option<bool>,
    /// The game session the bet belongs to: the one the player placed it with, which a
    /// re-bet of it keeps (the sheet's "within the same game session").
    pub session: sessions::SessionKey,
}

impl std::fmt::Debug for Play {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Play")
            .field("table", &self.table)
            .finish_non_exhaustive()
    }
}

impl Play {
    /// Remote play on `pool` (the table's database, migrated) with the embedded wallet.
    pub fn embedded(
        pool: SqlitePool,
        table: &str,
        final_when_settled: bool,
        remote: Arc<RemoteSeats>,
        demo_seats: u8,
    ) -> Play {
        let ledger = Ledger::new(pool.clone());
        Play {
            wallet: Arc::new(ledger.clone()),
            ledger,
            journal: Journal::new(pool.clone(), table, final_when_settled),
            remote,
            pool,
            table: table.to_string(),
            demo_seats,
            launch_hours: 12,
            protections: Protections::of(&crate::table::remote::PlaySection::default()),
            money: tokio::sync::Mutex::new(()),
            marks: std::sync::Mutex::new(BTreeMap::new()),
            presence: presence::Presence::new(1),
            help: tokio::sync::OnceCell::new(),
        }
    }

    /// Records who placed `seat`'s bet in the window of `round`, in which game session
    /// (see [`SeatMark`]).
    pub fn mark_seat_bet(&self, seat: SeatId, mark: SeatMark) {
        let mut marks = self.marks.lock().unwrap_or_else(|e| e.into_inner());
        marks.insert(seat, mark);
    }

    /// Who last placed `seat`'s bet, and in which window.
    pub fn seat_mark(&self, seat: SeatId) -> Option<SeatMark> {
        let marks = self.marks.lock().unwrap_or_else(|e| e.into_inner());
        marks.get(&seat).copied()
    }
}

/// Reconciles after every committed row until the table stops. Failures (a wallet that
/// does not answer) are retried at the next row, or within a second.
pub async fn run_reconciler(play: Arc<Play>, table: TableHandle) {
    let mut sub = table.watch();
    loop {
        let changed = tokio::time::timeout(Duration::from_secs(1), sub.changed()).await;
        if let Ok(Err(_)) = changed {
            return;
        }
        let _guard = play.money.lock().await;
        if let Err(e) = play.journal.reconcile(play.wallet.as_ref(), false).await {
            warn!(table = %play.table, error = %e, "wallet reconciliation failed; retrying");
        }
    }
}
