//! A TCP fault proxy on one link of a test's studio (issue #61): Noxious, the Rust port of
//! Toxiproxy, run inside the test process (its server binary is not on crates.io; the
//! library is the same proxy and toxics). Faults are Toxiproxy's toxics — latency with
//! jitter, a bandwidth cap, a connection that stops passing data and never resets — and
//! apply to the connections already open as well as new ones, both directions.
#![allow(dead_code)]

use noxious::proxy::{ProxyConfig, ProxyRunner, Runner, Toxics};
use noxious::signal::{Close, Stop, Stopper};
use noxious::socket::TcpListener;
use noxious::toxic::{
    StreamDirection, Toxic, ToxicEvent, ToxicEventKind, ToxicEventResult, ToxicKind,
};

/// One proxy: `listen` → `upstream`, toxics changed while it runs.
pub struct FaultProxy {
    /// Its name (in the toxics' events).
    pub name: String,
    /// Where it listens (`host:port`).
    pub listen: String,
    upstream: String,
    events: bmrng::RequestSender<ToxicEvent, ToxicEventResult>,
    state: std::sync::Arc<noxious::state::ProxyState>,
    stopper: Option<Stopper>,
    active: Vec<String>,
}

/// A fault, as toxics on both directions of a link.
#[derive(Clone, Copy, Debug)]
pub enum Toxicity {
    /// Each chunk delayed by `ms` ± `jitter` (a far or congested link).
    Latency { ms: u64, jitter: u64 },
    /// At most `kbit` kilobits a second each way (Toxiproxy counts KB/s: rounded up).
    /// Noxious 1.0.4's bandwidth toxic panics on a chunk longer than a tenth of a
    /// second's worth (it sends 100 bytes per 100 ms step but counts a step's worth of
    /// time off the chunk's), so [`FaultProxy::add`] slices chunks first, as Toxiproxy's
    /// own slicer toxic does.
    Bandwidth { kbit: u64 },
    /// Nothing passes and nothing is closed: the peer hangs as on a half-open connection.
    Hang,
}

impl Toxicity {
    /// The toxics it takes, in their order on the link.
    fn kinds(self) -> Vec<ToxicKind> {
        match self {
            Toxicity::Bandwidth { kbit } => {
                let step = (kbit.div_ceil(8) * 100).max(2);
                vec![
                    ToxicKind::Slicer {
                        average_size: step / 2,
                        size_variation: step / 4,
                        delay: 0,
                    },
                    self.kind(),
                ]
            }
            _ => vec![self.kind()],
        }
    }

    fn kind(self) -> ToxicKind {
        match self {
            Toxicity::Latency { ms, jitter } => ToxicKind::Latency {
                latency: ms,
                jitter,
            },
            Toxicity::Bandwidth { kbit } => ToxicKind::Bandwidth {
                rate: kbit.div_ceil(8),
            },
            Toxicity::Hang => ToxicKind::Timeout { timeout: 0 },
        }
    }
}

impl FaultProxy {
    /// Starts a proxy listening on `listen` (`host:port`) for `upstream`.
    pub async fn start(name: &str, listen: &str, upstream: &str) -> FaultProxy {
        let config = ProxyConfig {
            name: name.into(),
            listen: listen.into(),
            upstream: upstream.into(),
            enabled: true,
            rand_seed: None,
        };
        let (listener, info) =
            ProxyRunner::initialize_proxy::<TcpListener>(config, Toxics::empty())
                .await
                .unwrap_or_else(|e| panic!("fault proxy {name} listens on {listen}: {e}"));
        let (events, receiver) = bmrng::channel(4);
        let (stop, stopper) = Stop::new();
        let (_close, closer) = Close::new();
        let state = std::sync::Arc::clone(&info.state);
        tokio::spawn(ProxyRunner::run_proxy(
            listener, info, receiver, stop, closer,
        ));
        FaultProxy {
            name: name.into(),
            listen: listen.into(),
            upstream: upstream.into(),
            events,
            state,
            stopper: Some(stopper),
            active: Vec::new(),
        }
    }

    async fn send(&self, kind: ToxicEventKind) {
        let event = ToxicEvent {
            proxy_name: self.name.clone(),
            kind,
        };
        self.events
            .send_receive(event)
            .await
            .unwrap_or_else(|e| panic!("fault proxy {} takes the change: {e:?}", self.name))
            .unwrap_or_else(|e| panic!("fault proxy {}: {e:?}", self.name));
    }

    /// Adds `t` to both directions.
    pub async fn add(&mut self, t: Toxicity) {
        for direction in [StreamDirection::Upstream, StreamDirection::Downstream] {
            for kind in t.kinds() {
                let name = format!("{direction}-{}", self.active.len());
                self.send(ToxicEventKind::AddToxic(Toxic {
                    kind,
                    name: name.clone(),
                    toxicity: 1.0,
                    direction,
                }))
                .await;
                self.active.push(name);
            }
        }
    }

    /// Removes every toxic: new connections are clean. One by one, by name: Noxious
    /// 1.0.4's "remove all" empties only the upstream list and leaves the downstream
    /// toxics on. Checked against the proxy's own state.
    ///
    /// A connection open through the change may keep its toxics: Noxious relinks open
    /// connections at every change, and a relinked connection can fall out of its list
    /// (a "healed" link that stayed at 64 kbit/s failed a soak). [`FaultProxy::reset`]
    /// closes them.
    pub async fn clear(&mut self) {
        for name in std::mem::take(&mut self.active) {
            self.send(ToxicEventKind::RemoveToxic(name)).await;
        }
        let left = &self.state.lock().toxics;
        assert!(
            left.upstream.is_empty() && left.downstream.is_empty(),
            "fault proxy {}: every toxic removed: {left:?}",
            self.name
        );
    }

    /// Starts the proxy anew on the same address, closing every connection it held.
    pub async fn reset(&mut self) {
        if let Some(s) = self.stopper.take() {
            s.stop();
        }
        // The old listener closes as its task sees the stop.
        let started = std::time::Instant::now();
        loop {
            match tokio::net::TcpListener::bind(&self.listen).await {
                Ok(probe) => {
                    drop(probe);
                    break;
                }
                Err(_) if started.elapsed() < std::time::Duration::from_secs(5) => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                Err(e) => panic!(
                    "fault proxy {}: {} is free again: {e}",
                    self.name, self.listen
                ),
            }
        }
        *self = FaultProxy::start(
            &self.name.clone(),
            &self.listen.clone(),
            &self.upstream.clone(),
        )
        .await;
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        if let Some(s) = self.stopper.take() {
            s.stop();
        }
    }
}
