//! The table service started in-process for a test, and stopped cleanly.

use croupier::table::service::{self, ServiceError, Started};
use croupier::table::{TableConfig, TableHandle, TableState};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::timeout;

/// A running service.
pub struct Running {
    /// The table.
    pub handle: TableHandle,
    /// Its HTTP address.
    pub addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), ServiceError>>,
}

/// Starts the service and waits until the shoe is connected.
pub async fn start(config: TableConfig) -> Running {
    let (tx, rx) = oneshot::channel::<Started>();
    let (stop, stop_rx) = oneshot::channel::<()>();
    let task = tokio::spawn(service::run(
        config,
        async move {
            let _ = stop_rx.await;
        },
        move |s| {
            let _ = tx.send(s);
        },
    ));
    let s = timeout(Duration::from_secs(20), rx)
        .await
        .expect("service starts in time")
        .expect("service starts");
    if s.handle.snapshot().state != TableState::Broken {
        let mut watch = s.handle.watch();
        timeout(
            Duration::from_secs(10),
            watch.wait_for(|s| s.shoe.link == "connected"),
        )
        .await
        .expect("the shoe connects")
        .expect("table running");
    }
    Running {
        handle: s.handle,
        addr: s.addr,
        stop,
        task,
    }
}

impl Running {
    /// Stops the service; it must stop cleanly within 15 s.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        timeout(Duration::from_secs(15), self.task)
            .await
            .expect("stops in time")
            .expect("no panic")
            .expect("clean stop");
    }
}
