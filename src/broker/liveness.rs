//! Leaving a broker node that stopped answering without a reset.
//!
//! The client calls a connection dead only after pings go unanswered, and it pings only
//! when it has sent nothing for a whole ping interval: a party that keeps asking (a
//! publisher starting pass after pass) never pings, and stays on a half-open link (a NAT
//! that lost the connection's state) while the cluster's other nodes are there. The
//! nemesis measured 28–31 s of that (`tests/it/nemesis.rs`). A pass that failed without a
//! single byte from the node is the sign: the party asks its client for another node.
//!
//! A party whose passes are not its own to count (the relay's and the floor's many
//! followers on one client) has [`watch`] instead: a healthy connection always hears
//! something within a ping interval or two (answers, heartbeats, or the server's `PONG`
//! to the ping the client sends when it has sent nothing), so one that heard nothing for
//! [`SILENT_FOR`] while the client calls it connected is left for another node. The soak
//! found the floor on a leader cut off from everyone, asking it for ever.
//!
//! The client's own reconnect can hang too: async-nats 0.46 bounds a connection's TCP
//! connect by its `connection_timeout` but not the server's greeting (`INFO`) after it,
//! so a node that accepts the connection and then says nothing holds the reconnect for
//! ever (the nemesis saw a table stuck so for the rest of the fault). When the client is
//! still not connected at the next silent pass, the party drops it for a new client,
//! whose first connection is bounded here. The new client tries first the nodes that
//! greet a probe ([`greeted_first`]): a random pick went back to the silent node one time
//! in three, and under load the short run in CI once saw `t2` miss three times in a row
//! (66 s to deliver again with the floor's node cut off, where the soak saw 7–30 s).

use super::connect::{connect_greeted_first, BrokerOptions, ConnectError};
use async_nats::connection::State;
use async_nats::Client;
use async_nats::ServerAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long a connected client may hear nothing at all before [`watch`] leaves its node:
/// three ping intervals (`connect::PING_INTERVAL`), while a healthy idle connection hears
/// the server's answer to a ping within one.
pub const SILENT_FOR: Duration = Duration::from_secs(6);

/// Watches `client` for as long as the process runs: a connection that heard nothing for
/// [`SILENT_FOR`] while connected is dropped for another node (`party` names it in the
/// log).
pub fn watch(client: Client, party: &'static str) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut last = heard(&client);
        let mut quiet_since = tokio::time::Instant::now();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let now = heard(&client);
            if now != last || client.connection_state() != State::Connected {
                last = now;
                quiet_since = tokio::time::Instant::now();
                continue;
            }
            if quiet_since.elapsed() >= SILENT_FOR {
                tracing::info!(
                    party,
                    "broker: the node sent nothing for {SILENT_FOR:?}; trying another node"
                );
                if let Err(e) = client.force_reconnect().await {
                    tracing::warn!(error = %e, "broker: cannot drop a silent connection");
                }
                quiet_since = tokio::time::Instant::now();
            }
        }
    })
}

/// How long a new client may take to be connected and greeted.
pub const CONNECT_DEADLINE: Duration = Duration::from_secs(5);

/// A party's client, watched for silence.
pub struct Watched {
    options: BrokerOptions,
    name: String,
    client: Client,
    heard: u64,
    asked_to_leave: bool,
}

/// What [`Watched::after_failure`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Remedy {
    /// The node answered something: nothing to do.
    None,
    /// The client was asked to leave its node for another.
    LeftNode,
    /// The client was replaced by a new one: contexts made from the old one are stale.
    NewClient,
}

impl Watched {
    /// Connects as `name` within [`CONNECT_DEADLINE`].
    pub async fn connect(options: &BrokerOptions, name: &str) -> Result<Watched, ConnectError> {
        let client = bounded_connect(options, name).await?;
        Ok(Watched {
            options: options.clone(),
            name: name.into(),
            heard: heard(&client),
            client,
            asked_to_leave: false,
        })
    }

    /// The client (clone it for a context).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// After a failed pass: if the node sent nothing at all since the last look, the
    /// client leaves it; if it had been asked to already and is still not connected, it
    /// is replaced (a new client's connection is tried here, within the deadline).
    pub async fn after_failure(&mut self) -> Remedy {
        let now = heard(&self.client);
        let silent = now == self.heard;
        self.heard = now;
        if !silent {
            self.asked_to_leave = false;
            return Remedy::None;
        }
        let stuck = self.asked_to_leave && self.client.connection_state() != State::Connected;
        if !stuck {
            if let Err(e) = self.client.force_reconnect().await {
                tracing::warn!(error = %e, "broker: cannot drop a silent connection");
            }
            self.asked_to_leave = true;
            return Remedy::LeftNode;
        }
        match bounded_connect(&self.options, &self.name).await {
            Ok(client) => {
                self.heard = heard(&client);
                self.client = client;
                self.asked_to_leave = false;
                Remedy::NewClient
            }
            Err(e) => {
                tracing::warn!(error = %e, "broker: no node answered a new connection");
                Remedy::None
            }
        }
    }
}

