//! Issue #21 items 1–3 through the real service and the real binary: a Deluxe session
//! watched on `/ws/public` shows a commitment for every face-down card and its opening at
//! the reveal, a signature on every result, the same table key as `GET /api/table-key`;
//! `croupier verify-results` accepts the saved history and catches a tampered reveal, a
//! tampered result (outside and inside the signed text), and a log cut back and played on.

use crate::common;
use crate::running;
use crate::seals;

use common::{croupier, session, text};
use croupier::store::{Reader, Record};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use tokio::time::timeout;

const STEP: Duration = Duration::from_secs(10);

type Viewer =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn viewer(addr: std::net::SocketAddr) -> Viewer {
    tokio_tungstenite::connect_async(format!("ws://{addr}/ws/public"))
        .await
        .expect("ws")
        .0
}

/// The viewer's messages (JSON text lines) up to the view of row `last_seq` and the
/// `results`-th result (the two travel apart, in either order).
async fn saved(ws: &mut Viewer, last_seq: u64, results: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let (mut got, mut seen_last) = (0, false);
    loop {
        let m = common::next_message(ws, STEP).await;
        let text = m.to_text().expect("text").to_string();
        let v: Value = serde_json::from_str(&text).expect("json");
        lines.push(text);
        got += usize::from(v["type"] == "result");
        seen_last |= v["type"] == "view" && v["seq"].as_u64() >= Some(last_seq);
        if seen_last && got >= results {
            return lines;
        }
    }
}

fn verify(lines: &[String]) -> (bool, String) {
    let out = croupier(&["verify-results", "-"], Some(&(lines.join("\n") + "\n")));
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "{}",
        text(&out)
    );
    (out.status.success(), text(&out))
}

/// The lines with `f` applied to the first message `pick` selects.
fn tampered(
    lines: &[String],
    pick: impl Fn(&Value) -> bool,
    f: impl Fn(&mut Value),
) -> Vec<String> {
    let mut done = false;
    lines
        .iter()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("json");
            if !done && pick(&v) {
                f(&mut v);
                done = true;
                return v.to_string();
            }
            l.clone()
        })
        .collect()
}

