//! `table.toml`: the table service's configuration. `config/table.toml` documents every
//! key and is compiled in as the default ([`DEFAULT_TOML`]).

use crate::engine::{Variant, VariantError};
use croupier_drivers::buttons::ButtonsConfig;
use croupier_drivers::shoe::config::ShoeConfig;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// The text of `config/table.toml`, used when `croupier run` gets no `--config`.
pub const DEFAULT_TOML: &str = include_str!("../../config/table.toml");

/// The longest a long poll (`GET /api/status?after=…&wait_ms=…`) may wait. The HTTP edge
/// enforces it; it lives here because `[http] request_timeout_ms` must exceed it.
pub const MAX_WAIT_MS: u64 = 30_000;

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableConfig {
    /// `[table]`.
    pub table: TableSection,
    /// `[store]`.
    #[serde(default)]
    pub store: StoreSection,
    /// `[http]`.
    #[serde(default)]
    pub http: HttpSection,
    /// `[shoe]`.
    #[serde(default)]
    pub shoe: ShoeSection,
    /// `[buttons]`: the drivers' button-box settings.
    #[serde(default = "fake_buttons")]
    pub buttons: ButtonsConfig,
    /// `[demo]`.
    #[serde(default)]
    pub demo: DemoSection,
    /// `[disputes]`.
    #[serde(default)]
    pub disputes: DisputesSection,
    /// `[auth]`: lockout and sessions.
    #[serde(default)]
    pub auth: crate::auth::AuthConfig,
    /// `[publish]`: the studio's broker (absent: the table talks to no broker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publish: Option<crate::broker::PublishSection>,
    /// `[integrity]`: the shoe-integrity checks.
    #[serde(default)]
    pub integrity: IntegritySection,
    /// `[play]`: remote players.
    #[serde(default)]
    pub play: super::remote::PlaySection,
}

/// `[integrity]`: when a finished shoe counts as not shuffled (docs/src/shoe-integrity.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IntegritySection {
    /// How many earlier shoes each finished shoe is compared with (1..=32).
    pub history: usize,
    /// A run of more cards than this in the same order as one of those shoes raises the
    /// alert (at least 3: two shuffled shoes share runs of 2 and 3 by chance).
    pub max_common_run: usize,
    /// The sequence-neighbour z-score above which the shoe's own order raises the alert
    /// (at least 2).
    pub max_order_z: f64,
    /// Shoes with fewer dealt cards (burns included) are not judged (at least 10).
    pub min_cards: usize,
}

impl Default for IntegritySection {
    fn default() -> IntegritySection {
        let t = crate::integrity::shoe::Thresholds::default();
        IntegritySection {
            history: crate::table::IntegritySettings::default().history,
            max_common_run: t.max_common_run,
            max_order_z: t.max_order_z,
            min_cards: t.min_cards,
        }
    }
}

impl IntegritySection {
    /// The table task's settings.
    pub fn settings(&self) -> crate::table::IntegritySettings {
        crate::table::IntegritySettings {
            history: self.history,
            thresholds: crate::integrity::shoe::Thresholds {
                max_common_run: self.max_common_run,
                max_order_z: self.max_order_z,
                min_cards: self.min_cards,
            },
        }
    }

    /// The first unusable setting: its key and why.
    fn unusable(&self) -> Option<(&'static str, String)> {
        let max = crate::table::MAX_HISTORY;
        if !(1..=max).contains(&self.history) {
            return Some((
                "history",
                format!("integrity.history = {}: must be 1 to {max}", self.history),
            ));
        }
        if self.max_common_run < 3 {
            return Some((
                "max_common_run",
                format!(
                    "integrity.max_common_run = {}: must be at least 3 (properly shuffled shoes share runs of 2 and 3 by chance)",
                    self.max_common_run
                ),
            ));
        }
        if !(self.max_order_z.is_finite() && self.max_order_z >= 2.0) {
            return Some((
                "max_order_z",
                format!(
                    "integrity.max_order_z = {}: must be at least 2",
                    self.max_order_z
                ),
            ));
        }
        if self.min_cards < 10 {
            return Some((
                "min_cards",
                format!(
                    "integrity.min_cards = {}: must be at least 10",
                    self.min_cards
                ),
            ));
        }
        None
    }
}

