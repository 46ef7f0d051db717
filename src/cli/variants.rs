//! The rules and the maths, offline: `replay`, `check-variant`, `paytables` and
//! `simulate`. None of them touches a table's configuration or database.

use super::fail;
use croupier::engine::Variant;
use croupier::replay;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// `croupier replay FILE [--variants DIR]`: exit 0 when the scenario ran (a halt is a
/// result), 2 when it or its variant cannot be read.
pub fn replay_command(file: &std::path::Path, variants: Option<&std::path::Path>) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => return fail(format!("{}: {e}", file.display())),
    };
    let scenario = match replay::parse(&text) {
        Ok(s) => s,
        Err(e) => return fail(format!("{}: {e}", file.display())),
    };
    let loaded = match variants {
        Some(dir) => {
            let path = dir.join(format!("{}.toml", scenario.variant));
            if !path.is_file() {
                return fail(format!(
                    "unknown variant {:?}: no {}",
                    scenario.variant,
                    path.display()
                ));
            }
            Variant::load(&path)
        }
        None => match Variant::built_in(&scenario.variant) {
            Some(v) => v,
            None => {
                return fail(format!(
                    "unknown variant {:?} (known: {})",
                    scenario.variant,
                    built_in_names()
                ));
            }
        },
    };
    let loaded = loaded.and_then(|v| {
        if scenario.settings.is_empty() {
            Ok(v)
        } else {
            v.with_settings(&file.display().to_string(), &scenario.settings)
        }
    });
    let variant = match loaded {
        Ok(v) => Arc::new(v),
        Err(e) => return fail(e),
    };
    let result = replay::run_steps(variant, &scenario.steps);
    match serde_json::to_string_pretty(&result.to_json()) {
        Ok(s) => {
            println!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

/// `croupier check-variant FILE…`: every file checked (exit 2 when one is invalid); a
/// side bet's suspicious return only warns.
pub fn check_variants(files: &[PathBuf]) -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for f in files {
        match Variant::load(f) {
            Ok(v) => {
                println!("{}: ok ({})", f.display(), v.name);
                match croupier::math::variant_tables(&v) {
                    Ok(tables) => {
                        for w in croupier::math::warnings(&tables) {
                            eprintln!("{}: warning: {w}", f.display());
                        }
                    }
                    Err(e) => eprintln!("{}: warning: {e}", f.display()),
                }
            }
            Err(e) => {
                eprintln!("{e}");
                status = ExitCode::from(2);
            }
        }
    }
    status
}

/// The variants `paytables` covers: one named (built-in or a file), or every built-in one.
fn variants_for(name: Option<&str>) -> Result<Vec<Variant>, String> {
    let Some(name) = name else {
        return croupier::engine::variant::BUILT_IN
            .iter()
            .map(|(stem, _)| match Variant::built_in(stem) {
                Some(Ok(v)) => Ok(v),
                Some(Err(e)) => Err(e.to_string()),
                None => Err(format!("unknown variant {stem:?}")),
            })
            .collect();
    };
    match Variant::built_in(name) {
        Some(v) => v.map(|v| vec![v]).map_err(|e| e.to_string()),
        None if std::path::Path::new(name).is_file() => Variant::load(std::path::Path::new(name))
            .map(|v| vec![v])
            .map_err(|e| e.to_string()),
        None => Err(format!(
            "unknown variant {name:?} (known: {}; or a variant file)",
            built_in_names()
        )),
    }
}

/// The built-in variants' names, comma-separated: what an unknown name is told to pick
/// from.
fn built_in_names() -> String {
    let names: Vec<&str> = croupier::engine::variant::BUILT_IN
        .iter()
        .map(|(n, _)| *n)
        .collect();
    names.join(", ")
}

/// `croupier paytables [--variant V] [--json]`.
pub fn paytables_command(name: Option<&str>, json: bool) -> ExitCode {
    let variants = match variants_for(name) {
        Ok(v) => v,
        Err(e) => return fail(e),
    };
    let mut all = Vec::new();
    for v in &variants {
        match croupier::math::variant_tables(v) {
            Ok(t) => all.push(t),
            Err(e) => return fail(format!("{}: {e}", v.name)),
        }
    }
    if json {
        match serde_json::to_string_pretty(&all) {
            Ok(s) => println!("{s}"),
            Err(e) => return fail(e),
        }
    } else {
        for t in &all {
            print!("{}", croupier::math::paytable::render(t));
            for w in croupier::math::warnings(t) {
                println!("  warning: {w}");
            }
        }
    }
    ExitCode::SUCCESS
}

/// `croupier simulate`: one variant, Monte Carlo; an error names the variant.
pub fn simulate_command(
    name: &str,
    options: &croupier::math::simulate::CommonOptions,
    rounds: u64,
    threads: Option<usize>,
    seed: u64,
    json: bool,
) -> ExitCode {
    let variant = match variants_for(Some(name)) {
        Ok(mut v) if v.len() == 1 => v.remove(0),
        Ok(_) => return fail("one variant, please"),
        Err(e) => return fail(e),
    };
    let threads = threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let config = croupier::math::simulate::Config {
        rounds,
        threads,
        seed,
        progress: true,
    };
    match croupier::math::simulate::simulate_with(&variant, &config, options) {
        Ok(report) if json => match serde_json::to_string_pretty(&report) {
            Ok(s) => {
                println!("{s}");
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        },
        Ok(report) => {
            print!("{}", croupier::math::simulate::render(&report));
            ExitCode::SUCCESS
        }
        Err(e) => fail(format!("{}: {e}", variant.name)),
    }
}
