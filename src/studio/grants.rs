//! What each party of the studio may do on the broker, account by account and subject by
//! subject.
//!
//! Every party has a NATS account of its own (issue #59). A subject names something only
//! inside its account, so a party can reach another account's subjects only through what
//! that account exports to it by name, and a message a party's publication or request
//! causes — a JetStream answer sent to any reply subject it names — lands in the party's
//! own account, where no table's stream is. Grants inside one account could not stop that.
//!
//! | account | holds | imports | user |
//! |---|---|---|---|
//! | `STUDIO` | JetStream: every table's log and public streams, the bucket, the floor's consumers | `RELAY`'s JetStream API under [`RELAY_API`] (so `provision` makes the relays' mirrors) | the admin: everything |
//! | `TABLE_<id>`, one per table | nothing of its own | its two subjects and its bucket key, and the JetStream API requests on its own streams under [`STUDIO_API`]; exports its floor-command service to `FLOOR` | the table: publish its subjects and those requests; receive on its inbox and floor subject; answer the floor |
//! | `FLOOR` | nothing of its own | the stream names, its durable consumers (information, fetch, acknowledgement) and the log streams' messages, the bucket's values, under [`STUDIO_API`]; each table's floor-command service | the floor |
//! | `RELAY` | JetStream: a mirror of every public stream and of the bucket, made by `provision`, under the same names | what a mirror needs from `STUDIO` (its consumer's creation under [`STUDIO_API`], the deliveries, flow control), which no relay may publish to | the relays: read the mirrors only |
//!
//! Tables never share an account: an answer pointed at a table's own subject lands in its
//! own stream only. The relays read mirrors rather than the studio's streams because a
//! party that may create consumers may create push consumers, whose deliveries go to any
//! subject of the stream's account (nats-server checks a cycle only against the consumer's
//! own stream); a mirror captures no subject, so a delivery inside `RELAY` lands nowhere.
//! Within its account, every grant is a whole-token subject for the party's own streams
//! (NATS wildcards match whole tokens: `CROUPIER_LOG_*` matches nothing).

use crate::broker::streams::StreamNames;
use crate::broker::subjects;

/// The account holding the studio's streams (and the admin).
pub const STUDIO: &str = "STUDIO";
/// The relays' account: JetStream, mirrors of the public streams and the bucket.
pub const RELAY: &str = "RELAY";
/// The floor's account.
pub const FLOOR: &str = "FLOOR";

/// The JetStream API prefix under which the tables and the floor reach `STUDIO`'s streams
/// (`[publish] js_api_prefix`, `croupier floor --js-api-prefix`).
pub const STUDIO_API: &str = "$JS.STUDIO.API";
/// The JetStream API prefix under which the admin reaches `RELAY`'s mirrors.
pub const RELAY_API: &str = "$JS.RELAY.API";
/// The subjects a mirror's source consumer delivers to (`<prefix>.<stream>`): exported by
/// `STUDIO` to `RELAY` as a stream.
pub const MIRROR_DELIVERY: &str = "$CROUPIER.MIRROR";

/// Table `id`'s account.
pub fn table_account(id: &str) -> String {
    format!("TABLE_{id}")
}

/// One party's user permissions, inside its account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grants {
    /// Subjects it may publish to.
    pub publish: Vec<String>,
    /// Subjects it may not publish to, whatever `publish` allows.
    pub deny_publish: Vec<String>,
    /// Subjects it may subscribe to.
    pub subscribe: Vec<String>,
    /// Whether it may answer requests it received (the table answers the floor).
    pub allow_responses: bool,
}

/// What an import brings into the importing account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Requests (or publications) sent to the exporting account, answered back.
    Service,
    /// A service whose answer to one request is many messages (a consumer's fetch).
    StreamedService,
    /// Messages published in the exporting account, delivered here.
    Stream,
}

impl Kind {
    /// The word the server's configuration names it by.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Stream => "stream",
            Kind::Service | Kind::StreamedService => "service",
        }
    }
}

/// One import from another account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The exporting account.
    pub account: String,
    /// The subject as the exporting account names it.
    pub subject: String,
    /// The subject as the importing account names it, where it differs.
    pub to: Option<String>,
    /// Service or stream.
    pub kind: Kind,
}

impl Import {
    /// The subject in the importing account.
    pub fn local(&self) -> &str {
        self.to.as_deref().unwrap_or(&self.subject)
    }
}

/// A party: its account, whether that account has JetStream, what it imports, and its
/// user's grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Party {
    /// The account.
    pub account: String,
    /// Whether the account holds streams of its own.
    pub jetstream: bool,
    /// Its imports; every export follows from them (`exports`).
    pub imports: Vec<Import>,
    /// Its user's permissions.
    pub grants: Grants,
}

