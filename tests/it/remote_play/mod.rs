//! Remote play through the real binary on the built-in default (demo dealer, simulated
//! shoe): `croupier player add` prints a launch link; the player joins a free seat, bets
//! within the countdown, decides when asked, and is credited the round's returns exactly
//! once; a late bet is refused with `betting_closed` and the close's log position. A
//! SIGKILL between a debit and the table's commit ends rolled back, exactly once, at the
//! next start.

use crate::common;
use crate::proc;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::time::{sleep, timeout};

mod deluxe;
mod multihand;
mod sessions;
mod timers;
mod ultimate;
mod wallet;

/// The demo table with short windows: 40 ms between the demo's steps, a 1 s dispute window,
/// a 3 s countdown and decision timer.
const QUICK: [(&str, &str); 4] = [
    ("pace_ms = 400", "pace_ms = 40"),
    ("window_seconds = 5", "window_seconds = 1"),
    ("betting_seconds = 15", "betting_seconds = 3"),
    ("decision_seconds = 20", "decision_seconds = 3"),
];

fn config(dir: &Path) -> PathBuf {
    common::demo_config_file(dir, &QUICK)
}

fn croupier(args: &[&str]) -> (bool, String) {
    let out = common::croupier(args, None);
    (out.status.success(), common::text(&out))
}

/// `player add`: the token of the launch link it prints.
fn add_player(cfg: &Path, name: &str, balance: &str) -> String {
    common::launch_token(cfg, name, balance)
}

fn as_player(p: &mut proc::Proc, token: &str) {
    p.headers = vec![("Authorization".into(), format!("Bearer {token}"))];
}

/// `name` added with `balance`, the binary started on `cfg` (its log beside it) and the
/// player at the table by `join` (the join's body): the process, calling as the player.
async fn seated(cfg: &Path, name: &str, balance: &str, join: &str) -> proc::Proc {
    let token = add_player(cfg, name, balance);
    let mut p = proc::spawn(cfg, &cfg.with_file_name("log")).await;
    as_player(&mut p, &token);
    taken(&p, "/api/play/join", join).await;
    p
}

/// Posts `body` to `path` and asserts the table took it: the answer's text.
async fn taken(p: &proc::Proc, path: &str, body: &str) -> String {
    let (status, reply) = p.post(path, body).await;
    assert_eq!(status, 200, "{path} {body}: {reply}");
    reply
}

/// Posts `body` to `path` and asserts the table refused it with `status` and `code`.
async fn refuses(p: &proc::Proc, path: &str, body: &str, status: u16, code: &str) {
    let (got, reply) = p.post(path, body).await;
    assert_eq!(
        (got, code_of(&reply).as_str()),
        (status, code),
        "{path} {body}: {reply}"
    );
}

/// Sends the decision `body` (`{"action": …}` and the seat or box it is for): the status
/// and the answer's text.
async fn decide(p: &proc::Proc, body: &str) -> (u16, String) {
    p.post("/api/play/decision", body).await
}

/// Once the last round is final (after the 1 s dispute window): the player's balance, and
/// the binary stopped cleanly.
async fn final_balance(p: proc::Proc) -> i64 {
    sleep(Duration::from_millis(2500)).await;
    let balance = state(&p).await["balance"].as_i64().expect("balance");
    assert!(p.terminate(), "clean stop");
    balance
}

async fn state(p: &proc::Proc) -> Value {
    p.get("/api/play/state").await
}