/// Inputs logged after row `seq`.
async fn inputs_after(db: &Path, seq: u64) -> Vec<croupier::engine::Input> {
    let reader = Reader::open(db).await.expect("reader");
    reader
        .log("t1")
        .await
        .expect("log")
        .into_iter()
        .filter(|r| r.seq > seq)
        .filter_map(|r| match r.record {
            Record::Input { input, .. } => Some(input),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_history_verifies_and_every_tampering_is_caught() {
    timeout(Duration::from_secs(240), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("croupier.db");
        let (inputs, results, _) = session("deluxe", 21, 8);
        let sim = common::session_shoe(&inputs);
        let run = running::start(common::config(dir.path(), &sim.path(), "deluxe")).await;
        let mut ws = viewer(run.addr).await;
        common::feed_session(&run.handle, &sim, &inputs).await;
        let lines = saved(&mut ws, run.handle.snapshot().seq, results.len()).await;
        let (status, body) = croupier::web::client::request(
            &run.addr.to_string(),
            "GET",
            "/api/table-key",
            None,
            STEP,
        )
        .await
        .expect("table key");
        assert_eq!(status, 200, "{body}");
        let key: Value = serde_json::from_str(&body).expect("json");
        let key = key["key"].as_str().expect("key").to_string();
        // The key file: beside the database, private.
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(croupier::trust::keys::path_for(&db))
                .expect("key file")
                .permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);

        // What the stream shows: a commitment while the card lies face down (never the
        // card), the same commitment opened at the reveal, a signature on every result.
        let msgs: Vec<Value> = lines
            .iter()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        let mut hidden = std::collections::BTreeMap::new();
        let mut opened = 0;
        for m in msgs.iter().filter(|m| m["type"] == "view") {
            assert_eq!(
                m["view"]["table_key"],
                key.as_str(),
                "every view names the key"
            );
            let r = &m["view"]["round"];
            let seal = &r["seal"];
            if r["dealer"].as_array().map_or(0, Vec::len) >= 2 {
                assert!(
                    seal["commitment"].is_string(),
                    "a second dealer card is sealed: {m}"
                );
            }
            if r["dealer"][1].is_null() && seal.is_object() {
                assert!(seal["card"].is_null() && seal["nonce"].is_null(), "{m}");
                hidden.insert(
                    r["number"].as_u64().expect("round"),
                    seal["commitment"].clone(),
                );
            } else if seal["card"].is_string() {
                assert_eq!(seal["card"], r["dealer"][1]);
                let round = r["number"].as_u64().expect("round");
                if hidden.get(&round) == Some(&seal["commitment"]) {
                    opened += 1;
                }
            }
        }
        assert!(hidden.len() >= 5 && opened >= 5, "{hidden:?} {opened}");
        let signed: Vec<&Value> = msgs.iter().filter(|m| m["type"] == "result").collect();
        assert_eq!(signed.len(), results.len(), "one result per round");
        assert!(signed.iter().all(|m| m["signed"]["sig"].is_string()));

        // The whole history verifies, with the key from the views or the one pinned.
        let (ok, out) = verify(&lines);
        assert!(ok, "{out}");
        assert!(
            out.contains(&format!(
                "verified: {} signed results, {} sealed cards opened",
                results.len(),
                hidden.len()
            )),
            "{out}"
        );
        // Another table's key (a real one): every view names another key and no
        // signature verifies.
        let other = croupier::trust::TableKeys::from_secrets([9; 32], [9; 32]).public_hex();
        let pinned = croupier(
            &["verify-results", "-", "--key", &other],
            Some(&lines.join("\n")),
        );
        assert_eq!(
            pinned.status.code(),
            Some(1),
            "another key is refused: {}",
            text(&pinned)
        );
        // Said once per kind of problem, not once per line of the history.
        let failed = text(&pinned).matches("FAILED").count();
        assert!(
            (1..=4).contains(&failed),
            "{failed} FAILED lines: {}",
            text(&pinned)
        );

        // A tampered reveal: another card behind the same commitment.
        let swap = |v: &mut Value| {
            let card = v["view"]["round"]["seal"]["card"]
                .as_str()
                .expect("card")
                .to_string();
            let other = if card == "2C" { "3C" } else { "2C" };
            v["view"]["round"]["seal"]["card"] = other.into();
            v["view"]["round"]["dealer"][1] = other.into();
        };
        let bad = tampered(
            &lines,
            |v| v["view"]["round"]["seal"]["card"].is_string(),
            swap,
        );
        let (ok, out) = verify(&bad);
        assert!(!ok && out.contains("tampered reveal"), "{out}");
        // The same, checked in Rust.
        let m: Value = serde_json::from_str(
            bad.iter()
                .zip(&lines)
                .find(|(a, b)| a != b)
                .expect("one line changed")
                .0,
        )
        .expect("json");
        let seal: croupier::trust::Seal =
            serde_json::from_value(m["view"]["round"]["seal"].clone()).expect("seal");
        let round = m["view"]["round"]["number"].as_u64().expect("round");
        assert!(croupier::trust::seal::check(&seal, "t1", round).is_err());

        // A tampered result: the amount a hand got back, outside the signed text …
        let more = |v: &mut Value| {
            let r = v["result"]["hands"][0]["returned"]
                .as_i64()
                .expect("returned");
            v["result"]["hands"][0]["returned"] = (r + 500).into();
        };
        let bad = tampered(&lines, |v| v["type"] == "result", more);
        let (ok, out) = verify(&bad);
        assert!(
            !ok && out.contains("not the one its signature covers"),
            "{out}"
        );
        // … and inside it as well: the signature no longer verifies.
        let both = |v: &mut Value| {
            more(v);
            let payload = v["signed"]["payload"].as_str().expect("payload");
            let mut st: Value = serde_json::from_str(payload).expect("statement");
            st["result"] = v["result"].clone();
            v["signed"]["payload"] = st.to_string().into();
        };
        let bad = tampered(&lines, |v| v["type"] == "result", both);
        let (ok, out) = verify(&bad);
        assert!(!ok && out.contains("does not verify"), "{out}");
        // A result with its signature taken off.
        let bad = tampered(
            &lines,
            |v| v["type"] == "result",
            |v| {
                v.as_object_mut().expect("object").remove("signed");
            },
        );
        let (ok, out) = verify(&bad);
        assert!(!ok && out.contains("not signed"), "{out}");

        // A truncated log: the service stopped, the rows after round 3's end cut off (and
        // the anchor with them: whoever can write both files), played on from there.
        run.stop().await;
        let third: Value =
            serde_json::from_str(signed[2]["signed"]["payload"].as_str().expect("payload"))
                .expect("statement");
        let cut = third["head"]["seq"].as_u64().expect("head");
        let replay = inputs_after(&db, cut).await;
        assert!(common::cut_log(&db, cut).await > 0);
        std::fs::remove_file(croupier::store::anchor::path_for(&db)).expect("anchor");
        let _ = std::fs::remove_file(croupier::store::spill::path_for(&db));
        let sim = common::session_shoe(&replay);
        let run = running::start(common::config(dir.path(), &sim.path(), "deluxe")).await;
        assert_eq!(
            run.handle.snapshot().seq,
            cut,
            "the table starts from the cut log"
        );
        let mut ws = viewer(run.addr).await;
        common::feed_session(&run.handle, &sim, &replay).await;
        let after = saved(&mut ws, run.handle.snapshot().seq, results.len() - 3).await;
        run.stop().await;
        // On its own, the new stream is consistent …
        let (ok, out) = verify(&after);
        assert!(ok, "{out}");
        // … but a viewer who saved both sees the log go back.
        let whole: Vec<String> = lines.iter().chain(&after).cloned().collect();
        let (ok, out) = verify(&whole);
        assert!(!ok && out.contains("truncated log"), "{out}");

        // The same round numbers played again on the new timeline get new nonces: with
        // the first timeline's reveals a viewer names none of the new face-down cards
        // (every new commitment tried with every old nonce over the 52 cards).
        let old = seals::seen(&seals::parsed(&lines));
        let new = seals::seen(&seals::parsed(&after));
        let replayed = new
            .commitments
            .iter()
            .filter(|(r, _)| old.nonces.iter().any(|(o, _)| o == r))
            .count();
        assert!(replayed >= 2, "rounds played on both timelines: {replayed}");
        let named = seals::named("t1", &new.commitments, &old.nonces);
        assert!(named.is_empty(), "the old nonces name {named:?}");
    })
    .await
    .expect("bounded");
}
