//! The studio path under load (loopback only, bounded in time): a real `nats-server` with
//! JetStream, the real `croupier run` binary (Deluxe, 5 demo seats, simulated shoe,
//! `[publish]` on), one real `croupier relay`, and N WebSocket viewers of
//! `/ws/public?table=table-1` on the relay, in this process. Per N: delivery latency from the
//! row's commit (`at_ms` of a published message is its row's commit time) to a viewer
//! having read the message — table → broker → relay → viewer; resyncs and silent drops (a
//! gap in `n` not announced by a resync); the table's CPU per committed row and its threads'
//! voluntary context switches per row (how often a row puts the table to sleep and wakes it,
//! a count the VM's host does not move); the relay's
//! CPU and messages delivered per relay CPU second.
//!
//!     cargo bench --bench relay -- [--viewers 0,1000,5000,10000] [--seconds 10] [--pace-ms 100]
//!         [--dispute-window-s 0] [--broker open,accounts,accounts-no-mirrors]
//!
//! `--broker` (issue #59): `open`, a broker without authentication (one account, the
//! default); `accounts`, the configuration `croupier studio nats-config` generates (one
//! account per party, the relay reading mirrors in its own), the table and the relay with
//! their own credentials; `accounts-no-mirrors`, the same made with `--no-relay-mirrors`.
//! Several, comma-separated, take turns for each N. Per run it prints the broker's CPU per
//! public message (`nats-server`'s threads, `/proc/PID/task/*/schedstat`, over the public
//! messages the stream took in the window).
//!
//! Before them, the floor at the same pace (`benches/row_floor.rs`): what a process doing
//! nothing but a row's durable commit and acknowledged publication uses per row here.
//!
//! Measured from 2 s after the viewers are connected, and at least 8 s after the table
//! started (its steady state: its own public feed, which nobody watches here, at rest).
//! Everything shares the machine's cores; N = 0 is the table's baseline. Needs
//! `nats-server` (Debian's package) and a file-descriptor limit above N.

#[path = "support/announce.rs"]
mod announce;
#[path = "support/args.rs"]
mod args;
#[path = "support/floor.rs"]
mod floor;
#[path = "../tests/support/nats.rs"]
mod nats;
#[path = "../tests/support/skip.rs"]
mod skip;
#[path = "support/viewers.rs"]
mod viewers;

use announce::start;
use args::Args;
use std::io::Write;
use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use viewers::{
    connect_paced, percentile, proc_cpu_ns, proc_cpu_ticks, proc_rss_kb, proc_voluntary_switches,
    raw_viewer, Stats,
};

/// Which broker configuration a run uses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Config {
    /// No authentication: one account.
    Open,
    /// `croupier studio nats-config`: an account per party, the relay on mirrors.
    Accounts,
    /// The same with `--no-relay-mirrors`.
    AccountsNoMirrors,
}

