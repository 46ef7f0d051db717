//! The simulated shoe itself: a task that owns the pseudo-terminal and behaves like a real
//! shoe of any dialect, driven through a [`SimShoe`] handle.

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::BytesMut;
use tokio::sync::{mpsc, oneshot};
use tokio::time::{sleep, sleep_until, timeout, Instant};
use tokio_util::codec::Decoder;
use tracing::{debug, info, warn};

use super::pty::Pty;
use crate::event::{ShoeItem, ShoeStatus};
use crate::proto::ascii::AsciiSuitRank;
use crate::proto::barcode::Barcode4;
use crate::proto::line::LineFormat;
use crate::proto::v1::frame::stuff;
use crate::proto::v1::shoe::ShoeSession;
use crate::proto::v1::{Body, Frame, LampState, V1Codec};
use crate::shoe::config::{AsciiOptions, ConfigError, Dialect};

/// How the simulated shoe behaves.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// The wire dialect it speaks.
    pub dialect: Dialect,
    /// Options for `ascii-suit-rank`.
    pub ascii: AsciiOptions,
    /// The cards in the shoe, in dealing order.
    pub items: Vec<ShoeItem>,
    /// A symlink kept pointing at the current device, like a udev alias; removed on
    /// unplug and recreated on replug, so the host can use one path throughout.
    pub link: Option<PathBuf>,
    /// `croupier-v1`: heartbeat interval when idle.
    pub heartbeat: Duration,
    /// `croupier-v1`: resend an unacknowledged frame after this long.
    pub ack_timeout: Duration,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            dialect: Dialect::CroupierV1,
            ascii: AsciiOptions::default(),
            items: Vec::new(),
            link: None,
            heartbeat: Duration::from_secs(1),
            ack_timeout: Duration::from_millis(250),
        }
    }
}

/// A misbehaviour to inject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InjectedFault {
    /// Write these bytes between frames.
    Garbage(Vec<u8>),
    /// Corrupt the next frame: `croupier-v1` sends it with a bad CRC first (the host NAKs,
    /// the shoe resends); line dialects send a misread line before the real one.
    CorruptNext,
    /// `croupier-v1`: ignore the next ACK, as if it were lost, so the shoe retransmits a
    /// frame the host already has.
    DropNextAck,
    /// Write every frame one byte at a time from now on (`false` to stop).
    SplitWrites(bool),
    /// Hang: stay plugged in but send nothing at all, not even heartbeats, until
    /// `Hang(false)`; what is dealt meanwhile is held.
    Hang(bool),
}

