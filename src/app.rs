//! `croupier run`: opens and verifies the store, recovers the table, then wires the shoe,
//! the button box, the demo and the HTTP API to it, and stops cleanly on shutdown.

use crate::store::{Reader, Record, Store, StoreError};
use crate::table::config::TableConfig;
use crate::table::demo::Demo;
use crate::table::{Command, Table, TableHandle};
use crate::web;
use croupier_drivers::buttons::ButtonBox;
use croupier_drivers::shoe::{SerialShoe, Shoe};
use croupier_drivers::sim::{SimConfig, SimShoe};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::{error, info, warn};

/// Why the service could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The variant could not be loaded.
    #[error("variant: {0}")]
    Variant(String),
    /// Another `croupier run` holds the database (or `--init` found one there).
    #[error("{0}")]
    InUse(String),
    /// A new table's database cannot be created where `store.path` says (an existing
    /// table's unusable database starts the table out of service instead, with the
    /// reason on its panel).
    #[error("store: {0}")]
    NewStore(String),
    /// `store.path` cannot hold a database (`store::check_path`): a directory, a device, a
    /// place that cannot be written, a kernel file system.
    #[error("store.path {0}")]
    StorePath(String),
    /// The HTTP address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// The shoe driver or simulator could not start.
    #[error("shoe: {0}")]
    Shoe(String),
    /// The button box could not start.
    #[error("buttons: {0}")]
    Buttons(String),
    /// Serving HTTP failed.
    #[error("http: {0}")]
    Http(std::io::Error),
    /// The TLS certificate or key could not be used.
    #[error("http.tls: {0}")]
    Tls(#[from] crate::web::tls::TlsError),
    /// `[publish]`'s credential or TLS files cannot be used (missing, exposed, two
    /// credentials at once).
    #[error("publish: {0}")]
    Broker(#[from] crate::broker::ConnectError),
}

impl ServiceError {
    /// The exit status of `croupier run` ending with this (docs/src/operations.md, "Exit
    /// status"): 1 when the table's database cannot be kept where `store.path` says (or
    /// a new one cannot be made there), 2 for every other refusal at start.
    pub fn exit_code(&self) -> u8 {
        match self {
            ServiceError::StorePath(_) | ServiceError::NewStore(_) => 1,
            _ => 2,
        }
    }
}

/// At shutdown, the shoe's events are still forwarded until it has been quiet this long.
const DRAIN_QUIET: Duration = Duration::from_millis(100);

/// What the service announces once it serves (and prints on stdout).
#[derive(Debug, Clone)]
pub struct Started {
    /// The bound HTTP address.
    pub addr: SocketAddr,
    /// Whether it serves HTTPS.
    pub tls: bool,
    /// The table.
    pub handle: TableHandle,
}

/// Opens accounts and the audit log on the table's database: writes the local token,
/// creates the demo accounts on a demo configuration with no users, and records a
/// configuration change. `None` (logged) when the database cannot be used: then only the
/// public routes answer, and the table is out of service anyway.
async fn open_auth(
    config: &TableConfig,
    tls: bool,
    variant: &crate::engine::Variant,
    clock: Arc<dyn crate::auth::time::Clock>,
) -> Option<crate::auth::Auth> {
    use crate::auth::{accounts, Auth};
    let id = &config.table.id;
    let auth =
        match Auth::open_with_clock(&config.store.path, config.auth.clone(), tls, clock).await {
            Ok(a) => a,
            Err(e) => {
                error!(table = %id, error = %e, "accounts are unavailable: nobody can log in");
                return None;
            }
        };
    if config.is_demo() {
        match accounts::seed_demo(auth.pool()).await {
            Ok(true) => {
                for (badge, name, role, pin) in accounts::DEMO_USERS {
                    warn!(table = %id, badge, role = %role, pin, "demo account created ({name}): a demo configuration had no users");
                }
            }
            Ok(false) => {}
            Err(e) => warn!(table = %id, error = %e, "demo accounts not created"),
        }
    }
    if let Err(e) = audit_config(auth.pool(), config, variant).await {
        warn!(table = %id, error = %e, "the configuration could not be compared or audited");
    }
    Some(auth)
}

/// Records a `config` audit row when the configuration (the table file as parsed, with
/// `--bind` applied, and the variant's rules) differs from the one the last `config` row
/// recorded. old_value/new_value hold `{"config_sha256", "variant", "variant_sha256",
/// "config"}`, so the change itself can be read from the two rows. The configuration is
/// recorded as the logs show it: every URL's password masked (`crate::redact`), so the
/// audit log (in every backup, export and `GET /api/audit`) never holds the broker's or a
/// wallet's password — a changed password alone is therefore no configuration change.
async fn audit_config(
    pool: &sqlx::SqlitePool,
    config: &TableConfig,
    variant: &crate::engine::Variant,
) -> Result<(), crate::auth::AuthError> {
    use crate::store::audit::{self, actions, AuditEntry};
    use sha2::{Digest, Sha256};
    let mut config_value =
        serde_json::to_value(config).map_err(crate::store::audit::AuditError::from)?;
    crate::redact::json(&mut config_value);
    let config_json = config_value.to_string();
    let variant_json =
        serde_json::to_string(variant).map_err(crate::store::audit::AuditError::from)?;
    let config_sha = hex::encode(Sha256::digest(config_json.as_bytes()));
    let variant_sha = hex::encode(Sha256::digest(variant_json.as_bytes()));
    let mut conn = pool.acquire().await?;
    let last = audit::last_of(&mut conn, actions::CONFIG).await?;
    // A row an earlier version wrote may hold a password: it is compared, and carried
    // into old_value, masked.
    let old: Option<serde_json::Value> = last
        .as_ref()
        .and_then(|r| r.entry.new_value.as_deref())
        .and_then(|v| serde_json::from_str(v).ok())
        .map(|mut v| {
            crate::redact::json(&mut v);
            v
        });
    let same = old.as_ref().is_some_and(|o| {
        o["config"] == config_value && o["variant_sha256"] == variant_sha.as_str()
    });
    if same {
        return Ok(());
    }
    let new = serde_json::json!({
        "config_sha256": config_sha,
        "variant": config.table.variant,
        "variant_sha256": variant_sha,
        "config": config_value,
    });
    drop(conn);
    let old_value = last
        .and_then(|r| r.entry.new_value)
        .map(|v| crate::redact::text(&v));
    audit::append_now(
        pool,
        &AuditEntry::new("system", actions::CONFIG)
            .subject(config.table.id.clone())
            .values(old_value, Some(new.to_string()))
            .reason(if old.is_some() {
                "the configuration differs from the last start's"
            } else {
                "first start with the audit log"
            }),
    )
    .await?;
    info!(table = %config.table.id, config_sha256 = %config_sha, variant_sha256 = %variant_sha, "configuration change recorded in the audit log");
    Ok(())
}

/// Runs the table service until `shutdown` completes. `started` is called once the store
/// is verified, the table recovered and the port bound.
pub async fn run(
    config: TableConfig,
    shutdown: impl Future<Output = ()> + Send,
    started: impl FnOnce(Started) + Send,
) -> Result<(), ServiceError> {
    let clock = crate::auth::time::SystemClock::shared();
    run_with_clock(config, clock, shutdown, started).await
}

/// [`run`] with sessions and lockouts timed by `clock` (tests move a `ManualClock`).
pub async fn run_with_clock(
    config: TableConfig,
    clock: Arc<dyn crate::auth::time::Clock>,
    shutdown: impl Future<Output = ()> + Send,
    started: impl FnOnce(Started) + Send,
) -> Result<(), ServiceError> {
    let id = config.table.id.clone();
    let mut variant = config.variant().map_err(ServiceError::Variant)?;
    // What the balance rules round a split or clipped bet down to must be a bet the table
    // takes: a multiple of its betting unit (the play layer's rule, never the engine's).
    let unit = config.table.bet_unit.max(1);
    if variant.funds.bet_unit % unit != 0 {
        variant.funds.bet_unit = (variant.funds.bet_unit + unit - 1) / unit * unit;
    }
    let variant = Arc::new(variant);
    // The database records the variant as configured; people are shown the game's name.
    let variant_name = config.table.variant.clone();
    let game = config.game(&variant);

    // The port first: a second instance fails here, before it touches the store.
    let listener = tokio::net::TcpListener::bind(&config.http.bind)
        .await
        .map_err(|source| ServiceError::Bind {
            addr: config.http.bind.clone(),
            source,
        })?;
    let addr = listener.local_addr().map_err(ServiceError::Http)?;
    // A bad certificate is a configuration error: refuse to start rather than serve the
    // panel's PINs in clear text.
    let tls = match &config.http.tls {
        Some(t) => Some(crate::web::tls::server_config(&t.cert, &t.key)?),
        None => None,
    };
    // A credential readable by others, or a URL user beside a credentials file, is a
    // configuration error too: refused now, not retried for ever in the background.
    if let Some(publish) = &config.publish {
        crate::broker::connect::client_options(&publish.broker_options(&id))?;
    }
    // 1. The store: integrity check, migrations, hash chain. Nothing is published before.
    // A table with no database yet: one that cannot be made is a mistake in the
    // configuration, not a table to serve out of service (there is nothing to recover).
    // (An empty file or an anchor without its database is a lost table: out of service.)
    let new_table = config.store.init
        || !config.store.path.exists()
            && !crate::store::anchor::path_for(&config.store.path).exists();
    // A path that can never hold a database (a directory, a device, a read-only place,
    // the kernel's /proc) is the configuration's mistake too, whether or not a database
    // was there: ended with (exit 1), not served out of service for ever. A file there that
    // is not a database is the table's data: out of service, for a restore.
    crate::store::check_path(&config.store.path)
        .map_err(|e| ServiceError::StorePath(e.to_string()))?;
    let mut opened = match Store::open_as(
        &config.store.path,
        &id,
        &config.table.name,
        &variant_name,
        config.store.init,
    )
    .await
    {
        // Another service owns this table's database (and probably its shoe): running
        // beside it, even out of service, would read cards off its port.
        Err(e @ StoreError::InUse { .. }) => return Err(ServiceError::InUse(e.to_string())),
        // `--init` asked for a new table where one is: nothing to serve, and nothing touched.
        Err(e @ StoreError::InitExisting { .. }) => return Err(ServiceError::InUse(e.to_string())),
        Err(e) if new_table => return Err(ServiceError::NewStore(e.to_string())),
        other => other.map(|o| (o.store, o.log)).map_err(|e| e.to_string()),
    };
    if let Err(reason) = &opened {
        error!(table = %id, %reason, "the store is unusable: the table starts OUT OF SERVICE");
    }
    // The simulator continues the recovered shoe, so a restart mid-shoe deals on from
    // exactly the cards the engine has not seen.
    let shoe_making = crate::table::demo::ShoeMaking::of(&config.shoe.sim, &variant);
    let seed = match config.shoe.sim.seed {
        0 => fastrand::u64(..),
        s => s,
    };
    let mut rng = fastrand::Rng::with_seed(seed);
    let sim_items = config.shoe.simulated.then(|| {
        let logged = opened.as_ref().ok().map(|(_, log)| {
            log.iter().filter_map(|row| match &row.record {
                Record::Input { input, .. } => Some(input),
                _ => None,
            })
        });
        logged
            .and_then(|inputs| {
                Demo::continue_shoe(&variant, inputs, shoe_making.penetration, &mut rng)
            })
            .unwrap_or_else(|| Demo::fresh_shoe(&variant, shoe_making, &mut rng))
    });
    let timeline = opened
        .as_ref()
        .ok()
        .map(|(store, _)| store.timeline().clone());
    // The publisher takes new rows from the writer's memory, not back from SQLite.
    let recent = match (&mut opened, &config.publish) {
        (Ok((store, _)), Some(_)) => Some(store.recent()),
        _ => None,
    };
    let (mut table, handle, commands, recovered) =
        Table::recover(&id, &config.table.name, &game, Arc::clone(&variant), opened);
    table.set_disputes(config.disputes.settings());
    table.set_integrity(config.integrity.settings());
    table.set_currency(config.table.currency());
    table.set_bet_unit(config.table.bet_unit);
    // The keys that seal the hole card and sign results, beside the database: without
    // them the table still plays, and its results go out unsigned (viewers see that).
    let trust = match crate::trust::TableKeys::load_or_create(&crate::trust::keys::path_for(
        &config.store.path,
    )) {
        Ok(keys) => {
            let keys = Arc::new(keys);
            info!(table = %id, key = %keys.public_hex(), "table key (results are signed with it)");
            table.set_trust(Arc::clone(&keys));
            Some(keys)
        }
        Err(e) => {
            error!(table = %id, error = %e, "no table key: results are NOT signed, the hole card is NOT sealed");
            None
        }
    };
    // Opened (and preallocated) now, while the disk has room: what the store cannot take
    // later goes here.
    match crate::store::spill::Spill::open(&crate::store::spill::path_for(&config.store.path)) {
        Ok(spill) => table.set_spill(spill),
        Err(e) => {
            error!(table = %id, error = %e, "no spill file: items read while the store fails are kept in memory only")
        }
    }
    let snap = handle.snapshot();
    info!(table = %id, rows = recovered.rows, state = ?recovered.state, seq = snap.seq,
          round = snap.round.number, shoe = snap.shoe.number, expecting = %snap.expecting,
          "recovered");
    if let Some(alarm) = &snap.alarm {
        warn!(table = %id, reason = %alarm.reason, "the table is LOCKED (as before the restart)");
    }
    let reader = Reader::open(&config.store.path).await.ok();
    let auth = open_auth(&config, tls.is_some(), &variant, clock).await;
    // The local token works even when the database does not (an operator can still read
    // the out-of-service reason and try the API).
    let local_token = match crate::auth::local_token::LocalToken::create(&config.store.path) {
        Ok(t) => Some(t),
        Err(e) => {
            warn!(table = %id, error = %e, "no local token: local commands must log in");
            None
        }
    };
    let local_token_path = local_token.as_ref().map(|t| t.path().to_path_buf());

    // 2. The table task.
    let (stop_tx, stop_rx) = watch::channel(false);
    let watchdog = crate::systemd::Watchdog::from_env();
    if let Some(w) = &watchdog {
        info!(table = %id, every_ms = w.every.as_millis() as u64, "systemd watchdog: pinging from the table loop");
    }
    // Remote players' seats (kept in the table's database) and the clock the table runs
    // their countdowns and decision timers on (`table::clock`, `task/timers.rs`).
    let remote = open_remote(&config, auth.as_ref()).await;
    if let Some(remote) = &remote {
        table.set_play(Arc::clone(remote), config.play.timing().betting);
    }
    let table_task = tokio::spawn(table.run(commands, stop_rx, watchdog));
    let mut tasks: Vec<JoinHandle<()>> = Vec::new();

    // 3. The shoe: the simulator on a PTY read through the real serial driver, or the port.
    let mut serial = config.shoe.serial.clone();
    let mut sim = None;
    if let Some(items) = sim_items {
        let shoe = SimShoe::start(SimConfig {
            dialect: serial.dialect,
            ascii: serial.ascii.clone(),
            items,
            ..SimConfig::default()
        })
        .map_err(|e| ServiceError::Shoe(e.to_string()))?;
        serial.port = shoe.path();
        info!(table = %id, device = %serial.port.display(), seed, "simulated shoe on a pseudo-terminal");
        sim = Some(Arc::new(shoe));
    }
    let mut shoe = SerialShoe::spawn(serial).map_err(|e| ServiceError::Shoe(e.to_string()))?;
    handle.metrics().attach_shoe(shoe.counters_handle());
    let to_table = handle.commands();
    let (shoe_stop_tx, mut shoe_stop) = watch::channel(false);
    let shoe_task = tokio::spawn(async move {
        loop {
            let event = tokio::select! {
                event = shoe.next_event() => event,
                _ = shoe_stop.wait_for(|stop| *stop) => break,
            };
            let Some(event) = event else { return };
            if to_table.send(Command::Shoe(event)).await.is_err() {
                return;
            }
        }
        // Shutting down: hand over what the driver has already read (and, in croupier-v1,
        // acknowledged) before the port closes.
        while let Ok(Some(event)) = tokio::time::timeout(DRAIN_QUIET, shoe.next_event()).await {
            if to_table.send(Command::Shoe(event)).await.is_err() {
                return;
            }
        }
    });

    // 4. The button box.
    let (mut buttons, fake_buttons) = ButtonBox::from_config(&config.buttons)
        .map_err(|e| ServiceError::Buttons(e.to_string()))?;
    let to_table = handle.commands();
    tasks.push(tokio::spawn(async move {
        while let Some(event) = buttons.next_event().await {
            if to_table.send(Command::Button(event)).await.is_err() {
                return;
            }
        }
    }));

    // 5. Remote play (`[play]`): the wallet reconciled against the log before anything is
    // served, then after every row.
    let play = match remote {
        Some(remote) => {
            start_play(
                &config,
                &variant,
                auth.as_ref(),
                remote,
                timeline.as_ref(),
                &handle,
                &mut tasks,
            )
            .await
        }
        None => None,
    };

    // The demo players and dealer.
    if config.demo.players {
        if let Some(sim) = &sim {
            let mut demo = Demo::new(
                handle.clone(),
                Arc::clone(sim),
                Arc::clone(&variant),
                config.demo.clone(),
                shoe_making,
                seed.wrapping_add(1),
            );
            if let Some(play) = &play {
                demo = demo.with_remote(Arc::clone(&play.remote));
            }
            tasks.push(tokio::spawn(demo.run()));
        }
    }

    // 6. The broker publisher (`[publish]`): follows the committed log on its own.
    let publisher = start_publisher(&config, &variant, &handle, trust.as_ref(), recent);
    let floor_commands = start_floor_commands(&config, &handle);

    // 7. HTTP.
    let mut state = web::AppState::new(
        handle.clone(),
        reader,
        auth,
        Arc::clone(&variant),
        sim.clone().map(|driver| web::SimulatedShoe {
            driver,
            making: shoe_making,
        }),
    )
    .with_local_token(local_token);
    if tls.is_none() {
        state = state.with_fanout();
    }
    if let Some((status, _)) = &publisher {
        state = state.with_publish(Arc::clone(status));
    }
    if let Some(play) = play {
        state = state.with_play(play);
        // Ultimate's automatic re-bet (`funds.auto_rebet`) goes through the players' bet path.
        tasks.push(tokio::spawn(web::play::rebet::run(state.clone())));
    }
    // A step of the wall clock is seen within a second even while no row is written.
    tasks.push(tokio::spawn(async {
        let mut every = crate::clock::every(Duration::from_secs(1));
        loop {
            every.tick().await;
            crate::clock::wall_now_ms();
        }
    }));
    // Every connection and public stream holds a descriptor: the limits must fit the
    // process's open-file limit, raised to its hard limit first (issue #32 item 3).
    let fds = crate::process::raise_fd_limit();
    let mut http = config.http.clone();
    match http.fit_to_fds(fds) {
        Some(lowered) => {
            warn!(table = %id, "{lowered}: raise the hard limit (LimitNOFILE=) to serve more")
        }
        None => {
            info!(table = %id, fds, max_connections = http.max_connections, max_public = http.max_public, "open-file limit fits the connection limits")
        }
    }
    let http = &http;
    let connections = Arc::new(tokio::sync::Semaphore::new(http.max_connections));
    let gate =
        web::edge::PublicGate::new(http, Arc::clone(&connections), Arc::clone(handle.metrics()));
    let app = web::edge::layers(web::router(state), http, gate);
    // After a storm of connections, give the heap's freed pages back (docs/src/benchmarks.md,
    // "Resource figures": 18 MB kept after 2,000 viewers came and went, 14 MB of it returned).
    tasks.push({
        let (connections, metrics) = (Arc::clone(&connections), Arc::clone(handle.metrics()));
        let max = http.max_connections;
        crate::process::trim_after_storms(move || {
            let viewers = metrics.subscribers(crate::metrics::Stream::PublicWs);
            max.saturating_sub(connections.available_permits())
                + usize::try_from(viewers).unwrap_or(0)
        })
    });
    let limits = web::server::ConnLimits {
        header_timeout: Duration::from_millis(http.header_timeout_ms),
        connections,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    info!(table = %id, %addr, "serving {scheme}://{addr}/");
    started(Started {
        addr,
        tls: tls.is_some(),
        handle: handle.clone(),
    });
    let (http_stop_tx, http_stop_rx) = tokio::sync::oneshot::channel::<()>();
    let stopped = async move {
        let _ = http_stop_rx.await;
    };
    let server = match tls {
        Some(tls) => {
            let listener =
                crate::web::tls::TlsListener::new(listener, tls).map_err(ServiceError::Http)?;
            tokio::spawn(web::server::serve(listener, app, limits, stopped))
        }
        None => tokio::spawn(web::server::serve(
            crate::web::tcp::NoDelayListener(listener),
            app,
            limits,
            stopped,
        )),
    };

    shutdown.await;
    info!(table = %id, "shutting down");
    // Stop the sources first (the shoe hands over what it has read), then let the table
    // finish what is queued and stop.
    for task in &tasks {
        task.abort();
    }
    // What is not published yet is published at the next start (the log is the truth).
    if let Some((_, task)) = &publisher {
        task.abort();
    }
    if let Some(task) = &floor_commands {
        task.abort();
    }
    drop(fake_buttons);
    let _ = shoe_stop_tx.send(true);
    let _ = shoe_task.await;
    let _ = stop_tx.send(true);
    match table_task.await {
        Ok(Some(store)) => {
            if let Err(e) = store.close().await {
                warn!(table = %id, error = %e, "closing the store");
            }
        }
        Ok(None) => {}
        Err(e) => error!(table = %id, error = %e, "the table task failed"),
    }
    let _ = http_stop_tx.send(());
    // Open streams (SSE, long polls) end with the table; don't wait on slow clients.
    match tokio::time::timeout(Duration::from_secs(5), server).await {
        Ok(Ok(Err(e))) => return Err(ServiceError::Http(e)),
        Ok(_) => {}
        Err(_) => warn!(table = %id, "http connections still open after 5 s; closing"),
    }
    drop(sim);
    if let Some(path) = local_token_path {
        let _ = std::fs::remove_file(path);
    }
    info!(table = %id, "stopped");
    Ok(())
}

/// Remote players' seats when `[play] enabled` and the database opened: those held before
/// a restart are held again (a database that cannot be read leaves them in memory only).
async fn open_remote(
    config: &TableConfig,
    auth: Option<&crate::auth::Auth>,
) -> Option<Arc<crate::table::remote::RemoteSeats>> {
    use crate::table::remote::RemoteSeats;
    if !config.play.enabled {
        return None;
    }
    let pool = auth?.pool().clone();
    let clock = Arc::new(crate::table::clock::TableClock::new());
    let timing = config.play.timing();
    match RemoteSeats::load(timing, Arc::clone(&clock), pool).await {
        Ok(r) => Some(Arc::new(r)),
        Err(e) => {
            warn!(table = %config.table.id, error = %e, "remote seats not read: kept in memory only");
            Some(Arc::new(RemoteSeats::new(timing, clock)))
        }
    }
}

/// Remote play when `[play] enabled` and the database opened: reconciles the wallet once
/// (a debit whose bet never reached the log is rolled back; a final round's returns are
/// credited), then after every row in a task.
async fn start_play(
    config: &TableConfig,
    variant: &crate::engine::Variant,
    auth: Option<&crate::auth::Auth>,
    remote: Arc<crate::table::remote::RemoteSeats>,
    timeline: Option<&crate::store::Timeline>,
    handle: &TableHandle,
    tasks: &mut Vec<JoinHandle<()>>,
) -> Option<Arc<crate::play::Play>> {
    if !config.play.enabled {
        return None;
    }
    let pool = auth?.pool().clone();
    let demo_seats = if config.demo.players && config.shoe.simulated {
        config.demo.seats.min(variant.deal.seats)
    } else {
        0
    };
    let mut play = crate::play::Play::embedded(
        pool,
        &config.table.id,
        config.disputes.window_seconds == 0,
        remote,
        demo_seats,
    );
    play.launch_hours = config.play.launch_hours;
    play.presence = crate::play::presence::Presence::new(config.play.away_after_rounds);
    play.protections = crate::play::Protections::of(&config.play);
    if let Some(timeline) = timeline {
        play.journal.on_timeline(timeline);
    }
    if let Some(section) = &config.play.http_wallet {
        match crate::wallet::http::HttpWallet::new(section) {
            Ok(w) => play.wallet = Arc::new(w),
            Err(e) => {
                error!(table = %config.table.id, error = %e, "[play.http_wallet] unusable: remote play is off");
                return None;
            }
        }
    }
    // Every wallet, embedded or the operator's, has its failures on `/metrics`.
    play.wallet = Arc::new(crate::wallet::Counted::new(
        Arc::clone(&play.wallet),
        Arc::clone(handle.metrics()),
    ));
    let play = Arc::new(play);
    match play.journal.reconcile(play.wallet.as_ref(), true).await {
        Ok(done) => {
            info!(table = %config.table.id, rolled_back = done.rolled_back, settled = done.settled, "wallet reconciled")
        }
        Err(e) => {
            warn!(table = %config.table.id, error = %e, "wallet reconciliation at start failed; retried after each row")
        }
    }
    tasks.push(tokio::spawn(crate::play::run_reconciler(
        Arc::clone(&play),
        handle.clone(),
    )));
    // A session that ended moves no money, and its seats are freed (issue #58 item 4).
    tasks.push(tokio::spawn(crate::play::presence::run(
        Arc::clone(&play),
        handle.clone(),
    )));
    Some(play)
}

/// Answers the casino floor's signed dispute commands when `[publish] floor_key` is set.
fn start_floor_commands(config: &TableConfig, handle: &TableHandle) -> Option<JoinHandle<()>> {
    let publish = config.publish.clone()?;
    let path = publish.floor_key.clone()?;
    match crate::publish::floor_commands::read_key(&path) {
        Ok(key) => Some(crate::publish::floor_commands::start(
            publish,
            config.table.id.clone(),
            key,
            handle.clone(),
        )),
        Err(e) => {
            tracing::error!(table = %config.table.id, error = %e, "the floor key cannot be read: floor commands are refused");
            None
        }
    }
}

/// Starts the broker publisher when `[publish]` is configured.
fn start_publisher(
    config: &TableConfig,
    variant: &Arc<crate::engine::Variant>,
    handle: &TableHandle,
    trust: Option<&Arc<crate::trust::TableKeys>>,
    recent: Option<crate::store::outbox::Recent>,
) -> Option<(Arc<crate::publish::PublishStatus>, JoinHandle<()>)> {
    let publish = config.publish.clone()?;
    info!(table = %config.table.id, url = %crate::broker::redact(&publish.nats_url), "publishing to the broker");
    let info = crate::publish::outbox::TableInfo {
        id: config.table.id.clone(),
        name: config.table.name.clone(),
        variant_name: config.game(variant),
        variant: Arc::clone(variant),
        disputes: config.disputes.settings(),
        trust: trust.cloned(),
        currency: config.table.currency(),
        remote_play: config.play.enabled,
    };
    Some(crate::publish::outbox::start(
        publish,
        info,
        config.store.path.clone(),
        recent,
        handle,
    ))
}