/// `[disputes]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DisputesSection {
    /// Seconds a settled round's result stays provisional (open to disputes) before it is
    /// final; the next round opens after. 0: results are final at once.
    pub window_seconds: u32,
    /// A cancellation or a card correction needs a second supervisor to confirm it.
    pub two_person_rule: bool,
}

impl Default for DisputesSection {
    fn default() -> DisputesSection {
        DisputesSection {
            window_seconds: 5,
            two_person_rule: false,
        }
    }
}

impl DisputesSection {
    /// The table task's settings.
    pub fn settings(&self) -> crate::table::DisputeSettings {
        crate::table::DisputeSettings {
            window: std::time::Duration::from_secs(u64::from(self.window_seconds)),
            two_person_rule: self.two_person_rule,
        }
    }
}

impl TableConfig {
    /// Whether this is a demo configuration (simulated shoe and demo players): only then
    /// does a start with no users create the demo accounts.
    pub fn is_demo(&self) -> bool {
        self.shoe.simulated && self.demo.players
    }
}

fn fake_buttons() -> ButtonsConfig {
    ButtonsConfig {
        driver: croupier_drivers::buttons::ButtonDriver::Fake,
        ..ButtonsConfig::default()
    }
}

/// `[table]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSection {
    /// The table's id in the database and the logs.
    pub id: String,
    /// Shown on the status page.
    #[serde(default)]
    pub name: String,
    /// A built-in variant's stem or a path to a variant file.
    pub variant: String,
    /// The ISO 4217 code of the table's currency; every amount is a count of its minor
    /// unit.
    #[serde(default = "default_currency")]
    pub currency: String,
    /// Decimal places of the minor unit; must be the standard's for `currency` (absent:
    /// the standard's).
    #[serde(default)]
    pub minor_units: Option<u8>,
    /// The betting unit, minor units: every bet taken at this table (main, side, behind,
    /// boxes) is a whole multiple of it — the smallest chip. 1: any amount.
    #[serde(default = "default_bet_unit")]
    pub bet_unit: i64,
}

fn default_bet_unit() -> i64 {
    1
}

fn default_currency() -> String {
    "EUR".into()
}

impl TableSection {
    /// The currency (checked when the file was parsed; the euro if it somehow is not).
    pub fn currency(&self) -> crate::currency::Currency {
        crate::currency::Currency::new(&self.currency, self.minor_units).unwrap_or_default()
    }
}

/// `[store]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreSection {
    /// The SQLite database file.
    pub path: PathBuf,
    /// Create a new table where the file is empty or an anchor is left without its
    /// database (`croupier run --init`; never from the file).
    #[serde(skip)]
    pub init: bool,
}

impl Default for StoreSection {
    fn default() -> StoreSection {
        StoreSection {
            path: PathBuf::from("data/croupier.db"),
            init: false,
        }
    }
}

/// `[http]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HttpSection {
    /// Listen address; port 0 picks a free one.
    pub bind: String,
    /// `[http.tls]`: serve HTTPS with this certificate and key (absent: plain HTTP).
    pub tls: Option<TlsSection>,
    /// A connection must deliver a complete request head within this long of opening or
    /// of its previous response ending: closes half-sent requests and idle keep-alive
    /// connections alike (hyper's header-read timer runs while a connection waits).
    pub header_timeout_ms: u64,
    /// A request must be answered (its body read included) within this long, or 408.
    /// A stream (`/ws/*`, SSE) is answered at once and then not cut. Above the long poll's
    /// longest wait ([`MAX_WAIT_MS`]).
    pub request_timeout_ms: u64,
    /// The largest request body, in bytes; a larger one gets 413 and changes nothing.
    pub body_limit_bytes: usize,
    /// HTTP connections served at once (a connection upgraded to `/ws/public` leaves this
    /// count: the public cap below counts it). More wait in the kernel's backlog.
    pub max_connections: usize,
    /// Public requests and streams at once (`/public`, `/ws/public`, `/sse/public`,
    /// `/api/public`, `/api/results`, `/api/disputes/player`), `/ws/public` viewers
    /// included; beyond it they get
    /// 503. The panel, its files, `/api/*`, `/ws/dealer` and the health routes are never
    /// counted here, so public traffic cannot lock staff out.
    pub max_public: usize,
    /// Connections kept for staff: a public request that finds fewer than this many of
    /// `max_connections` free (one is always held for the next connection) gets 503 (and its connection closed), so held-open public
    /// streams can never take the last connections the panel and the API need.
    pub staff_reserve: usize,
}

