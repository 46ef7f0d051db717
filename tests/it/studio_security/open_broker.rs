//! On a broker without authentication: forged, replayed, high-numbered and malformed
//! messages on a table's public subject, and a forged bucket value, are not served by the
//! relay; a relay seeded from a quiet table refuses replays as stale; a stream the relay
//! cannot follow (deleted) is reported, not a stop.

use super::*;

/// The headers that prove a message the table's (`trust::wire`), copied from `headers`:
/// what a replay carries.
fn proof_headers(headers: &async_nats::HeaderMap) -> async_nats::HeaderMap {
    use croupier::broker::subjects::{HEADER_ROW, HEADER_SALT, HEADER_SIG};
    let mut copy = async_nats::HeaderMap::new();
    assert!(headers.get(HEADER_SIG).is_some(), "the table signs");
    for name in [HEADER_SIG, HEADER_ROW, HEADER_SALT] {
        if let Some(value) = headers.get(name) {
            copy.insert(name, value.as_str());
        }
    }
    copy
}

/// A broker without authentication with its store in a fresh directory, or `None`
/// (skipped, as `nats::nats_server` says) without `nats-server`.
fn open_broker() -> Option<(tempfile::TempDir, nats::Nats)> {
    let bin = nats::nats_server()?;
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = nats::Nats::start(&bin, dir.path());
    Some((dir, broker))
}

