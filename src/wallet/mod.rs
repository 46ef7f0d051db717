//! Remote players' money, in the seamless-wallet model: the operator's wallet holds the
//! balance; the table asks it to `debit` a stake before the bet is accepted, `credit` a
//! round's returns, and `rollback` a debit whose bet never reached the log. Every request
//! carries a transaction id derived from (table, round, seat, bet line, kind), so a repeated
//! request (a retry after a timeout, a restart) is applied at most once.
//!
//! `ledger` is the embedded wallet (SQLite, the default), `http` the adapter to an
//! operator's seamless-wallet server; `journal` is the service's own
//! record of what it asked, and the reconciliation that makes every stake end committed
//! and settled, or rolled back — exactly once — against the event log.

pub mod http;
pub mod journal;
pub mod ledger;

use futures::future::BoxFuture;
use std::fmt;

/// What a transaction does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxKind {
    /// A stake taken from the balance.
    Debit,
    /// Returns paid into the balance.
    Credit,
    /// A debit undone (its stake back).
    Rollback,
}

impl TxKind {
    /// The word in the transaction id and the ledger.
    pub fn as_str(self) -> &'static str {
        match self {
            TxKind::Debit => "debit",
            TxKind::Credit => "credit",
            TxKind::Rollback => "rollback",
        }
    }
}

/// A transaction id: `<table>:<round>:<seat>:<line>:<kind>`, the table part carrying the
/// table's timeline (`t1~3fa9c2d1`: `journal::tx_table`), so round numbers played again
/// after a restore — or by a second table given the same id — never meet another
/// history's ids. The line names the bet line
/// and which attempt it is (`main.1`, `double.1`, `settle`): the same stake asked twice gets
/// the same id, a new stake a new one. Lines that are not the seat's own player's carry
/// their owner (`Owner`): `behind-main@bob.1` (bob behind the seat), `main@bob.1` (bob's
/// box in a common draw), and side bets are `side-<name>` (`side-21+3.1`).
/// Player ids hold no `.`, `:` or `@` (`ledger::Ledger::add_player`), and side-bet names
/// are escaped (`side_line`), so no two lines' ids can meet.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TxId {
    /// The table, with its timeline (`journal::tx_table`).
    pub table: String,
    /// The round.
    pub round: u64,
    /// The seat (box).
    pub seat: u8,
    /// The bet line and attempt.
    pub line: String,
    /// Debit, credit or rollback.
    pub kind: TxKind,
}

impl TxId {
    /// The id of the rollback of this (debit) transaction.
    pub fn rollback(&self) -> TxId {
        TxId {
            kind: TxKind::Rollback,
            ..self.clone()
        }
    }

    /// The id of the credit that settles `seat`'s stakes in `round`.
    pub fn settlement(table: &str, round: u64, seat: u8) -> TxId {
        TxId::settlement_of(table, round, seat, &Owner::Seat)
    }

    /// The id of the credit that settles `owner`'s stakes at `seat` in `round`.
    pub fn settlement_of(table: &str, round: u64, seat: u8, owner: &Owner) -> TxId {
        TxId {
            table: table.to_string(),
            round,
            seat,
            line: owner.line("settle"),
            kind: TxKind::Credit,
        }
    }
}

/// Whose stakes a bet line holds at its seat (box).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Owner {
    /// The seat's own (seated) player: lines `main`, `double`, `side-pair`, `settle`.
    Seat,
    /// A player betting behind the seat: lines `behind-main@P`, `behind-settle@P`.
    Behind(String),
    /// A player's box in a common draw (many players share a box): `main@P`, `settle@P`.
    Box(String),
}

impl Owner {
    /// The line `base` (`main`, `double`, `split`, `insurance`, `side-…`, `settle`) of
    /// this owner.
    pub fn line(&self, base: &str) -> String {
        match self {
            Owner::Seat => base.to_string(),
            Owner::Behind(p) => format!("behind-{base}@{p}"),
            Owner::Box(p) => format!("{base}@{p}"),
        }
    }

    /// The owner a journalled line (with or without its attempt) belongs to.
    pub fn of_line(line: &str) -> Owner {
        let base = line.split('.').next().unwrap_or(line);
        match base.split_once('@') {
            None => Owner::Seat,
            Some((kind, player)) if kind.starts_with("behind-") => {
                Owner::Behind(player.to_string())
            }
            Some((_, player)) => Owner::Box(player.to_string()),
        }
    }

    /// The player named in the line (`None`: the seat's own player).
    pub fn player(&self) -> Option<&str> {
        match self {
            Owner::Seat => None,
            Owner::Behind(p) | Owner::Box(p) => Some(p),
        }
    }
}

/// The base line of the side bet `name` (`side-21+3`): `.`, `:`, `@` and `%` in a name
/// are written `%XX`, so an id stays parseable and two names never share a line.
pub fn side_line(name: &str) -> String {
    let mut out = String::from("side-");
    for c in name.chars() {
        match c {
            '.' | ':' | '@' | '%' => out.push_str(&format!("%{:02X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

impl fmt::Display for TxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}:{}:{}",
            self.table,
            self.round,
            self.seat,
            self.line,
            self.kind.as_str()
        )
    }
}

/// Why the wallet refused or could not answer. Every variant has a stable code.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum WalletError {
    /// The balance does not cover the stake.
    #[error("insufficient funds: the balance is {balance}, the stake {amount}")]
    InsufficientFunds {
        /// The balance, minor units.
        balance: i64,
        /// The stake asked for.
        amount: i64,
    },
    /// The wallet knows no such player.
    #[error("unknown player {0:?}")]
    UnknownPlayer(String),
    /// The id was used before for another request (another player, amount or kind).
    #[error("transaction {0} was already used for another request")]
    Conflict(String),
    /// The debit was rolled back already (a rollback that came first wins).
    #[error("transaction {0} was rolled back")]
    RolledBack(String),
    /// No answer (timeout, connection, server error): nothing may be assumed applied
    /// or not; the same id is retried or rolled back.
    #[error("the wallet did not answer: {0}")]
    Unavailable(String),
}

