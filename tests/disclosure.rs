//! What never leaves the table (issue #59 item 2), through the real binary and a real
//! `nats-server`:
//!
//! - a password in the configuration (the broker's URL, the players' base URL, a wallet's
//!   URL) is in no byte the table keeps or hands out: its database, WAL and every file
//!   beside it, a backup, an audit export, a recall, `GET /api/audit`, its log, the
//!   broker's store;

#[path = "common/mod.rs"]
mod common;
#[path = "support/nats.rs"]
mod nats;
#[path = "common/proc.rs"]
mod proc;
#[path = "support/studio_table.rs"]
mod studio_table;

use croupier::web::client;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::time::sleep;

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
