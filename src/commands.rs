//! The service-side subcommands: `run`, `relay`, `floor`, `check-config`, `recall`, `alarm clear`.

use croupier::app::{self, Started};
use croupier::store::{Reader, Record};
use croupier::table::TableConfig;
use croupier::web::client;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use tracing_subscriber::EnvFilter;

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("croupier: {message}");
    ExitCode::from(2)
}

/// Logs to stderr: `RUST_LOG` filters (default `info`); no colours unless stderr is a
/// terminal, and no timestamps under systemd (journald stamps every line itself).
pub fn init_logs() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false);
    if std::env::var_os("JOURNAL_STREAM").is_some() {
        let _ = builder.without_time().try_init();
    } else {
        let _ = builder.try_init();
    }
}

fn load_config(path: Option<&Path>) -> Result<TableConfig, ExitCode> {
    match path {
        Some(p) => TableConfig::load(p),
        None => TableConfig::embedded(),
    }
    .map_err(fail)
}

/// `croupier table-key`: the table's public key as a line of `table-keys.toml`.
pub fn table_key(config: Option<PathBuf>, db: Option<PathBuf>) -> ExitCode {
    let config = match load_config(config.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let db = db.unwrap_or(config.store.path.clone());
    let path = croupier::trust::keys::path_for(&db);
    match croupier::trust::TableKeys::load(&path) {
        Ok(keys) => {
            println!(
                "{} = \"{}\"",
                toml::Value::String(config.table.id.clone()),
                keys.public_hex()
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(format!(
            "{e} (the table makes its key at its first start: start it once)"
        )),
    }
}

/// `croupier timeline continue`.
pub async fn timeline_continue(config: Option<PathBuf>, db: Option<PathBuf>) -> ExitCode {
    use croupier::publish::branch::{continue_timeline, Outcome};
    let config = match load_config(config.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let db = db.unwrap_or(config.store.path.clone());
    match continue_timeline(&config, &db).await {
        Ok(Outcome::Continued {
            seq,
            id,
            superseded,
            common_seq,
            public_offset,
        }) => {
            println!(
                "table {}: timeline {id} begins at row {seq}. At the next start the log is published after row {common_seq}, the last row the broker's history shares with it; the broker's rows {}..={} (timeline {}) stay there, superseded. Public ids go on from {}. `croupier timeline lost` lists the wallet movements of the superseded rows, which this log does not know.",
                config.table.id,
                common_seq + 1,
                superseded.seq,
                if superseded.timeline.is_empty() { "from before timelines" } else { superseded.timeline.as_str() },
                common_seq + 1 + public_offset,
            );
            ExitCode::SUCCESS
        }
        Ok(Outcome::NothingToContinue(why)) => {
            println!("table {}: {why}", config.table.id);
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

/// `croupier timeline lost`.
pub async fn timeline_lost(config: Option<PathBuf>, db: Option<PathBuf>, json: bool) -> ExitCode {
    let config = match load_config(config.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let db = db.unwrap_or(config.store.path.clone());
    let lost = match croupier::publish::branch::lost_tail(&config, &db).await {
        Ok(lost) => lost,
        Err(e) => return fail(e),
    };
    if json {
        match serde_json::to_string_pretty(&lost) {
            Ok(text) => println!("{text}"),
            Err(e) => return fail(e),
        }
        return ExitCode::SUCCESS;
    }
    let money = config.table.currency();
    print!("{}", lost_report(&config.table.id, &lost, &money));
    ExitCode::SUCCESS
}

/// `croupier timeline lost` for people: each seat-round the superseded rows moved money
/// in, what became of it, and per player what the operator has to do.
fn lost_report(
    table: &str,
    lost: &croupier::publish::lost::LostTail,
    money: &croupier::currency::Currency,
) -> String {
    use croupier::publish::lost::{Here, LostState};
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "table {table}: the broker's superseded rows {}..={} (timeline {}; this log continued as timeline {}): what they moved in the wallet after the last row both share, which this log does not know",
        lost.common_seq + 1,
        lost.last_seq,
        if lost.superseded.is_empty() { "from before timelines" } else { lost.superseded.as_str() },
        lost.timeline
    );
    if lost.moves.is_empty() {
        let _ = writeln!(out, "no player's money moved in them");
        return out;
    }
    // Per player: (paid twice: net to take back, stakes held that nothing settles, net of
    // the rounds played there only).
    let mut totals: std::collections::BTreeMap<&str, (i64, i64, i64)> = Default::default();
    for m in &lost.moves {
        let what = match (m.here, m.state) {
            (Here::None, LostState::Final) => "final there: played and paid on that history only",
            (Here::None, LostState::Settled) => {
                "settled there, never final: nothing credited, its stakes stayed debited"
            }
            (Here::None, LostState::Open) => {
                "in play when that history ends: its stakes stayed debited, and nothing will settle them"
            }
            (Here::Voided, _) => {
                "in play at the fork, voided here (its stakes up to the fork returned by this log): what that history staked after the fork and paid is extra"
            }
            (Here::Settled, _) => {
                "settled at the fork and paid here too once final: that history's payment is a second one"
            }
            (Here::Open, _) => "in play at the fork and still in play here",
        };
        let _ = writeln!(
            out,
            "round {:>5}  seat {:>2}  {:<16} staked {:>12}  returned {:>12}  {what}",
            m.round,
            m.seat,
            m.player,
            money.format(m.staked),
            money.format(m.returned),
        );
        let t = totals.entry(m.player.as_str()).or_default();
        match (m.here, m.state) {
            (Here::Voided | Here::Settled, _) => t.0 += m.returned - m.staked,
            (Here::None, LostState::Settled | LostState::Open) => t.1 += m.staked,
            (Here::None, LostState::Final) => t.2 += m.returned - m.staked,
            (Here::Open, _) => {}
        }
    }
    for (player, (twice, held, there)) in totals {
        let _ = writeln!(
            out,
            "{player}: on rounds this log also settles, that history's net to the player {} — reverse it to match this log; stakes no history will settle {} — return them (the sheets void an interrupted round); rounds played only there, net {} — as paid",
            money.format(twice),
            money.format(held),
            money.format(there),
        );
    }
    out
}

/// `croupier check-config [FILE]`.
pub fn check_config(file: Option<&Path>) -> ExitCode {
    match load_config(file) {
        Ok(c) => {
            let name = file.map_or("<built-in>".to_string(), |p| p.display().to_string());
            if let Err(e) = croupier::store::check_path(&c.store.path) {
                // The status `run` ends with on it (docs/src/operations.md, "Exit status").
                eprintln!("croupier: {name}: store.path {e}");
                return ExitCode::from(1);
            }
            if let Some(publish) = &c.publish {
                if let Err(e) =
                    croupier::broker::connect::client_options(&publish.broker_options(&c.table.id))
                {
                    return fail(format!("{name}: publish: {e}"));
                }
            }
            println!(
                "{name}: ok (table {}, variant {}, {} shoe, http {})",
                c.table.id,
                c.table.variant,
                if c.shoe.simulated {
                    "simulated"
                } else {
                    "serial"
                },
                c.http.bind
            );
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

/// What ends a service: SIGTERM or Ctrl-C. The handlers are installed when this is
/// called, not when the future is first polled: a signal that arrives while the service
/// starts (before its server awaits this) would otherwise meet the default action, and a
/// SIGHUP would kill the table it must not stop.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate());
    // SIGHUP (a closed terminal, `systemctl reload`, a habit) must not kill a live table:
    // nothing is reloaded while running, which the log says each time.
    let hangup = signal(SignalKind::hangup());
    if let Err(e) = &hangup {
        tracing::warn!(error = %e, "SIGHUP cannot be handled: it would stop the service");
    }
    async move {
        let term = async {
            match term {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        let hangup = async {
            if let Ok(mut s) = hangup {
                while s.recv().await.is_some() {
                    tracing::warn!("SIGHUP received: nothing is reloaded while running (restart to apply a changed configuration); going on");
                }
            }
            std::future::pending::<()>().await
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = term => {}
            () = hangup => {}
        }
        if let Some(n) = croupier::systemd::Notifier::from_env() {
            let _ = n.stopping();
        }
    }
}

/// `croupier run`.
pub async fn run_command(config: Option<PathBuf>, bind: Option<String>, init: bool) -> ExitCode {
    init_logs();
    let mut config = match load_config(config.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    config.store.init = init;
    if let Some(bind) = bind {
        config.http.bind = bind;
    }
    let announce = |s: Started| {
        // The first stdout line: scripts and tests read the address from it.
        let snap = s.handle.snapshot();
        // The scheme the port really speaks: under TLS there is no plain listener.
        let scheme = if s.tls { "https" } else { "http" };
        let mut out = std::io::stdout();
        let _ = writeln!(
            out,
            "croupier: table {} ({}) serving {scheme}://{}/",
            snap.table,
            match snap.state {
                croupier::table::TableState::Open => "open".to_string(),
                croupier::table::TableState::Locked => "LOCKED".to_string(),
                croupier::table::TableState::Disputed => "DISPUTED".to_string(),
                croupier::table::TableState::Broken => "OUT OF SERVICE".to_string(),
            },
            s.addr
        );
        let _ = out.flush();
        // READY only now: the store is verified, the log replayed, the shoe opened (or its
        // absence alarmed) and the port bound.
        if let Some(n) = croupier::systemd::Notifier::from_env() {
            let _ = n.ready(&format!(
                "table {} serving {scheme}://{}/",
                snap.table, s.addr
            ));
        }
    };
    match app::run(config, shutdown_signal(), announce).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = e.exit_code();
            eprintln!("croupier: {e}");
            ExitCode::from(code)
        }
    }
}

#[cfg(feature = "studio")]
/// `croupier relay`.
pub async fn relay_command(config: croupier::relay::RelayConfig) -> ExitCode {
    init_logs();
    let announce = |addr| {
        // The first stdout line, as `run` prints it: scripts and tests read the address.
        let mut out = std::io::stdout();
        let _ = writeln!(out, "croupier: relay serving http://{addr}/");
        let _ = out.flush();
        if let Some(n) = croupier::systemd::Notifier::from_env() {
            let _ = n.ready(&format!("relay serving http://{addr}/"));
        }
    };
    match croupier::relay::run(config, shutdown_signal(), announce).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

#[cfg(feature = "studio")]
/// `croupier floor`.
pub async fn floor_command(config: croupier::floor::FloorConfig) -> ExitCode {
    init_logs();
    let nats = croupier::broker::redact(&config.broker.url);
    let scheme = if config.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let announce = move |addr: Option<std::net::SocketAddr>| {
        // The first stdout line: scripts and tests wait for it (and read the address).
        let mut out = std::io::stdout();
        let _ = match addr {
            Some(addr) => writeln!(
                out,
                "croupier: floor ingesting from {nats}, pit page {scheme}://{addr}/"
            ),
            None => writeln!(out, "croupier: floor ingesting from {nats}"),
        };
        let _ = out.flush();
        if let Some(n) = croupier::systemd::Notifier::from_env() {
            let _ = n.ready("floor ingesting");
        }
    };
    let stats = std::sync::Arc::new(croupier::floor::IngestStats::default());
    match croupier::floor::run(config, stats, shutdown_signal(), announce).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

#[cfg(feature = "studio")]
/// `croupier floor-user`: the secret from stdin's first line.
pub async fn floor_user(database: String, badge: String, name: String) -> ExitCode {
    let mut secret = String::new();
    if let Err(e) = std::io::stdin().read_line(&mut secret) {
        return fail(format!("cannot read the secret from stdin: {e}"));
    }
    let secret = secret.trim_end_matches(['\n', '\r']);
    let db = match croupier::floor::FloorDb::open(&database, 1).await {
        Ok(db) => db,
        Err(e) => return fail(e),
    };
    match croupier::floor::accounts::add(db.pool(), &badge, &name, secret).await {
        Ok(()) => {
            println!("floor supervisor {badge} ({name}) set");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

/// `croupier backup`.
pub async fn backup(path: PathBuf, config: Option<PathBuf>, db: Option<PathBuf>) -> ExitCode {
    let config = match load_config(config.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let live = db.unwrap_or(config.store.path.clone());
    match croupier::store::backup(&live, &path).await {
        Ok(v) => {
            println!(
                "backed up {} to {} ({} bytes), verified:",
                live.display(),
                v.path.display(),
                v.bytes
            );
            for (table, rows, last) in &v.tables {
                println!("  table {table}: {rows} log rows, hash chain intact to seq {last}");
            }
            if let Some(audit) = &v.audit {
                println!(
                    "  audit log: {} rows, hash chain intact, head {}",
                    audit.rows, audit.head
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

/// Writes what the spill file beside the database holds that no `recovered` row has taken
/// into the log yet: shoe items and alarms read while the store could not be written.
async fn print_unrecorded(
    out: &mut impl Write,
    reader: &Reader,
    table: &str,
    db: &Path,
) -> std::io::Result<()> {
    use croupier::store::spill::{self, Spilled};
    let entries = match spill::read(&spill::path_for(db)) {
        Ok(e) => e,
        Err(e) => return writeln!(out, "!! the spill file cannot be read: {e}"),
    };
    let through = match reader.log(table).await {
        Ok(log) => log
            .iter()
            .filter_map(|r| match r.record {
                Record::Recovered { spill_through, .. } => Some(spill_through),
                _ => None,
            })
            .max()
            .unwrap_or(0),
        Err(_) => 0,
    };
    let pending: Vec<_> = entries
        .iter()
        .filter(|e| e.n > through && e.table == table)
        .collect();
    if pending.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "!! NOT RECORDED in the log yet ({} entries in {}; the table takes them in when the store works again):",
        pending.len(),
        spill::path_for(db).display()
    )?;
    for e in pending {
        let what = match &e.what {
            Spilled::Item(item) => format!("shoe item {item}"),
            Spilled::Alarm(reason) => format!("alarm: {reason}"),
        };
        writeln!(
            out,
            "  !  spill {:>3}  {what} (at_ms {}; {})",
            e.n, e.at_ms, e.why
        )?;
    }
    Ok(())
}

/// One log row as `recall` prints it: `!` marks everything but an input.
fn print_row(out: &mut impl Write, row: &croupier::store::LogRow) -> std::io::Result<()> {
    let mark = match row.record {
        Record::Input { .. } => " ",
        _ => "!",
    };
    writeln!(out, "  {mark}{:>7}  {}", row.seq, row.record)
}

/// Writes the recalled rounds as text.
fn print_rounds(
    out: &mut impl Write,
    table: &str,
    rounds: &[croupier::store::RecalledRound],
    money: &croupier::currency::Currency,
) -> std::io::Result<()> {
    for r in rounds {
        let settled = match r.settled_seq {
            Some(s) => format!("settled at seq {s}"),
            None => "NOT SETTLED".to_string(),
        };
        writeln!(
            out,
            "== table {table} round {} (shoe {}, seq {}..) {settled}",
            r.round, r.shoe, r.opened_seq
        )?;
        if let Some(v) = r.shoe_integrity.as_ref().filter(|v| v.suspicious()) {
            writeln!(
                out,
                "  !! SHOE {} SUSPICIOUS (integrity checks): {}",
                v.shoe,
                v.reasons.join("; ")
            )?;
        }
        let end = r.settled_seq.unwrap_or(u64::MAX);
        for row in r.rows.iter().filter(|row| row.seq <= end) {
            print_row(out, row)?;
        }
        if let Some(res) = &r.result {
            let cards: Vec<String> = res.dealer_cards.iter().map(|c| c.to_string()).collect();
            writeln!(
                out,
                "  dealer: {} = {}{}",
                cards.join(" "),
                res.dealer_total,
                if res.dealer_natural { " (natural)" } else { "" }
            )?;
            for h in &res.hands {
                let cards: Vec<String> = h.cards.iter().map(|c| c.to_string()).collect();
                writeln!(
                    out,
                    "  seat {} hand {}: {} = {} {} (staked {}, returned {})",
                    h.seat,
                    h.hand + 1,
                    cards.join(" "),
                    h.total,
                    h.outcome.as_str(),
                    money.format(h.staked),
                    money.format(h.returned)
                )?;
            }
            for b in &res.bets {
                writeln!(
                    out,
                    "  settle seat {} {}: staked {}, returned {}",
                    b.seat,
                    b.kind.name(),
                    money.format(b.staked),
                    money.format(b.returned)
                )?;
            }
        }
        let mut after = r.rows.iter().filter(|row| row.seq > end).peekable();
        if after.peek().is_some() {
            writeln!(out, "  -- after round {}:", r.round)?;
            for row in after {
                print_row(out, row)?;
            }
        }
    }
    Ok(())
}

/// `croupier recall`.
pub async fn recall(
    last: u32,
    config: Option<PathBuf>,
    db: Option<PathBuf>,
    json: bool,
) -> ExitCode {
    let config = match load_config(config.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let path = db.unwrap_or(config.store.path.clone());
    let reader = match Reader::open(&path).await {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let mut table = config.table.id.clone();
    if let Ok(tables) = reader.tables().await {
        if !tables.contains(&table) && tables.len() == 1 {
            table = tables[0].clone();
        }
    }
    let rounds = match reader.recall(&table, last).await {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = if json {
        let doc: Vec<serde_json::Value> = rounds.iter().map(|r| r.to_json()).collect();
        match serde_json::to_string_pretty(&doc) {
            Ok(s) => writeln!(out, "{s}"),
            Err(e) => return fail(e),
        }
    } else {
        let mut written = Ok(());
        if rounds.is_empty() {
            written = writeln!(
                out,
                "table {table}: no rounds recorded in {}",
                path.display()
            );
        }
        match written
            .and_then(|()| print_rounds(&mut out, &table, &rounds, &config.table.currency()))
        {
            Ok(()) => print_unrecorded(&mut out, &reader, &table, &path).await,
            Err(e) => Err(e),
        }
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        // `croupier recall | head`: the reader has what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(format!("cannot write: {e}")),
    }
}

/// How `croupier alarm clear` authenticates.
pub struct Credentials {
    /// Log in as this badge (else the local token).
    pub badge: Option<String>,
    /// With a badge: the secret on stdin.
    pub secret_stdin: bool,
    /// The database whose local token to read.
    pub db: Option<PathBuf>,
}

/// `croupier alarm clear`. With `[http.tls]` in the configuration it speaks HTTPS and
/// trusts exactly the configured certificate (`web::client::Endpoint::pinned`): TLS mode
/// has no plain listener.
pub async fn alarm_clear(
    reason: String,
    config: Option<PathBuf>,
    addr: Option<String>,
    credentials: Credentials,
) -> ExitCode {
    let loaded = match load_config(config.as_deref()) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let addr = addr.unwrap_or(loaded.http.bind.clone());
    let endpoint = match &loaded.http.tls {
        Some(tls) => match client::Endpoint::pinned(&addr, &tls.cert) {
            Ok(e) => e,
            Err(e) => return fail(format!("http.tls: {e}")),
        },
        None => client::Endpoint::plain(&addr),
    };
    let db = credentials.db.unwrap_or(loaded.store.path.clone());
    let timeout = Duration::from_secs(10);
    // The credentials: a session cookie from a login, or the local token (recorded as the
    // one actor `local`: nothing sent names who holds it).
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut logged_in = false;
    let mut used_token = false;
    if let Some(badge) = &credentials.badge {
        let secret = match crate::user_commands::read_secret(credentials.secret_stdin, false) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
        match endpoint
            .send("POST", "/api/login", Some(&body), &[], timeout)
            .await
        {
            Ok(reply) if reply.status == 200 => match reply.session_cookie() {
                Some(cookie) => {
                    headers.push(("Cookie".into(), cookie));
                    logged_in = true;
                }
                None => return fail(format!("{addr}: the login set no session cookie")),
            },
            Ok(reply) => {
                return fail(format!(
                    "{addr}: login {}",
                    api_error(reply.status, &reply.body)
                ))
            }
            Err(e) => return fail(format!("cannot reach the table service: {e}")),
        }
    } else if let Ok(token) = croupier::auth::local_token::read(&db) {
        used_token = true;
        headers.push(("Authorization".into(), format!("Bearer {token}")));
    }
    // Without either, the request goes out anyway: the service's 401 (or its absence)
    // says more than a guess here.
    let header_refs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let body = serde_json::json!({ "reason": reason }).to_string();
    let result = endpoint
        .send(
            "POST",
            "/api/alarm/clear",
            Some(&body),
            &header_refs,
            timeout,
        )
        .await;
    if logged_in {
        let _ = endpoint
            .send("POST", "/api/logout", None, &header_refs, timeout)
            .await;
    }
    match result {
        Ok(reply) if reply.status == 200 => {
            let seq = serde_json::from_str::<serde_json::Value>(&reply.body)
                .ok()
                .and_then(|v| v["seq"].as_u64());
            match seq {
                Some(seq) => println!("alarm cleared (log row {seq})"),
                None => println!("alarm cleared"),
            }
            ExitCode::SUCCESS
        }
        Ok(reply) if reply.status == 401 => {
            let token = croupier::auth::local_token::path_for(&db);
            let why = if logged_in {
                "the session was refused".to_string()
            } else if used_token {
                format!(
                    "the service refused the local token read from {}: is it the database this \
                     service runs on (--config / --db)?",
                    token.display()
                )
            } else {
                format!(
                    "no readable local token at {}; run as the service's user or use --badge",
                    token.display()
                )
            };
            fail(format!(
                "{addr}: {} ({why})",
                api_error(reply.status, &reply.body)
            ))
        }
        Ok(reply) => fail(format!("{addr}: {}", api_error(reply.status, &reply.body))),
        Err(e) => fail(format!("cannot reach the table service: {e}")),
    }
}

/// An API refusal for people: its message and code (`{"error": {"code", "message"}}`),
/// or the status and body as they came when the body is not the API's error shape.
fn api_error(status: u16, body: &str) -> String {
    let v: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let e = v.as_ref().map(|v| &v["error"]);
    match (
        e.and_then(|e| e["message"].as_str()),
        e.and_then(|e| e["code"].as_str()),
    ) {
        (Some(message), Some(code)) => format!("refused: {message} ({code}, HTTP {status})"),
        _ => format!("HTTP {status}: {}", body.trim()),
    }
}
