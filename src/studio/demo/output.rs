//! What the demo says: its URLs on stdout (scripts and tests read them, so the format is
//! fixed), and its own notes on stderr, neither ever a panic on a closed stream. Apart
//! from the processes, since everything the demo prints goes through here.

use super::PIT_BADGE;
use std::path::Path;

/// What a started table offers.
pub(super) struct TableUrls {
    pub(super) id: String,
    pub(super) game: String,
    pub(super) page: String,
    pub(super) player: String,
}

/// The demo's URLs, one per line, `label: URL` (scripts and the test read them).
pub(super) fn print_urls(
    dir: &Path,
    nats: &str,
    tables: &[TableUrls],
    relay: &str,
    floor: Option<&(String, String)>,
) {
    let mut out = String::new();
    out += &format!(
        "croupier studio demo in {} (each process's log is there)\n",
        dir.display()
    );
    out += &format!("broker: {nats}\n");
    for t in tables {
        out += &format!("table {} ({}): {}\n", t.id, t.game, t.page);
        out += &format!("  player's link: {}\n", t.player);
        out += &format!("  public page: http://{relay}/public?table={}\n", t.id);
    }
    // The tables seed their demo accounts on a demo start: the panels need one of them.
    let accounts: Vec<String> = crate::auth::accounts::DEMO_USERS
        .iter()
        .map(|(badge, name, _, pin)| format!("badge {badge}, PIN {pin} ({name})"))
        .collect();
    out += &format!("tables' panels: {}\n", accounts.join("; "));
    out += &format!("relay lobby: http://{relay}/\n");
    if let Some((page, secret)) = floor {
        out += &format!("pit page: {page} (badge {PIT_BADGE}, password {secret})\n");
    }
    out += "Ctrl-C stops everything.";
    say(&out);
}

/// A line (or lines) on stdout. A closed stdout must not stop the demo half-way (where
/// `println!` would panic): its processes run on, and Ctrl-C still stops them.
pub(super) fn say(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
}

/// A line on stderr, `croupier: `-prefixed as the other commands' messages; never a panic.
pub(super) fn tell(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "croupier: {text}");
}
