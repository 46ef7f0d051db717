//! `croupier verify-results`: the report of `croupier::trust::verify`, printed for a
//! person (problems alike told once), with its exit code.

use super::fail;
use std::process::ExitCode;

/// `croupier verify-results FILE [--key HEX]`: checks a saved public history
/// (`croupier::trust::verify`) and says what it found; exit 0 verified, 3 verified across a
/// timeline change, 1 a problem, 2 the file unreadable.
pub fn run(file: &std::path::Path, key: Option<&str>) -> ExitCode {
    let text = if file.as_os_str() == "-" {
        let mut text = String::new();
        match std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
            Ok(_) => text,
            Err(e) => return fail(format!("stdin: {e}")),
        }
    } else {
        match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => return fail(format!("{}: {e}", file.display())),
        }
    };
    let report = croupier::trust::verify::verify_history(&text, key);
    let heads = report
        .heads
        .map_or("none".to_string(), |(a, b)| format!("seq {a} to {b}"));
    let key = report.key.as_deref().unwrap_or("unknown");
    for n in &report.notes {
        println!("note: {n}");
    }
    for t in &report.timelines {
        println!("TIMELINE CHANGE {t}");
    }
    for c in &report.corrections {
        println!("CORRECTED {c}");
    }
    if report.ok() {
        println!(
            "verified: {} signed results, {} sealed cards opened{}, log heads {heads}, table key {key}{}",
            report.results,
            report.seals,
            match report.corrections.len() {
                0 => String::new(),
                1 => " (1 hole card corrected by a supervisor)".to_string(),
                n => format!(" ({n} hole cards corrected by a supervisor)"),
            },
            match report.timelines.len() {
                0 => String::new(),
                1 => ", across 1 timeline change".to_string(),
                n => format!(", across {n} timeline changes"),
            }
        );
        if report.timelines.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(3)
        }
    } else {
        for (p, more) in grouped(&report.problems) {
            match more {
                0 => println!("FAILED {p}"),
                1 => println!("FAILED {p} (and 1 more like it)"),
                n => println!("FAILED {p} (and {n} more like it)"),
            }
        }
        println!(
            "{} problems; {} signed results verified, {} sealed cards opened, table key {key}",
            report.problems.len(),
            report.results,
            report.seals
        );
        ExitCode::from(1)
    }
}

/// Problems alike but for their numbers (line, round) told once, with how many more lines
/// had one like it (a wrong `--key` fails every view and result alike).
fn grouped(problems: &[String]) -> Vec<(&str, usize)> {
    let text = |p: &str| -> String {
        let mut shape = String::with_capacity(p.len());
        for c in p.chars() {
            if c.is_ascii_digit() {
                if !shape.ends_with('#') {
                    shape.push('#');
                }
            } else {
                shape.push(c);
            }
        }
        shape
    };
    let mut out: Vec<(&str, usize)> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for p in problems {
        match seen.get(&text(p)) {
            Some(&i) => out[i].1 += 1,
            None => {
                seen.insert(text(p), out.len());
                out.push((p.as_str(), 0));
            }
        }
    }
    out
}
