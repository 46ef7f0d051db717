//! `croupier sim-shoe`: the simulator as a command, driven from stdin, a control socket,
//! or a timer.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::UnixListener;
use tracing::{info, warn};

use super::command::{SimCommand, HELP};
use super::deck::{parse_script, shuffled_shoe, DeckError};
use super::device::{InjectedFault, SimConfig, SimError, SimShoe};
use crate::event::ShoeItem;
use crate::shoe::config::{AsciiOptions, Dialect};

/// Arguments of `croupier sim-shoe`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimShoeArgs {
    /// Wire dialect to speak.
    #[arg(long, value_enum, default_value = "croupier-v1")]
    pub dialect: Dialect,
    /// ascii-suit-rank: suit letters for spades, hearts, diamonds, clubs.
    #[arg(long, default_value = "SHDC")]
    pub suit_letters: String,
    /// ascii-suit-rank: the line sent for the cut card (none: not reported).
    #[arg(long)]
    pub cut_card_line: Option<String>,
    /// Decks in the shoe.
    #[arg(long, default_value_t = 6)]
    pub decks: u8,
    /// Where the cut card goes, as a fraction of the cards.
    #[arg(long, default_value_t = 0.75)]
    pub penetration: f64,
    /// Shuffle seed, for a reproducible shoe.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Deal this script (card codes and CUT) instead of a shuffled shoe.
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// Keep a symlink here pointing at the device, like a udev alias.
    #[arg(long)]
    pub link: Option<PathBuf>,
    /// Listen for commands on this Unix socket (one per line, one reply line each).
    #[arg(long)]
    pub control: Option<PathBuf>,
    /// Deal a card this often without being asked.
    #[arg(long)]
    pub auto_deal_ms: Option<u64>,
    /// Do not read commands from stdin (when run as a service).
    #[arg(long)]
    pub no_stdin: bool,
    /// croupier-v1: heartbeat interval when idle.
    #[arg(long, default_value_t = 1000)]
    pub heartbeat_ms: u64,
    /// croupier-v1: resend an unacknowledged frame after this long.
    #[arg(long, default_value_t = 250)]
    pub ack_timeout_ms: u64,
}

/// Why `sim-shoe` stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The shoe could not be built.
    #[error(transparent)]
    Deck(#[from] DeckError),
    /// The simulated device failed.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// Reading the script or binding the control socket failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}

/// The simulator plus the toggles the command language flips.
struct Controller {
    sim: SimShoe,
    args: SimShoeArgs,
    scripted: bool,
    rng: Mutex<fastrand::Rng>,
    split: AtomicBool,
    hang: AtomicBool,
    quit: tokio::sync::Notify,
}

impl Controller {
    fn new_shoe(&self) -> Result<Vec<ShoeItem>, DeckError> {
        let mut rng = self.rng.lock().unwrap_or_else(PoisonError::into_inner);
        shuffled_shoe(self.args.decks, self.args.penetration, &mut rng)
    }

    /// Runs one command; returns the reply line.
    async fn execute(&self, command: SimCommand) -> Result<String, RunError> {
        let toggle = |flag: &AtomicBool| !flag.fetch_xor(true, Ordering::Relaxed);
        Ok(match command {
            SimCommand::Deal(n) => {
                let mut dealt = self.sim.deal(n).await?;
                if dealt.len() < n && !self.scripted {
                    info!("shoe empty; shuffling a new one");
                    self.sim.load(self.new_shoe()?).await?;
                    dealt.extend(self.sim.deal(n - dealt.len()).await?);
                }
                if dealt.is_empty() {
                    "shoe empty".to_string()
                } else {
                    let codes: Vec<String> = dealt.iter().map(ToString::to_string).collect();
                    format!("dealt {}", codes.join(" "))
                }
            }
            SimCommand::Garbage => {
                let noise = b"\x00\x13garbage\xff\r\n".to_vec();
                self.sim.inject(InjectedFault::Garbage(noise)).await?;
                "garbage written".into()
            }
            SimCommand::Corrupt => {
                self.sim.inject(InjectedFault::CorruptNext).await?;
                "next frame will be corrupted".into()
            }
            SimCommand::DropAck => {
                self.sim.inject(InjectedFault::DropNextAck).await?;
                "next ACK will be lost".into()
            }
            SimCommand::ToggleSplit => {
                let on = toggle(&self.split);
                self.sim.inject(InjectedFault::SplitWrites(on)).await?;
                format!("split writes {}", if on { "on" } else { "off" })
            }
            SimCommand::ToggleHang => {
                let on = toggle(&self.hang);
                self.sim.inject(InjectedFault::Hang(on)).await?;
                format!("hang {}", if on { "on" } else { "off" })
            }
            SimCommand::Unplug => {
                self.sim.unplug().await?;
                "unplugged".into()
            }
            SimCommand::Replug => format!("plugged in at {}", self.sim.replug().await?.display()),
            SimCommand::NewShoe if self.scripted => "a scripted shoe cannot be reshuffled".into(),
            SimCommand::NewShoe => {
                self.sim.load(self.new_shoe()?).await?;
                "new shoe shuffled".into()
            }
            SimCommand::Status(status) => {
                self.sim.set_status(status).await?;
                format!("status {status:?}")
            }
            SimCommand::Help => HELP.into(),
            SimCommand::Quit => {
                self.quit.notify_one();
                "bye".into()
            }
        })
    }

    /// Reads commands line by line from `input`, answering on `output`.
    async fn serve<R, W>(&self, input: R, mut output: W)
    where
        R: tokio::io::AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let mut lines = BufReader::new(input).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let reply = match SimCommand::parse(&line) {
                Ok(command) => match self.execute(command).await {
                    Ok(reply) => reply,
                    Err(error) => format!("error: {error}"),
                },
                Err(error) => error.to_string(),
            };
            if output
                .write_all(format!("{reply}\n").as_bytes())
                .await
                .is_err()
            {
                return;
            }
        }
    }
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> RunError {
    let what = what.into();
    |source| RunError::Io { what, source }
}

