//! `croupier player ...`: remote players and the embedded wallet, straight on the table's
//! database (short `BEGIN IMMEDIATE` transactions, like `croupier user`: they work while
//! the service runs). `add` and `link` print a launch link for the player's page.

use super::args::TableArgs;
use super::fail;
use clap::Subcommand;
use croupier::wallet::ledger::Ledger;
use croupier::wallet::Wallet;
use std::process::ExitCode;

/// `croupier player …`.
#[derive(Subcommand)]
pub enum PlayerCommand {
    /// Adds a player with an opening balance and prints a launch link for /play.
    Add {
        /// The name shown.
        #[arg(long)]
        name: String,
        /// The opening balance in the table's currency (e.g. 500.00).
        #[arg(long, default_value = "0")]
        balance: String,
        /// The player id (default: the name in lower case).
        #[arg(long)]
        id: Option<String>,
    },
    /// Deposits money (a negative amount withdraws).
    Credit {
        /// The player id.
        id: String,
        /// The amount in the table's currency (e.g. 100.00 or -20).
        #[arg(allow_hyphen_values = true)]
        amount: String,
    },
    /// Prints the player's balance.
    Balance {
        /// The player id.
        id: String,
    },
    /// Ends a player's sessions at once: every one of the player's, or one link.
    Revoke {
        /// The player id (every live session of theirs).
        #[arg(required_unless_present = "link", conflicts_with = "link")]
        id: Option<String>,
        /// One launch link (or its token) instead.
        #[arg(long)]
        link: Option<String>,
    },
    /// Disables a player: every session ends, and none opens until `enable`.
    Disable {
        /// The player id.
        id: String,
    },
    /// Enables a disabled player again (new launch links work; revoked ones stay revoked).
    Enable {
        /// The player id.
        id: String,
    },
    /// Prints a new launch link.
    Link {
        /// The player id.
        id: String,
    },
    /// Makes a new credential for the operator's platform (replacing the last) and prints
    /// it: the platform opens players' sessions with it (POST /api/play/sessions).
    PlatformKey,
}

/// `croupier player ...`.
pub async fn player(command: PlayerCommand, table: TableArgs) -> ExitCode {
    let (c, path) = match table.load() {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let currency = c.table.currency();
    let pool = match croupier::auth::open_pool(&path).await {
        Ok(p) => p,
        Err(e) => return fail(format!("{}: {e}", path.display())),
    };
    let ledger = Ledger::new(pool.clone());
    let base = c.play.base_url.clone().unwrap_or_else(|| {
        let bind = c.http.bind.replace("0.0.0.0", "127.0.0.1");
        format!("http://{bind}")
    });
    let link = |id: String| {
        let pool = pool.clone();
        let table = c.table.id.clone();
        let hours = c.play.launch_hours;
        let base = base.clone();
        async move {
            croupier::play::sessions::open(&pool, &id, &table, hours)
                .await
                .map(|t| croupier::play::sessions::link(&base, &t))
        }
    };
    match command {
        PlayerCommand::Add { name, balance, id } => {
            let amount = match currency.parse(&balance) {
                Ok(a) => a,
                Err(e) => return fail(e),
            };
            let id = id.unwrap_or_else(|| name.trim().to_ascii_lowercase().replace(' ', "-"));
            if let Err(e) = ledger.add_player(&id, &name, amount).await {
                return fail(e);
            }
            match link(id.clone()).await {
                Ok(l) => {
                    println!(
                        "player {id} ({}) added with {}",
                        name.trim(),
                        currency.format(amount)
                    );
                    println!("launch link ({} h): {l}", c.play.launch_hours);
                    ExitCode::SUCCESS
                }
                Err(e) => fail(e),
            }
        }
        PlayerCommand::Credit { id, amount } => {
            let (negative, text) = match amount.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, amount.as_str()),
            };
            let value = match currency.parse(text) {
                Ok(a) if negative => -a,
                Ok(a) => a,
                Err(e) => return fail(e),
            };
            let mut raw = [0u8; 8];
            if let Err(e) = getrandom::fill(&mut raw) {
                return fail(e);
            }
            let tx = format!("cli:{}", hex::encode(raw));
            match ledger.adjust(&tx, &id, value).await {
                Ok(b) => {
                    println!("{id}: {} (transaction {tx})", currency.format(b));
                    ExitCode::SUCCESS
                }
                Err(e) => fail(e),
            }
        }
        PlayerCommand::Balance { id } => match ledger.balance(&id).await {
            Ok(b) => {
                println!("{id}: {}", currency.format(b));
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        },
        PlayerCommand::Revoke { id, link } => {
            use croupier::play::sessions::{revoke_player, revoke_token};
            match (id, link) {
                (_, Some(link)) => match revoke_token(&pool, &link).await {
                    Ok(true) => {
                        println!("the link is revoked");
                        ExitCode::SUCCESS
                    }
                    Ok(false) => fail("no live session has that link (already revoked, or not of this table's database)"),
                    Err(e) => fail(e),
                },
                (Some(id), None) => match ledger.player(&id).await {
                    Ok(Some(_)) => match revoke_player(&pool, &id).await {
                        Ok(n) => {
                            println!("{id}: {n} session(s) revoked");
                            ExitCode::SUCCESS
                        }
                        Err(e) => fail(e),
                    },
                    Ok(None) => fail(format!("unknown player {id:?}")),
                    Err(e) => fail(e),
                },
                (None, None) => fail("name a player or --link"),
            }
        }
        PlayerCommand::Disable { id } => set_disabled(&pool, &id, true).await,
        PlayerCommand::Enable { id } => set_disabled(&pool, &id, false).await,
        PlayerCommand::PlatformKey => {
            match croupier::play::sessions::new_platform_key(&pool).await {
                Ok(key) => {
                    println!("{key}");
                    ExitCode::SUCCESS
                }
                Err(e) => fail(e),
            }
        }
        PlayerCommand::Link { id } => match ledger.player(&id).await {
            Ok(Some(_)) => match link(id).await {
                Ok(l) => {
                    println!("{l}");
                    ExitCode::SUCCESS
                }
                Err(e) => fail(e),
            },
            Ok(None) => fail(format!("unknown player {id:?}")),
            Err(e) => fail(e),
        },
    }
}

/// `disable` (ending every session) or `enable` a player.
async fn set_disabled(pool: &sqlx::SqlitePool, id: &str, disabled: bool) -> ExitCode {
    match croupier::play::sessions::set_disabled(pool, id, disabled).await {
        Ok(n) if disabled => {
            println!("{id}: disabled; {n} session(s) revoked");
            ExitCode::SUCCESS
        }
        Ok(_) => {
            println!("{id}: enabled (give them a new link: croupier player link {id})");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}
