//! A real three-node `nats-server` cluster with clustered JetStream for a test: each node
//! on loopback with its own client, route and monitoring ports (free ones, never 4222) and
//! its own store, so a test can SIGKILL any node, or two, and start them again on the same
//! ports and stores. Debian's nats-server 2.9 forms the cluster from the routes list.
#![allow(dead_code)]

use super::nats::{free_port, spawn_listening};
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
    conf: PathBuf,
    child: Option<Child>,
}

/// The cluster.
pub struct Cluster {
    bin: PathBuf,
    /// Its nodes, `n1`, `n2`, `n3`.
    pub nodes: Vec<Node>,
}

impl Cluster {
    /// Writes the nodes' configurations under `dir` and starts them; returns once every
    /// node accepts clients (the cluster may still be electing: see `wait_healthy`).
    pub fn start(bin: &Path, dir: &Path, nodes: usize) -> Cluster {
        let routes: Vec<u16> = (0..nodes).map(|_| free_port()).collect();
        let route_list = routes
            .iter()
            .map(|p| format!("\"nats-route://127.0.0.1:{p}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let nodes = (0..nodes)
            .map(|i| {
                let name = format!("n{}", i + 1);
                let (port, http) = (free_port(), free_port());
                let store = dir.join(&name);
                let conf = dir.join(format!("{name}.conf"));
                let text = format!(
                    "server_name: \"{name}\"\n\
                     listen: \"127.0.0.1:{port}\"\n\
                     http: \"127.0.0.1:{http}\"\n\
                     jetstream {{\n  store_dir: {store:?}\n  max_memory_store: 64MB\n  max_file_store: 1GB\n}}\n\
                     cluster {{\n  name: \"croupier-test\"\n  listen: \"127.0.0.1:{route}\"\n  routes: [{route_list}]\n}}\n",
                    store = store.display().to_string(),
                    route = routes[i],
                );
                std::fs::write(&conf, text).expect("write the node's config");
                Node {
                    name,
                    port,
                    http,
                    conf,
                    child: None,
                }
            })
            .collect();
        let mut cluster = Cluster {
            bin: bin.to_path_buf(),
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
            .map(|n| format!("nats://127.0.0.1:{}", n.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The index of the node named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
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
        let node = &mut self.nodes[i];
        node.child = Some(spawn_listening(
            &self.bin,
            &["-c".into(), node.conf.clone().into_os_string()],
            node.port,
        ));
    }

    /// Waits until every running node says it is healthy: JetStream's meta group has a
    /// leader and the node's streams are current (nats-server's `/healthz`).
    pub async fn wait_healthy(&self, within: Duration) {
        let started = Instant::now();
        for node in self.nodes.iter().filter(|n| n.child.is_some()) {
            loop {
                let addr = format!("127.0.0.1:{}", node.http);
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