impl Config {
    fn parse(s: &str) -> Config {
        match s {
            "open" => Config::Open,
            "accounts" => Config::Accounts,
            "accounts-no-mirrors" => Config::AccountsNoMirrors,
            _ => panic!("--broker {s}: open, accounts or accounts-no-mirrors"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Config::Open => "open",
            Config::Accounts => "accounts",
            Config::AccountsNoMirrors => "accounts-no-mirrors",
        }
    }
}

/// A running broker, what the table adds to `[publish]`, the relay's arguments beside
/// `--nats`, and the admin's options (to count the public stream's messages).
struct Broker {
    _open: Option<nats::Nats>,
    child: Option<Child>,
    pid: u32,
    url: String,
    publish: String,
    relay: Vec<String>,
    admin: croupier::broker::BrokerOptions,
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn start_broker(config: Config, bin: &std::path::Path, dir: &std::path::Path) -> Broker {
    if config == Config::Open {
        let nats = nats::Nats::start(bin, dir);
        let url = nats.url();
        return Broker {
            pid: nats.pid().expect("running"),
            _open: Some(nats),
            child: None,
            admin: croupier::broker::BrokerOptions {
                url: url.clone(),
                ..Default::default()
            },
            url,
            publish: String::new(),
            relay: Vec::new(),
        };
    }
    let more: &[&str] = if config == Config::AccountsNoMirrors {
        &["--no-relay-mirrors"]
    } else {
        &[]
    };
    let (studio, port) = nats::generated_config(dir, "table-1", more);
    let out = studio.display().to_string();
    let conf = studio.join("nats-server.conf");
    let child = nats::spawn_listening(bin, &["-c".into(), conf.into_os_string()], port);
    let url = format!("nats://127.0.0.1:{port}");
    nats::croupier_ok(&["studio", "provision", "--dir", &out, "--nats", &url]);
    let credential = |party: &str| croupier::studio::credential_path(&studio, party);
    let mut relay = vec![
        "--credentials".to_string(),
        credential("relay").display().to_string(),
    ];
    if config == Config::AccountsNoMirrors {
        relay.extend(["--js-api-prefix".into(), "$JS.STUDIO.API".into()]);
    }
    Broker {
        _open: None,
        pid: child.id(),
        child: Some(child),
        publish: format!(
            "credentials = {:?}\njs_api_prefix = \"$JS.STUDIO.API\"\n",
            credential("table-table-1").display().to_string()
        ),
        relay,
        admin: croupier::broker::BrokerOptions {
            url: url.clone(),
            credentials: Some(credential("admin")),
            ..Default::default()
        },
        url,
    }
}

/// The last sequence of the table's public stream, as the admin reads it.
async fn public_messages(js: &async_nats::jetstream::Context) -> u64 {
    js.get_stream("CROUPIER_PUBLIC_table-1")
        .await
        .expect("the public stream")
        .cached_info()
        .state
        .last_sequence
}

fn start_table(
    dir: &std::path::Path,
    pace_ms: u64,
    window_s: u64,
    nats: &str,
    publish: &str,
) -> (Child, String) {
    let pace = format!("pace_ms = {pace_ms}");
    let window = format!("window_seconds = {window_s}");
    let edits = [
        ("pace_ms = 400", pace.as_str()),
        ("seats = 3", "seats = 5"),
        ("window_seconds = 5", window.as_str()),
    ];
    let cfg = announce::config_in(
        dir,
        &edits,
        &format!("\n[publish]\nnats_url = \"{nats}\"\n{publish}"),
    );
    start(&["run".as_ref(), "--config".as_ref(), cfg.as_os_str()])
}

async fn committed(db: &std::path::Path) -> u64 {
    let reader = croupier::store::Reader::open(db).await.expect("reader");
    reader.log("table-1").await.map_or(0, |l| l.len() as u64)
}

fn run(
    config: Config,
    viewers: usize,
    seconds: u64,
    pace_ms: u64,
    window_s: u64,
    bin: &std::path::Path,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = start_broker(config, bin, dir.path());
    let (mut table, table_addr) =
        start_table(dir.path(), pace_ms, window_s, &broker.url, &broker.publish);
    // A studio table runs for hours: measured in its steady state, once its own public feed,
    // which no one watches here (the viewers are the relay's), has come to rest.
    let steady = Instant::now() + croupier::web::feed::ALONE + Duration::from_secs(3);
    // The relay serves only what the table signs, with its key pinned (made at its start).
    let key = croupier::trust::TableKeys::load(&croupier::trust::keys::path_for(
        &dir.path().join("croupier.db"),
    ))
    .expect("the table's key");
    let keys = dir.path().join("table-keys.toml");
    std::fs::write(&keys, format!("table-1 = \"{}\"\n", key.public_hex())).expect("keys");
    let mut relay_args: Vec<&std::ffi::OsStr> = vec![
        "relay".as_ref(),
        "--nats".as_ref(),
        broker.url.as_ref(),
        "--bind".as_ref(),
        "127.0.0.1:0".as_ref(),
        "--table-keys".as_ref(),
        keys.as_os_str(),
    ];
    relay_args.extend(broker.relay.iter().map(|a| a.as_ref() as &std::ffi::OsStr));
    let (mut relay, relay_addr) = start(&relay_args);
    let (table_pid, relay_pid) = (table.id(), relay.id());
    let rt = viewers::runtime(2);
    let stats = Arc::new(Stats::new());
    let ready = Arc::new(AtomicU64::new(0));
    let db = dir.path().join("croupier.db");
    let line = rt.block_on(async {
        announce::listed(&relay_addr, "table-1").await;
        let (connected, connect_s) = connect_paced(viewers, &ready, |_| {
            let (a, st, r) = (relay_addr.clone(), Arc::clone(&stats), Arc::clone(&ready));
            tokio::spawn(raw_viewer(a, "/ws/public?table=table-1".into(), st, r));
        })
        .await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        tokio::time::sleep_until(steady.into()).await;
        let admin = croupier::broker::connect(&broker.admin, "relay bench")
            .await
            .expect("the admin connects");
        let admin = croupier::broker::jetstream(admin, croupier::broker::connect::DEFAULT_API);
        let public0 = public_messages(&admin).await;
        let broker0 = proc_cpu_ns(broker.pid);
        let (table0, relay0) = (proc_cpu_ns(table_pid), proc_cpu_ticks(relay_pid));
        let switches0 = proc_voluntary_switches(table_pid);
        let rows0 = committed(&db).await;
        let wall = stats.measure(seconds).await;
        let table_cpu_s = proc_cpu_ns(table_pid).since(&table0) as f64 / 1e9;
        let switches = proc_voluntary_switches(table_pid).since(&switches0);
        let relay_cpu_s = (proc_cpu_ticks(relay_pid) - relay0) as f64 / 100.0;
        let broker_cpu_s = proc_cpu_ns(broker.pid).since(&broker0) as f64 / 1e9;
        let public = public_messages(&admin).await - public0;
        let rows = committed(&db).await - rows0;
        let hist: Vec<u64> = stats.hist.iter().map(|h| h.load(Ordering::SeqCst)).collect();
        let got = stats.messages.load(Ordering::SeqCst);
        let max = hist.iter().rposition(|c| *c > 0).unwrap_or(0);
        let latency = if got == 0 {
            "– | – | –".to_string()
        } else {
            format!(
                "{} ms | {} ms | {max} ms",
                percentile(&hist, 0.50),
                percentile(&hist, 0.99)
            )
        };
        let _ = table_addr;
        format!(
            "| {} | {viewers} | {connected} in {connect_s:.1} s | {rows} | {public} | {got} | {latency} | {:.2} ms | {:.1} | {:.0} % | {:.0} µs | {:.0} % | {:.0} % | {:.0} MB | {} | {} | {} |",
            config.name(),
            table_cpu_s * 1000.0 / rows.max(1) as f64,
            switches as f64 / rows.max(1) as f64,
            table_cpu_s / wall * 100.0,
            broker_cpu_s * 1e6 / public.max(1) as f64,
            broker_cpu_s / wall * 100.0,
            relay_cpu_s / wall * 100.0,
            proc_rss_kb(relay_pid) as f64 / 1024.0,
            if relay_cpu_s > 0.0 {
                format!("{:.0}", got as f64 / relay_cpu_s)
            } else {
                "–".into()
            },
            stats.resyncs.load(Ordering::SeqCst),
            stats.silent.load(Ordering::SeqCst),
        )
    });
    println!("{line}");
    let _ = std::io::stdout().flush();
    for child in [&mut relay, &mut table] {
        let _ = child.kill();
        let _ = child.wait();
    }
    rt.shutdown_timeout(Duration::from_secs(2));
    drop(broker);
}

fn main() {
    let args = Args::from_env();
    if args.listing() {
        return;
    }
    let viewers = args.numbers("--viewers", "0,1000,5000,10000");
    let seconds: u64 = args.number("--seconds", 10);
    let pace: u64 = args.number("--pace-ms", 100);
    // A table deals on while a round's dispute window is open only between rounds: with
    // the default 5 s most of a 10 s window is waiting, and the CPU per row would be the
    // idle table's CPU per second spread over a few rows.
    let window: u64 = args.number("--dispute-window-s", 0);
    let Some(bin) = nats::nats_server() else {
        return;
    };
    println!(
        "table -> nats-server -> relay -> viewers on loopback (raw client); demo pace {pace} ms, dispute window {window} s; measured {seconds} s after connecting"
    );
    // The floor beside the table's figure, in the same run: what a process doing nothing
    // but a row's durable commit and acknowledged publication at this pace costs here.
    let floor_dir = tempfile::tempdir().expect("tempdir");
    let floor_broker = nats::Nats::start(&bin, floor_dir.path());
    let floor_rows = (seconds * 1000 / pace.max(1)).clamp(50, 500);
    let (floor_cpu, floor_sleeps) = viewers::runtime(2).block_on(floor::cost(
        floor::Mode::Both,
        floor_rows,
        Duration::from_millis(pace),
        &floor::payload(400),
        &floor_broker.url(),
    ));
    drop(floor_broker);
    println!(
        "the floor at this pace (cargo bench --bench row_floor): a process doing nothing but a card row's durable commit (the table's writer) and a 400-byte message's acknowledged publication, {floor_rows} rows: {floor_cpu:.2} ms CPU and {floor_sleeps:.1} sleeps a row"
    );
    let configs: Vec<Config> = args
        .value("--broker")
        .unwrap_or_else(|| "open".into())
        .split(',')
        .map(|b| Config::parse(b.trim()))
        .collect();
    println!("| broker | viewers | connected | rows committed | messages published | delivered | p50 | p99 | max | table CPU per row | table sleeps per row | table CPU (of one core) | broker CPU per public message | broker CPU | relay CPU | relay RSS | delivered per relay CPU second | resyncs | silent drops |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for n in viewers {
        for config in &configs {
            run(*config, n, seconds, pace, window, &bin);
        }
    }
}
