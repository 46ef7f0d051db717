//! The simulator's control language, typed on stdin or sent to the control socket, one
//! command per line.

use crate::event::ShoeStatus;

/// Help text listing every command.
pub const HELP: &str = "\
commands (one per line; on stdin a bare Enter deals one card):
  d, deal [N]      deal N cards (default 1)
  g, garbage       write garbage bytes between frames
  b, bad           corrupt the next frame (bad CRC / misread line)
  a, drop-ack      lose the next ACK from the host (croupier-v1)
  s, split         toggle writing frames one byte at a time
  h, hang          toggle a hung shoe (plugged in, silent)
  u, unplug        pull the cable
  r, replug        plug it back in
  n, new-shoe      shuffle a fresh shoe (not with --script)
  lid | jam | misread | clear   set a sensor flag (croupier-v1 status frame)
  ?, help          this text
  q, quit          stop the simulator";

/// One parsed command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimCommand {
    /// Deal this many cards.
    Deal(usize),
    /// Write garbage.
    Garbage,
    /// Corrupt the next frame.
    Corrupt,
    /// Lose the next ACK.
    DropAck,
    /// Toggle split writes.
    ToggleSplit,
    /// Toggle hang.
    ToggleHang,
    /// Unplug.
    Unplug,
    /// Replug.
    Replug,
    /// Fresh shuffled shoe.
    NewShoe,
    /// Set the sensor flags.
    Status(ShoeStatus),
    /// Print help.
    Help,
    /// Stop.
    Quit,
}

/// Why a line is not a command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown command {0:?}; type ? for help")]
pub struct UnknownCommand(pub String);

impl SimCommand {
    /// Parses one line; a blank line deals one card.
    pub fn parse(line: &str) -> Result<SimCommand, UnknownCommand> {
        let mut words = line.split_whitespace();
        let unknown = || UnknownCommand(line.trim().to_string());
        let flag = |lid_open, jam, misread| {
            SimCommand::Status(ShoeStatus {
                lid_open,
                jam,
                misread,
            })
        };
        let command = match words.next() {
            None => SimCommand::Deal(1),
            Some("d" | "deal") => match words.next() {
                None => SimCommand::Deal(1),
                Some(n) => SimCommand::Deal(n.parse().map_err(|_| unknown())?),
            },
            Some("g" | "garbage") => SimCommand::Garbage,
            Some("b" | "bad") => SimCommand::Corrupt,
            Some("a" | "drop-ack") => SimCommand::DropAck,
            Some("s" | "split") => SimCommand::ToggleSplit,
            Some("h" | "hang") => SimCommand::ToggleHang,
            Some("u" | "unplug") => SimCommand::Unplug,
            Some("r" | "replug") => SimCommand::Replug,
            Some("n" | "new-shoe") => SimCommand::NewShoe,
            Some("lid") => flag(true, false, false),
            Some("jam") => flag(false, true, false),
            Some("misread") => flag(false, false, true),
            Some("clear") => flag(false, false, false),
            Some("?" | "help") => SimCommand::Help,
            Some("q" | "quit") => SimCommand::Quit,
            Some(_) => return Err(unknown()),
        };
        match words.next() {
            None => Ok(command),
            Some(_) => Err(unknown()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_short_and_long_forms() {
        assert_eq!(SimCommand::parse(""), Ok(SimCommand::Deal(1)));
        assert_eq!(SimCommand::parse("d"), Ok(SimCommand::Deal(1)));
        assert_eq!(SimCommand::parse(" deal 5 "), Ok(SimCommand::Deal(5)));
        assert_eq!(SimCommand::parse("u"), Ok(SimCommand::Unplug));
        assert_eq!(SimCommand::parse("drop-ack"), Ok(SimCommand::DropAck));
        assert_eq!(
            SimCommand::parse("jam"),
            Ok(SimCommand::Status(ShoeStatus {
                jam: true,
                ..ShoeStatus::default()
            }))
        );
        for bad in ["deal x", "deal 1 2", "explode", "u now"] {
            assert!(SimCommand::parse(bad).is_err(), "{bad:?}");
        }
    }
}
