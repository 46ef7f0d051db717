//! Issue #59: on the configuration `croupier studio nats-config` generates, no party can
//! land a message in another table's streams — not by pointing the answers to its own
//! JetStream requests at the table's subjects, not by publishing on them, not by a push
//! consumer delivering into them. Each party uses whichever JetStream API prefix answers
//! it (the generated accounts' `$JS.STUDIO.API`, or `$JS.API` on a single account), so
//! the same attack runs against any configuration.

use super::*;
use async_nats::jetstream::Context;

/// The table whose streams are attacked, and the subjects its streams capture.
const VICTIM: &str = "t2";
const TARGETS: [&str; 3] = [
    "croupier.t2.log",
    "croupier.t2.public",
    "$KV.croupier_tables.t2",
];
const FLOOD: usize = 10_000;
/// The JetStream API prefixes a party may have: the studio's (the generated accounts),
/// or JetStream's own (one account).
const PARTY_APIS: [&str; 2] = ["$JS.STUDIO.API", "$JS.API"];

/// The victim's streams (the bucket's stream is every table's, and nothing else writes to
/// it during the test).
const STREAMS: [&str; 3] = [
    "CROUPIER_LOG_t2",
    "CROUPIER_PUBLIC_t2",
    "KV_croupier_tables",
];

/// The last sequence of each of the victim's streams (every message stored moves it),
/// and its consumers.
async fn held(admin: &Context) -> Vec<(u64, usize)> {
    let mut out = Vec::new();
    for name in STREAMS {
        let mut stream = admin.get_stream(name).await.expect("the victim's stream");
        let state = &stream.info().await.expect("info").state;
        out.push((state.last_sequence, state.consumer_count));
    }
    out
}

/// What landed in the victim's streams since `before`, stream by stream — messages, and
/// consumers made on them —; `before` becomes now.
async fn landed(
    admin: &Context,
    before: &mut Vec<(u64, usize)>,
) -> Vec<(&'static str, u64, usize)> {
    let now = held(admin).await;
    let out = STREAMS
        .iter()
        .zip(now.iter().zip(before.iter()))
        .filter(|(_, (n, b))| n != b)
        .map(|(s, (n, b))| (*s, n.0.saturating_sub(b.0), n.1.saturating_sub(b.1)))
        .collect();
    *before = now;
    out
}

