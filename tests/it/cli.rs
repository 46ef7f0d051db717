//! The README's commands through the real binary: `croupier run` with the built-in default
//! (simulated shoe on a PTY read by the serial driver, demo players, ./data/croupier.db),
//! `recall`, `check-config`, `alarm clear`.

use crate::proc;

use proc::output_in as croupier;
use std::process::{Command, Stdio};
use std::time::Duration;
use tokio::time::{sleep, timeout};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_run_deals_a_live_demo_table_and_recall_prints_it() {
    timeout(Duration::from_secs(90), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let child = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(["run", "--bind", "127.0.0.1:0"])
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let mut p = proc::announced(child).await;
        assert!(
            p.announce.contains("table table-1 (open)"),
            "{}",
            p.announce
        );
        // The dealer's endpoints need a session: a demo start created the README's demo
        // dealer (badge 101, PIN 1111).
        let addr = p.addr.clone();
        let get = |path: &'static str| {
            croupier::web::client::request(&addr, "GET", path, None, Duration::from_secs(5))
        };
        let (status, _) = get("/api/status").await.expect("status");
        assert_eq!(status, 401, "the full snapshot needs a login");
        p.login("101", "1111").await;
        // The demo players bet and the simulated shoe deals, through the serial driver.
        let mut s = p.get("/api/status").await;
        for _ in 0..150 {
            if s["inputs"].as_u64() >= Some(5) {
                break;
            }
            sleep(Duration::from_millis(100)).await;
            s = p.get("/api/status").await;
        }
        assert!(s["inputs"].as_u64() >= Some(5), "{s}");
        assert_eq!(s["state"], "open");
        assert_eq!(s["shoe"]["link"], "connected");
        assert_eq!(s["round"]["number"], 1);
        assert!(!s["round"]["hands"].as_array().expect("hands").is_empty());
        let (status, panel) = get("/").await.expect("panel");
        assert_eq!(status, 200);
        assert!(
            panel.contains("panel.js"),
            "the dealer panel is served at /"
        );
        let (status, page) = get("/status").await.expect("status page");
        assert_eq!(status, 200);
        assert!(page.contains("/api/status"));
        let rounds = p.get("/api/rounds?last=1").await;
        assert_eq!(rounds[0]["round"], 1, "{rounds}");
        assert_eq!(rounds[0]["log"][0]["record"]["kind"], "input");
        assert!(p.terminate(), "SIGTERM: clean exit 0");
        assert!(dir.path().join("data/croupier.db").is_file());

        let out = croupier(dir.path(), &["recall", "--last", "10"]);
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("round 1"), "{text}");
        assert!(text.contains("(demo)") && text.contains("(shoe)"), "{text}");
        let out = croupier(dir.path(), &["recall", "--json"]);
        let rounds: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(rounds[0]["round"], 1);
        // No rounds asked for is a mistake said as such, not "no rounds recorded" over a
        // database that has them.
        let out = croupier(dir.path(), &["recall", "--last", "0"]);
        assert_eq!(out.status.code(), Some(2), "usage error");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--last") && err.contains('0'), "{err}");
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    })
    .await
    .expect("bounded");
}

#[test]
fn check_config_names_file_line_and_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = croupier(dir.path(), &["check-config"]);
    assert!(out.status.success(), "the built-in default is valid");
    let good = dir.path().join("good.toml");
    std::fs::write(&good, croupier::table::config::DEFAULT_TOML).expect("write");
    let out = croupier(dir.path(), &["check-config", "good.toml"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("good.toml: ok"));
    let bad = croupier::table::config::DEFAULT_TOML.replace("[demo]\n", "[demo]\nfast = true\n");
    std::fs::write(dir.path().join("bad.toml"), &bad).expect("write");
    let out = croupier(dir.path(), &["check-config", "bad.toml"]);
    assert_eq!(out.status.code(), Some(2));
    let line = bad.lines().position(|l| l == "fast = true").expect("line") + 1;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("bad.toml:{line}:1:")), "{err}");
    assert!(err.contains("fast"), "{err}");
}