/// Polls the player's state until `f` holds (at most `secs`).
async fn until(p: &proc::Proc, secs: u64, what: &str, f: impl Fn(&Value) -> bool) -> Value {
    // Counted in polls, which a loaded machine stretches: past `secs` of wall time it is
    // said once, so a test that runs into its own bound shows where it waited.
    let started = std::time::Instant::now();
    let mut said = false;
    for _ in 0..secs * 10 {
        let s = state(p).await;
        if f(&s) {
            return s;
        }
        if !said && started.elapsed() > Duration::from_secs(secs) {
            said = true;
            eprintln!("{what}: still waiting after {secs} s: {s}");
        }
        sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: {}", state(p).await);
}

/// Polls the table's full snapshot as its staff (`staff`: their headers) until `f` holds (at
/// most `secs`), with no request as any player meanwhile: a player's page that is gone.
async fn until_table(
    p: &mut proc::Proc,
    staff: &[(String, String)],
    secs: u64,
    what: &str,
    f: impl Fn(&Value) -> bool,
) -> Value {
    let player = std::mem::replace(&mut p.headers, staff.to_vec());
    for _ in 0..secs * 10 {
        let s = p.get("/api/status").await;
        if f(&s) {
            p.headers = player;
            return s;
        }
        sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: {}", p.get("/api/status").await);
}

/// After a session of `player`'s ended while round `r` was theirs: nothing of theirs was
/// staked, debited or settled in a later round (the journal, the settlements on `filter`),
/// their balance in the ledger is the log's (an opening of 500.00), and no seat is held.
async fn nothing_moved_after(db: &Path, player: &str, r: u64, filter: &str) -> i64 {
    // Round `r` is credited once final (after the dispute window).
    let open = format!("SELECT COUNT(*) FROM wallet_journal WHERE player_id = '{player}' AND state IN ('pending', 'committed')");
    for _ in 0..300 {
        if ledger_rows(db, &open).await == 0 {
            break;
        }
        sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        ledger_rows(
            db,
            &format!(
                "SELECT COUNT(*) FROM wallet_journal WHERE player_id = '{player}' AND round > {r}"
            )
        )
        .await,
        0,
        "{player}: no stake after round {r}"
    );
    assert_eq!(
        ledger_rows(
            db,
            &format!("SELECT COUNT(*) FROM settlements WHERE ({filter}) AND round > {r}")
        )
        .await,
        0,
        "{player}: nothing on the table after round {r}"
    );
    let balance = ledger_rows(
        db,
        &format!("SELECT balance FROM players WHERE id = '{player}'"),
    )
    .await;
    balance_is_the_logs(db, player, balance, filter).await;
    assert_eq!(
        ledger_rows(
            db,
            &format!("SELECT COUNT(*) FROM remote_seats WHERE player = '{player}'")
        )
        .await,
        0,
        "{player}'s seat is freed"
    );
    balance
}

/// Replays `log` (Deluxe): the tick rows, and the (seq, action) of every tick that
/// timed out a decision of `seat` (the engine's events for it, as recovery computes them).
fn timeouts_in(
    log: &[croupier::store::LogRow],
    seat: u8,
) -> (Vec<u64>, Vec<(u64, croupier::engine::Action)>) {
    let (ticks, out) = common::logged_timeouts(log, "deluxe", seat);
    (ticks, out.into_iter().map(|t| (t.seq, t.action)).collect())
}

async fn ledger_rows(db: &Path, sql: &str) -> i64 {
    let pool = croupier::auth::open_pool(db).await.expect("pool");
    let n: i64 = sqlx::query_scalar(sql)
        .fetch_one(&pool)
        .await
        .expect("query");
    pool.close().await;
    n
}

/// The test configuration in `dir` with `edits` (text replacements) on top.
fn config_with(dir: &Path, edits: &[(&str, &str)]) -> PathBuf {
    common::demo_config_file(dir, &[&QUICK[..], edits].concat())
}

/// The binary on `variant` (a 20 s countdown) with one player, `name` (€500.00), signed
/// in: the directory, the database, the process.
async fn one_player(variant: &str, name: &str) -> (tempfile::TempDir, PathBuf, proc::Proc) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config_with(
        dir.path(),
        &[
            ("variant = \"deluxe\"", &format!("variant = {variant:?}")),
            ("betting_seconds = 3", "betting_seconds = 20"),
            // The balance rules to the cent (a re-bet clipped to a balance of €5.25); the
            // table's betting unit has its own test.
            ("bet_unit = 10", "bet_unit = 1"),
        ],
    );
    let token = add_player(&cfg, name, "500.00");
    let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
    as_player(&mut p, &token);
    let db = dir.path().join("croupier.db");
    (dir, db, p)
}

/// Every journalled stake is settled or rolled back.
async fn no_open_stakes(db: &Path) {
    let open = ledger_rows(
        db,
        "SELECT COUNT(*) FROM wallet_journal WHERE state IN ('pending', 'committed')",
    )
    .await;
    assert_eq!(open, 0, "every stake settled or rolled back");
}

fn code_of(body: &str) -> String {
    serde_json::from_str::<Value>(body).expect("json")["error"]["code"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// A player's balance in the log: the opening balance less every stake the log settled
/// for them, plus every return (`seat` and `player` as the settlements hold them).
async fn by_the_log(db: &Path, opening: i64, filter: &str) -> i64 {
    let staked = ledger_rows(
        db,
        &format!("SELECT COALESCE(SUM(staked), 0) FROM settlements WHERE {filter}"),
    )
    .await;
    let returned = ledger_rows(
        db,
        &format!("SELECT COALESCE(SUM(returned), 0) FROM settlements WHERE {filter}"),
    )
    .await;
    opening - staked + returned
}

/// `player`'s balance as shown is what the log says (an opening of 500.00, the settlement
/// rows `filter` picks) and what the embedded ledger holds.
async fn balance_is_the_logs(db: &Path, player: &str, balance: i64, filter: &str) {
    assert_eq!(
        balance,
        by_the_log(db, 50_000, filter).await,
        "{player} by the log"
    );
    assert_eq!(
        ledger_rows(
            db,
            &format!("SELECT balance FROM players WHERE id = '{player}'")
        )
        .await,
        balance,
        "{player} in the ledger"
    );
}

/// How many ledger rows carry transaction id `tx`.
async fn ledger_count(db: &Path, tx: &str) -> i64 {
    ledger_rows(
        db,
        &format!("SELECT COUNT(*) FROM wallet_ledger WHERE tx_id = '{tx}'"),
    )
    .await
}

/// Whether the player's turn in state `s` allows `action`.
fn allows(s: &Value, action: &str) -> bool {
    s["turn"]["allowed"]
        .as_array()
        .is_some_and(|a| a.iter().any(|x| x == action))
}

/// Stands on every hand and declines insurance ("": nothing asked).
fn stand(s: &Value) -> &'static str {
    if s["turn"]["kind"] == "insurance" {
        "no_insurance"
    } else if s["turn"].is_object() {
        "stand"
    } else {
        ""
    }
}

/// Answers what the table asks of the player with `choose` (its answer to the state, ""
/// when nothing is asked) until round `r`'s result is shown: the answers the table took.
async fn answer_until_result(
    p: &proc::Proc,
    r: u64,
    choose: impl Fn(&Value) -> &'static str,
) -> Vec<&'static str> {
    let mut taken = Vec::new();
    for _ in 0..1200 {
        let s = state(p).await;
        if s["view"]["last_result"]["round"] == r {
            return taken;
        }
        let action = choose(&s);
        if !action.is_empty() {
            let (status, body) = decide(p, &format!(r#"{{"action": "{action}"}}"#)).await;
            assert!(status == 200 || status == 409, "{body}");
            if status == 200 {
                taken.push(action);
            }
        }
        sleep(Duration::from_millis(50)).await;
    }
    panic!("no result for round {r}: {}", state(p).await);
}

/// Stands (and declines insurance) until round `r`'s result is shown.
async fn stand_until_result(p: &proc::Proc, r: u64) {
    answer_until_result(p, r, stand).await;
}
