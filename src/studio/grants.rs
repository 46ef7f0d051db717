//! What each party of the studio may do on the broker, subject by subject. Every grant is
//! a whole-token subject for one table's own streams (NATS wildcards match whole tokens:
//! `CROUPIER_LOG_*` matches nothing), and nobody but the admin holds `$JS.API.>`.
//!
//! | party | may | may not |
//! |---|---|---|
//! | table `T` | publish its two subjects and its bucket key; read its own streams' and the bucket's description and its own streams' messages; receive on its private inbox and its floor subject; answer the floor's requests | create, change, delete or purge any stream; touch another table's anything |
//! | relays | read every table's public stream (an ordered consumer each) and the bucket (a watch, each table's last value); receive on `_INBOX.relay` | read any log stream; subscribe to any other inbox; delete or change any consumer or stream |
//! | floor | list stream names; its durable consumer on each table's log stream (made by `provision`: read, fetch, acknowledge); read the bucket's values; send floor commands; receive on `_INBOX.floor` | anything of the public streams; create consumers, or create or change streams |
//! | admin | everything (provisioning, operations) | — |

use crate::broker::streams::StreamNames;
use crate::broker::subjects;

/// One party's permissions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grants {
    /// Subjects it may publish to.
    pub publish: Vec<String>,
    /// Subjects it may subscribe to.
    pub subscribe: Vec<String>,
    /// Whether it may answer requests it received (the table answers the floor).
    pub allow_responses: bool,
}

const API: &str = "$JS.API";

/// Table `id`'s grants.
pub fn table(names: &StreamNames, id: &str) -> Grants {
    let public = subjects::stream(&names.public_stream, id);
    let log = subjects::stream(&names.log_stream, id);
    let bucket = format!("KV_{}", names.bucket);
    Grants {
        publish: vec![
            subjects::public(id),
            subjects::log(id),
            subjects::bucket_key(&names.bucket, id),
            format!("{API}.STREAM.INFO.{public}"),
            format!("{API}.STREAM.INFO.{log}"),
            format!("{API}.STREAM.INFO.{bucket}"),
            format!("{API}.STREAM.MSG.GET.{public}"),
            format!("{API}.STREAM.MSG.GET.{log}"),
        ],
        subscribe: vec![
            format!("{}.>", crate::broker::connect::table_inbox(id)),
            crate::publish::floor_commands::subject(id),
        ],
        allow_responses: true,
    }
}

/// The relays' grants, for `tables`.
pub fn relay(names: &StreamNames, tables: &[String]) -> Grants {
    let bucket = format!("KV_{}", names.bucket);
    let mut publish = vec![
        format!("{API}.STREAM.INFO.{bucket}"),
        format!("{API}.CONSUMER.CREATE.{bucket}"),
        format!("{API}.CONSUMER.CREATE.{bucket}.>"),
        // The bucket's watch is a push consumer with flow control.
        format!("$JS.FC.{bucket}.>"),
    ];
    for id in tables {
        let public = subjects::stream(&names.public_stream, id);
        publish.extend([
            format!("{API}.STREAM.INFO.{public}"),
            format!("{API}.CONSUMER.CREATE.{public}"),
            format!("{API}.CONSUMER.CREATE.{public}.>"),
            format!("{API}.CONSUMER.MSG.NEXT.{public}.*"),
            format!("{API}.STREAM.MSG.GET.{public}"),
            format!(
                "{API}.DIRECT.GET.{bucket}.{}",
                subjects::bucket_key(&names.bucket, id)
            ),
        ]);
    }
    Grants {
        publish,
        subscribe: vec![format!("{}.>", crate::broker::connect::RELAY_INBOX)],
        allow_responses: false,
    }
}

/// The floor's grants, for `tables`, with its durable consumer's name.
pub fn floor(names: &StreamNames, tables: &[String], consumer: &str) -> Grants {
    let bucket = format!("KV_{}", names.bucket);
    let mut publish = vec![
        format!("{API}.STREAM.NAMES"),
        format!("{API}.STREAM.INFO.{bucket}"),
    ];
    for id in tables {
        let log = subjects::stream(&names.log_stream, id);
        publish.extend([
            format!("{API}.STREAM.INFO.{log}"),
            format!("{API}.STREAM.MSG.GET.{log}"),
            // Its consumer is made by `croupier studio provision`: a party that may create
            // consumers may create push consumers, which deliver wherever they are told.
            format!("{API}.CONSUMER.INFO.{log}.{consumer}"),
            format!("{API}.CONSUMER.MSG.NEXT.{log}.{consumer}"),
            format!("$JS.ACK.{log}.{consumer}.>"),
            format!(
                "{API}.DIRECT.GET.{bucket}.{}",
                subjects::bucket_key(&names.bucket, id)
            ),
            crate::publish::floor_commands::subject(id),
        ]);
    }
    Grants {
        publish,
        subscribe: vec![format!("{}.>", crate::broker::connect::FLOOR_INBOX)],
        allow_responses: false,
    }
}

/// The admin's grants: everything.
pub fn admin() -> Grants {
    Grants {
        publish: vec![">".into()],
        subscribe: vec![">".into()],
        allow_responses: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_party_but_the_admin_holds_a_partial_token_or_the_whole_api() {
        let names = StreamNames::default();
        let tables = vec!["t1".to_string(), "t-2".to_string()];
        for g in [
            table(&names, "t1"),
            relay(&names, &tables),
            floor(&names, &tables, "croupier_floor"),
        ] {
            for s in g.publish.iter().chain(&g.subscribe) {
                assert!(
                    s.split('.')
                        .all(|t| t == "*" || t == ">" || !t.contains(['*', '>'])),
                    "{s}: a wildcard inside a token matches nothing"
                );
                assert!(!s.starts_with("$JS.API.>") && s != ">", "{s}");
                assert!(!s.starts_with("_INBOX.>"), "{s}: every inbox");
            }
        }
        let relay = relay(&names, &tables);
        assert!(
            relay.publish.iter().all(|s| !s.contains("CROUPIER_LOG")),
            "a relay touches no log stream"
        );
        assert!(relay
            .publish
            .iter()
            .all(|s| !s.contains("DELETE") && !s.contains("UPDATE") && !s.contains("PURGE")));
        let t1 = table(&names, "t1");
        assert!(t1.publish.iter().all(|s| !s.contains("t-2")), "{t1:?}");
        assert!(t1.publish.iter().all(|s| !s.contains("CREATE")));
    }
}