impl Default for HttpSection {
    fn default() -> HttpSection {
        HttpSection {
            bind: "127.0.0.1:8080".into(),
            tls: None,
            header_timeout_ms: 10_000,
            request_timeout_ms: 40_000,
            body_limit_bytes: 64 * 1024,
            max_connections: 1024,
            max_public: 12_000,
            staff_reserve: 64,
        }
    }
}

impl HttpSection {
    /// These limits fitted to a process allowed `fds` open files (the service raised its
    /// soft limit first, `process::raise_fd_limit`): every connection and every public
    /// stream holds a descriptor, so `max_connections` + `max_public` + the service's own
    /// (`process::FD_OVERHEAD`) must fit, or public viewers could take the descriptors the
    /// panel, the API and the health checks need. `max_public` gives way first, then
    /// `max_connections` (keeping `staff_reserve` of it). Answers what was lowered, for
    /// the log (`None`: nothing).
    pub fn fit_to_fds(&mut self, fds: u64) -> Option<String> {
        let budget =
            usize::try_from(fds.saturating_sub(crate::process::FD_OVERHEAD)).unwrap_or(usize::MAX);
        let (connections, public) = (self.max_connections, self.max_public);
        // Connections keep what the public cap leaves them, and never less than half the
        // budget (nor than the staff's reserve and a few more); viewers get the rest.
        let floor = (self.staff_reserve + 8).min(connections);
        let share = budget.saturating_sub(public).max(budget.div_ceil(2));
        self.max_connections = connections.min(share).max(floor);
        self.max_public = public.min(budget.saturating_sub(self.max_connections));
        (self.max_connections != connections || self.max_public != public).then(|| {
            format!(
                "open-file limit {fds}: max_public {public} -> {}, max_connections {connections} -> {} (staff keep {} of them)",
                self.max_public, self.max_connections, self.staff_reserve
            )
        })
    }

    /// What is wrong with the limits, as `(key, message)`.
    pub fn check_limits(&self) -> Result<(), (&'static str, String)> {
        if self.header_timeout_ms == 0 {
            return Err((
                "header_timeout_ms",
                "http.header_timeout_ms: must be above 0".into(),
            ));
        }
        let longest_poll = MAX_WAIT_MS;
        if self.request_timeout_ms <= longest_poll {
            return Err((
                "request_timeout_ms",
                format!(
                    "http.request_timeout_ms {}: must be above the long poll's longest wait ({longest_poll} ms)",
                    self.request_timeout_ms
                ),
            ));
        }
        if self.body_limit_bytes < 1024 {
            return Err((
                "body_limit_bytes",
                "http.body_limit_bytes: at least 1024".into(),
            ));
        }
        if self.max_connections < 8 {
            return Err(("max_connections", "http.max_connections: at least 8".into()));
        }
        if self.staff_reserve == 0 || self.staff_reserve >= self.max_connections {
            return Err((
                "staff_reserve",
                "http.staff_reserve: at least 1 and below http.max_connections".into(),
            ));
        }
        if self.max_public == 0 {
            return Err(("max_public", "http.max_public: at least 1".into()));
        }
        Ok(())
    }
}

/// `[http.tls]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsSection {
    /// The certificate chain (PEM), leaf first.
    pub cert: PathBuf,
    /// The private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// `[shoe]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ShoeSection {
    /// Start the simulator on a pseudo-terminal and read it through the serial driver.
    pub simulated: bool,
    /// The serial driver's settings (`port` is ignored when simulated).
    pub serial: ShoeConfig,
    /// The simulator's settings.
    pub sim: SimSection,
}

impl Default for ShoeSection {
    fn default() -> ShoeSection {
        ShoeSection {
            simulated: true,
            serial: ShoeConfig::default(),
            sim: SimSection::default(),
        }
    }
}