async fn bounded_connect(options: &BrokerOptions, name: &str) -> Result<Client, ConnectError> {
    tokio::time::timeout(CONNECT_DEADLINE, connect_greeted_first(options, name))
        .await
        .map_err(|_| ConnectError::Unanswered(CONNECT_DEADLINE))?
}

/// How long a node may take to greet a probe: well inside [`CONNECT_DEADLINE`].
pub const GREETING_DEADLINE: Duration = Duration::from_secs(2);

/// `addrs` with the nodes that greet a probe — a TCP connection on which the server's
/// `INFO` arrives within [`GREETING_DEADLINE`] — first, in a random order (the parties
/// spread over the nodes as the client's own pick spreads them), then the others in
/// theirs. The probes run together and are closed unused; a TLS node greets in the clear
/// as well (NATS sends `INFO` before the handshake).
pub async fn greeted_first(addrs: Vec<ServerAddr>) -> Vec<ServerAddr> {
    let probes = addrs.iter().map(|a| greets(a.host().to_string(), a.port()));
    let answers = futures::future::join_all(probes).await;
    let (mut greeted, silent): (Vec<_>, Vec<_>) = addrs
        .into_iter()
        .zip(answers)
        .partition(|(_, greeted)| *greeted);
    fastrand::shuffle(&mut greeted);
    greeted
        .into_iter()
        .chain(silent)
        .map(|(addr, _)| addr)
        .collect()
}

/// Whether the server at `host:port` greets a new connection in time.
async fn greets(host: String, port: u16) -> bool {
    use tokio::io::AsyncReadExt;
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
        let mut first = [0u8; 5];
        stream.read_exact(&mut first).await?;
        Ok::<bool, std::io::Error>(&first == b"INFO ")
    };
    matches!(
        tokio::time::timeout(GREETING_DEADLINE, probe).await,
        Ok(Ok(true))
    )
}

/// Bytes and messages received on the client's connections so far.
fn heard(client: &Client) -> u64 {
    let s = client.statistics();
    s.in_bytes
        .load(Ordering::Relaxed)
        .wrapping_add(s.in_messages.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// A listener that accepts and then greets (`Some(text)`) or says nothing.
    async fn node(greeting: Option<&'static [u8]>) -> (ServerAddr, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((mut stream, _)) = listener.accept().await {
                if let Some(text) = greeting {
                    let _ = stream.write_all(text).await;
                }
                held.push(stream);
            }
        });
        let addr = format!("nats://127.0.0.1:{port}").parse().expect("addr");
        (addr, task)
    }

    #[tokio::test]
    async fn nodes_that_greet_come_first_and_silent_or_closed_ones_last() {
        let (silent, a) = node(None).await;
        let (other, b) = node(Some(b"HELLO there\r\n")).await;
        let (greets, c) = node(Some(b"INFO {\"server_id\":\"x\"}\r\n")).await;
        let (also, d) = node(Some(b"INFO {}\r\n")).await;
        // A port nobody listens on: refused at once.
        let closed: ServerAddr = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            format!("nats://127.0.0.1:{}", l.local_addr().expect("addr").port())
                .parse()
                .expect("addr")
        };
        let given = vec![
            silent.clone(),
            closed.clone(),
            greets.clone(),
            other.clone(),
            also.clone(),
        ];
        let started = tokio::time::Instant::now();
        let ordered = greeted_first(given).await;
        assert!(
            started.elapsed() < GREETING_DEADLINE + Duration::from_secs(1),
            "the probes run together"
        );
        let port = |a: &ServerAddr| a.port();
        let mut first: Vec<u16> = ordered[..2].iter().map(port).collect();
        first.sort_unstable();
        let mut want = vec![greets.port(), also.port()];
        want.sort_unstable();
        assert_eq!(first, want, "the greeting nodes first");
        assert_eq!(
            ordered[2..].iter().map(port).collect::<Vec<_>>(),
            vec![silent.port(), closed.port(), other.port()],
            "the others after them, in their order"
        );
        for t in [a, b, c, d] {
            t.abort();
        }
    }
}
