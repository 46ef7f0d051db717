//! What never leaves the table (issue #59 items 2 and 6), through the real binary, a real
//! `nats-server` and a real relay:
//!
//! - a password in the configuration (the broker's URL, the players' base URL, a wallet's
//!   URL) is in no byte the table keeps or hands out: its database, WAL and every file
//!   beside it, a backup, an audit export, a recall, `GET /api/audit`, its log, the
//!   broker's store;
//! - a game given as a variant file's path is shown by its name: no path of the
//!   configuration reaches an anonymous viewer (the table's pages, `/api/public`,
//!   `/ws/public`, `/sse/public` and its other open routes; the relay's; the public
//!   messages and the bucket values on the broker).

use crate::common;
use crate::nats;
use crate::proc;
use crate::roles;
use crate::studio_table;

use croupier::web::client;
use futures::StreamExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{sleep, timeout};

/// A child process killed (and reaped) when dropped, whatever the test's outcome.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => todo.push(path),
                Ok(t) if t.is_file() => out.push(path),
                _ => {}
            }
        }
    }
    out
}

/// The files under `dir` (but `skip`) holding any of `needles`, with the needle found.
fn holding(dir: &Path, skip: &[&Path], needles: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files_under(dir) {
        if skip.contains(&file.as_path()) {
            continue;
        }
        // A file deleted between the listing and the read (a WAL at a checkpoint) held
        // nothing any more.
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        for needle in needles {
            if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                found.push(format!("{} holds {needle:?}", file.display()));
            }
        }
    }
    found
}