/// Table `t1` dealing on `broker`, and the keys file (under `dir`) that pins its key.
async fn pinned_t1(dir: &Path, broker: &nats::Nats) -> (studio_table::Table, PathBuf) {
    let mut t1 = studio_table::Table::new(dir, "t1", &broker.url());
    t1.start(true).await;
    let keys = dir.join("table-keys.toml");
    studio_table::pin_keys(&keys, [("t1", t1.db.as_path())]);
    (t1, keys)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_replayed_and_malformed_messages_on_an_open_broker_are_not_served() {
    timeout(Duration::from_secs(240), async {
        let Some((tmp, broker)) = open_broker() else {
            return;
        };
        let dir = tmp.path();
        let mut t1 = studio_table::Table::new(dir, "t1", &broker.url());
        let mut t2 = studio_table::Table::new(dir, "t2", &broker.url());
        t1.start(true).await;
        t2.start(true).await;
        let keys = dir.join("table-keys.toml");
        // Only t1 is pinned at first.
        studio_table::pin_keys(&keys, [("t1", t1.db.as_path())]);
        let args = relay_args(&broker.url(), &keys);
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let relay = announced(spawn_args(&args, &dir.join("relay.log"))).await;
        let n = wait_relayed(&relay.addr, "t1", 3).await;
        let viewer = Viewer::connect(&relay.addr, "t1", None).await;

        // An attacker on the open broker.
        let attacker = async_nats::connect(broker.url()).await.expect("connect");
        let js = jetstream::new(attacker.clone());
        let public = js.get_stream("CROUPIER_PUBLIC_t1").await.expect("stream");
        let last = public
            .get_raw_message(public.cached_info().state.last_sequence)
            .await
            .expect("the last message");
        let real: Value = serde_json::from_slice(&last.payload).expect("json");
        assert!(
            last.headers
                .get(croupier::broker::subjects::HEADER_ROW)
                .is_some(),
            "the table's last message was signed with its row"
        );
        let sig = last
            .headers
            .get(croupier::broker::subjects::HEADER_SIG)
            .expect("the table signs")
            .as_str()
            .to_string();
        let with_sig = |payload: String, sig: &str| {
            let mut headers = async_nats::HeaderMap::new();
            headers.insert(croupier::broker::subjects::HEADER_SIG, sig);
            (payload, headers)
        };
        // The real message's whole proof: its signature and, signed with the rest of its
        // row, the row's digests.
        let with_proof = |payload: String| (payload, proof_headers(&last.headers));
        // 1. A forged result with the real message's signature, and with its whole proof;
        // 2. a forged view with a high sequence; 3. messages missing required fields; 4. a
        // replay of the table's own last message (a valid proof, a number already served).
        let mut forged_result = real.clone();
        forged_result["type"] = "result".into();
        forged_result["n"] = (real["n"].as_u64().expect("n") + 1).into();
        forged_result["result"] = serde_json::json!({"round": 1, "forged": true});
        let mut high = real.clone();
        high["seq"] = 1_000_000_000u64.into();
        high["n"] = 1_000_000_000u64.into();
        let sends = vec![
            with_sig(forged_result.to_string(), &sig),
            with_proof(forged_result.to_string()),
            with_sig(high.to_string(), "00"),
            with_sig("{\"type\":\"view\",\"seq\":5}".into(), &sig),
            with_sig("not json at all".into(), "zz"),
            // Without its Nats-Msg-Id, or the broker would drop it as a duplicate.
            with_proof(String::from_utf8_lossy(&last.payload).into_owned()),
        ];
        let mut attack_end = 0;
        for (payload, headers) in sends {
            let ack = js
                .publish_with_headers("croupier.t1.public", headers, payload.into())
                .await
                .expect("sent")
                .await
                .expect("stored: the broker is open");
            attack_end = attack_end.max(ack.sequence);
        }
        // A forged bucket value, unsigned: a relay started now must not seed from it.
        let mut forged_view = real.clone();
        forged_view["resync"] = true.into();
        forged_view["n"] = 999_999u64.into();
        attacker
            .publish("$KV.croupier_tables.t1", forged_view.to_string().into())
            .await
            .expect("sent");

        // The table publishes on past the foreign messages; the relay serves its messages
        // only, consecutive. It is judged once it has read past them: at the number of a
        // message of the table's stored after them (a relay behind the stream — under load
        // — would otherwise be judged before it reached them).
        let started = Instant::now();
        let past = loop {
            let mut stream = js.get_stream("CROUPIER_PUBLIC_t1").await.expect("stream");
            let last = stream.info().await.expect("info").state.last_sequence;
            if last > attack_end {
                let m = stream
                    .get_raw_message(last)
                    .await
                    .expect("the last message");
                if let Some(n) = serde_json::from_slice::<Value>(&m.payload)
                    .ok()
                    .and_then(|v| v["n"].as_u64())
                {
                    break n;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the table publishes past the attack"
            );
            sleep(Duration::from_millis(100)).await;
        };
        let after = wait_relayed(&relay.addr, "t1", past.max(n + 12)).await;
        assert!(
            after < 1_000,
            "the forged high number was not served: {after}"
        );
        let (_, ready) = get(&relay.addr, "/readyz").await;
        let refused = &ready["refused"]["t1"];
        assert!(refused["unsigned"].as_u64() >= Some(5), "{ready}");
        assert!(refused["stale"].as_u64() >= Some(1), "the replay: {ready}");
        assert_eq!(
            ready["ready"], true,
            "forgeries do not take the relay out: {ready}"
        );
        assert_eq!(ready["unpinned"], serde_json::json!(["t2"]), "{ready}");
        let metrics = common::metrics(&relay.addr).await;
        // The series exists from the start at 0: the forged message must have counted.
        let unsigned = metrics
            .lines()
            .find_map(|l| {
                l.strip_prefix("croupier_relay_refused_total{table=\"t1\",reason=\"unsigned\"} ")
            })
            .and_then(|v| v.trim().parse::<f64>().ok());
        assert!(
            unsigned.is_some_and(|n| n >= 1.0),
            "the unsigned message was counted ({unsigned:?}): {metrics}"
        );
        // A viewer that connected late (under load) began further on: the table deals on,
        // so its count grows; what is judged is that what it got is consecutive.
        let deadline = Instant::now() + Duration::from_secs(60);
        while viewer.values().len() < 8 && Instant::now() < deadline {
            sleep(Duration::from_millis(100)).await;
        }
        let served = viewer.assert_consecutive("t1");
        assert!(
            served >= 8,
            "the viewer got the table's messages ({served})"
        );
        for m in viewer.values() {
            assert!(
                !m.to_string().contains("forged"),
                "a forged message reached a viewer: {m}"
            );
        }
        let (_, table_ready) = get(&t1.addr(), "/readyz").await;
        assert_eq!(
            table_ready["publish"]["state"], "publishing",
            "{table_ready}"
        );

        // A second relay, started after the forged bucket value and messages: it seeds
        // from nothing forged and serves consecutive messages too.
        let fresh = announced(spawn_args(&args, &dir.join("fresh.log"))).await;
        let m = wait_relayed(&fresh.addr, "t1", after).await;
        let late = Viewer::connect(&fresh.addr, "t1", None).await;
        wait_relayed(&fresh.addr, "t1", m + 5).await;
        sleep(Duration::from_millis(300)).await;
        let first = &late.values()[0];
        assert!(
            first["n"].as_u64() < Some(999_999),
            "not the forged snapshot: {first}"
        );
        late.assert_consecutive("t1");

        // t2 is not served until its key is pinned; then it is, without a restart.
        let (status, _) = get(&relay.addr, "/api/table-key?table=t2").await;
        assert_eq!(status, 404);
        assert!(
            lobby(&relay.addr, "t2").await.is_none(),
            "t2 is not served unpinned"
        );
        studio_table::pin_keys(&keys, [("t1", t1.db.as_path()), ("t2", t2.db.as_path())]);
        wait_relayed(&relay.addr, "t2", 3).await;
        let t2_viewer = Viewer::connect(&relay.addr, "t2", None).await;
        let k = lobby(&relay.addr, "t2").await.expect("listed")["n"]
            .as_u64()
            .expect("n");
        wait_relayed(&relay.addr, "t2", k + 3).await;
        sleep(Duration::from_millis(300)).await;
        t2_viewer.assert_consecutive("t2");
        t1.stop();
        t2.stop();
    })
    .await
    .expect("bounded");
}

/// A relay that starts on a quiet table seeds its feed from the bucket's view; replays of
/// the table's own messages — the one the view was taken at and an older one, validly
/// signed — are then stale, refused and counted, never a second seed nor kept. Before, the
/// relay took every message up to the seed as its ring's back-fill for as long as it ran:
/// the replays were neither served nor counted, and each was kept in memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_seeded_from_a_quiet_table_refuses_replays_as_stale() {
    timeout(Duration::from_secs(180), async {
        let Some((tmp, broker)) = open_broker() else {
            return;
        };
        let dir = tmp.path();
        let (mut t1, keys) = pinned_t1(dir, &broker).await;
        let attacker = async_nats::connect(broker.url()).await.expect("connect");
        let js = jetstream::new(attacker);
        let started = Instant::now();
        loop {
            let info = js
                .get_stream("CROUPIER_PUBLIC_t1")
                .await
                .map(|s| s.cached_info().state.messages);
            if info.is_ok_and(|m| m >= 6) {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(60), "t1 publishes");
            sleep(Duration::from_millis(100)).await;
        }
        // Quiet from here: the bucket's view is the table's last word.
        t1.stop();
        let public = js.get_stream("CROUPIER_PUBLIC_t1").await.expect("stream");
        let last_seq = public.cached_info().state.last_sequence;
        let replays: Vec<_> = [last_seq, last_seq - 2]
            .into_iter()
            .map(|seq| {
                let public = public.clone();
                async move { public.get_raw_message(seq).await.expect("a message") }
            })
            .collect();
        let replays = futures::future::join_all(replays).await;
        let last_n = serde_json::from_slice::<Value>(&replays[0].payload).expect("json")["n"]
            .as_u64()
            .expect("n");

        let args = relay_args(&broker.url(), &keys);
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let relay = announced(spawn_args(&args, &dir.join("relay.log"))).await;
        assert_eq!(wait_relayed(&relay.addr, "t1", last_n).await, last_n);
        let viewer = Viewer::connect(&relay.addr, "t1", None).await;
        let js2 = jetstream::new(async_nats::connect(broker.url()).await.expect("connect"));
        for m in &replays {
            // Without its Nats-Msg-Id, or the broker would drop it as a duplicate.
            let headers = proof_headers(&m.headers);
            js2.publish_with_headers("croupier.t1.public", headers, m.payload.clone())
                .await
                .expect("sent")
                .await
                .expect("stored");
        }
        let started = Instant::now();
        loop {
            let (_, ready) = get(&relay.addr, "/readyz").await;
            if ready["refused"]["t1"]["stale"].as_u64() >= Some(2) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "both replays are stale: {ready}"
            );
            sleep(Duration::from_millis(100)).await;
        }
        sleep(Duration::from_millis(300)).await;
        assert_eq!(
            lobby(&relay.addr, "t1").await.expect("listed")["n"].as_u64(),
            Some(last_n),
            "nothing new was served"
        );
        assert_eq!(viewer.values().len(), 1, "the viewer got its resync only");
    })
    .await
    .expect("bounded");
}

