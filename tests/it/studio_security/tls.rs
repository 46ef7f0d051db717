//! The studio on the configuration `croupier studio nats-config` generates, over TLS with a
//! test CA made here: three tables, two relays and the floor each with its own nkey
//! credential (and account) do their whole job, and every attack an outside tester ran is
//! refused by the broker.

use super::*;

/// Asserts that `js` can neither describe `stream`, nor read a message of it, nor make a
/// consumer on it.
async fn cannot_read(js: &jetstream::Context, stream: &str, who: &str) {
    assert!(js.get_stream(stream).await.is_err(), "{who}: STREAM.INFO");
    let handle = js.get_stream_no_info(stream).await.expect("handle");
    assert!(handle.get_raw_message(1).await.is_err(), "{who}: MSG.GET");
    let spy = consumer::pull::Config {
        durable_name: Some("spy".into()),
        ..Default::default()
    };
    assert!(
        js.create_consumer_on_stream(spy, stream).await.is_err(),
        "{who}: CONSUMER.CREATE"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_studio_over_tls_does_its_job_and_refuses_every_attack() {
    timeout(Duration::from_secs(300), async {
        let Some((bin, db)) = pg::broker_and_db().await else {
            return;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let dir = dir.path();
        let pki = pki(dir);
        let studio = dir.join("studio");
        let port = nats::free_port();
        let ids = ["t1", "t2", "t3"];
        let listen = format!("127.0.0.1:{port}");
        let store = dir.join("js").display().to_string();
        let generate = |keys: &[String]| {
            let mut args = vec![
                "studio".to_string(),
                "nats-config".into(),
                "--tables".into(),
                ids.join(","),
                "--out".into(),
                studio.display().to_string(),
                "--listen".into(),
                listen.clone(),
                "--store-dir".into(),
                store.clone(),
                "--tls-cert".into(),
                pki.server_cert.display().to_string(),
                "--tls-key".into(),
                pki.server_key.display().to_string(),
                "--verify-clients-ca".into(),
                pki.ca.display().to_string(),
            ];
            for k in keys {
                args.push("--table-key".into());
                args.push(k.clone());
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            croupier(&args)
        };
        generate(&[]);
        let conf = studio.join("nats-server.conf");
        let _broker = Broker::start(&bin, &conf, port, &dir.join("nats.log"));
        let url = format!("tls://127.0.0.1:{port}");
        let tls_flags = [
            "--tls-ca".to_string(),
            pki.ca.display().to_string(),
            "--tls-cert".into(),
            pki.client_cert.display().to_string(),
            "--tls-key".into(),
            pki.client_key.display().to_string(),
        ];
        let mut provision = vec![
            "studio".to_string(),
            "provision".into(),
            "--dir".into(),
            studio.display().to_string(),
            "--nats".into(),
            url.clone(),
        ];
        provision.extend(tls_flags.iter().cloned());
        let out = croupier(&provision.iter().map(String::as_str).collect::<Vec<_>>());
        // Three tables' two streams and the floor's consumer, the bucket, and the relays'
        // mirrors of the three public streams and the bucket.
        assert_eq!(out.matches("created").count(), 14, "{out}");

        // The tables, each with its own credential, over TLS.
        let mut tables: Vec<Proc> = Vec::new();
        let mut keys = Vec::new();
        for id in ids {
            let publish = format!(
                "credentials = {:?}\ntls_ca = {:?}\ntls_cert = {:?}\ntls_key = {:?}\njs_api_prefix = \"$JS.STUDIO.API\"\n",
                croupier::studio::credential_path(&studio, &croupier::studio::table_party(id))
                    .display()
                    .to_string(),
                pki.ca.display().to_string(),
                pki.client_cert.display().to_string(),
                pki.client_key.display().to_string(),
            );
            let cfg = table_config(dir, id, &url, &publish);
            tables.push(announced(proc::spawn_raw(&cfg, &dir.join(format!("{id}.log")))).await);
            let line = croupier(&["table-key", "--config", cfg.to_str().expect("utf-8")]);
            keys.push(line.trim().to_string());
        }
        // The keys pinned for the relays: the operator's step after the tables' first start.
        generate(&keys);
        let keys_file = studio.join("table-keys.toml").display().to_string();
        let mut relays = Vec::new();
        for name in ["relay-a", "relay-b"] {
            let mut args = vec![
                "relay".to_string(),
                "--nats".into(),
                url.clone(),
                "--bind".into(),
                "127.0.0.1:0".into(),
                "--credentials".into(),
                croupier::studio::credential_path(&studio, "relay")
                    .display()
                    .to_string(),
                "--table-keys".into(),
                keys_file.clone(),
            ];
            args.extend(tls_flags.iter().cloned());
            let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
            relays.push(announced(spawn_args(&args, &dir.join(format!("{name}.log")))).await);
        }
        let mut args = vec![
            "floor".to_string(),
            "--nats".into(),
            url.clone(),
            "--database".into(),
            db.url.clone(),
            "--table-keys".into(),
            keys_file.clone(),
            "--credentials".into(),
            croupier::studio::credential_path(&studio, "floor")
                .display()
                .to_string(),
            "--js-api-prefix".into(),
            croupier::studio::grants::STUDIO_API.into(),
        ];
        args.extend(tls_flags.iter().cloned());
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let floor = spawn_args(&args, &dir.join("floor.log"));
        let _floor = announced(floor).await;

        // Every party does its job: both relays serve every table, a viewer of each gets
        // consecutive messages, the floor ingests every table's log.
        let mut viewers = Vec::new();
        for relay in &relays {
            for id in ids {
                wait_relayed(&relay.addr, id, 3).await;
                viewers.push((id, Viewer::connect(&relay.addr, id, None).await));
            }
            let (status, ready) = get(&relay.addr, "/readyz").await;
            assert_eq!(status, 200, "{ready}");
            assert_eq!(ready["refused"], serde_json::json!({}), "{ready}");
        }
        for (i, id) in ids.iter().enumerate() {
            let (_, key) = get(&relays[1].addr, &format!("/api/table-key?table={id}")).await;
            let (_, own) = get(&tables[i].addr, "/api/table-key").await;
            assert_eq!(
                key["key"], own["key"],
                "{id}: the relay's pinned key is the table's"
            );
        }
        let pool = db.pool().await;
        let started = Instant::now();
        loop {
            let counts: Vec<i64> = futures::future::join_all(ids.iter().map(|id| {
                sqlx::query_scalar::<_, i64>(
                    "SELECT count(*) FROM floor_events WHERE table_id = $1",
                )
                .bind(*id)
                .fetch_one(&pool)
            }))
            .await
            .into_iter()
            .map(|r| r.expect("count"))
            .collect();
            if counts.iter().all(|c| *c >= 20) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the floor ingests every table: {counts:?}"
            );
            sleep(Duration::from_millis(200)).await;
        }

        // Anonymous: refused.
        let anonymous = BrokerOptions {
            url: url.clone(),
            tls_ca: Some(pki.ca.clone()),
            tls_cert: Some(pki.client_cert.clone()),
            tls_key: Some(pki.client_key.clone()),
            ..Default::default()
        };
        let (options, addrs) =
            croupier::broker::connect::client_options(&anonymous).expect("options");
        assert!(
            options.connect(addrs).await.is_err(),
            "an anonymous connection is refused"
        );

        // The relay's credential: no inbox but its own, no log subject, no log stream, no
        // consumer of the floor's.
        let admin = party(&url, &studio, "admin", "_INBOX.admin", Some(&pki)).await;
        let admin_js = jetstream::new(admin.clone());
        let relay = party(&url, &studio, "relay", "_INBOX.relay", Some(&pki)).await;
        let all_inboxes = relay.subscribe("_INBOX.>").await.expect("subscribe");
        let logs = relay.subscribe("croupier.*.log").await.expect("subscribe");
        let own = relay
            .subscribe("_INBOX.relay.probe")
            .await
            .expect("subscribe");
        sleep(Duration::from_millis(200)).await;
        // The control: a JetStream answer the relay points at its own inbox (the admin,
        // in another account, cannot publish there).
        relay
            .publish_with_reply(
                "$JS.API.STREAM.INFO.CROUPIER_PUBLIC_t1",
                "_INBOX.relay.probe",
                "".into(),
            )
            .await
            .expect("publish");
        let (inboxes, logs, own) = tokio::join!(
            received(all_inboxes, Duration::from_secs(3)),
            received(logs, Duration::from_secs(3)),
            received(own, Duration::from_secs(3)),
        );
        assert_eq!(own, 1, "the relay's own inbox works (the control)");
        assert_eq!(inboxes, 0, "the relay reads no other party's replies");
        assert_eq!(logs, 0, "the relay reads no log row");
        // Through its own account's JetStream (its mirrors) and through the prefix its
        // account imports the studio's consumer creation under (for the mirrors alone).
        for api in ["$JS.API", croupier::studio::grants::STUDIO_API] {
            let relay_js = jetstream::with_prefix(relay.clone(), api);
            cannot_read(&relay_js, "CROUPIER_LOG_t1", &format!("the relay on {api}")).await;
            assert!(
                relay_js
                    .delete_consumer_from_stream(
                        croupier::floor::DEFAULT_CONSUMER,
                        "CROUPIER_LOG_t1"
                    )
                    .await
                    .is_err(),
                "{api}"
            );
            assert!(
                relay_js.delete_stream("CROUPIER_PUBLIC_t1").await.is_err(),
                "{api}: the relay deletes the public stream or its mirror"
            );
        }
        assert!(
            admin_js
                .get_stream("CROUPIER_LOG_t1")
                .await
                .expect("stream")
                .consumer_info(croupier::floor::DEFAULT_CONSUMER)
                .await
                .is_ok(),
            "the floor's consumer is still there"
        );
        let relay_js = jetstream::new(relay.clone());

        // Table t1's credential against table t2.
        let t1 = party(&url, &studio, "table-t1", "_INBOX.table.t1", Some(&pki)).await;
        let t2_log = t1.subscribe("croupier.t2.log").await.expect("subscribe");
        assert_eq!(
            received(t2_log, Duration::from_secs(2)).await,
            0,
            "t1 reads t2's rows"
        );
        // Through the prefix its account imports the studio's API under, and JetStream's own.
        for api in [croupier::studio::grants::STUDIO_API, "$JS.API"] {
            let t1_js = jetstream::with_prefix(t1.clone(), api);
            cannot_read(&t1_js, "CROUPIER_LOG_t2", &format!("t1 on {api}")).await;
            let mut changed = admin_js
                .get_stream("CROUPIER_PUBLIC_t2")
                .await
                .expect("stream")
                .cached_info()
                .config
                .clone();
            changed.subjects = vec!["croupier.t2.public".into(), "croupier.t1.public".into()];
            assert!(t1_js.update_stream(changed).await.is_err(), "STREAM.UPDATE");
            assert!(
                t1_js.delete_stream("CROUPIER_PUBLIC_t2").await.is_err(),
                "STREAM.DELETE"
            );
            assert!(
                t1_js
                    .create_stream(stream::Config {
                        name: "CAPTURE".into(),
                        subjects: vec!["croupier.t2.floor".into()],
                        ..Default::default()
                    })
                    .await
                    .is_err(),
                "STREAM.CREATE"
            );
            for subject in [
                "$KV.croupier_tables.t2",
                "croupier.t2.public",
                "croupier.t2.log",
            ] {
                let ack = t1_js
                    .publish(subject, "{\"forged\":true}".into())
                    .await
                    .expect("sent");
                assert!(ack.await.is_err(), "t1 publishes on {subject}");
            }
        }
        let info = admin_js
            .get_stream("CROUPIER_PUBLIC_t2")
            .await
            .expect("t2's stream is still there")
            .cached_info()
            .clone();
        assert_eq!(info.config.subjects, vec!["croupier.t2.public".to_string()]);
        let value = admin_js
            .get_key_value("croupier_tables")
            .await
            .expect("bucket")
            .get("t2")
            .await
            .expect("get")
            .expect("t2's view");
        assert!(!String::from_utf8_lossy(&value).contains("forged"));

        // What grants inside one account could not stop, the accounts do: while t2
        // publishes, push consumers of the relay's delivering into t2's subjects, and
        // JetStream answers to the relay's and t1's requests pointed at them. The relay's
        // consumers are on its own account's mirrors, every answer lands in its
        // requester's account: t2's streams hold t2's own messages alone.
        // (`accounts.rs` floods every route from every party's credential.)
        let mirror = relay_js
            .get_stream_no_info("CROUPIER_PUBLIC_t1")
            .await
            .expect("handle");
        let mut injectors = Vec::new();
        for target in [
            "croupier.t2.log",
            "croupier.t2.public",
            "$KV.croupier_tables.t2",
        ] {
            injectors.push(
                mirror
                    .create_consumer(consumer::push::Config {
                        deliver_subject: target.into(),
                        deliver_policy: consumer::DeliverPolicy::All,
                        ack_policy: consumer::AckPolicy::None,
                        ..Default::default()
                    })
                    .await
                    .expect("the relay may create consumers on its mirrors"),
            );
        }
        let (_, t2_ready) = get(&tables[1].addr, "/readyz").await;
        let acked = t2_ready["publish"]["acked"].as_u64().expect("acked");
        for _ in 0..30 {
            relay
                .publish_with_reply(
                    "$JS.API.STREAM.INFO.CROUPIER_PUBLIC_t1",
                    "croupier.t2.log",
                    "".into(),
                )
                .await
                .expect("sent");
            t1.publish_with_reply(
                "$JS.STUDIO.API.STREAM.INFO.CROUPIER_PUBLIC_t1",
                "croupier.t2.public",
                "".into(),
            )
            .await
            .expect("sent");
            sleep(Duration::from_millis(100)).await;
        }
        t1.flush().await.expect("flush");
        relay.flush().await.expect("flush");
        // t2 publishes on.
        let started = Instant::now();
        let goal = acked + 10;
        loop {
            let (_, r) = get(&tables[1].addr, "/readyz").await;
            assert_ne!(r["publish"]["state"], "failed", "{r}");
            if r["publish"]["acked"].as_u64() >= Some(goal) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "t2 publishes on: {r}"
            );
            sleep(Duration::from_millis(200)).await;
        }
        drop(injectors);
        // Every message of t2's streams is one t2 signed.
        let pinned = croupier::trust::pinned::PinnedKeys::load(&studio.join("table-keys.toml"))
            .expect("the pinned keys");
        let key = pinned.get("t2").expect("t2's key");
        for (name, domain) in [
            ("CROUPIER_LOG_t2", croupier::trust::wire::LOG),
            ("CROUPIER_PUBLIC_t2", croupier::trust::wire::PUBLIC),
        ] {
            let mut stream = admin_js.get_stream(name).await.expect("t2's stream");
            let state = stream.info().await.expect("info").state.clone();
            assert!(state.messages > 10, "{name}: {state:?}");
            for seq in state.first_sequence..=state.last_sequence {
                let m = stream.get_raw_message(seq).await.expect("a message");
                assert!(
                    croupier::broker::subjects::signed(key, domain, "t2", &m.payload, &m.headers),
                    "{name} {seq} is not t2's: {:?}",
                    String::from_utf8_lossy(&m.payload)
                );
            }
        }
        // The floor holds t2's rows 1..goal, each once, all verified.
        let started = Instant::now();
        loop {
            let rows: Vec<(i64, String)> = sqlx::query_as(
                "SELECT seq, verified FROM floor_events WHERE table_id = 't2' AND seq <= $1 ORDER BY seq",
            )
            .bind(goal as i64)
            .fetch_all(&pool)
            .await
            .expect("rows");
            if rows.len() as u64 == goal {
                assert!(
                    rows.iter().enumerate().all(|(i, (seq, v))| *seq == i as i64 + 1 && v == "ok"),
                    "t2's rows on the floor are whole"
                );
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the floor has {} of t2's first {goal} rows; its log ends:\n{}",
                rows.len(),
                tail(&dir.join("floor.log"))
            );
            sleep(Duration::from_millis(200)).await;
        }

        // A mirror lost (made again by `provision`, as after a broker's crash that left one
        // not following its origin): the relays follow the new one by themselves.
        let relays_js =
            jetstream::with_prefix(admin.clone(), croupier::studio::grants::RELAY_API);
        for mirror in ["CROUPIER_PUBLIC_t3", "KV_croupier_tables"] {
            relays_js.delete_stream(mirror).await.expect("deleted");
        }
        let out = croupier(&provision.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(out.matches("created").count(), 2, "{out}");

        // Through all of it, the studio went on: the viewers got consecutive messages.
        for relay in &relays {
            for id in ids {
                let n = lobby(&relay.addr, id).await.expect("listed")["n"]
                    .as_u64()
                    .expect("n");
                wait_relayed(&relay.addr, id, n + 2).await;
            }
        }
        sleep(Duration::from_millis(500)).await;
        for (id, v) in &viewers {
            assert!(
                v.assert_consecutive(id) >= 2,
                "{id}: the viewer got messages"
            );
        }
        for t in tables {
            assert!(t.terminate(), "a table stops cleanly");
        }
    })
    .await
    .expect("bounded");
}
