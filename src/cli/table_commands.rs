//! The commands on one table's own files, which need no running service: `check-config`,
//! `table-key`, `backup` and `recall`.

use super::args::{load_config, TableArgs};
use super::fail;
use croupier::store::{Reader, Record};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `croupier table-key`: the table's public key as a line of `table-keys.toml`.
pub fn table_key(table: TableArgs) -> ExitCode {
    let (config, db) = match table.load() {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let path = croupier::trust::keys::path_for(&db);
    match croupier::trust::TableKeys::load(&path) {
        Ok(keys) => {
            println!(
                "{} = \"{}\"",
                toml::Value::String(config.table.id.clone()),
                keys.public_hex()
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(format!(
            "{e} (the table makes its key at its first start: start it once)"
        )),
    }
}

/// `croupier check-config [FILE]`.
pub fn check_config(file: Option<&Path>) -> ExitCode {
    match load_config(file) {
        Ok(c) => {
            let name = file.map_or("<built-in>".to_string(), |p| p.display().to_string());
            if let Err(e) = croupier::store::check_path(&c.store.path) {
                // The status `run` ends with on it (docs/src/operations.md, "Exit status").
                eprintln!("croupier: {name}: store.path {e}");
                return ExitCode::from(1);
            }
            if let Some(publish) = &c.publish {
                if let Err(e) =
                    croupier::broker::connect::client_options(&publish.broker_options(&c.table.id))
                {
                    return fail(format!("{name}: publish: {e}"));
                }
            }
            println!(
                "{name}: ok (table {}, variant {}, {} shoe, http {})",
                c.table.id,
                c.table.variant,
                if c.shoe.simulated {
                    "simulated"
                } else {
                    "serial"
                },
                c.http.bind
            );
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

/// `croupier backup`.
pub async fn backup(path: PathBuf, table: TableArgs) -> ExitCode {
    let (_, live) = match table.load() {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    match croupier::store::backup(&live, &path).await {
        Ok(v) => {
            println!(
                "backed up {} to {} ({} bytes), verified:",
                live.display(),
                v.path.display(),
                v.bytes
            );
            for (table, rows, last) in &v.tables {
                println!("  table {table}: {rows} log rows, hash chain intact to seq {last}");
            }
            if let Some(audit) = &v.audit {
                println!(
                    "  audit log: {} rows, hash chain intact, head {}",
                    audit.rows, audit.head
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

/// Writes what the spill file beside the database holds that no `recovered` row has taken
/// into the log yet: shoe items and alarms read while the store could not be written.
async fn print_unrecorded(
    out: &mut impl Write,
    reader: &Reader,
    table: &str,
    db: &Path,
) -> std::io::Result<()> {
    use croupier::store::spill::{self, Spilled};
    let entries = match spill::read(&spill::path_for(db)) {
        Ok(e) => e,
        Err(e) => return writeln!(out, "!! the spill file cannot be read: {e}"),
    };
    let through = match reader.log(table).await {
        Ok(log) => log
            .iter()
            .filter_map(|r| match r.record {
                Record::Recovered { spill_through, .. } => Some(spill_through),
                _ => None,
            })
            .max()
            .unwrap_or(0),
        Err(_) => 0,
    };
    let pending: Vec<_> = entries
        .iter()
        .filter(|e| e.n > through && e.table == table)
        .collect();
    if pending.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "!! NOT RECORDED in the log yet ({} entries in {}; the table takes them in when the store works again):",
        pending.len(),
        spill::path_for(db).display()
    )?;
    for e in pending {
        let what = match &e.what {
            Spilled::Item(item) => format!("shoe item {item}"),
            Spilled::Alarm(reason) => format!("alarm: {reason}"),
        };
        writeln!(
            out,
            "  !  spill {:>3}  {what} (at_ms {}; {})",
            e.n, e.at_ms, e.why
        )?;
    }
    Ok(())
}

/// One log row as `recall` prints it: `!` marks everything but an input.
fn print_row(out: &mut impl Write, row: &croupier::store::LogRow) -> std::io::Result<()> {
    let mark = match row.record {
        Record::Input { .. } => " ",
        _ => "!",
    };
    writeln!(out, "  {mark}{:>7}  {}", row.seq, row.record)
}

/// Writes the recalled rounds as text.
fn print_rounds(
    out: &mut impl Write,
    table: &str,
    rounds: &[croupier::store::RecalledRound],
    money: &croupier::currency::Currency,
) -> std::io::Result<()> {
    for r in rounds {
        let settled = match r.settled_seq {
            Some(s) => format!("settled at seq {s}"),
            None => "NOT SETTLED".to_string(),
        };
        writeln!(
            out,
            "== table {table} round {} (shoe {}, seq {}..) {settled}",
            r.round, r.shoe, r.opened_seq
        )?;
        if let Some(v) = r.shoe_integrity.as_ref().filter(|v| v.suspicious()) {
            writeln!(
                out,
                "  !! SHOE {} SUSPICIOUS (integrity checks): {}",
                v.shoe,
                v.reasons.join("; ")
            )?;
        }
        let end = r.settled_seq.unwrap_or(u64::MAX);
        for row in r.rows.iter().filter(|row| row.seq <= end) {
            print_row(out, row)?;
        }
        if let Some(res) = &r.result {
            let cards: Vec<String> = res.dealer_cards.iter().map(|c| c.to_string()).collect();
            writeln!(
                out,
                "  dealer: {} = {}{}",
                cards.join(" "),
                res.dealer_total,
                if res.dealer_natural { " (natural)" } else { "" }
            )?;
            for h in &res.hands {
                let cards: Vec<String> = h.cards.iter().map(|c| c.to_string()).collect();
                writeln!(
                    out,
                    "  seat {} hand {}: {} = {} {} (staked {}, returned {})",
                    h.seat,
                    h.hand + 1,
                    cards.join(" "),
                    h.total,
                    h.outcome.as_str(),
                    money.format(h.staked),
                    money.format(h.returned)
                )?;
            }
            for b in &res.bets {
                writeln!(
                    out,
                    "  settle seat {} {}: staked {}, returned {}",
                    b.seat,
                    b.kind.name(),
                    money.format(b.staked),
                    money.format(b.returned)
                )?;
            }
        }
        let mut after = r.rows.iter().filter(|row| row.seq > end).peekable();
        if after.peek().is_some() {
            writeln!(out, "  -- after round {}:", r.round)?;
            for row in after {
                print_row(out, row)?;
            }
        }
    }
    Ok(())
}

/// `croupier recall`.
pub async fn recall(last: u32, table: TableArgs, json: bool) -> ExitCode {
    let (config, path) = match table.load() {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let reader = match Reader::open(&path).await {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let mut table = config.table.id.clone();
    if let Ok(tables) = reader.tables().await {
        if !tables.contains(&table) && tables.len() == 1 {
            table = tables[0].clone();
        }
    }
    let rounds = match reader.recall(&table, last).await {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = if json {
        let doc: Vec<serde_json::Value> = rounds.iter().map(|r| r.to_json()).collect();
        match serde_json::to_string_pretty(&doc) {
            Ok(s) => writeln!(out, "{s}"),
            Err(e) => return fail(e),
        }
    } else {
        let mut written = Ok(());
        if rounds.is_empty() {
            written = writeln!(
                out,
                "table {table}: no rounds recorded in {}",
                path.display()
            );
        }
        match written
            .and_then(|()| print_rounds(&mut out, &table, &rounds, &config.table.currency()))
        {
            Ok(()) => print_unrecorded(&mut out, &reader, &table, &path).await,
            Err(e) => Err(e),
        }
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        // `croupier recall | head`: the reader has what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(format!("cannot write: {e}")),
    }
}
