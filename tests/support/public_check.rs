//! What a studio's public stream must be, checked against a table's own log (the
//! studio tests, `tests/it/studio/` and `tests/it/studio_cluster.rs`): each table's expected
//! stream computed from its SQLite log, relay viewers recording every message with its
//! arrival time, and the checks of a viewer's messages against the stream.
#![allow(dead_code)]

use super::studio_table::Table;
use croupier::publish::fold::PublicFold;
use croupier::store::Reader;
use croupier::table::TableConfig;
use croupier::web::client;
use futures::StreamExt;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio::time::sleep;

impl Table {
    /// The last committed row.
    pub async fn seq(&self) -> u64 {
        let reader = Reader::open(&self.db).await.expect("reader");
        reader.log(&self.id).await.expect("log").len() as u64
    }

    /// Waits until its log has more than `rows` rows.
    pub async fn wait_rows(&self, rows: u64) {
        let started = Instant::now();
        while self.seq().await <= rows {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{} deals",
                self.id
            );
            sleep(Duration::from_millis(100)).await;
        }
    }

    /// The public stream the table's log makes, and the results it recorded.
    pub async fn expected(&self) -> (Vec<String>, Vec<Value>) {
        let config = TableConfig::load(&self.demo).expect("config");
        let variant = Arc::new(config.variant().expect("variant"));
        let reader = Reader::open(&self.db).await.expect("reader");
        let log = reader.log(&self.id).await.expect("the log verifies");
        // Sealed and signed with the table's own key file, as its publisher does.
        let keys =
            croupier::trust::TableKeys::load_or_create(&croupier::trust::keys::path_for(&self.db))
                .expect("the table's key");
        let mut fold = PublicFold::new(
            &self.id,
            &config.table.name,
            &config.game(&variant),
            variant,
            config.disputes.settings(),
        )
        .with_trust(Arc::new(keys))
        .with_remote_play(config.play.enabled);
        let mut stream = Vec::new();
        for row in &log {
            for draft in fold.row(row).expect("replays") {
                let n = stream.len() as u64 + 1;
                stream.push(draft.text(n, row.at_ms as u64));
            }
        }
        let results = reader
            .results(&self.id)
            .await
            .expect("results")
            .iter()
            .map(|r| serde_json::to_value(r).expect("json"))
            .collect();
        (stream, results)
    }
}

pub async fn get(addr: &str, path: &str) -> (u16, Value) {
    let r = client::request_with(addr, "GET", path, None, &[], Duration::from_secs(10))
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    (
        r.status,
        serde_json::from_str(&r.body).unwrap_or(Value::Null),
    )
}

/// A relay's lobby entry of `table`, if listed.
pub async fn lobby(relay: &str, table: &str) -> Option<Value> {
    let (status, tables) = get(relay, "/api/tables").await;
    assert_eq!(status, 200);
    tables
        .as_array()?
        .iter()
        .find(|t| t["table"] == table)
        .cloned()
}

/// Waits until `relay` has received `n` messages of `table`.
pub async fn wait_relayed(relay: &str, table: &str, n: usize) {
    let started = Instant::now();
    loop {
        let last = lobby(relay, table)
            .await
            .map_or(0, |t| t["n"].as_u64().unwrap_or(0));
        if last as usize >= n {
            assert_eq!(
                last as usize, n,
                "{table}: the relay has more than the log makes"
            );
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "{table}: the relay has {last} of {n} messages"
        );
        sleep(Duration::from_millis(100)).await;
    }
}

/// A `/ws/public` viewer: every text message it received, in order.
pub struct Viewer {
    got: Arc<Mutex<Vec<(u64, String)>>>,
    task: JoinHandle<()>,
}

