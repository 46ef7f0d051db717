//! The casino floor's pit page for the floor tests (`tests/it/floor/`, `tests/it/browser_floor.rs`):
//! its supervisors, the real `croupier floor` serving the page, and a client that logs in
//! with the page's cookie.
#![allow(dead_code)] // each test uses its part

use super::proc::{announced, spawn_args, Proc};
use std::path::Path;
use std::time::{Duration, Instant};

/// `croupier floor-user`: adds a supervisor, "Pit boss", to the floor's database at `db`
/// (the secret on stdin).
pub fn add_supervisor(db: &str, badge: &str, secret: &str) {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args([
            "floor-user",
            "--database",
            db,
            "--badge",
            badge,
            "--name",
            "Pit boss",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn floor-user");
    writeln!(child.stdin.take().expect("stdin"), "{secret}").expect("secret");
    assert!(child.wait().expect("wait").success(), "floor-user {badge}");
}

/// `croupier floor` on the broker at `nats` and the database at `db`, taking the tables
/// pinned in the keys file `keys`, its pit page on a free port, with `extra` arguments
/// (stderr to `log`): the process, once it has announced itself, and the page's
/// `host:port`.
pub async fn pit_floor(
    nats: &str,
    db: &str,
    keys: &Path,
    log: &Path,
    extra: &[&str],
) -> (Proc, String) {
    let mut args = super::roles::floor(nats, db, keys.to_str().expect("utf-8 path"));
    args.extend_from_slice(extra);
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    let floor = announced(spawn_args(&args, log)).await;
    // The announcement names the broker's URL first, then the page's.
    let addr = ["http://", "https://"]
        .iter()
        .find_map(|scheme| floor.announce.split(scheme).nth(1))
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("pit page address in {}", floor.announce))
        .to_string();
    (floor, addr)
}

/// Waits (at most 90 s) until table `id`'s log at `db` holds `rounds` settled rounds.
pub async fn until_settled(db: &Path, id: &str, rounds: usize) {
    let started = Instant::now();
    loop {
        let reader = croupier::store::Reader::open(db).await.expect("reader");
        if reader.results(id).await.expect("results").len() >= rounds {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the table deals"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Raises a dispute for `reason` through `table`'s staff API, again while the round is not
/// yet one to dispute (at most 30 s): the dispute's id.
pub async fn raise_dispute(table: &Proc, reason: &str) -> u64 {
    let body = serde_json::json!({ "reason": reason }).to_string();
    let started = Instant::now();
    loop {
        let (status, reply) = table.post("/api/disputes", &body).await;
        if status == 200 {
            let v: serde_json::Value = serde_json::from_str(&reply).expect("json");
            return v["dispute"].as_u64().expect("dispute id");
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "raise: {status} {reply}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A client of the pit page: its address and, once logged in, the session cookie.
pub struct PitClient {
    pub addr: String,
    pub cookie: Option<String>,
}

impl PitClient {
    /// A client not logged in.
    pub fn new(addr: String) -> Self {
        PitClient { addr, cookie: None }
    }

    /// A request with the session cookie, if any.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> croupier::web::client::Reply {
        let headers: Vec<(&str, &str)> =
            self.cookie.iter().map(|c| ("Cookie", c.as_str())).collect();
        super::proc::send_to(&self.addr, method, path, body, &headers).await
    }

    /// `GET path`, which must answer 200 with JSON.
    pub async fn get(&self, path: &str) -> serde_json::Value {
        let r = self.send("GET", path, None).await;
        assert_eq!(r.status, 200, "GET {path}: {}", r.body);
        serde_json::from_str(&r.body).expect("JSON")
    }

    /// The settlement of every settled round of `table` the pit page lists.
    pub async fn settled(&self, table: &str) -> Vec<serde_json::Value> {
        let rounds = self
            .get(&format!("/floor/api/rounds?table={table}&last=100000"))
            .await;
        rounds
            .as_array()
            .expect("rounds")
            .iter()
            .filter(|r| !r["result"].is_null())
            .map(|r| r["result"].clone())
            .collect()
    }

    /// Logs in (keeping the session cookie on success): the status.
    pub async fn login(&mut self, badge: &str, secret: &str) -> u16 {
        let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
        let r = self.send("POST", "/floor/api/login", Some(&body)).await;
        if r.status == 200 {
            self.cookie = r
                .headers
                .iter()
                .filter(|(k, _)| k == "set-cookie")
                .filter_map(|(_, v)| v.split(';').next())
                .find(|kv| kv.starts_with("floor_session="))
                .map(str::to_string);
        }
        r.status
    }
}