impl WalletError {
    /// The stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            WalletError::InsufficientFunds { .. } => "insufficient_funds",
            WalletError::UnknownPlayer(_) => "unknown_player",
            WalletError::Conflict(_) => "wallet_conflict",
            WalletError::RolledBack(_) => "wallet_rolled_back",
            WalletError::Unavailable(_) => "wallet_unavailable",
        }
    }
}

/// A money request: who, how much, under which id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalletRequest {
    /// The transaction id.
    pub tx: TxId,
    /// The player.
    pub player: String,
    /// Minor units, ≥ 0.
    pub amount: i64,
}

/// A seamless wallet. Each call is idempotent by its transaction id; each answers the
/// player's balance after it.
pub trait Wallet: Send + Sync {
    /// The player's balance.
    fn balance<'a>(&'a self, player: &'a str) -> BoxFuture<'a, Result<i64, WalletError>>;
    /// Takes a stake. Refused (and nothing taken) when the balance is short.
    fn debit<'a>(&'a self, req: &'a WalletRequest) -> BoxFuture<'a, Result<i64, WalletError>>;
    /// Pays returns in.
    fn credit<'a>(&'a self, req: &'a WalletRequest) -> BoxFuture<'a, Result<i64, WalletError>>;
    /// Undoes the debit `req.tx` names (the stake back if it was taken; if it never
    /// arrived, a later debit with that id is refused).
    fn rollback<'a>(&'a self, req: &'a WalletRequest) -> BoxFuture<'a, Result<i64, WalletError>>;
}

/// A wallet whose failures are counted on the table's `/metrics`
/// (`croupier_wallet_errors_total{code}`): every call goes to `inner` unchanged.
pub struct Counted {
    inner: std::sync::Arc<dyn Wallet>,
    metrics: std::sync::Arc<crate::metrics::Metrics>,
}

impl Counted {
    /// Counts `inner`'s errors in `metrics`.
    pub fn new(
        inner: std::sync::Arc<dyn Wallet>,
        metrics: std::sync::Arc<crate::metrics::Metrics>,
    ) -> Counted {
        Counted { inner, metrics }
    }

    /// Counts `result`'s error, if it is one (a short balance is the player's, not one).
    fn count<T>(&self, result: Result<T, WalletError>) -> Result<T, WalletError> {
        if let Err(e) = &result {
            if !matches!(e, WalletError::InsufficientFunds { .. }) {
                self.metrics.wallet_error(e.code());
            }
        }
        result
    }
}

impl Wallet for Counted {
    fn balance<'a>(&'a self, player: &'a str) -> BoxFuture<'a, Result<i64, WalletError>> {
        Box::pin(async move { self.count(self.inner.balance(player).await) })
    }

    fn debit<'a>(&'a self, req: &'a WalletRequest) -> BoxFuture<'a, Result<i64, WalletError>> {
        Box::pin(async move { self.count(self.inner.debit(req).await) })
    }

    fn credit<'a>(&'a self, req: &'a WalletRequest) -> BoxFuture<'a, Result<i64, WalletError>> {
        Box::pin(async move { self.count(self.inner.credit(req).await) })
    }

    fn rollback<'a>(&'a self, req: &'a WalletRequest) -> BoxFuture<'a, Result<i64, WalletError>> {
        Box::pin(async move { self.count(self.inner.rollback(req).await) })
    }
}

/// Unix milliseconds now (for the rows' `at_ms`, read by people only).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_different_owners_and_side_bets_never_meet() {
        let lines = [
            Owner::Seat.line("main"),
            Owner::Behind("bob".into()).line("main"),
            Owner::Box("bob".into()).line("main"),
            Owner::Behind("bob".into()).line("settle"),
            Owner::Box("behind-x".into()).line("main"),
            side_line("21+3"),
            side_line("a.b"),
            side_line("a%2Eb"),
        ];
        let distinct: std::collections::BTreeSet<_> = lines.iter().collect();
        assert_eq!(distinct.len(), lines.len(), "{lines:?}");
        assert_eq!(lines[1], "behind-main@bob");
        assert_eq!(side_line("a.b"), "side-a%2Eb");
        assert_eq!(side_line("a%2Eb"), "side-a%252Eb");
        for l in &lines {
            assert!(!l.contains('.') && !l.contains(':'), "{l}");
        }
        assert_eq!(
            Owner::of_line("behind-double@bob.2"),
            Owner::Behind("bob".into())
        );
        assert_eq!(Owner::of_line("main@bob.1"), Owner::Box("bob".into()));
        assert_eq!(Owner::of_line("side-21+3.1"), Owner::Seat);
        // A common-draw player named like a behind line still owns a box line.
        assert_eq!(
            Owner::of_line("main@behind-x.1"),
            Owner::Box("behind-x".into())
        );
    }
}
