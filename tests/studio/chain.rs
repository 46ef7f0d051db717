//! The publisher's chains (`publish::chain`) against a real nats-server: messages sent
//! without a reply, confirmed by their last one sent again with a reply. A message "lost"
//! here is one sent to another server: this one never saw it, as after a dropped
//! connection.

use super::*;
use croupier::publish::chain::{Chain, ChainError};

const SUBJECT: &str = "chain.t.log";

async fn last_seq(js: &async_nats::jetstream::Context) -> u64 {
    let mut stream = js.get_stream("CHAIN").await.expect("the stream");
    stream.info().await.expect("info").state.last_sequence
}

fn headers() -> async_nats::HeaderMap {
    let mut h = async_nats::HeaderMap::new();
    h.insert("Croupier-Table", "t");
    h
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_is_confirmed_by_its_last_message_and_a_hole_is_refused() {
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a).expect("dir");
    std::fs::create_dir_all(&b).expect("dir");
    let (server, elsewhere) = (Nats::start(&bin, &a), Nats::start(&bin, &b));
    let client = async_nats::connect(server.url()).await.expect("connect");
    let lost = async_nats::connect(elsewhere.url()).await.expect("connect");
    let js = async_nats::jetstream::new(client.clone());
    js.create_stream(async_nats::jetstream::stream::Config {
        name: "CHAIN".into(),
        subjects: vec![SUBJECT.into()],
        ..Default::default()
    })
    .await
    .expect("the stream");

    // Sent without a reply: nothing is answered; the confirmation stores nothing twice.
    let mut chain = Chain::default();
    for seq in 1..=3u64 {
        let text = format!("row {seq}");
        chain
            .send(&client, SUBJECT, headers(), format!("t:{seq}"), text, seq)
            .await
            .expect("sent");
    }
    assert_eq!(chain.unconfirmed(), 3);
    assert_eq!(chain.confirm(&js).await.expect("confirmed"), 3);
    assert_eq!(chain.unconfirmed(), 0);
    assert_eq!(
        last_seq(&js).await,
        3,
        "the last one is a duplicate, not stored again"
    );
    assert_eq!(chain.confirm(&js).await.expect("nothing to confirm"), 0);

    // The last message lost: the confirmation stores it, in its place.
    chain
        .send(&lost, SUBJECT, headers(), "t:4".into(), "row 4".into(), 4)
        .await
        .expect("sent");
    assert_eq!(last_seq(&js).await, 3, "this server never saw it");
    assert_eq!(chain.confirm(&js).await.expect("confirmed"), 1);
    assert_eq!(last_seq(&js).await, 4);
    let stored = js
        .get_stream("CHAIN")
        .await
        .expect("stream")
        .get_raw_message(4)
        .await
        .expect("row 4");
    assert_eq!(&stored.payload[..], b"row 4");

    // A message lost in the middle: every later one is refused, and the confirmation
    // says so.
    chain
        .send(&lost, SUBJECT, headers(), "t:5".into(), "row 5".into(), 5)
        .await
        .expect("sent");
    chain
        .send(&client, SUBJECT, headers(), "t:6".into(), "row 6".into(), 6)
        .await
        .expect("sent");
    match chain.confirm(&js).await {
        Err(ChainError::Hole(why)) => assert!(why.contains(SUBJECT), "{why}"),
        other => panic!("a hole must be refused, got {other:?}"),
    }
    assert_eq!(last_seq(&js).await, 4, "nothing stored after the hole");

    // A foreign message between two of a new chain's: refused likewise.
    let mut chain = Chain::default();
    chain
        .send(&client, SUBJECT, headers(), "t:5".into(), "row 5".into(), 5)
        .await
        .expect("sent");
    js.publish(SUBJECT, "foreign".into())
        .await
        .expect("published")
        .await
        .expect("stored");
    chain
        .send(&client, SUBJECT, headers(), "t:6".into(), "row 6".into(), 6)
        .await
        .expect("sent");
    assert!(matches!(chain.confirm(&js).await, Err(ChainError::Hole(_))));
    assert_eq!(
        last_seq(&js).await,
        6,
        "row 5 and the foreign message, not row 6"
    );
}