const API: &str = crate::broker::connect::DEFAULT_API;

/// A service import of `account`'s `subject`, under the same name.
fn service(account: &str, subject: String) -> Import {
    Import {
        account: account.into(),
        subject,
        to: None,
        kind: Kind::Service,
    }
}

/// A JetStream API request `STUDIO` answers (`what`: after `$JS.API.`), under
/// [`STUDIO_API`].
fn studio_api(what: String, kind: Kind) -> Import {
    Import {
        account: STUDIO.into(),
        subject: format!("{API}.{what}"),
        to: Some(format!("{STUDIO_API}.{what}")),
        kind,
    }
}

/// The subjects a party publishes to through its service imports.
fn requests(imports: &[Import]) -> Vec<String> {
    imports
        .iter()
        .filter(|i| i.kind != Kind::Stream)
        .map(|i| i.local().to_string())
        .collect()
}

fn bucket_stream(names: &StreamNames) -> String {
    format!("KV_{}", names.bucket)
}

/// Table `id`.
pub fn table(names: &StreamNames, id: &str) -> Party {
    let public = subjects::stream(&names.public_stream, id);
    let log = subjects::stream(&names.log_stream, id);
    let bucket = bucket_stream(names);
    let imports = vec![
        service(STUDIO, subjects::public(id)),
        service(STUDIO, subjects::log(id)),
        service(STUDIO, subjects::bucket_key(&names.bucket, id)),
        studio_api(format!("STREAM.INFO.{public}"), Kind::Service),
        studio_api(format!("STREAM.INFO.{log}"), Kind::Service),
        studio_api(format!("STREAM.INFO.{bucket}"), Kind::Service),
        studio_api(format!("STREAM.MSG.GET.{public}"), Kind::Service),
        studio_api(format!("STREAM.MSG.GET.{log}"), Kind::Service),
    ];
    Party {
        account: table_account(id),
        jetstream: false,
        grants: Grants {
            publish: requests(&imports),
            deny_publish: Vec::new(),
            subscribe: vec![
                format!("{}.>", crate::broker::connect::table_inbox(id)),
                crate::publish::floor_commands::subject(id),
            ],
            allow_responses: true,
        },
        imports,
    }
}

/// The relays, for `tables`. With `mirrors` (the default), their grants name their own
/// account's JetStream API — the mirrors `provision` makes there — and their imports are
/// the mirrors' own, which no relay may use. Without, they read the studio's streams
/// through imports under [`STUDIO_API`], as the tables do: cheaper on the broker (no
/// second copy), but a relay may then make push consumers on the studio's public streams
/// and the bucket, which deliver wherever in `STUDIO` it says — another table's streams
/// included.
pub fn relay(names: &StreamNames, tables: &[String], mirrors: bool) -> Party {
    let bucket = bucket_stream(names);
    // What a relay asks of the JetStream API (after the prefix), and whether the answer
    // is many messages.
    let mut asks = vec![
        (format!("STREAM.INFO.{bucket}"), Kind::Service),
        (format!("CONSUMER.CREATE.{bucket}"), Kind::Service),
        (format!("CONSUMER.CREATE.{bucket}.>"), Kind::Service),
    ];
    let mut read = vec![bucket.clone()];
    for id in tables {
        let public = subjects::stream(&names.public_stream, id);
        asks.extend([
            (format!("STREAM.INFO.{public}"), Kind::Service),
            (format!("CONSUMER.CREATE.{public}"), Kind::Service),
            (format!("CONSUMER.CREATE.{public}.>"), Kind::Service),
            (
                format!("CONSUMER.MSG.NEXT.{public}.*"),
                Kind::StreamedService,
            ),
            (format!("STREAM.MSG.GET.{public}"), Kind::Service),
            (
                format!(
                    "DIRECT.GET.{bucket}.{}",
                    subjects::bucket_key(&names.bucket, id)
                ),
                Kind::Service,
            ),
        ]);
        read.push(public);
    }
    // The bucket's watch is a push consumer with flow control.
    let flow_control = format!("$JS.FC.{bucket}.>");
    let subscribe = vec![format!("{}.>", crate::broker::connect::RELAY_INBOX)];
    if !mirrors {
        let mut imports: Vec<Import> = asks
            .into_iter()
            .map(|(what, kind)| studio_api(what, kind))
            .collect();
        imports.push(service(STUDIO, flow_control));
        // The watch's deliveries, sent in `STUDIO` to the relay's inbox.
        imports.push(Import {
            account: STUDIO.into(),
            subject: subscribe[0].clone(),
            to: None,
            kind: Kind::Stream,
        });
        return Party {
            account: RELAY.into(),
            jetstream: false,
            grants: Grants {
                publish: requests(&imports),
                deny_publish: Vec::new(),
                subscribe,
                allow_responses: false,
            },
            imports,
        };
    }
    let mut publish: Vec<String> = asks
        .into_iter()
        .map(|(what, _)| format!("{API}.{what}"))
        .collect();
    publish.push(flow_control);
    let mut imports = Vec::new();
    for stream in read {
        imports.extend([
            studio_api(format!("CONSUMER.CREATE.{stream}"), Kind::Service),
            Import {
                account: STUDIO.into(),
                subject: mirror_delivery(&stream) + ".>",
                to: None,
                kind: Kind::Stream,
            },
            service(STUDIO, format!("$JS.FC.{stream}.>")),
        ]);
    }
    Party {
        account: RELAY.into(),
        jetstream: true,
        imports,
        grants: Grants {
            publish,
            // Already outside `publish`; said again so that no edit of the list above can
            // let a relay make consumers on the studio's streams.
            deny_publish: vec![format!("{STUDIO_API}.>"), format!("{MIRROR_DELIVERY}.>")],
            subscribe,
            allow_responses: false,
        },
    }
}