/// The simulator has stopped or could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The device task is gone.
    #[error("the simulated shoe has stopped")]
    Stopped,
    /// Creating the pseudo-terminal or its link failed.
    #[error("cannot create the simulated shoe device: {0}")]
    Io(#[from] io::Error),
    /// The dialect options are invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

type Reply<T> = oneshot::Sender<T>;

enum Request {
    Deal(usize, Reply<Vec<ShoeItem>>),
    Load(Vec<ShoeItem>, Reply<()>),
    Status(ShoeStatus, Reply<()>),
    Inject(InjectedFault, Reply<()>),
    WriteRaw(Vec<Vec<u8>>, Reply<()>),
    Unplug(Reply<()>),
    Replug(Reply<io::Result<PathBuf>>),
    Settled(Reply<()>),
    Remaining(Reply<usize>),
}

/// Handle to a running simulated shoe; dropping it unplugs and stops the shoe.
#[derive(Debug)]
pub struct SimShoe {
    requests: mpsc::UnboundedSender<Request>,
    path: Arc<Mutex<PathBuf>>,
    lamp: Arc<Mutex<Option<LampState>>>,
}

impl SimShoe {
    /// Creates the pseudo-terminal (and link) and starts the shoe on the current runtime.
    pub fn start(config: SimConfig) -> Result<SimShoe, SimError> {
        let format: Option<Box<dyn LineFormat + Send>> = match config.dialect {
            Dialect::CroupierV1 => None,
            Dialect::AsciiSuitRank => Some(Box::new(AsciiSuitRank::new(&config.ascii)?)),
            Dialect::Barcode4 => Some(Box::new(Barcode4)),
        };
        let pty = Pty::open()?;
        let path = Arc::new(Mutex::new(publish(&pty, config.link.as_deref())?));
        let lamp = Arc::new(Mutex::new(None));
        let (requests, rx) = mpsc::unbounded_channel();
        let device = Device {
            deck: config.items.iter().copied().collect(),
            config,
            format,
            pty: Some(pty),
            session: ShoeSession::new(),
            lines: VecDeque::new(),
            sent_at: None,
            last_tx: Instant::now(),
            status: ShoeStatus::default(),
            corrupt_next: false,
            drop_next_ack: false,
            split_writes: false,
            hung: false,
            inbound: BytesMut::new(),
            codec: V1Codec::new(),
            settled: Vec::new(),
            path: Arc::clone(&path),
            lamp: Arc::clone(&lamp),
        };
        tokio::spawn(device.run(rx));
        Ok(SimShoe {
            requests,
            path,
            lamp,
        })
    }

    /// The path the host should open: the link if configured, else the current
    /// `/dev/pts/N` (which changes on every replug).
    pub fn path(&self) -> PathBuf {
        self.path
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The lamp state the host last set.
    pub fn lamp(&self) -> Option<LampState> {
        *self.lamp.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> Request) -> Result<T, SimError> {
        let (tx, rx) = oneshot::channel();
        self.requests
            .send(make(tx))
            .map_err(|_| SimError::Stopped)?;
        rx.await.map_err(|_| SimError::Stopped)
    }

    /// Deals up to `n` items off the shoe; returns them (fewer when the shoe runs out).
    /// Items are queued while unplugged and sent on replug.
    pub async fn deal(&self, n: usize) -> Result<Vec<ShoeItem>, SimError> {
        self.ask(|r| Request::Deal(n, r)).await
    }

    /// Replaces what is left in the shoe with `items`.
    pub async fn load(&self, items: Vec<ShoeItem>) -> Result<(), SimError> {
        self.ask(|r| Request::Load(items, r)).await
    }

    /// How many items are left in the shoe.
    pub async fn remaining(&self) -> Result<usize, SimError> {
        self.ask(Request::Remaining).await
    }

    /// Changes the sensor flags; `croupier-v1` reports them in a status frame.
    pub async fn set_status(&self, status: ShoeStatus) -> Result<(), SimError> {
        self.ask(|r| Request::Status(status, r)).await
    }

    /// Injects a fault.
    pub async fn inject(&self, fault: InjectedFault) -> Result<(), SimError> {
        self.ask(|r| Request::Inject(fault, r)).await
    }

    /// Writes `chunks` as separate writes with a pause between them, so the host's reads
    /// see them apart: for tests that split frames at chosen bytes.
    pub async fn write_raw(&self, chunks: Vec<Vec<u8>>) -> Result<(), SimError> {
        self.ask(|r| Request::WriteRaw(chunks, r)).await
    }

    /// Pulls the cable: closes the pseudo-terminal and removes the link.
    pub async fn unplug(&self) -> Result<(), SimError> {
        self.ask(Request::Unplug).await
    }

    /// Plugs back in on a new pseudo-terminal; returns the new path.
    pub async fn replug(&self) -> Result<PathBuf, SimError> {
        Ok(self.ask(Request::Replug).await??)
    }

    /// Waits until everything dealt has been written and, for `croupier-v1`, acknowledged.
    pub async fn settled(&self) -> Result<(), SimError> {
        self.ask(Request::Settled).await
    }
}

/// Points the link (if any) at `pty`, atomically, and returns the path to advertise.
fn publish(pty: &Pty, link: Option<&Path>) -> io::Result<PathBuf> {
    let Some(link) = link else {
        return Ok(pty.path().to_path_buf());
    };
    let mut tmp = link.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(pty.path(), &tmp)?;
    std::fs::rename(&tmp, link)?;
    Ok(link.to_path_buf())
}

fn unpublish(link: Option<&Path>) {
    if let Some(link) = link {
        if let Err(error) = std::fs::remove_file(link) {
            debug!(%error, link = %link.display(), "removing the shoe link");
        }
    }
}

/// Host not reading for this long means nobody is listening; the shoe drops the write
/// rather than stall its command handling.
const WRITE_STALL: Duration = Duration::from_secs(2);
/// Pause between the pieces of a split write, so the host's reads see them apart.
const SPLIT_PAUSE: Duration = Duration::from_millis(2);

struct Device {
    config: SimConfig,
    format: Option<Box<dyn LineFormat + Send>>,
    deck: VecDeque<ShoeItem>,
    pty: Option<Pty>,
    session: ShoeSession,
    /// Line dialects: encoded lines not yet written (while unplugged).
    lines: VecDeque<Vec<u8>>,
    /// When the unacknowledged frame was last sent; `None` = send it now.
    sent_at: Option<Instant>,
    last_tx: Instant,
    status: ShoeStatus,
    corrupt_next: bool,
    drop_next_ack: bool,
    split_writes: bool,
    hung: bool,
    inbound: BytesMut,
    codec: V1Codec,
    settled: Vec<Reply<()>>,
    path: Arc<Mutex<PathBuf>>,
    lamp: Arc<Mutex<Option<LampState>>>,
}

async fn read_from(pty: Option<&Pty>, buf: &mut [u8]) -> io::Result<usize> {
    match pty {
        Some(pty) => pty.read(buf).await,
        None => std::future::pending().await,
    }
}

impl Device {
    fn v1(&self) -> bool {
        self.format.is_none()
    }

    async fn run(mut self, mut requests: mpsc::UnboundedReceiver<Request>) {
        let far = Instant::now() + Duration::from_secs(86_400 * 365);
        let mut buf = [0u8; 256];
        loop {
            self.pump().await;
            self.notify_settled();
            let plugged = self.pty.is_some();
            let resend_at = match (self.session.unacked(), self.sent_at) {
                (Some(_), Some(at)) if plugged && self.v1() => at + self.config.ack_timeout,
                _ => far,
            };
            let heartbeat_at = if plugged && self.v1() && !self.hung {
                self.last_tx + self.config.heartbeat
            } else {
                far
            };
            tokio::select! {
                request = requests.recv() => match request {
                    Some(request) => self.handle(request).await,
                    None => break,
                },
                read = read_from(self.pty.as_ref(), &mut buf) => match read {
                    Ok(n) if n > 0 => {
                        self.inbound.extend_from_slice(&buf[..n]);
                        self.on_host_bytes().await;
                    }
                    // The sim holds the slave open, so this only happens if the kernel
                    // tears the pair down; treat it as an unplug.
                    Ok(_) | Err(_) => self.unplug(),
                },
                () = sleep_until(resend_at) => {
                    debug!("no ACK in time; retransmitting");
                    self.sent_at = None;
                }
                () = sleep_until(heartbeat_at) => {
                    self.write(&Frame::new(0, Body::Heartbeat).to_wire()).await;
                }
            }
        }
        self.unplug();
    }

    async fn handle(&mut self, request: Request) {
        match request {
            Request::Deal(n, reply) => {
                let n = n.min(self.deck.len());
                let dealt: Vec<ShoeItem> = self.deck.drain(..n).collect();
                for &item in &dealt {
                    self.enqueue(item);
                }
                let _ = reply.send(dealt);
            }
            Request::Load(items, reply) => {
                self.deck = items.into();
                let _ = reply.send(());
            }
            Request::Remaining(reply) => {
                let _ = reply.send(self.deck.len());
            }
            Request::Status(status, reply) => {
                self.status = status;
                if self.v1() {
                    self.session.push(Body::Status(status));
                }
                let _ = reply.send(());
            }
            Request::Inject(fault, reply) => {
                info!(?fault, "injecting fault");
                match fault {
                    InjectedFault::Garbage(bytes) => self.write(&bytes).await,
                    InjectedFault::CorruptNext => self.corrupt_next = true,
                    InjectedFault::DropNextAck => self.drop_next_ack = true,
                    InjectedFault::SplitWrites(on) => self.split_writes = on,
                    InjectedFault::Hang(on) => {
                        self.hung = on;
                        self.sent_at = None;
                    }
                }
                let _ = reply.send(());
            }
            Request::WriteRaw(chunks, reply) => {
                for chunk in chunks {
                    self.write(&chunk).await;
                    sleep(SPLIT_PAUSE).await;
                }
                let _ = reply.send(());
            }
            Request::Unplug(reply) => {
                self.unplug();
                let _ = reply.send(());
            }
            Request::Replug(reply) => {
                let _ = reply.send(self.replug());
            }
            Request::Settled(reply) => self.settled.push(reply),
        }
    }

    fn enqueue(&mut self, item: ShoeItem) {
        match &self.format {
            None => self.session.push(match item {
                ShoeItem::Card(card) => Body::Card(card),
                ShoeItem::CutCard => Body::CutCard,
            }),
            Some(format) => match format.encode(item) {
                Some(line) => self.lines.push_back(line),
                None => debug!(%item, "this dialect cannot report it; not sent"),
            },
        }
    }

    /// Sends whatever is due: queued lines, or the next / a retransmitted v1 frame.
    async fn pump(&mut self) {
        if self.pty.is_none() || self.hung {
            return;
        }
        while let Some(line) = self.lines.pop_front() {
            if self.corrupt_next {
                self.corrupt_next = false;
                let mut misread = line.clone();
                misread[0] = b'#';
                self.write(&misread).await;
            }
            self.write(&line).await;
        }
        if !self.v1() {
            return;
        }
        let frame = match self.sent_at {
            None => self.session.unacked().or_else(|| self.session.next_frame()),
            Some(_) => self.session.next_frame(),
        };
        if let Some(frame) = frame {
            if self.corrupt_next && frame.body.is_data() {
                self.corrupt_next = false;
                let mut raw = frame.to_raw();
                let last = raw.len() - 1;
                raw[last] ^= 0x01;
                let mut wire = Vec::new();
                stuff(&raw, &mut wire);
                self.write(&wire).await;
            } else {
                self.write(&frame.to_wire()).await;
            }
            self.sent_at = Some(Instant::now());
        }
    }

    fn notify_settled(&mut self) {
        let idle = self.lines.is_empty() && self.session.is_idle();
        if idle && self.pty.is_some() {
            for reply in self.settled.drain(..) {
                let _ = reply.send(());
            }
        }
    }

    async fn on_host_bytes(&mut self) {
        while let Ok(Some(decoded)) = self.codec.decode(&mut self.inbound) {
            let frame = match decoded {
                Ok(frame) => frame,
                Err(fault) => {
                    warn!(%fault, "host sent a bad frame; ignored");
                    continue;
                }
            };
            match frame.body {
                Body::Ack if self.drop_next_ack => {
                    self.drop_next_ack = false;
                    info!(seq = frame.seq, "dropping ACK as injected");
                }
                Body::Ack => {
                    self.session.on_ack(frame.seq);
                }
                Body::Nak => {
                    if self.session.on_nak(frame.seq).is_some() {
                        self.sent_at = None;
                    }
                }
                Body::Lamp(lamp) => {
                    *self.lamp.lock().unwrap_or_else(PoisonError::into_inner) = Some(lamp);
                }
                Body::StatusRequest => self.session.push(Body::Status(self.status)),
                other => warn!(?other, "host sent a shoe-to-host frame; ignored"),
            }
        }
    }

    async fn write(&mut self, bytes: &[u8]) {
        let Some(pty) = self.pty.as_ref().filter(|_| !self.hung) else {
            return;
        };
        self.last_tx = Instant::now();
        let result = if self.split_writes {
            split_write(pty, bytes).await
        } else {
            timeout(WRITE_STALL, pty.write_all(bytes))
                .await
                .unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into()))
        };
        if let Err(error) = result {
            warn!(%error, "write to the host failed; bytes dropped");
        }
    }

    fn unplug(&mut self) {
        if self.pty.take().is_some() {
            info!("unplugged");
            unpublish(self.config.link.as_deref());
            self.inbound.clear();
            self.codec = V1Codec::new();
        }
    }

    fn replug(&mut self) -> io::Result<PathBuf> {
        self.unplug();
        let pty = Pty::open()?;
        let path = publish(&pty, self.config.link.as_deref())?;
        info!(device = %pty.path().display(), "plugged in");
        self.pty = Some(pty);
        *self.path.lock().unwrap_or_else(PoisonError::into_inner) = path.clone();
        // Whatever was in flight when the cable came out goes again at once.
        self.sent_at = None;
        Ok(path)
    }
}

async fn split_write(pty: &Pty, bytes: &[u8]) -> io::Result<()> {
    for byte in bytes.chunks(1) {
        timeout(WRITE_STALL, pty.write_all(byte))
            .await
            .unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into()))?;
        sleep(SPLIT_PAUSE).await;
    }
    Ok(())
}
