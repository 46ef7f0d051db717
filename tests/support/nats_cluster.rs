//! A real three-node `nats-server` cluster with clustered JetStream for a test: each node
//! on loopback with its own client, route and monitoring ports (free ones, never 4222) and
//! its own store, so a test can SIGKILL any node, or two, and start them again on the same
//! ports and stores. The nodes do not advertise their client addresses (`no_advertise`): a
//! client uses the addresses it was given, so one given fault proxies stays behind them
//! (the nemesis found `t2` connected to a node's own address, learnt from the cluster,
//! past its proxies). Debian's nats-server 2.9 forms the cluster from the routes list.
#![allow(dead_code)]

use super::nats::{free_port, spawn_listening, spawn_listening_on};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

/// One node: its ports, configuration file and, while it runs, its process.
pub struct Node {
    /// Its `server_name` (what JetStream names a stream's leader by).
    pub name: String,
    /// Its client port.
    pub port: u16,
    /// Its monitoring port (`/healthz`, `/jsz`).
    pub http: u16,
    /// The address it listens on (loopback, or its namespace's address).
    pub host: String,
    /// Its network namespace, if it has one of its own.
    pub ns: Option<String>,
    /// Its WebSocket client port (plain, no TLS), if it has one
    /// ([`Cluster::start_with_websocket`]).
    pub websocket: Option<u16>,
    conf: PathBuf,
    child: Option<Child>,
}

/// The cluster.
pub struct Cluster {
    bin: PathBuf,
    enter: fn(&mut std::process::Command, &str),
    /// Its nodes, `n1`, `n2`, `n3`.
    pub nodes: Vec<Node>,
}

impl Cluster {
    /// Writes the nodes' configurations under `dir` and starts them; returns once every
    /// node accepts clients (the cluster may still be electing: see `wait_healthy`).
    pub fn start(bin: &Path, dir: &Path, nodes: usize) -> Cluster {
        Cluster::start_on(
            bin,
            dir,
            vec![("127.0.0.1".to_string(), None); nodes],
            |_, _| {},
        )
    }

    /// [`Cluster::start`] with node `i` on `hosts[i]`: its address and, if it has one,
    /// the network namespace it runs in, which `enter` makes a command enter
    /// (`netns::enter`).
    pub fn start_on(
        bin: &Path,
        dir: &Path,
        hosts: Vec<(String, Option<String>)>,
        enter: fn(&mut std::process::Command, &str),
    ) -> Cluster {
        Cluster::start_nodes(bin, dir, hosts, enter, false)
    }

    /// [`Cluster::start`] on loopback with each node's WebSocket listener open as well
    /// (plain, no TLS, no authentication): what a studio could serve viewers with instead
    /// of a relay (`benches/capacity.rs` compares the two).
    pub fn start_with_websocket(bin: &Path, dir: &Path, nodes: usize) -> Cluster {
        Cluster::start_nodes(
            bin,
            dir,
            vec![("127.0.0.1".to_string(), None); nodes],
            |_, _| {},
            true,
        )
    }