/// Milliseconds since the Unix epoch, on the clock the tables stamp messages with.
pub fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Viewer {
    pub async fn connect(addr: &str, table: &str, after: Option<&str>) -> Viewer {
        let url = match after {
            Some(id) => format!("ws://{addr}/ws/public?table={table}&after={id}"),
            None => format!("ws://{addr}/ws/public?table={table}"),
        };
        let got = Arc::new(Mutex::new(Vec::new()));
        let task = Self::open(&url, Arc::clone(&got)).await;
        Viewer { got, task }
    }

    /// Connects to `url` and records every text message it sends into `into`.
    async fn open(url: &str, into: Arc<Mutex<Vec<(u64, String)>>>) -> JoinHandle<()> {
        let (mut ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .unwrap_or_else(|e| panic!("{url}: {e}"));
        tokio::spawn(async move {
            while let Some(Ok(m)) = ws.next().await {
                if let Ok(text) = m.into_text() {
                    into.lock()
                        .expect("lock")
                        .push((wall_ms(), text.to_string()));
                }
            }
        })
    }

    /// Leaves the connection (whatever state its link is in) and opens another that
    /// resumes after the last message received (`after=`), as a page does once its link
    /// went quiet: what the new one sends is added to the same record, so the checks see
    /// one viewer across its connections.
    pub async fn reconnect(&mut self, addr: &str, table: &str) {
        self.task.abort();
        // Stopped before its last message is read: an abort takes effect only at the
        // task's next yield, and a connection that just woke from a hung link may have a
        // backlog to add until then (resuming after a message that is not the last would
        // hear the rest twice).
        let _ = (&mut self.task).await;
        let url = match self.last_id() {
            Some(id) => format!("ws://{addr}/ws/public?table={table}&after={id}"),
            None => format!("ws://{addr}/ws/public?table={table}"),
        };
        self.task = Self::open(&url, Arc::clone(&self.got)).await;
    }

    /// Every message received, in order.
    pub fn messages(&self) -> Vec<String> {
        self.got
            .lock()
            .expect("lock")
            .iter()
            .map(|(_, t)| t.clone())
            .collect()
    }

    /// Every message, parsed (one that is not JSON is left out).
    pub fn values(&self) -> Vec<Value> {
        self.messages()
            .iter()
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect()
    }

    /// Every message after the first (a resync view) follows the one before it: `n`
    /// consecutive, no resync; returns how many.
    pub fn assert_consecutive(&self, table: &str) -> usize {
        let got = self.values();
        assert!(!got.is_empty(), "{table}: the viewer received nothing");
        assert_eq!(
            got[0]["resync"], true,
            "{table}: a viewer starts with a resync"
        );
        for pair in got.windows(2) {
            assert_eq!(
                pair[1]["n"].as_u64(),
                pair[0]["n"].as_u64().map(|n| n + 1),
                "{table}: a gap or a repeat in n: {} then {}",
                pair[0],
                pair[1]
            );
            assert_ne!(pair[1]["resync"], true, "{table}: a resync in the middle");
        }
        got.len() - 1
    }

    /// Every message with when it arrived (`wall_ms`).
    pub fn arrivals(&self) -> Vec<(u64, String)> {
        self.got.lock().expect("lock").clone()
    }

    pub fn last_id(&self) -> Option<String> {
        let got = self.messages();
        let last: Value = serde_json::from_str(got.last()?).ok()?;
        last["id"].as_str().map(str::to_owned)
    }

    pub async fn wait_for(&self, n: usize) {
        let started = Instant::now();
        loop {
            let last = self
                .messages()
                .last()
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
                .and_then(|v| v["n"].as_u64())
                .unwrap_or(0);
            if last as usize >= n {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "a viewer has message {last} of {n}"
            );
            sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `got` (one viewer's messages, over one or more connections) against the stream the log
/// makes: a resync view first, then exactly the stream's messages after it, to the end.
pub fn check_viewer(table: &str, got: &[String], stream: &[String]) {
    let resyncs = check_viewer_resyncing(table, got, stream);
    assert_eq!(
        resyncs, 1,
        "{table}: one resync view, the first message, and none after it"
    );
}

/// `got` against the stream, where the relay may have announced a resync mid-stream (a
/// broker's node lost): a resync view first; after it, each message is either the
/// stream's next message or a resync view numbered `k` that is exactly the state after
/// the stream's message `k`, and the stream goes on from there; to the end. Returns how
/// many resync views there were.
pub fn check_viewer_resyncing(table: &str, got: &[String], stream: &[String]) -> usize {
    assert!(!got.is_empty(), "{table}: the viewer received nothing");
    let mut k = 0usize;
    let mut resyncs = 0usize;
    for (i, text) in got.iter().enumerate() {
        let m: Value = serde_json::from_str(text).expect("json");
        if i == 0 || m["resync"] == true {
            assert_eq!(
                m["resync"], true,
                "{table}: a viewer starts with a resync view"
            );
            let at = m["n"].as_u64().expect("n") as usize;
            assert!(
                at <= stream.len(),
                "{table}: resync at {at} of {}",
                stream.len()
            );
            assert!(
                i == 0 || at >= k,
                "{table}: a resync view went back from message {k} to {at}"
            );
            if let Some(state) = state_at(&stream[..at]) {
                assert_eq!(
                    without_seq(&m["view"]),
                    state,
                    "{table}: the resync view numbered {at} is not the state after the stream's message {at}"
                );
            }
            k = at;
            resyncs += 1;
            continue;
        }
        assert!(
            k < stream.len(),
            "{table}: message {} is past the log's stream of {}",
            k + 1,
            stream.len()
        );
        assert_eq!(
            text,
            &stream[k],
            "{table}: message {} is not the log's (a gap, a repeat or a difference)",
            k + 1
        );
        k += 1;
    }
    assert_eq!(
        k,
        stream.len(),
        "{table}: the viewer is missing the stream's last messages"
    );
    eprintln!(
        "{table}: a viewer received {} messages with {resyncs} resync view(s), all {} of the stream checked",
        got.len(),
        stream.len()
    );
    resyncs
}

/// The whole public state after the stream `messages` (what a resync view numbered
/// `messages.len()` must say): the last view, with the last result in it; `None` before
/// the first view. The view's `seq` (the last log row it reflects, which may be a later
/// row that changed nothing public) is left out.
pub fn state_at(messages: &[String]) -> Option<Value> {
    // From the end, parsing only as far back as the last view and the last result: a
    // soak's viewer resyncs dozens of times over a stream of tens of thousands.
    let (mut view, mut result) = (None, None);
    for text in messages.iter().rev() {
        let m: Value = serde_json::from_str(text).expect("json");
        if view.is_none() && m["type"] == "view" {
            view = Some(m["view"].clone());
        } else if result.is_none() && m["type"] == "result" {
            result = Some(m["result"].clone());
        }
        if view.is_some() && result.is_some() {
            break;
        }
    }
    let mut view = view?;
    view["last_result"] = result.unwrap_or(Value::Null);
    Some(without_seq(&view))
}

pub fn without_seq(view: &Value) -> Value {
    let mut view = view.clone();
    if let Some(o) = view.as_object_mut() {
        o.remove("seq");
    }
    view
}

/// The stream's results against the settlements the table recorded: every settled round
/// has its result published, the last published one equal to the recorded one.
pub fn check_results(table: &str, stream: &[String], results: &[Value]) {
    assert!(
        results.len() >= 2,
        "{table}: a real session ({} rounds)",
        results.len()
    );
    // Each round's last published result, the stream parsed once (an hour's soak has
    // thousands of rounds and tens of thousands of messages).
    let mut published: std::collections::HashMap<String, Value> = Default::default();
    for text in stream {
        let mut m: Value = serde_json::from_str(text).expect("json");
        if m["type"] == "result" {
            published.insert(m["round"].to_string(), m["result"].take());
        }
    }
    for recorded in results {
        let round = &recorded["round"];
        let result = published
            .get(&round.to_string())
            .unwrap_or_else(|| panic!("{table}: round {round} has no result message"));
        assert_eq!(result, recorded, "{table}: round {round}");
    }
}