/// Runs `croupier sim-shoe` until `quit` or Ctrl-C. The first line on stdout is the
/// device path to open (the `--link` path if given), so a parent process can read it.
pub async fn run(args: SimShoeArgs) -> Result<(), RunError> {
    let seed = args.seed.unwrap_or_else(|| fastrand::u64(..));
    let mut rng = fastrand::Rng::with_seed(seed);
    let (items, scripted) = match &args.script {
        Some(path) => {
            let text = tokio::fs::read_to_string(path)
                .await
                .map_err(io(format!("reading script {}", path.display())))?;
            (parse_script(&text)?, true)
        }
        None => (
            shuffled_shoe(args.decks, args.penetration, &mut rng)?,
            false,
        ),
    };
    let sim = SimShoe::start(SimConfig {
        dialect: args.dialect,
        ascii: AsciiOptions {
            suit_letters: args.suit_letters.clone(),
            cut_card_line: args.cut_card_line.clone(),
        },
        items,
        link: args.link.clone(),
        heartbeat: Duration::from_millis(args.heartbeat_ms),
        ack_timeout: Duration::from_millis(args.ack_timeout_ms),
    })?;
    println!("{}", sim.path().display());
    info!(dialect = args.dialect.name(), seed, device = %sim.path().display(), "simulated shoe ready");
    let controller = Arc::new(Controller {
        sim,
        args: args.clone(),
        scripted,
        rng: Mutex::new(rng),
        split: AtomicBool::new(false),
        hang: AtomicBool::new(false),
        quit: tokio::sync::Notify::new(),
    });
    if let Some(path) = &args.control {
        let listener = bind_control(path)?;
        tokio::spawn(accept_control(listener, Arc::clone(&controller)));
    }
    if !args.no_stdin {
        eprintln!("{HELP}");
        let c = Arc::clone(&controller);
        tokio::spawn(async move { c.serve(tokio::io::stdin(), tokio::io::stderr()).await });
    }
    if let Some(ms) = args.auto_deal_ms {
        let c = Arc::clone(&controller);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(ms.max(1)));
            loop {
                tick.tick().await;
                if let Err(error) = c.execute(SimCommand::Deal(1)).await {
                    warn!(%error, "auto-deal stopped");
                    return;
                }
            }
        });
    }
    tokio::select! {
        () = controller.quit.notified() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    if let Some(path) = &args.control {
        let _ = std::fs::remove_file(path);
    }
    // Unplugging removes the --link symlink, so no dangling alias outlives the run.
    controller.sim.unplug().await?;
    Ok(())
}

fn bind_control(path: &Path) -> Result<UnixListener, RunError> {
    // A socket file left by a killed run would make bind fail.
    let _ = std::fs::remove_file(path);
    UnixListener::bind(path).map_err(io(format!("binding control socket {}", path.display())))
}

async fn accept_control(listener: UnixListener, controller: Arc<Controller>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let c = Arc::clone(&controller);
                tokio::spawn(async move {
                    let (read, write) = stream.into_split();
                    c.serve(read, write).await;
                });
            }
            Err(error) => {
                warn!(%error, "control socket accept failed");
                return;
            }
        }
    }
}
