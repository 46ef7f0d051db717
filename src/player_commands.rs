//! `croupier player ...`: remote players and the embedded wallet, straight on the table's
//! database (short `BEGIN IMMEDIATE` transactions, like `croupier user`: they work while
//! the service runs). `add` and `link` print a launch link for the player's page.

use croupier::table::TableConfig;
use croupier::wallet::ledger::Ledger;
use croupier::wallet::Wallet;
use std::path::PathBuf;
use std::process::ExitCode;

/// What `croupier player` does.
pub enum PlayerAction {
    /// Add a player with an opening balance; print a launch link.
    Add {
        /// The player id (default: the name in lower case).
        id: Option<String>,
        /// The name shown.
        name: String,
        /// Opening balance, as people write it (`500.00`).
        balance: String,
    },
    /// Deposit (or, negative, withdraw) money.
    Credit {
        /// The player.
        id: String,
        /// The amount (`100.00`, `-20`).
        amount: String,
    },
    /// Print the balance.
    Balance {
        /// The player.
        id: String,
    },
    /// End sessions: every one of a player's, or one link.
    Revoke {
        /// The player.
        id: Option<String>,
        /// One launch link or token.
        link: Option<String>,
    },
    /// Disable (or enable) a player.
    Disabled {
        /// The player.
        id: String,
        /// Disable (`true`) or enable.
        disabled: bool,
    },
    /// A new launch link.
    Link {
        /// The player.
        id: String,
    },
    /// A new platform credential.
    PlatformKey,
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("croupier: {message}");
    ExitCode::from(2)
}

/// `croupier player ...`.
pub async fn player(
    action: PlayerAction,
    config: Option<PathBuf>,
    db: Option<PathBuf>,
) -> ExitCode {
    let c = match &config {
        Some(p) => TableConfig::load(p),
        None => TableConfig::embedded(),
    };
    let c = match c {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let currency = c.table.currency();
    let path = db.unwrap_or_else(|| c.store.path.clone());
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
    match action {
        PlayerAction::Add { id, name, balance } => {
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
        PlayerAction::Credit { id, amount } => {
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
        PlayerAction::Balance { id } => match ledger.balance(&id).await {
            Ok(b) => {
                println!("{id}: {}", currency.format(b));
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        },
        PlayerAction::Revoke { id, link } => {
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
        PlayerAction::Disabled { id, disabled } => {
            match croupier::play::sessions::set_disabled(&pool, &id, disabled).await {
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
        PlayerAction::PlatformKey => {
            match croupier::play::sessions::new_platform_key(&pool).await {
                Ok(key) => {
                    println!("{key}");
                    ExitCode::SUCCESS
                }
                Err(e) => fail(e),
            }
        }
        PlayerAction::Link { id } => match ledger.player(&id).await {
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
