//! Tables, a relay and the broker: every viewer gets its tables' logs, through the broker
//! killed mid-session and a table killed while the broker is down.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tables_one_relay_every_viewer_gets_its_tables_log() {
    in_studio(&["alpha", "beta"], 240, |mut studio| async move {
        let relay = studio.relay("relay").await;
        let mut viewers = Vec::new();
        for t in &studio.tables {
            for _ in 0..3 {
                viewers.push((
                    t.id.clone(),
                    Viewer::connect(&relay.addr, &t.id, None).await,
                ));
            }
        }
        // A viewer of the table's own feed, to compare the results it shows.
        let own =
            tokio_tungstenite::connect_async(format!("ws://{}/ws/public", studio.tables[0].addr()))
                .await
                .expect("the table's own /ws/public")
                .0;
        let own_got = Arc::new(Mutex::new(Vec::<String>::new()));
        let into = Arc::clone(&own_got);
        let own_task = tokio::spawn(async move {
            let mut own = own;
            while let Some(Ok(m)) = own.next().await {
                if let Ok(t) = m.into_text() {
                    into.lock().expect("lock").push(t.to_string());
                }
            }
        });
        for t in &studio.tables {
            let now = t.seq().await;
            t.wait_rows(now + 120).await;
        }
        let (status, unknown) = get(&relay.addr, "/ws/public?table=nobody").await;
        assert_eq!(status, 404, "{unknown}");
        assert_eq!(unknown["error"]["code"], "not_found");
        own_task.abort();
        let expected = studio.quiesce(&relay.addr).await;
        let groups: Vec<(usize, Vec<&Viewer>)> = (0..2)
            .map(|i| {
                (
                    i,
                    viewers
                        .iter()
                        .filter(|(id, _)| *id == studio.tables[i].id)
                        .map(|(_, v)| v)
                        .collect(),
                )
            })
            .collect();
        check_all(&studio, &expected, &groups).await;
        // The table's own feed showed the same results as the relay's stream.
        let results = |texts: &[String]| -> Vec<Value> {
            texts
                .iter()
                .map(|t| serde_json::from_str::<Value>(t).expect("json"))
                .filter(|m| m["type"] == "result")
                .map(|m| serde_json::json!([m["round"], m["status"], m["result"]]))
                .collect()
        };
        let own_results = results(&own_got.lock().expect("lock"));
        let relayed = results(&expected[0].0);
        assert!(!own_results.is_empty());
        for r in &own_results {
            assert!(
                relayed.contains(r),
                "the table showed {r}, the relay did not"
            );
        }
        // The lobby: every table, its game and state.
        let (_, lobby) = get(&relay.addr, "/api/tables").await;
        let listed: Vec<&str> = lobby
            .as_array()
            .expect("array")
            .iter()
            .map(|t| t["table"].as_str().expect("id"))
            .collect();
        assert_eq!(listed, ["alpha", "beta"]);
        assert_eq!(lobby[0]["variant"], "deluxe");
        assert_eq!(lobby[0]["state"], "open");
        let (status, ready) = get(&relay.addr, "/readyz").await;
        assert_eq!(status, 200, "{ready}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_broker_killed_mid_session_loses_nothing() {
    in_studio(&["alpha", "beta"], 240, |mut studio| async move {
        let relay = studio.relay("relay").await;
        let mut viewers = Vec::new();
        for (i, t) in studio.tables.iter().enumerate() {
            viewers.push((i, Viewer::connect(&relay.addr, &t.id, None).await));
            viewers.push((i, Viewer::connect(&relay.addr, &t.id, None).await));
        }
        for t in &studio.tables {
            let now = t.seq().await;
            t.wait_rows(now + 40).await;
        }
        studio.nats.kill();
        // The tables deal on; their readiness says the publisher lags (not a lock).
        let table = &studio.tables[0];
        let started = Instant::now();
        loop {
            let (_, r) = get(&table.addr(), "/readyz").await;
            let reasons = r["reasons"].as_array().cloned().unwrap_or_default();
            if reasons.iter().any(|x| x == "publish_lag") {
                assert!(!reasons.iter().any(|x| x == "alarm"), "{r}");
                assert_ne!(r["publish"]["state"], "publishing", "{r}");
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "publish_lag: {r}"
            );
            sleep(Duration::from_millis(100)).await;
        }
        let before = table.seq().await;
        table.wait_rows(before + 20).await;
        sleep(Duration::from_secs(2)).await;
        studio.nats.restart();
        for t in &studio.tables {
            let now = t.seq().await;
            t.wait_rows(now + 40).await;
        }
        let expected = studio.quiesce(&relay.addr).await;
        let groups: Vec<(usize, Vec<&Viewer>)> = (0..2)
            .map(|i| {
                (
                    i,
                    viewers
                        .iter()
                        .filter(|(t, _)| *t == i)
                        .map(|(_, v)| v)
                        .collect(),
                )
            })
            .collect();
        check_all(&studio, &expected, &groups).await;
        let (status, r) = get(&studio.tables[0].addr(), "/readyz").await;
        assert_eq!(status, 200, "caught up: {r}");
        assert_eq!(r["publish"]["lag"], 0, "{r}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_killed_while_the_broker_is_down_resumes_exactly() {
    in_studio(&["alpha"], 240, |mut studio| async move {
        let relay = studio.relay("relay").await;
        let viewer = Viewer::connect(&relay.addr, "alpha", None).await;
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 40).await;
        studio.nats.kill();
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 30).await;
        studio.tables[0].kill();
        sleep(Duration::from_secs(1)).await;
        studio.nats.restart();
        studio.tables[0].start(true).await;
        let now = studio.tables[0].seq().await;
        studio.tables[0].wait_rows(now + 40).await;
        let expected = studio.quiesce(&relay.addr).await;
        check_all(&studio, &expected, &[(0, vec![&viewer])]).await;
    })
    .await;
}
