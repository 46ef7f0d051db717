//! The long-running services: `run` (the table), `relay` and `floor`, with what they
//! share (logging, the signals that stop them); and `floor-user`, the floor's accounts.

use super::args::load_config;
#[cfg(feature = "studio")]
use super::fail;
use croupier::app::{self, Started};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

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