/// A table's public stream the relay cannot follow (here deleted: on an open broker anyone
/// may) is reported once the stall outlasts an election — `/readyz` names it under
/// `stalled`, `croupier_relay_tables_stalled` counts it, the log says it once — without
/// taking the relay out of service; the table's last view stays served, and the report
/// ends when the stream can be followed again. The fourth hour's soak had a relay time
/// out on every stream for 90 s with nothing said but a retry line every 4 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_the_relay_cannot_follow_is_reported_and_not_a_stop() {
    timeout(Duration::from_secs(240), async {
        let Some((tmp, broker)) = open_broker() else {
            return;
        };
        let dir = tmp.path();
        let (mut t1, keys) = pinned_t1(dir, &broker).await;
        let args = relay_args(&broker.url(), &keys);
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let log = dir.join("relay.log");
        let relay = announced(spawn_args(&args, &log)).await;
        wait_relayed(&relay.addr, "t1", 3).await;
        let stalled_metric = |text: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix("croupier_relay_tables_stalled "))
                .and_then(|v| v.trim().parse::<f64>().ok())
        };
        assert_eq!(
            stalled_metric(&common::metrics(&relay.addr).await),
            Some(0.0)
        );
        let (_, ready) = get(&relay.addr, "/readyz").await;
        assert_eq!(ready["stalled"], serde_json::json!([]), "{ready}");

        // The table stops (so it does not make its stream again) and its stream goes.
        t1.stop();
        let js = jetstream::new(async_nats::connect(broker.url()).await.expect("connect"));
        // Taken before the request: the relay may see its consumer deleted before the
        // broker's answer reaches the test (under load, by more than /readyz's 250 ms
        // poll), and it cannot see it before the request.
        let cut = Instant::now();
        js.delete_stream("CROUPIER_PUBLIC_t1")
            .await
            .expect("deleted");
        let ready = loop {
            let (status, ready) = get(&relay.addr, "/readyz").await;
            assert_eq!(status, 200, "a stall is not a stop: {ready}");
            if ready["stalled"] == serde_json::json!(["t1"]) {
                break ready;
            }
            assert!(
                cut.elapsed() < croupier::relay::tables::STALLED + Duration::from_secs(30),
                "the stall is reported: {ready}"
            );
            sleep(Duration::from_millis(250)).await;
        };
        assert!(
            cut.elapsed() >= croupier::relay::tables::STALLED,
            "not before an election's worth of time: {:?}, {ready}",
            cut.elapsed()
        );
        assert_eq!(ready["ready"], true, "{ready}");
        assert_eq!(
            stalled_metric(&common::metrics(&relay.addr).await),
            Some(1.0)
        );
        assert!(
            lobby(&relay.addr, "t1").await.is_some(),
            "the table's last view is still served"
        );
        // The log says it at the first failed pass past the stall's length (a pass a second
        // or so; /readyz counts from the first failure, so it may be ahead by one pass),
        // and not again while the failures go on.
        let said_times = || {
            std::fs::read_to_string(&log)
                .expect("the relay's log")
                .matches("cannot be followed")
                .count()
        };
        let reported = Instant::now();
        while said_times() == 0 {
            assert!(
                reported.elapsed() < Duration::from_secs(20),
                "the log says it: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            sleep(Duration::from_millis(100)).await;
        }
        sleep(Duration::from_secs(3)).await;
        assert_eq!(
            said_times(),
            1,
            "said once: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );

        // The stream back (empty): followed again, the report ends.
        js.create_stream(jetstream::stream::Config {
            name: "CROUPIER_PUBLIC_t1".into(),
            subjects: vec!["croupier.t1.public".into()],
            ..Default::default()
        })
        .await
        .expect("made again");
        let back = Instant::now();
        loop {
            let (_, ready) = get(&relay.addr, "/readyz").await;
            if ready["stalled"] == serde_json::json!([]) {
                break;
            }
            assert!(
                back.elapsed() < Duration::from_secs(30),
                "followed again: {ready}"
            );
            sleep(Duration::from_millis(250)).await;
        }
        assert_eq!(
            stalled_metric(&common::metrics(&relay.addr).await),
            Some(0.0)
        );
        let said = std::fs::read_to_string(&log).expect("the relay's log");
        assert!(
            said.contains("following the table's public stream again"),
            "{said}"
        );
    })
    .await
    .expect("bounded");
}