/// Where the source consumer of `stream`'s mirror delivers (its deliver prefix).
pub fn mirror_delivery(stream: &str) -> String {
    format!("{MIRROR_DELIVERY}.{stream}")
}

/// The floor, for `tables`, with its durable consumer's name.
pub fn floor(names: &StreamNames, tables: &[String], consumer: &str) -> Party {
    let bucket = bucket_stream(names);
    let mut imports = vec![
        studio_api("STREAM.NAMES".into(), Kind::Service),
        studio_api(format!("STREAM.INFO.{bucket}"), Kind::Service),
    ];
    for id in tables {
        let log = subjects::stream(&names.log_stream, id);
        imports.extend([
            studio_api(format!("STREAM.INFO.{log}"), Kind::Service),
            studio_api(format!("STREAM.MSG.GET.{log}"), Kind::Service),
            // Its consumer is made by `croupier studio provision`: a party that may create
            // consumers may create push consumers, which deliver wherever they are told.
            studio_api(format!("CONSUMER.INFO.{log}.{consumer}"), Kind::Service),
            studio_api(
                format!("CONSUMER.MSG.NEXT.{log}.{consumer}"),
                Kind::StreamedService,
            ),
            service(STUDIO, format!("$JS.ACK.{log}.{consumer}.>")),
            studio_api(
                format!(
                    "DIRECT.GET.{bucket}.{}",
                    subjects::bucket_key(&names.bucket, id)
                ),
                Kind::Service,
            ),
            service(
                &table_account(id),
                crate::publish::floor_commands::subject(id),
            ),
        ]);
    }
    Party {
        account: FLOOR.into(),
        jetstream: false,
        grants: Grants {
            publish: requests(&imports),
            deny_publish: Vec::new(),
            subscribe: vec![format!("{}.>", crate::broker::connect::FLOOR_INBOX)],
            allow_responses: false,
        },
        imports,
    }
}

/// The admin: everything in `STUDIO`, and (with the relays' `mirrors`) `RELAY`'s
/// JetStream under [`RELAY_API`].
pub fn admin(mirrors: bool) -> Party {
    let imports = if mirrors {
        vec![Import {
            account: RELAY.into(),
            subject: format!("{API}.>"),
            to: Some(format!("{RELAY_API}.>")),
            kind: Kind::Service,
        }]
    } else {
        Vec::new()
    };
    Party {
        account: STUDIO.into(),
        jetstream: true,
        imports,
        grants: Grants {
            publish: vec![">".into()],
            deny_publish: Vec::new(),
            subscribe: vec![">".into()],
            allow_responses: false,
        },
    }
}

/// One export: `subject` of `account`, to exactly the accounts that import it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    /// The exporting account.
    pub account: String,
    /// The subject.
    pub subject: String,
    /// Service or stream.
    pub kind: Kind,
    /// The accounts that may import it.
    pub to: Vec<String>,
}