/// `croupier ARGS`, which must succeed; its stdout and stderr.
fn croupier(args: &[&str]) -> (String, String) {
    let out = common::croupier(args, None);
    assert!(
        out.status.success(),
        "croupier {args:?}: {}",
        common::text(&out)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Waits until the table at `addr` has had more than `rows` rows acknowledged by the
/// broker.
async fn wait_published(addr: &str, rows: u64) {
    let started = Instant::now();
    loop {
        let r = client::request_with(addr, "GET", "/readyz", None, &[], Duration::from_secs(10))
            .await
            .expect("readyz");
        let v: serde_json::Value = serde_json::from_str(&r.body).unwrap_or_default();
        if v["publish"]["acked"].as_u64() > Some(rows) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the table publishes: {}",
            r.body
        );
        sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_password_of_the_configuration_is_in_any_byte_the_table_keeps() {
    let Some(bin) = nats::nats_server() else {
        return;
    };
    // Planted: one password per place a configuration can hold one.
    let broker_pw = format!("brokerPW{:016x}", fastrand::u64(..));
    let base_pw = format!("basePW{:016x}", fastrand::u64(..));
    let wallet_pw = format!("walletPW{:016x}", fastrand::u64(..));
    let planted = [broker_pw.as_str(), base_pw.as_str(), wallet_pw.as_str()];
    let dir = tempfile::tempdir().expect("tempdir");
    let port = nats::free_port();
    let args: Vec<std::ffi::OsString> = vec![
        "-js".into(),
        "-a".into(),
        "127.0.0.1".into(),
        "--user".into(),
        "tbla".into(),
        "--pass".into(),
        broker_pw.clone().into(),
        "-p".into(),
        port.to_string().into(),
        "-sd".into(),
        dir.path().join("js").into_os_string(),
    ];
    let _server = Killed(nats::spawn_listening(&bin, &args, port));
    let url = format!("nats://tbla:{broker_pw}@127.0.0.1:{port}");
    let cfg = studio_table::table_config(dir.path(), "t1", &url, true);
    let secret = dir.path().join("wallet.secret");
    std::fs::write(&secret, "a wallet secret of some length\n").expect("secret");
    let text = std::fs::read_to_string(&cfg)
        .expect("config")
        .replace(
            "launch_hours = 12",
            &format!("launch_hours = 12\nbase_url = \"https://op:{base_pw}@play.example\""),
        )
        + &format!(
            "\n[play.http_wallet]\nurl = \"http://w:{wallet_pw}@127.0.0.1:9/wallet\"\nsecret_file = {:?}\n",
            secret.display().to_string()
        );
    std::fs::write(&cfg, text).expect("config");
    let config = croupier::table::TableConfig::load(&cfg).expect("a valid config");
    assert!(config
        .play
        .base_url
        .as_deref()
        .is_some_and(|u| u.contains(&base_pw)));
    let db = config.store.path.clone();
    let log = dir.path().join("t1.log");
    let cfg_arg = cfg.to_str().expect("utf-8");

    let mut table = proc::announced(proc::spawn_raw(&cfg, &log)).await;
    table.use_local_token(&db);
    // The broker takes only the URL's user: the table publishes only if it used it.
    wait_published(&table.addr, 5).await;
    let (status, audit) = table.send("GET", "/api/audit", None).await;
    assert_eq!(status, 200, "{audit}");
    let mut handed_out = vec![("GET /api/audit".to_string(), audit)];
    let backup = dir.path().join("backup.db");
    let backup_arg = backup.to_str().expect("utf-8");
    let outputs = [
        croupier(&["backup", backup_arg, "--config", cfg_arg]),
        croupier(&["audit", "export", "--config", cfg_arg]),
        croupier(&["audit", "verify", "--config", cfg_arg]),
        croupier(&["recall", "--json", "--config", cfg_arg]),
        croupier(&["check-config", cfg_arg]),
    ];
    std::fs::write(dir.path().join("audit-export.jsonl"), &outputs[1].0).expect("export");
    for (i, (out, err)) in outputs.into_iter().enumerate() {
        handed_out.push((format!("command {i} stdout"), out));
        handed_out.push((format!("command {i} stderr"), err));
    }
    // While the table runs (its WAL, its shared memory) and after it stopped.
    let found = holding(dir.path(), &[cfg.as_path()], &planted);
    assert!(found.is_empty(), "a password is kept: {found:#?}");
    for (what, text) in &handed_out {
        for pw in planted {
            assert!(!text.contains(pw), "{what} holds {pw:?}: {text}");
        }
    }
    // The configuration is recorded, as the logs show it.
    let recorded = handed_out
        .iter()
        .filter(|(what, _)| what == "GET /api/audit" || what == "command 1 stdout");
    for (what, text) in recorded {
        assert!(
            text.contains("tbla:***@127.0.0.1") && text.contains("op:***@play.example"),
            "{what} records the configuration, its URLs masked: {text}"
        );
    }
    assert!(table.terminate(), "the table stops cleanly");
    drop(_server);
    let files = files_under(dir.path());
    for kept in [&db, &backup, &log] {
        assert!(files.contains(kept), "{} was searched", kept.display());
    }
    let found = holding(dir.path(), &[cfg.as_path()], &planted);
    assert!(found.is_empty(), "a password is kept: {found:#?}");
    // The wallet's URL was refused, and said so without its password.
    let logged = std::fs::read_to_string(&log).expect("log");
    assert!(
        logged.contains("w:***@127.0.0.1:9/wallet"),
        "the wallet URL is refused, masked: {logged}"
    );
}

/// The raw bytes `addr` answers `GET path` with (asked over HTTP/1.0: a stream's body is
/// the stream itself), read until `enough` holds for them or the stream ends.
async fn raw_get(addr: &str, path: &str, enough: impl Fn(&str) -> bool) -> String {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("tcp");
    tcp.write_all(format!("GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .expect("write");
    let mut text = String::new();
    let mut buf = vec![0u8; 65536];
    while !enough(&text) {
        let k = timeout(Duration::from_secs(30), tcp.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("GET {path}: more in time: {text}"))
            .expect("read");
        if k == 0 {
            break;
        }
        text.push_str(&String::from_utf8_lossy(&buf[..k]));
    }
    text
}

/// The first `n` messages of the WebSocket at `url`.
async fn ws_messages(url: &str, n: usize) -> Vec<String> {
    let (mut ws, _) = tokio_tungstenite::connect_async(url)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    let mut got = Vec::new();
    while got.len() < n {
        let m = timeout(Duration::from_secs(30), ws.next())
            .await
            .unwrap_or_else(|_| panic!("{url}: {n} messages in time, got {got:?}"))
            .expect("open")
            .expect("a message");
        if let Ok(text) = m.into_text() {
            got.push(text.to_string());
        }
    }
    got
}

/// Every public route of a table (`table`: `None`) or a relay (`Some(id)`), and what
/// each answered: pages, scripts, views, streams and the open operations routes.
async fn public_surfaces(addr: &str, table: Option<&str>) -> Vec<(String, String)> {
    let q = table.map_or(String::new(), |t| format!("?table={t}"));
    let mut paths = vec![
        "/".to_string(),
        format!("/public{q}"),
        "/ui/public.js".into(),
        "/ui/lobby.js".into(),
        format!("/api/table-key{q}"),
        "/healthz".into(),
        "/readyz".into(),
        "/metrics".into(),
    ];
    match table {
        None => paths.extend(
            [
                "/status",
                "/play",
                "/ui/play.js",
                "/api/public",
                "/api/results",
                "/api/openapi.json",
            ]
            .map(String::from),
        ),
        Some(_) => paths.push("/api/tables".into()),
    }
    let mut got = Vec::new();
    for path in paths {
        let r = client::request_with(addr, "GET", &path, None, &[], Duration::from_secs(30))
            .await
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        got.push((path, format!("{} {:?}\n{}", r.status, r.headers, r.body)));
    }
    // Three events of the public stream, three messages of its WebSocket.
    let sse = format!("/sse/public{q}");
    let events = raw_get(addr, &sse, |t| t.matches("\ndata: ").count() >= 3).await;
    got.push((sse, events));
    let ws = format!("ws://{addr}/ws/public{q}");
    got.push((ws.clone(), ws_messages(&ws, 3).await.join("\n")));
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_given_as_a_file_is_shown_by_its_name_and_no_path_reaches_a_viewer() {
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut broker = nats::Nats::start(&bin, dir.path());
    // The documented way to add a game: a variant file named by its path.
    let games = dir.path().join("house games");
    std::fs::create_dir(&games).expect("mkdir");
    let file = games.join("house-deluxe.toml");
    let (_, deluxe) = croupier::engine::variant::BUILT_IN
        .iter()
        .find(|(stem, _)| *stem == "deluxe")
        .expect("deluxe");
    let text = deluxe.replace("name = \"Deluxe Blackjack\"", "name = \"House Deluxe\"");
    assert_ne!(&text, deluxe, "the name is changed");
    std::fs::write(&file, text).expect("variant");
    let cfg = studio_table::table_config(dir.path(), "t1", &broker.url(), true);
    let text = std::fs::read_to_string(&cfg).expect("config").replace(
        "variant = \"deluxe\"",
        &format!("variant = {:?}", file.display().to_string()),
    );
    std::fs::write(&cfg, text).expect("config");
    let config = croupier::table::TableConfig::load(&cfg).expect("a valid config");
    assert_eq!(config.table.variant, file.display().to_string());
    // Whatever of the server's file system the configuration names.
    let root = dir.path().display().to_string();
    let port = config.shoe.serial.port.display().to_string();
    let needles = [root.as_str(), "house games", "house-deluxe", port.as_str()];

    // Every public message and bucket value from the first.
    let client = async_nats::connect(broker.url()).await.expect("nats");
    let mut public = client
        .subscribe(croupier::broker::subjects::public("t1"))
        .await
        .expect("sub");
    let mut bucket = client
        .subscribe(croupier::broker::subjects::bucket_key(
            croupier::broker::subjects::DEFAULT_BUCKET,
            "t1",
        ))
        .await
        .expect("sub");
    let log = dir.path().join("t1.log");
    let table = proc::announced(proc::spawn_raw(&cfg, &log)).await;
    wait_published(&table.addr, 10).await;
    let keys = dir.path().join("keys");
    studio_table::pin_keys(&keys, [("t1", config.store.path.as_path())]);
    let url = broker.url();
    let keys = keys.to_str().expect("utf-8");
    let relay_args = roles::relay(&url, keys).map(std::ffi::OsStr::new);
    let relay = proc::announced(proc::spawn_args(&relay_args, &dir.path().join("relay.log"))).await;

    let started = Instant::now();
    let lobby = loop {
        let tables = relay.get("/api/tables").await;
        if let Some(t) = tables.as_array().and_then(|a| {
            a.iter()
                .find(|t| t["table"] == "t1" && t["n"].as_u64() > Some(3))
        }) {
            break t.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the relay serves t1: {tables}"
        );
        sleep(Duration::from_millis(200)).await;
    };

    let mut seen = public_surfaces(&table.addr, None).await;
    seen.extend(
        public_surfaces(&relay.addr, Some("t1"))
            .await
            .into_iter()
            .map(|(path, text)| (format!("relay {path}"), text)),
    );
    for (what, sub) in [("public stream", &mut public), ("bucket", &mut bucket)] {
        // From the first (the table's first view), as many as a few rounds make: the
        // table deals on meanwhile.
        let mut n = 0;
        let until = tokio::time::Instant::now() + Duration::from_secs(5);
        while n < 2_000 {
            let Ok(Some(m)) = tokio::time::timeout_at(until, sub.next()).await else {
                break;
            };
            seen.push((
                format!("{what} message {n}"),
                String::from_utf8_lossy(&m.payload).into_owned(),
            ));
            n += 1;
        }
        assert!(n > 0, "the {what} was read");
    }
    for (what, text) in &seen {
        for needle in needles {
            assert!(!text.contains(needle), "{what} shows {needle:?}: {text}");
        }
    }
    let view = table.get("/api/public").await;
    assert_eq!(
        view["variant"], "House Deluxe",
        "the game by its name: {view}"
    );
    assert_eq!(
        lobby["game"], "House Deluxe",
        "the lobby names the game: {lobby}"
    );
    assert_eq!(
        lobby["variant"], "House Deluxe",
        "the lobby's variant: {lobby}"
    );
    assert!(relay.terminate(), "the relay stops");
    assert!(table.terminate(), "the table stops");
    broker.kill();
}