    fn start_nodes(
        bin: &Path,
        dir: &Path,
        hosts: Vec<(String, Option<String>)>,
        enter: fn(&mut std::process::Command, &str),
        websocket: bool,
    ) -> Cluster {
        let routes: Vec<u16> = (0..hosts.len()).map(|_| free_port()).collect();
        let route_list = routes
            .iter()
            .zip(&hosts)
            .map(|(p, (host, _))| format!("\"nats-route://{host}:{p}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let nodes = hosts
            .into_iter()
            .enumerate()
            .map(|(i, (host, ns))| {
                let name = format!("n{}", i + 1);
                let (port, http) = (free_port(), free_port());
                let ws = websocket.then(free_port);
                let store = dir.join(&name);
                let conf = dir.join(format!("{name}.conf"));
                // A route that lives through a partition without a reset must be dropped
                // and dialled again, or two nodes can each keep a route that carries
                // nothing and both claim JetStream's metadata leadership (the fourth
                // hour's soak, docs/src/studio.md): nats-server's default pings every
                // two minutes; at 5 s with 3 unanswered, a dead route goes within ~20 s.
                let mut text = format!(
                    "server_name: \"{name}\"\n\
                     listen: \"{host}:{port}\"\n\
                     http: \"{host}:{http}\"\n\
                     ping_interval: \"5s\"\n\
                     ping_max: 3\n\
                     jetstream {{\n  store_dir: {store:?}\n  max_memory_store: 64MB\n  max_file_store: 1GB\n}}\n\
                     cluster {{\n  name: \"croupier-test\"\n  listen: \"{host}:{route}\"\n  routes: [{route_list}]\n  no_advertise: true\n}}\n",
                    store = store.display().to_string(),
                    route = routes[i],
                );
                if let Some(ws) = ws {
                    text.push_str(&format!(
                        "websocket {{\n  listen: \"{host}:{ws}\"\n  no_tls: true\n  compression: false\n}}\n"
                    ));
                }
                std::fs::write(&conf, text).expect("write the node's config");
                Node {
                    name,
                    port,
                    http,
                    host,
                    ns,
                    websocket: ws,
                    conf,
                    child: None,
                }
            })
            .collect();
        let mut cluster = Cluster {
            bin: bin.to_path_buf(),
            enter,
            nodes,
        };
        for i in 0..cluster.nodes.len() {
            cluster.restart(i);
        }
        cluster
    }

    /// Every node's client URL, comma-separated, as `[publish] nats_url` and `--nats`
    /// take them.
    pub fn urls(&self) -> String {
        self.nodes
            .iter()
            .map(|n| format!("nats://{}:{}", n.host, n.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The index of the node named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Node `i`'s process id, while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.nodes[i].child.as_ref().map(Child::id)
    }

    /// Whether node `i` runs.
    pub fn running(&self, i: usize) -> bool {
        self.nodes[i].child.is_some()
    }

    /// SIGKILL node `i` (its store stays).
    pub fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.nodes[i].child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts node `i` (again) on its ports and store; returns once it accepts clients.
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        let enter = self.enter;
        let node = &mut self.nodes[i];
        let args = ["-c".into(), node.conf.clone().into_os_string()];
        node.child = Some(match &node.ns {
            None => spawn_listening(&self.bin, &args, node.port),
            Some(ns) => {
                let log = node.conf.with_extension("log");
                spawn_listening_on(&self.bin, &args, (&node.host, node.port), &log, &|c| {
                    enter(c, ns)
                })
            }
        });
    }

    /// Waits until every running node says it is healthy: JetStream's meta group has a
    /// leader and the node's streams are current (nats-server's `/healthz`).
    pub async fn wait_healthy(&self, within: Duration) {
        let started = Instant::now();
        for node in self.nodes.iter().filter(|n| n.child.is_some()) {
            loop {
                let addr = format!("{}:{}", node.host, node.http);
                let answer = croupier::web::client::request_with(
                    &addr,
                    "GET",
                    "/healthz",
                    None,
                    &[],
                    Duration::from_secs(2),
                )
                .await;
                if matches!(&answer, Ok(r) if r.status == 200) {
                    break;
                }
                // Streams current, but a consumer not: the relay's own ephemeral consumers
                // (R1, in memory) that lived on a node the test killed, or were made while
                // the cluster had no quorum, stay "not current" on a node until the broker
                // expires them (the relay's CONSUMER_INACTIVE), which a loaded machine can
                // stretch past this wait. The relay has long moved to a new one by then
                // (it resumed before this is asked), and what the test checks next is the
                // streams; a stream that is not current still fails here.
                if matches!(&answer, Ok(r) if r.status == 503
                    && r.body.contains("JetStream consumer")
                    && r.body.contains("is not current"))
                {
                    break;
                }
                assert!(
                    started.elapsed() < within,
                    "{} healthy within {within:?}: {answer:?}",
                    node.name
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
    }
}