#[test]
fn alarm_clear_says_when_no_service_answers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = croupier(
        dir.path(),
        &[
            "alarm",
            "clear",
            "--reason",
            "test",
            "--addr",
            "127.0.0.1:1",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot reach the table service"));
}

#[test]
fn a_new_table_whose_database_cannot_be_created_is_refused_by_check_config_and_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A regular file where the database's directory would go: nobody, root included,
    // can create the database under it.
    std::fs::write(dir.path().join("blocker"), "not a directory").expect("write");
    let text = croupier::table::config::DEFAULT_TOML
        .replace(
            "path = \"data/croupier.db\"",
            "path = \"blocker/data/croupier.db\"",
        )
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"");
    assert!(
        text.contains("blocker/data"),
        "the default names its store path"
    );
    std::fs::write(dir.path().join("table.toml"), &text).expect("write");
    let out = croupier(dir.path(), &["check-config", "table.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "check-config refuses: {err}");
    assert!(
        err.contains("store.path") && err.contains("blocker"),
        "names the key and the path: {err}"
    );
    // `run` ends at once with the reason instead of serving an out-of-service table.
    let (status, err) = run_to_its_end(dir.path(), "table.toml");
    assert_eq!(status.code(), Some(1), "run refuses: {err}");
    assert!(err.contains("blocker"), "says why: {err}");
    assert!(!dir.path().join("blocker").is_dir());
    // The same file with a usable path passes.
    std::fs::write(
        dir.path().join("table.toml"),
        text.replace("blocker/data", "data"),
    )
    .expect("write");
    let out = croupier(dir.path(), &["check-config", "table.toml"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !dir.path().join("data").exists(),
        "check-config creates nothing"
    );
}

/// `croupier run --config CFG` in `dir`, which must end by itself (it is killed after a
/// minute, and the test fails); its status and stderr.
fn run_to_its_end(dir: &std::path::Path, cfg: &str) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["run", "--config", cfg])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("croupier runs");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("run served a table from {cfg} instead of ending");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut err)
        .expect("read");
    (status, err)
}

/// The built-in configuration with its database at `store` and any free port, as
/// `table.toml` in `dir`.
fn config_with_store(dir: &std::path::Path, store: &str) {
    let text = croupier::table::config::DEFAULT_TOML
        .replace("path = \"data/croupier.db\"", &format!("path = {store:?}"))
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"");
    assert!(text.contains(store), "the default names its store path");
    std::fs::write(dir.join("table.toml"), text).expect("write");
}

#[test]
fn every_unusable_store_path_ends_run_with_status_1_naming_it_and_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("a-directory")).expect("mkdir");
    // A directory that already holds a table's files is still no database file.
    std::fs::create_dir(dir.path().join("tables")).expect("mkdir");
    std::fs::write(dir.path().join("tables/croupier.db.anchor"), "").expect("write");
    for (store, why) in [
        ("a-directory", "it is a directory"),
        ("tables", "it is a directory"),
        ("/dev/null", "character device"),
        (
            "/proc/croupier.db",
            "/proc is the kernel's proc file system",
        ),
        (
            "/proc/self/data/croupier.db",
            "/proc/self is the kernel's proc file system",
        ),
    ] {
        config_with_store(dir.path(), store);
        let out = croupier(dir.path(), &["check-config", "table.toml"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "check-config refuses {store}: {err}"
        );
        assert!(
            err.contains(&format!("store.path {store}: ")) && err.contains(why),
            "check-config names {store} and why ({why}): {err}"
        );
        let (status, err) = run_to_its_end(dir.path(), "table.toml");
        assert_eq!(status.code(), Some(1), "run refuses {store}: {err}");
        assert!(
            err.contains(&format!("store.path {store}: ")) && err.contains(why),
            "run names {store} and why ({why}): {err}"
        );
        assert!(
            !err.contains("No such file"),
            "{store}: a misleading reason: {err}"
        );
    }
    assert!(
        !dir.path().join("a-directory/croupier.db").exists() && !dir.path().join("data").exists(),
        "nothing made"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_that_is_not_ready_says_so_without_an_error_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A serial shoe that is not plugged in: the table serves, locked, not ready.
    let text = croupier::table::config::DEFAULT_TOML
        .replace(
            "path = \"data/croupier.db\"",
            &format!("path = {:?}", dir.path().join("t.db").display().to_string()),
        )
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"")
        .replace("simulated = true", "simulated = false")
        .replace("players = true", "players = false")
        .replace(
            "port = \"/dev/croupier-shoe\"",
            &format!(
                "port = {:?}",
                dir.path().join("no-shoe").display().to_string()
            ),
        );
    let cfg = dir.path().join("table.toml");
    std::fs::write(&cfg, text).expect("write");
    let log = dir.path().join("log");
    let table = proc::announced(proc::spawn_raw(&cfg, &log)).await;
    for _ in 0..5 {
        let (status, body) = table.send("GET", "/readyz", None).await;
        assert_eq!(status, 503, "not ready without its shoe: {body}");
        assert!(body.contains("shoe"), "{body}");
    }
    assert!(table.terminate(), "stops cleanly");
    let logged = std::fs::read_to_string(&log).expect("log");
    let errors: Vec<&str> = logged.lines().filter(|l| l.contains("ERROR")).collect();
    assert!(
        errors.is_empty(),
        "a 503 of /readyz is no error: {errors:#?}"
    );
}