/// The first of `apis` (JetStream API prefixes) under which `client` gets an answer to
/// `request` (after the prefix).
async fn api_of(client: &async_nats::Client, request: &str, apis: &[&'static str]) -> &'static str {
    for api in apis.iter().copied() {
        if let Ok(m) = client.request(format!("{api}.{request}"), "".into()).await {
            if !m.payload.is_empty() && !String::from_utf8_lossy(&m.payload).contains("not enabled")
            {
                return api;
            }
        }
    }
    panic!("no JetStream API answers {request}");
}

/// `FLOOD` requests on `subject` whose answers are pointed at the victim's subjects, in
/// rounds, each round closed by a request answered on the sender's own inbox: the
/// broker answers one party's requests in order, so once the last control is answered,
/// every answer of the flood has been sent wherever it was pointed.
async fn flood_requests(client: &async_nats::Client, subject: &str) {
    let round = 500;
    for start in (0..FLOOD).step_by(round) {
        for i in start..(start + round).min(FLOOD) {
            client
                .publish_with_reply(subject.to_string(), TARGETS[i % 3], "".into())
                .await
                .expect("sent");
        }
        // Its own minute, not the party's 1.5 s (short so that refused requests fail
        // fast): behind 500 requests a loaded broker (two suites and a build beside it)
        // once took longer.
        let control = async_nats::Request::new().timeout(Some(Duration::from_secs(60)));
        client
            .send_request(subject.to_string(), control)
            .await
            .unwrap_or_else(|e| panic!("the control request on {subject} is answered: {e}"));
    }
}

/// `FLOOD` publications on the victim's subjects (every one outside the party's grants).
async fn flood_publishes(client: &async_nats::Client) {
    for i in 0..FLOOD {
        client
            .publish(TARGETS[i % 3], "{\"forged\":true}".into())
            .await
            .expect("sent");
    }
    client.flush().await.expect("flush");
}

/// A broker on the configuration `croupier studio nats-config` generates for `tables`,
/// under `dir`: the studio directory, the broker's URL, the broker.
fn generated(bin: &Path, dir: &Path, tables: &str) -> (PathBuf, String, Broker) {
    generated_with(bin, dir, tables, &[])
}

/// [`generated`], with more arguments to `nats-config`.
fn generated_with(
    bin: &Path,
    dir: &Path,
    tables: &str,
    more: &[&str],
) -> (PathBuf, String, Broker) {
    let (studio, port) = nats::generated_config(dir, tables, more);
    let conf = studio.join("nats-server.conf");
    let broker = Broker::start(bin, &conf, port, &dir.join("nats.log"));
    (studio, format!("nats://127.0.0.1:{port}"), broker)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_party_lands_a_message_in_another_tables_streams() {
    timeout(Duration::from_secs(600), async {
        let Some(bin) = nats::nats_server() else {
            return;
        };
        let tmp = tempfile::tempdir().expect("tempdir");
        let (studio, url, _broker) = generated(&bin, tmp.path(), "t1,t2");
        let studio_s = studio.display().to_string();
        croupier(&["studio", "provision", "--dir", &studio_s, "--nats", &url]);
        let admin = party(&url, &studio, "admin", "_INBOX.admin", None).await;
        let admin_js = jetstream::new(admin.clone());
        // Messages in every stream of both tables (the admin writes them as the tables
        // would), for the relays' consumers to deliver.
        for id in ["t1", "t2"] {
            for subject in [
                format!("croupier.{id}.public"),
                format!("croupier.{id}.log"),
                format!("$KV.croupier_tables.{id}"),
            ] {
                for _ in 0..3 {
                    admin_js
                        .publish(subject.clone(), "{\"table's\":true}".into())
                        .await
                        .expect("sent")
                        .await
                        .expect("stored");
                }
            }
        }
        let mut at = held(&admin_js).await;
        // Per party and route, what landed in t2's streams.
        let mut tally = Vec::new();

        // Another table's credential, the relays' and the floor's: each points the answers
        // to FLOOD of its own JetStream requests at t2's subjects, and publishes FLOOD
        // times on them.
        for (name, inbox, request) in [
            (
                "table-t1",
                "_INBOX.table.t1",
                "STREAM.INFO.CROUPIER_PUBLIC_t1",
            ),
            ("relay", "_INBOX.relay", "STREAM.INFO.CROUPIER_PUBLIC_t1"),
            ("floor", "_INBOX.floor", "STREAM.NAMES"),
        ] {
            let client = party(&url, &studio, name, inbox, None).await;
            let api = api_of(&client, request, &PARTY_APIS).await;
            flood_requests(&client, &format!("{api}.{request}")).await;
            tally.push((
                format!("{name}: answers to {FLOOD} requests on {api}.{request}"),
                landed(&admin_js, &mut at).await,
            ));
            flood_publishes(&client).await;
            tally.push((
                format!("{name}: {FLOOD} publications"),
                landed(&admin_js, &mut at).await,
            ));
        }

        // The relays may create consumers on what they read: push consumers delivering
        // into t2's subjects, beside a control delivering into the relay's own inbox.
        let relay = party(&url, &studio, "relay", "_INBOX.relay", None).await;
        let api = api_of(&relay, "STREAM.INFO.CROUPIER_PUBLIC_t1", &PARTY_APIS).await;
        let relay_js = jetstream::with_prefix(relay.clone(), api);
        // What the relay reads, as the admin reaches it.
        let relays_api = api_of(
            &admin,
            "STREAM.INFO.CROUPIER_PUBLIC_t1",
            &["$JS.RELAY.API", "$JS.API"],
        )
        .await;
        let admin_relays = jetstream::with_prefix(admin.clone(), relays_api);
        for stream in ["CROUPIER_PUBLIC_t1", "KV_croupier_tables"] {
            // What the relay reads holds the admin's messages (a mirror follows its
            // origin).
            let mut origin = admin_js.get_stream(stream).await.expect("the origin");
            let last = origin.info().await.expect("info").state.last_sequence;
            let started = Instant::now();
            let count = loop {
                let mut s = relay_js
                    .get_stream(stream)
                    .await
                    .expect("the relay reads it");
                let state = s.info().await.expect("info").state.clone();
                if state.last_sequence >= last {
                    break state.messages;
                }
                assert!(
                    started.elapsed() < Duration::from_secs(60),
                    "{stream} as the relay reads it reaches {last}: {state:?}"
                );
                sleep(Duration::from_millis(100)).await;
            };
            let handle = relay_js.get_stream_no_info(stream).await.expect("handle");
            let push = |deliver: &str| consumer::push::Config {
                deliver_subject: deliver.to_string(),
                deliver_policy: consumer::DeliverPolicy::All,
                ack_policy: consumer::AckPolicy::None,
                ..Default::default()
            };
            let mut injectors = Vec::new();
            // And into the studio's consumer creation, which the relays' account imports
            // for its mirrors alone: each delivery a request to make a consumer on t2's
            // public stream.
            let create = "$JS.STUDIO.API.CONSUMER.CREATE.CROUPIER_PUBLIC_t2";
            for target in TARGETS.into_iter().chain([create]) {
                // Where the stream captures the subject itself, the broker refuses the
                // consumer (a cycle); the others are the relay's to make.
                if let Ok(c) = handle.create_consumer(push(target)).await {
                    injectors.push(c.cached_info().name.clone());
                }
            }
            if stream == "CROUPIER_PUBLIC_t1" {
                assert_eq!(injectors.len(), 4, "the relay may create push consumers");
            }
            let control = relay
                .subscribe(format!("_INBOX.relay.control.{stream}"))
                .await
                .expect("subscribe");
            let _control_consumer = handle
                .create_consumer(push(&format!("_INBOX.relay.control.{stream}")))
                .await
                .expect("the control consumer");
            // The control gets every message: push consumers on it deliver.
            let mut control = control;
            let mut got = 0;
            while got < count {
                timeout(Duration::from_secs(60), control.next())
                    .await
                    .expect("the control consumer delivers")
                    .expect("a message");
                got += 1;
            }
            // Each injector has delivered what it will: all of the stream, or, where its
            // subject has no subscriber in the relay's account, nothing at all (checked
            // for as long as the control took, and at least a second).
            let started = Instant::now();
            let settle = Duration::from_secs(1);
            loop {
                let mut done = true;
                for name in &injectors {
                    let info = admin_relays
                        .get_stream_no_info(stream)
                        .await
                        .expect("handle")
                        .consumer_info(name)
                        .await
                        .expect("consumer info");
                    done &= info.delivered.stream_sequence >= last;
                }
                if done || started.elapsed() > settle {
                    break;
                }
                sleep(Duration::from_millis(100)).await;
            }
            tally.push((
                format!("relay: push consumers on {stream}"),
                landed(&admin_js, &mut at).await,
            ));
            // Through the mirrors' own import of the studio's API: refused.
            let studio_js = jetstream::with_prefix(relay.clone(), "$JS.STUDIO.API");
            assert!(
                studio_js
                    .get_stream_no_info("CROUPIER_PUBLIC_t1")
                    .await
                    .expect("handle")
                    .create_consumer(push("croupier.t2.log"))
                    .await
                    .is_err(),
                "the relay makes a consumer on the studio's own stream"
            );
        }

        tally.push(("at the end".into(), landed(&admin_js, &mut at).await));
        assert!(
            tally.iter().all(|(_, l)| l.is_empty()),
            "messages landed in {VICTIM}'s streams: {tally:#?}"
        );
    })
    .await
    .expect("bounded");
}

/// Publishes, as the admin, a chain of `len` messages on `subject` the way a table
/// publishes a batch: the first conditional on the stream's last sequence, each later one
/// on the id of the one before it.
async fn chain(admin: &Context, subject: &str, first: u64, len: u64) {
    let mut prev: Option<String> = None;
    for seq in first..first + len {
        let id = format!("m{seq}");
        let message = async_nats::jetstream::message::PublishMessage::build()
            .payload(format!("{{\"n\":{seq}}}").into())
            .message_id(id.as_str());
        let message = match prev.replace(id) {
            Some(p) => message.expected_last_message_id(p),
            None => message.expected_last_sequence(first - 1),
        };
        admin
            .send_publish(subject.to_string(), message)
            .await
            .expect("sent")
            .await
            .expect("stored");
    }
}

/// Waits until `stream` (as `js` reaches it) holds messages up to `last`; returns its
/// first sequence and message count.
async fn mirrored(js: &Context, stream: &str, last: u64) -> (u64, u64) {
    let started = Instant::now();
    loop {
        let state = js
            .get_stream(stream)
            .await
            .expect("the mirror")
            .cached_info()
            .state
            .clone();
        if state.last_sequence >= last {
            return (state.first_sequence, state.messages);
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{stream}'s mirror reaches {last}: {state:?}"
        );
        sleep(Duration::from_millis(100)).await;
    }
}

/// nats-server 2.9 stores a mirrored message through a publication's checks: a mirror
/// that starts in the middle of a table's chain of messages refuses the rest of it, and
/// every later message, for good. `provision` starts a mirror where a chain starts, and
/// makes again one that does not follow its origin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provision_starts_mirrors_where_a_chain_starts_and_remakes_a_stuck_one() {
    timeout(Duration::from_secs(300), async {
        let Some(bin) = nats::nats_server() else {
            return;
        };
        let tmp = tempfile::tempdir().expect("tempdir");
        let (studio, url, _broker) = generated(&bin, tmp.path(), "t1");
        let studio_s = studio.display().to_string();
        let admin = party(&url, &studio, "admin", "_INBOX.admin", None).await;
        let js = jetstream::new(admin.clone());
        let relays = jetstream::with_prefix(admin.clone(), croupier::studio::grants::RELAY_API);
        // t1's public stream keeps its last 4 messages here, so that it begins in the
        // middle of a chain: 1-5, then 6-7.
        let mut config = croupier::broker::streams::StreamNames::default().public("t1");
        config.max_messages = 4;
        js.create_stream(config).await.expect("t1's public stream");
        chain(&js, "croupier.t1.public", 1, 5).await;
        chain(&js, "croupier.t1.public", 6, 2).await;
        let out = croupier(&["studio", "provision", "--dir", &studio_s, "--nats", &url]);
        assert!(
            out.contains("CROUPIER_PUBLIC_t1: exists")
                && out.contains("CROUPIER_PUBLIC_t1 (the relays' mirror): created"),
            "{out}"
        );
        // The origin holds 4-7, 4 and 5 in the middle of a chain: the mirror starts at 6.
        assert_eq!(mirrored(&relays, "CROUPIER_PUBLIC_t1", 7).await, (6, 2));
        chain(&js, "croupier.t1.public", 8, 3).await;
        assert_eq!(mirrored(&relays, "CROUPIER_PUBLIC_t1", 10).await, (6, 5));
        for seq in 6..=10 {
            let m = relays
                .get_stream_no_info("CROUPIER_PUBLIC_t1")
                .await
                .expect("handle")
                .get_raw_message(seq)
                .await
                .expect("a mirrored message");
            assert_eq!(
                m.payload,
                format!("{{\"n\":{seq}}}"),
                "the origin's sequence numbers"
            );
        }

        // A mirror started in the middle of a chain (at 9, which names 8: the chain of
        // 8-10) takes nothing, ever.
        relays
            .delete_stream("CROUPIER_PUBLIC_t1")
            .await
            .expect("deleted");
        let origin = js
            .get_stream("CROUPIER_PUBLIC_t1")
            .await
            .expect("origin")
            .cached_info()
            .config
            .clone();
        relays
            .create_stream(croupier::studio::provision::mirror_config(&origin, Some(9)))
            .await
            .expect("a mirror from 9");
        chain(&js, "croupier.t1.public", 11, 2).await;
        // The next provision finds it not following, and makes it again from the first
        // chain the origin (9-12) holds from its start: 11-12.
        let out = croupier(&["studio", "provision", "--dir", &studio_s, "--nats", &url]);
        assert!(
            out.contains("CROUPIER_PUBLIC_t1 (the relays' mirror): remade"),
            "{out}"
        );
        assert!(
            out.contains("KV_croupier_tables (the relays' mirror): exists"),
            "{out}"
        );
        assert_eq!(mirrored(&relays, "CROUPIER_PUBLIC_t1", 12).await, (11, 2));
    })
    .await
    .expect("bounded");
}

/// `nats-config --no-relay-mirrors`: the relays read the studio's streams through their
/// account's imports (`--js-api-prefix`), and serve a table's viewers as on mirrors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_mirrors_the_relays_read_the_studios_streams() {
    timeout(Duration::from_secs(240), async {
        let Some(bin) = nats::nats_server() else {
            return;
        };
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        let (studio, url, _broker) = generated_with(&bin, dir, "t1", &["--no-relay-mirrors"]);
        let studio_s = studio.display().to_string();
        let out = croupier(&["studio", "provision", "--dir", &studio_s, "--nats", &url]);
        assert!(!out.contains("mirror"), "no mirror is made: {out}");
        let publish = format!(
            "credentials = {:?}\njs_api_prefix = \"$JS.STUDIO.API\"\n",
            croupier::studio::credential_path(&studio, "table-t1")
                .display()
                .to_string(),
        );
        let cfg = table_config(dir, "t1", &url, &publish);
        let table = announced(proc::spawn_raw(&cfg, &dir.join("t1.log"))).await;
        let keys = dir.join("table-keys.toml");
        studio_table::pin_keys(&keys, [("t1", dir.join("t1.db").as_path())]);
        let mut args = relay_args(&url, &keys);
        args.extend([
            "--credentials".into(),
            croupier::studio::credential_path(&studio, "relay")
                .display()
                .to_string(),
            "--js-api-prefix".into(),
            "$JS.STUDIO.API".into(),
        ]);
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let relay = announced(spawn_args(&args, &dir.join("relay.log"))).await;
        let n = wait_relayed(&relay.addr, "t1", 3).await;
        let viewer = Viewer::connect(&relay.addr, "t1", None).await;
        wait_relayed(&relay.addr, "t1", n + 5).await;
        sleep(Duration::from_millis(300)).await;
        assert!(viewer.assert_consecutive("t1") >= 2, "the viewer is served");
        let (status, ready) = get(&relay.addr, "/readyz").await;
        assert_eq!(status, 200, "{ready}");
        assert!(table.terminate(), "the table stops cleanly");
    })
    .await
    .expect("bounded");
}

/// The floor's dispute commands reach a table through the table's export, and its answer
/// comes back; no other party reaches a table's floor subject.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_reaches_each_tables_floor_subject_and_no_one_else_does() {
    timeout(Duration::from_secs(120), async {
        let Some(bin) = nats::nats_server() else {
            return;
        };
        let tmp = tempfile::tempdir().expect("tempdir");
        let (studio, url, _broker) = generated(&bin, tmp.path(), "t1,t2");
        let t1 = party(&url, &studio, "table-t1", "_INBOX.table.t1", None).await;
        let mut commands = t1.subscribe("croupier.t1.floor").await.expect("subscribe");
        let (seen, mut heard) = tokio::sync::mpsc::unbounded_channel();
        let answering = {
            let t1 = t1.clone();
            tokio::spawn(async move {
                while let Some(m) = commands.next().await {
                    let _ = seen.send(String::from_utf8_lossy(&m.payload).into_owned());
                    if let Some(reply) = m.reply {
                        t1.publish(reply, "answered".into()).await.expect("answer");
                        t1.flush().await.expect("flush");
                    }
                }
            })
        };
        t1.flush().await.expect("flush");
        let floor = party(&url, &studio, "floor", "_INBOX.floor", None).await;
        let answer = floor
            .request("croupier.t1.floor", "from the floor".into())
            .await
            .expect("the table answers the floor");
        assert_eq!(answer.payload, "answered");
        // Each of these waits out its request's timeout: anything it sent has arrived.
        for (name, inbox) in [("table-t2", "_INBOX.table.t2"), ("relay", "_INBOX.relay")] {
            let other = party(&url, &studio, name, inbox, None).await;
            assert!(
                other
                    .request("croupier.t1.floor", format!("from {name}").into())
                    .await
                    .is_err(),
                "{name} reaches t1's floor subject"
            );
        }
        let mut got = Vec::new();
        while let Ok(m) = heard.try_recv() {
            got.push(m);
        }
        assert_eq!(got, vec!["from the floor".to_string()]);
        answering.abort();
    })
    .await
    .expect("bounded");
}
