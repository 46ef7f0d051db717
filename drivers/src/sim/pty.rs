//! A pseudo-terminal pair in raw mode: the simulator holds the master, the host opens the
//! slave path like any serial device. No socat needed.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::pty::{openpty, OpenptyResult};
use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};
use nix::unistd::ttyname;
use tokio::io::unix::AsyncFd;

/// One plugged-in "cable": closing it ([`drop`]) is an unplug, and the host's next read on
/// the slave fails with EIO just as with a USB adapter pulled out.
#[derive(Debug)]
pub struct Pty {
    master: AsyncFd<OwnedFd>,
    // Held so the line stays up while the host closes and reopens the slave; dropping it
    // together with the master is what makes the unplug visible.
    _slave: OwnedFd,
    path: PathBuf,
}

impl Pty {
    /// Opens a pair; must be called within a tokio runtime.
    pub fn open() -> io::Result<Pty> {
        let OpenptyResult { master, slave } = openpty(None, None)?;
        // Raw before the host opens it: the default line discipline would echo our
        // bytes back to us and translate CR, corrupting binary frames.
        let mut termios = tcgetattr(&slave)?;
        cfmakeraw(&mut termios);
        tcsetattr(&slave, SetArg::TCSANOW, &termios)?;
        let path = ttyname(&slave)?;
        fcntl(&master, FcntlArg::F_SETFL(OFlag::O_NONBLOCK))?;
        // SAFETY: an `OwnedFd` is open for its whole life and always returns the same fd,
        // and the `AsyncFd` owns it, so the fd stays registered only while it is valid.
        let master = unsafe { AsyncFd::register(master) }?;
        Ok(Pty {
            master,
            _slave: slave,
            path,
        })
    }

    /// The slave device path (`/dev/pts/N`) for the host to open.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads what the host wrote.
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.master.readable().await?;
            match guard.try_io(|fd| Ok(nix::unistd::read(fd.get_ref(), buf)?)) {
                Ok(result) => return result,
                Err(_would_block) => continue,
            }
        }
    }

    /// Writes all of `buf` towards the host.
    pub async fn write_all(&self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            let mut guard = self.master.writable().await?;
            match guard.try_io(|fd| Ok(nix::unistd::write(fd.get_ref(), buf)?)) {
                Ok(Ok(n)) => buf = &buf[n..],
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
        Ok(())
    }
}