/// Every export the parties' imports need, each to those accounts alone, in the order the
/// imports name them.
pub fn exports(parties: &[Party]) -> Vec<Export> {
    let mut out: Vec<Export> = Vec::new();
    for p in parties {
        for i in &p.imports {
            match out
                .iter_mut()
                .find(|e| e.account == i.account && e.subject == i.subject && e.kind == i.kind)
            {
                Some(e) if e.to.contains(&p.account) => {}
                Some(e) => e.to.push(p.account.clone()),
                None => out.push(Export {
                    account: i.account.clone(),
                    subject: i.subject.clone(),
                    kind: i.kind,
                    to: vec![p.account.clone()],
                }),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parties(mirrors: bool) -> Vec<Party> {
        let names = StreamNames::default();
        let tables = vec!["t1".to_string(), "t-2".to_string()];
        vec![
            table(&names, "t1"),
            table(&names, "t-2"),
            relay(&names, &tables, mirrors),
            floor(&names, &tables, "croupier_floor"),
            admin(mirrors),
        ]
    }

    #[test]
    fn no_party_but_the_admin_holds_a_partial_token_or_the_whole_api() {
        let names = StreamNames::default();
        for mirrors in [true, false] {
            let parties = parties(mirrors);
            for p in parties.iter().filter(|p| p.account != STUDIO) {
                let g = &p.grants;
                for s in g.publish.iter().chain(&g.subscribe) {
                    assert!(
                        s.split('.')
                            .all(|t| t == "*" || t == ">" || !t.contains(['*', '>'])),
                        "{s}: a wildcard inside a token matches nothing"
                    );
                    assert!(
                        !s.starts_with("$JS.API.>")
                            && !s.starts_with("$JS.STUDIO.API.>")
                            && s != ">",
                        "{s}"
                    );
                    assert!(!s.starts_with("_INBOX.>"), "{s}: every inbox");
                }
            }
            assert_eq!(
                parties.iter().filter(|p| p.account == STUDIO).count(),
                1,
                "only the admin is in the studio's account"
            );
            let relay = &parties[2];
            assert_eq!(
                relay.jetstream, mirrors,
                "the mirrors are the relays' streams"
            );
            assert!(
                relay
                    .grants
                    .publish
                    .iter()
                    .all(|s| !s.contains("CROUPIER_LOG")),
                "a relay touches no log stream"
            );
            assert!(relay
                .imports
                .iter()
                .all(|i| !i.subject.contains("CROUPIER_LOG")));
            assert!(relay
                .grants
                .publish
                .iter()
                .all(|s| !s.contains("DELETE") && !s.contains("UPDATE") && !s.contains("PURGE")));
            let t1 = &parties[0];
            assert!(
                t1.grants.publish.iter().all(|s| !s.contains("t-2")),
                "{t1:?}"
            );
            assert!(
                t1.imports.iter().all(|i| !i.subject.contains("t-2")),
                "{t1:?}"
            );
            assert!(t1.grants.publish.iter().all(|s| !s.contains("CREATE")));
            assert!(parties[3]
                .grants
                .publish
                .iter()
                .all(|s| !s.contains("CREATE") && !s.contains(&names.public_stream)));
        }
        let relay = relay(&names, &["t1".to_string()], true);
        assert!(
            relay
                .grants
                .publish
                .iter()
                .all(|s| !s.starts_with(STUDIO_API) && !s.starts_with(MIRROR_DELIVERY)),
            "a relay cannot use the mirrors' imports"
        );
    }

    #[test]
    fn each_export_goes_to_its_importers_alone_and_tables_share_no_account() {
        let parties = parties(true);
        let accounts: std::collections::BTreeSet<_> =
            parties[..4].iter().map(|p| p.account.as_str()).collect();
        assert_eq!(accounts.len(), 4, "one account per table, relay and floor");
        let exports = exports(&parties);
        for p in &parties {
            for i in &p.imports {
                let e = exports
                    .iter()
                    .find(|e| e.account == i.account && e.subject == i.subject)
                    .expect("exported");
                assert!(e.to.contains(&p.account));
            }
        }
        let log = |id: &str| {
            exports
                .iter()
                .find(|e| e.subject == subjects::log(id))
                .expect("exported")
                .to
                .clone()
        };
        assert_eq!(log("t1"), vec!["TABLE_t1".to_string()]);
        assert_eq!(log("t-2"), vec!["TABLE_t-2".to_string()]);
        // The only things the studio's account exports as streams are the mirrors'
        // deliveries, to the relays.
        for e in exports.iter().filter(|e| e.kind == Kind::Stream) {
            assert_eq!(e.account, STUDIO);
            assert!(e.subject.starts_with(MIRROR_DELIVERY), "{e:?}");
            assert_eq!(e.to, vec![RELAY.to_string()]);
        }
        // Every service the floor fetches from streams its answers.
        let next = exports
            .iter()
            .find(|e| e.subject.contains("MSG.NEXT"))
            .expect("the floor's fetch");
        assert_eq!(next.kind, Kind::StreamedService);
    }
}
