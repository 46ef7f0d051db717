//! `croupier sim-shoe` as the command runs it: a control socket drives a scripted shoe
//! while the serial driver reads it through the PTY.

mod common;

use std::path::Path;
use std::time::Duration;

use clap::Parser;
use common::LIMIT;
use croupier_drivers::shoe::config::ShoeConfig;
use croupier_drivers::shoe::{SerialShoe, Shoe};
use croupier_drivers::sim::{run, SimShoeArgs};
use croupier_drivers::ShoeEvent;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::time::timeout;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: SimShoeArgs,
}

async fn connect(path: &Path) -> UnixStream {
    timeout(LIMIT, async {
        loop {
            if let Ok(stream) = UnixStream::connect(path).await {
                return stream;
            }
            // The socket appears once run() has started; poll briefly until it does.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("control socket comes up")
}

struct Control {
    write: tokio::net::unix::OwnedWriteHalf,
    replies: tokio::io::Lines<BufReader<tokio::net::unix::OwnedReadHalf>>,
}

impl Control {
    fn new(stream: UnixStream) -> Control {
        let (read, write) = stream.into_split();
        Control {
            write,
            replies: BufReader::new(read).lines(),
        }
    }

    async fn ask(&mut self, command: &str) -> String {
        self.write
            .write_all(format!("{command}\n").as_bytes())
            .await
            .expect("send command");
        timeout(LIMIT, self.replies.next_line())
            .await
            .expect("reply in time")
            .expect("read reply")
            .expect("a reply line")
    }
}

async fn next(shoe: &mut SerialShoe) -> ShoeEvent {
    timeout(LIMIT, shoe.next_event())
        .await
        .expect("event in time")
        .expect("driver running")
}

#[tokio::test]
async fn control_socket_deals_unplugs_and_quits() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = dir.path().join("cards.txt");
    std::fs::write(&script, "AS KD # comment\n10C CUT 9H\n").expect("write script");
    let link = dir.path().join("shoe");
    let control = dir.path().join("control.sock");
    let cli = Cli::parse_from([
        "sim-shoe".as_ref(),
        "--dialect".as_ref(),
        "ascii-suit-rank".as_ref(),
        "--cut-card-line".as_ref(),
        "CUT".as_ref(),
        "--script".as_ref(),
        script.as_os_str(),
        "--link".as_ref(),
        link.as_os_str(),
        "--control".as_ref(),
        control.as_os_str(),
        "--no-stdin".as_ref(),
    ]);
    let sim = tokio::spawn(run(cli.args));
    let mut control_link = Control::new(connect(&control).await);
    let mut shoe = SerialShoe::spawn(ShoeConfig {
        port: link,
        baud: 9600,
        dialect: croupier_drivers::shoe::config::Dialect::AsciiSuitRank,
        ascii: common::ascii_options(),
        reconnect_initial_ms: 20,
        reconnect_max_ms: 200,
        ..ShoeConfig::default()
    })
    .expect("valid config");
    assert!(matches!(next(&mut shoe).await, ShoeEvent::Connected { .. }));

    assert_eq!(control_link.ask("deal 3").await, "dealt AS KD TC");
    for code in ["AS", "KD", "TC"] {
        assert_eq!(
            next(&mut shoe).await,
            ShoeEvent::Card(code.parse().expect("card"))
        );
    }
    assert_eq!(control_link.ask("u").await, "unplugged");
    assert!(matches!(
        next(&mut shoe).await,
        ShoeEvent::Disconnected { .. }
    ));
    assert!(control_link.ask("r").await.starts_with("plugged in at"));
    assert!(matches!(next(&mut shoe).await, ShoeEvent::Connected { .. }));
    assert_eq!(control_link.ask("deal 5").await, "dealt CUT 9H");
    assert_eq!(next(&mut shoe).await, ShoeEvent::CutCard);
    assert_eq!(
        next(&mut shoe).await,
        ShoeEvent::Card("9H".parse().expect("card"))
    );
    assert_eq!(control_link.ask("deal").await, "shoe empty");
    assert!(control_link
        .ask("explode")
        .await
        .starts_with("unknown command"));
    assert_eq!(control_link.ask("quit").await, "bye");
    timeout(LIMIT, sim)
        .await
        .expect("sim stops on quit")
        .expect("task ran")
        .expect("run succeeded");
    assert!(!control.exists(), "socket removed on exit");
}
