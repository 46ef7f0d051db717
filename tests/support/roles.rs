//! How the tests start a studio relay and floor on loopback (any free port): the
//! arguments, as `croupier relay` and `croupier floor` take them.
#![allow(dead_code)]

/// `croupier relay` on broker `nats` serving the tables pinned in the keys file `keys`.
pub fn relay<'a>(nats: &'a str, keys: &'a str) -> [&'a str; 7] {
    let bind = "127.0.0.1:0";
    [
        "relay",
        "--nats",
        nats,
        "--bind",
        bind,
        "--table-keys",
        keys,
    ]
}

/// `croupier floor` on broker `nats` and database `db`, taking the tables pinned in the
/// keys file `keys`, with its pit page and `/metrics`.
pub fn floor<'a>(nats: &'a str, db: &'a str, keys: &'a str) -> Vec<&'a str> {
    let mut args = floor_unbound(nats, db, keys);
    args.extend(["--bind", "127.0.0.1:0"]);
    args
}

/// [`floor`] without its pit page and `/metrics`: the ingest alone.
pub fn floor_unbound<'a>(nats: &'a str, db: &'a str, keys: &'a str) -> Vec<&'a str> {
    vec![
        "floor",
        "--nats",
        nats,
        "--database",
        db,
        "--table-keys",
        keys,
    ]
}

/// What a relay and a floor need: a broker with its own port and store, a fresh floor
/// database, a temporary directory for their files.
pub struct Needs {
    /// Files and logs.
    pub dir: tempfile::TempDir,
    /// The broker (started).
    pub broker: super::nats::Nats,
    /// The floor's database.
    pub db: super::pg::TestDb,
}

/// [`Needs`], or `None` (skipped locally, failing under CI) without nats-server or
/// PostgreSQL.
pub async fn needs() -> Option<Needs> {
    let bin = super::nats::nats_server()?;
    let db = super::pg::fresh().await?;
    let dir = tempfile::tempdir().expect("tmp");
    let broker = super::nats::Nats::start(&bin, dir.path());
    Some(Needs { dir, broker, db })
}