/// `[shoe.sim]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimSection {
    /// Decks; 0 = the variant's.
    pub decks: u8,
    /// Cut card position as a fraction of the cards.
    pub penetration: f64,
    /// Shuffle seed; 0 = random.
    pub seed: u64,
}

impl Default for SimSection {
    fn default() -> SimSection {
        SimSection {
            decks: 0,
            penetration: 0.75,
            seed: 0,
        }
    }
}

/// `[demo]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DemoSection {
    /// Run the demo players and dealer.
    pub players: bool,
    /// Seats they occupy.
    pub seats: u8,
    /// A seat's usual main bet, minor units; each player bets 1 to 4 times it.
    pub bet: i64,
    /// Pause between actions, milliseconds.
    pub pace_ms: u64,
    /// The chance, in percent (0 to 100), that a demo player also bets each of the game's
    /// side bets, at a fifth of `bet` within the side bet's limits: 0 keeps the demo to
    /// main bets.
    pub side_bets: u8,
}

impl Default for DemoSection {
    fn default() -> DemoSection {
        DemoSection {
            players: false,
            seats: 3,
            bet: 2500,
            pace_ms: 400,
            side_bets: 0,
        }
    }
}

/// A configuration problem, located in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or `<built-in>`).
    pub file: String,
    /// 1-based line (0: the file as a whole, which could not be read).
    pub line: usize,
    /// 1-based column (0 with line 0).
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => write!(f, "{}: {}", self.file, self.message),
            line => write!(f, "{}:{line}:{}: {}", self.file, self.column, self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// The dotted key set on `line` (1-based) of `text` — `store.path` for `path = …` under
/// `[store]` — if that line sets one.
fn key_at(text: &str, line: usize) -> Option<String> {
    let mut section = String::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if let Some(name) = t.strip_prefix('[').and_then(|t| t.split(']').next()) {
            section = name.trim_matches(|c| c == '[' || c == ' ').to_string();
        }
        if i + 1 == line {
            let (key, _) = t.split_once('=')?;
            let key = key.trim();
            return Some(if section.is_empty() {
                key.to_string()
            } else {
                format!("{section}.{key}")
            });
        }
    }
    None
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Where `key` is set inside `[section]` (the section header if the key is absent, the
/// top of the file if the section is too).
fn locate(text: &str, section: &str, key: &str) -> (usize, usize) {
    let header = format!("[{section}]");
    let mut in_section = section.is_empty();
    let mut header_at = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with('[') {
            in_section = t.starts_with(&header);
            if in_section {
                header_at = Some(i + 1);
            }
            continue;
        }
        if in_section {
            let name = t.split('=').next().unwrap_or("").trim();
            if name == key {
                return (i + 1, line.len() - t.len() + 1);
            }
        }
    }
    (header_at.unwrap_or(1), 1)
}

impl TableConfig {
    /// The built-in default.
    pub fn embedded() -> Result<TableConfig, ConfigError> {
        TableConfig::parse("<built-in config/table.toml>", DEFAULT_TOML)
    }

    /// Reads and checks a file.
    pub fn load(path: &Path) -> Result<TableConfig, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: file.clone(),
            line: 0,
            column: 0,
            message: format!("cannot read: {e}"),
        })?;
        TableConfig::parse(&file, &text)
    }

    /// Parses and checks `text`, naming `file` in errors.
    pub fn parse(file: &str, text: &str) -> Result<TableConfig, ConfigError> {
        let at = |(line, column): (usize, usize), message: String| ConfigError {
            file: file.to_string(),
            line,
            column,
            message,
        };
        let config: TableConfig = toml::from_str(text).map_err(|e| {
            let pos = e.span().map_or((1, 1), |s| line_col(text, s.start));
            let message = e.message().trim();
            // A value of the wrong type names its key, as the semantic checks do.
            match key_at(text, pos.0).filter(|k| !message.contains(k.as_str())) {
                Some(key) => at(pos, format!("{key}: {message}")),
                None => at(pos, message.to_string()),
            }
        })?;
        let id = &config.table.id;
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(at(
                locate(text, "table", "id"),
                format!("table.id {id:?}: use letters, digits, '-' and '_'"),
            ));
        }
        if let Err(e) = config.variant() {
            return Err(at(locate(text, "table", "variant"), e));
        }
        if let Err(e) =
            crate::currency::Currency::new(&config.table.currency, config.table.minor_units)
        {
            let key = match e {
                crate::currency::CurrencyError::WrongExponent { .. } => "minor_units",
                _ => "currency",
            };
            return Err(at(locate(text, "table", key), format!("table.{key}: {e}")));
        }
        if config.table.bet_unit < 1 {
            return Err(at(
                locate(text, "table", "bet_unit"),
                "table.bet_unit: at least 1 (minor units)".to_string(),
            ));
        }
        if config.http.bind.parse::<SocketAddr>().is_err() {
            return Err(at(
                locate(text, "http", "bind"),
                format!(
                    "http.bind {:?}: expected an address and port such as 127.0.0.1:8080",
                    config.http.bind
                ),
            ));
        }
        if let Err((key, why)) = config.http.check_limits() {
            return Err(at(locate(text, "http", key), why));
        }
        if let Some(Err(e)) = config.publish.as_ref().map(|p| p.validate()) {
            let key = e
                .strip_prefix("publish.")
                .and_then(|k| k.split([' ', ':']).next())
                .unwrap_or("")
                .to_string();
            return Err(at(locate(text, "publish", &key), e));
        }
        if let Err(e) = config.shoe.serial.validate() {
            let key = e.to_string();
            let key = key
                .split([' ', '='])
                .next()
                .and_then(|k| k.rsplit('.').next())
                .unwrap_or("")
                .to_string();
            let section = if key == "suit_letters" {
                "shoe.serial.ascii"
            } else {
                "shoe.serial"
            };
            return Err(at(locate(text, section, &key), e.to_string()));
        }
        let p = config.shoe.sim.penetration;
        if !(p > 0.0 && p < 1.0) {
            return Err(at(
                locate(text, "shoe.sim", "penetration"),
                format!("shoe.sim.penetration = {p}: must be between 0 and 1"),
            ));
        }
        if let Err(e) = config.buttons.validate() {
            return Err(at(locate(text, "buttons", "pins"), e.to_string()));
        }
        if let Some((key, why)) = config.auth.unusable() {
            return Err(at(locate(text, "auth", key), why));
        }
        if let Some((key, why)) = config.integrity.unusable() {
            return Err(at(locate(text, "integrity", key), why));
        }
        if let Some((key, why)) = config.play.unusable() {
            return Err(at(locate(text, "play", key), why));
        }
        if config.demo.players && !config.shoe.simulated {
            return Err(at(
                locate(text, "demo", "players"),
                "demo.players needs shoe.simulated = true: the demo dealer deals from the \
                 simulated shoe"
                    .into(),
            ));
        }
        if config.demo.players && config.demo.seats == 0 {
            return Err(at(
                locate(text, "demo", "seats"),
                "demo.seats must be at least 1".into(),
            ));
        }
        if config.demo.side_bets > 100 {
            return Err(at(
                locate(text, "demo", "side_bets"),
                format!(
                    "demo.side_bets is a chance in percent, 0 to 100, not {}",
                    config.demo.side_bets
                ),
            ));
        }
        Ok(config)
    }

    /// The game as the table shows it (its snapshot's `variant`, the public view, the
    /// published stream, the relays' lobby): a built-in variant's stem (`deluxe`), or
    /// the `name` of a variant given as a file — never the file's path, which is the
    /// server's business (issue #59).
    pub fn game(&self, variant: &Variant) -> String {
        if Variant::built_in_name(&self.table.variant).is_some() {
            self.table.variant.clone()
        } else {
            variant.name.trim().to_string()
        }
    }

    /// Loads the configured variant (built-in stem or file path).
    pub fn variant(&self) -> Result<Variant, String> {
        let name = &self.table.variant;
        if let Some(v) = Variant::built_in(name) {
            return v.map_err(|e: VariantError| e.to_string());
        }
        let path = Path::new(name);
        if path.is_file() {
            let variant = Variant::load(path).map_err(|e| e.to_string())?;
            if variant.name.trim().is_empty() {
                return Err(format!(
                    "table.variant {name:?}: the variant file has no `name` (viewers see a \
                     game by its name, never by its file)"
                ));
            }
            return Ok(variant);
        }
        let known: Vec<&str> = crate::engine::variant::BUILT_IN
            .iter()
            .map(|(n, _)| *n)
            .collect();
        Err(format!(
            "table.variant {name:?}: neither a built-in variant ({}) nor a file",
            known.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_connection_limits_fit_under_the_open_file_limit() {
        let fitted = |fds| {
            let mut http = HttpSection::default();
            let said = http.fit_to_fds(fds);
            (http.max_connections, http.max_public, said.is_some())
        };
        // The unit's 16,384: the defaults fit, nothing said.
        assert_eq!(fitted(16_384), (1_024, 12_000, false));
        // 256: 192 after the service's own, shared between staff and viewers.
        assert_eq!(fitted(256), (96, 96, true));
        // A login shell's 1,024: connections kept whole below half, viewers the rest.
        assert_eq!(fitted(1_024), (480, 480, true));
        // Very few: staff keep their reserve and a few more; no viewer at all.
        assert_eq!(fitted(100), (72, 0, true));
        // Whatever the limit, the two plus the overhead fit (or viewers are shut out).
        for fds in [64, 65, 200, 300, 1_000, 5_000, 13_000, 20_000] {
            let (c, p, _) = fitted(fds);
            let budget = usize::try_from(fds - crate::process::FD_OVERHEAD).unwrap_or(0);
            assert!(c + p <= budget.max(72), "{fds}: {c} + {p}");
            assert!(c >= 72, "{fds}: staff keep their reserve");
        }
    }

    use super::*;

    #[test]
    fn the_embedded_default_is_valid_and_runs_the_demo() {
        let c = TableConfig::embedded().expect("valid");
        assert!(c.shoe.simulated);
        assert!(c.demo.players);
        assert_eq!(c.http.bind, "127.0.0.1:8080");
        assert_eq!(c.store.path, PathBuf::from("data/croupier.db"));
        assert_eq!(
            c.buttons.driver,
            croupier_drivers::buttons::ButtonDriver::Fake
        );
    }

    #[test]
    fn unusable_integrity_settings_are_refused_at_their_key() {
        let c = TableConfig::embedded().expect("valid");
        assert_eq!(
            c.integrity.settings(),
            crate::table::IntegritySettings::default()
        );
        for (from, to, key) in [
            ("history = 5", "history = 0", "integrity.history"),
            ("history = 5", "history = 33", "integrity.history"),
            (
                "max_common_run = 5",
                "max_common_run = 2",
                "integrity.max_common_run",
            ),
            (
                "max_order_z = 4.0",
                "max_order_z = 1.5",
                "integrity.max_order_z",
            ),
            ("min_cards = 52", "min_cards = 9", "integrity.min_cards"),
        ] {
            let text = DEFAULT_TOML.replace(from, to);
            let e = TableConfig::parse("t.toml", &text).expect_err(to);
            let line = text.lines().position(|l| l == to).expect("line") + 1;
            assert_eq!(e.line, line, "{e}");
            assert!(e.message.starts_with(key), "{e}");
        }
    }

    #[test]
    fn the_players_protections_and_presence_are_read_and_unusable_values_refused_at_their_key() {
        let c = TableConfig::embedded().expect("valid");
        assert!(c.play.session_clock);
        assert_eq!(c.play.reality_check_minutes, 60);
        let text = DEFAULT_TOML
            .replace("session_clock = true", "session_clock = false")
            .replace("reality_check_minutes = 60", "reality_check_minutes = 0");
        let c = TableConfig::parse("t.toml", &text).expect("0 turns the check off");
        assert!(!c.play.session_clock);
        assert_eq!(c.play.reality_check_minutes, 0);
        let to = "reality_check_minutes = 1441";
        let text = DEFAULT_TOML.replace("reality_check_minutes = 60", to);
        let e = TableConfig::parse("t.toml", &text).expect_err("over a day");
        let line = text.lines().position(|l| l == to).expect("line") + 1;
        assert_eq!(e.line, line, "{e}");
        assert!(e.message.starts_with("play.reality_check_minutes"), "{e}");
        // A silent player is away after a round, by default; never is not a choice.
        assert_eq!(
            TableConfig::embedded()
                .expect("valid")
                .play
                .away_after_rounds,
            1
        );
        for (to, ok) in [
            ("away_after_rounds = 3", true),
            ("away_after_rounds = 0", false),
        ] {
            let text = DEFAULT_TOML.replace("away_after_rounds = 1", to);
            match TableConfig::parse("t.toml", &text) {
                Ok(c) => assert!(ok && c.play.away_after_rounds == 3, "{to}"),
                Err(e) => {
                    assert!(!ok, "{to}: {e}");
                    let line = text.lines().position(|l| l == to).expect("line") + 1;
                    assert_eq!(e.line, line, "{e}");
                    assert!(e.message.starts_with("play.away_after_rounds"), "{e}");
                }
            }
        }
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_key_and_an_unreadable_file_no_position() {
        let text = DEFAULT_TOML.replace("path = \"data/croupier.db\"", "path = 42");
        let e = TableConfig::parse("t.toml", &text).expect_err("a number for a path");
        assert!(e.message.starts_with("store.path: "), "{e}");
        let e = TableConfig::load(Path::new("/nonexistent/table.toml")).expect_err("missing");
        assert_eq!(
            e.to_string(),
            "/nonexistent/table.toml: cannot read: No such file or directory (os error 2)"
        );
    }

    #[test]
    fn unknown_keys_are_errors_with_line_and_column() {
        let text = DEFAULT_TOML.replace("pace_ms = 400", "pace_ms = 400\nspeed = 2");
        let e = TableConfig::parse("t.toml", &text).expect_err("unknown key");
        let line = text
            .lines()
            .position(|l| l.starts_with("speed"))
            .expect("line")
            + 1;
        assert_eq!((e.file.as_str(), e.line, e.column), ("t.toml", line, 1));
        assert!(e.message.contains("speed"), "{e}");
    }

    #[test]
    fn semantic_errors_point_at_the_key() {
        let text = DEFAULT_TOML.replace("data_bits = 8 ", "data_bits = 9 ");
        let e = TableConfig::parse("t.toml", &text).expect_err("bad bits");
        let line = text
            .lines()
            .position(|l| l.starts_with("data_bits"))
            .expect("line")
            + 1;
        assert_eq!(e.line, line, "{e}");
        let text = DEFAULT_TOML.replace("variant = \"deluxe\"", "variant = \"poker\"");
        let e = TableConfig::parse("t.toml", &text).expect_err("bad variant");
        assert!(e.to_string().contains("poker"), "{e}");
        let text = DEFAULT_TOML.replace("127.0.0.1:8080", "localhost");
        assert!(TableConfig::parse("t.toml", &text).is_err());
    }

    #[test]
    fn the_currency_is_an_iso_code_with_its_own_exponent() {
        let c = TableConfig::embedded().expect("valid");
        assert_eq!(c.table.currency().format(2500), "€25.00");
        let line_of = |text: &str, key: &str| {
            text.lines().position(|l| l.starts_with(key)).expect("line") + 1
        };
        let text = DEFAULT_TOML.replace("currency = \"EUR\"", "currency = \"EURO\"");
        let e = TableConfig::parse("t.toml", &text).expect_err("not a code");
        assert_eq!((e.line, e.column), (line_of(&text, "currency"), 1), "{e}");
        assert!(e.message.contains("ISO 4217"), "{e}");
        let text = DEFAULT_TOML.replace("minor_units = 2", "minor_units = 3");
        let e = TableConfig::parse("t.toml", &text).expect_err("wrong exponent");
        assert_eq!(e.line, line_of(&text, "minor_units"), "{e}");
        assert!(e.message.contains("EUR has 2 decimal place"), "{e}");
        let text = DEFAULT_TOML
            .replace("currency = \"EUR\"", "currency = \"JPY\"")
            .replace("minor_units = 2", "minor_units = 0");
        let c = TableConfig::parse("t.toml", &text).expect("yen");
        assert_eq!(c.table.currency().format(300), "¥300");
    }
}
