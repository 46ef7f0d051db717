//! `croupier verify-results FILE`: checks a saved public history.
//!
//! The file is what a viewer saves: the public messages, one JSON object per line, as
//! `/ws/public` sends them (or `/sse/public`'s `data:` lines, or the broker's
//! `croupier.<table>.public` subject). Blank lines are skipped. Checked:
//!
//! - every `view` message names the same table key (`view.table_key`), and the key given
//!   on the command line if any;
//! - a round's commitment (`view.round.seal`) never changes, and every reveal opens it;
//! - every `result` message carries a signature that verifies with the table key, over a
//!   statement whose result is the message's own result and whose seal opens the
//!   commitment published while the card lay face down, to the dealer's second card;
//! - the log heads the statements name never go back: each result's head is beyond the
//!   last one (the same head again is a repeated message), and round numbers never go
//!   below the last settled round (a resolution re-settles the last round itself). A log
//!   cut back and played on from there shows as a head or a round going backwards.

use super::attest::{self, Signed, Statement};
use super::seal::{self, Seal};
use serde::Deserialize;
use std::collections::BTreeMap;

/// What a check found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The table key the history was checked with.
    pub key: Option<String>,
    /// Signed results that verified.
    pub results: usize,
    /// Seals published while their card lay face down, then opened and matched to a
    /// signed result.
    pub seals: usize,
    /// The first and last log head seen.
    pub heads: Option<(u64, u64)>,
    /// Every problem, with its line.
    pub problems: Vec<String>,
}

impl Report {
    /// Whether nothing was wrong (and something was checked).
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    view: Option<ViewPart>,
    #[serde(default)]
    result: Option<serde_json::Value>,
    #[serde(default)]
    signed: Option<Signed>,
}

#[derive(Deserialize)]
struct ViewPart {
    table: String,
    #[serde(default)]
    table_key: Option<String>,
    round: RoundPart,
}

#[derive(Deserialize)]
struct RoundPart {
    number: u64,
    #[serde(default)]
    seal: Option<Seal>,
}

/// The state of a check, line by line.
struct Checker {
    report: Report,
    key: Option<ed25519_dalek::VerifyingKey>,
    table: Option<String>,
    commitments: BTreeMap<u64, String>,
    /// Rounds whose commitment was seen while the card lay face down.
    hidden: std::collections::BTreeSet<u64>,
    last: Option<(u64, String, u64)>,
}

/// Checks the saved history `text`, with `key` (hex) if given.
pub fn verify_history(text: &str, key: Option<&str>) -> Report {
    let mut c = Checker {
        report: Report::default(),
        key: None,
        table: None,
        commitments: BTreeMap::new(),
        hidden: Default::default(),
        last: None,
    };
    if let Some(k) = key {
        c.set_key(0, k);
    }
    for (i, raw) in text.lines().enumerate() {
        let raw = raw.trim();
        let raw = raw.strip_prefix("data:").map_or(raw, str::trim);
        if raw.is_empty() {
            continue;
        }
        let line_no = i + 1;
        match serde_json::from_str::<Line>(raw) {
            Ok(line) => c.line(line_no, line),
            Err(e) => c.problem(line_no, format!("not a public message: {e}")),
        }
    }
    if c.report.results == 0 && c.report.problems.is_empty() {
        c.report
            .problems
            .push("no signed result in the file: nothing was verified".into());
    }
    c.report
}

impl Checker {
    fn problem(&mut self, line: usize, what: String) {
        self.report.problems.push(format!("line {line}: {what}"));
    }

    fn set_key(&mut self, line: usize, hex_key: &str) {
        match &self.report.key {
            Some(k) if k == hex_key => {}
            Some(k) => {
                let k = k.clone();
                self.problem(line, format!("the table key changed from {k} to {hex_key}"))
            }
            None => match attest::verifying_key(hex_key) {
                Ok(vk) => {
                    self.key = Some(vk);
                    self.report.key = Some(hex_key.to_string());
                }
                Err(e) => self.problem(line, e.to_string()),
            },
        }
    }

    fn line(&mut self, n: usize, line: Line) {
        match line.kind.as_str() {
            "view" => {
                if let Some(view) = line.view {
                    self.view(n, view);
                }
            }
            "result" => self.result(n, line.result, line.signed),
            _ => {}
        }
    }

    fn table(&mut self, n: usize, table: &str) {
        match &self.table {
            Some(t) if t != table => {
                let t = t.clone();
                self.problem(n, format!("another table: {table} (the history is {t}'s)"));
            }
            Some(_) => {}
            None => self.table = Some(table.to_string()),
        }
    }

    fn commitment(&mut self, n: usize, round: u64, commitment: &str) {
        match self.commitments.get(&round) {
            Some(c) if c != commitment => self.problem(
                n,
                format!("round {round}'s commitment changed from {c} to {commitment}"),
            ),
            Some(_) => {}
            None => {
                self.commitments.insert(round, commitment.to_string());
            }
        }
    }

    fn view(&mut self, n: usize, view: ViewPart) {
        self.table(n, &view.table);
        if let Some(k) = &view.table_key {
            self.set_key(n, k);
        }
        if let Some(s) = &view.round.seal {
            let round = view.round.number;
            self.commitment(n, round, &s.commitment);
            match seal::check(s, &view.table, round) {
                Ok(true) => {}
                Ok(false) => {
                    self.hidden.insert(round);
                }
                Err(e) => self.problem(n, format!("tampered reveal: {e}")),
            }
        }
    }

    fn result(&mut self, n: usize, result: Option<serde_json::Value>, signed: Option<Signed>) {
        let round = result
            .as_ref()
            .and_then(|r| r.get("round"))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        let Some(signed) = signed else {
            self.problem(n, format!("round {round}'s result is not signed"));
            return;
        };
        let Some(key) = self.key else {
            self.problem(
                n,
                "no table key yet (no view before the first result; give --key)".into(),
            );
            return;
        };
        let statement = match attest::verify(&key, &signed) {
            Ok(s) => s,
            Err(e) => {
                self.problem(n, format!("round {round}'s result: {e}"));
                return;
            }
        };
        if serde_json::to_value(&statement.result).ok() != result {
            self.problem(
                n,
                format!("round {round}'s result is not the one its signature covers"),
            );
            return;
        }
        self.table(n, &statement.table);
        if let Some(s) = &statement.seal {
            self.signed_seal(n, &statement, s);
        }
        self.head(n, &statement);
        self.report.results += 1;
    }

    fn signed_seal(&mut self, n: usize, st: &Statement, s: &Seal) {
        let round = st.round;
        self.commitment(n, round, &s.commitment);
        match seal::check(s, &st.table, round) {
            Ok(true) => {}
            Ok(false) => {
                self.problem(n, format!("round {round}'s signed seal is not opened"));
                return;
            }
            Err(e) => {
                self.problem(n, format!("tampered reveal: {e}"));
                return;
            }
        }
        if st.result.dealer_cards.get(1).copied() != s.card {
            self.problem(
                n,
                format!("round {round}: the revealed card is not the dealer's second card"),
            );
            return;
        }
        if self.hidden.contains(&round) {
            self.report.seals += 1;
        }
    }

    fn head(&mut self, n: usize, st: &Statement) {
        let head = (st.head.seq, st.head.hash.clone(), st.round);
        if let Some((seq, hash, round)) = self.last.clone() {
            if head.0 == seq && head.1 != hash {
                self.problem(
                    n,
                    format!(
                        "the log forked: seq {seq} has two hashes ({hash} and {})",
                        head.1
                    ),
                );
            } else if head.0 < seq {
                self.problem(
                    n,
                    format!(
                        "truncated log: round {}'s head is seq {}, behind seq {seq} (round {round}) already signed",
                        head.2, head.0
                    ),
                );
            } else if head.2 < round {
                self.problem(
                    n,
                    format!(
                        "truncated log: round {} settled after round {round} (round numbers went back)",
                        head.2
                    ),
                );
            }
        }
        let first = self.report.heads.map_or(head.0, |(f, _)| f);
        let last = self.last.as_ref().map_or(head.0, |l| l.0.max(head.0));
        self.report.heads = Some((first, last));
        if self.last.as_ref().map_or(true, |l| head.0 >= l.0) {
            self.last = Some(head);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RoundResult;
    use crate::trust::attest::{sign, Head};
    use crate::trust::TableKeys;
    use serde_json::json;

    fn keys() -> TableKeys {
        TableKeys::from_secrets([4; 32], [5; 32])
    }

    /// A view of `round` with its sealed card (hidden or opened) and a signed result line.
    fn round_lines(keys: &TableKeys, round: u64, seq: u64, hash: &str) -> Vec<String> {
        let hole = "9H".parse().expect("card");
        let hidden = crate::trust::seal::seal_hole(keys, "t1", round, hole, false);
        let opened = crate::trust::seal::seal_hole(keys, "t1", round, hole, true);
        let view = |seal: &Seal| {
            json!({"type": "view", "view": {"table": "t1", "table_key": keys.public_hex(),
                   "round": {"number": round, "seal": seal}}})
            .to_string()
        };
        let result = RoundResult {
            round,
            shoe: 1,
            dealer_cards: vec!["TS".parse().expect("card"), hole],
            dealer_total: 19,
            dealer_natural: false,
            hands: Vec::new(),
            bets: Vec::new(),
            burned: Vec::new(),
            cancelled: false,
        };
        let signed = sign(
            keys,
            &Statement {
                v: 1,
                table: "t1".into(),
                round,
                result: result.clone(),
                seal: Some(opened.clone()),
                head: Head {
                    seq,
                    hash: hash.into(),
                },
            },
        );
        vec![
            view(&hidden),
            view(&opened),
            json!({"type": "result", "result": result, "signed": signed}).to_string(),
        ]
    }

    #[test]
    fn heads_that_go_back_or_fork_are_caught() {
        let k = keys();
        let good: Vec<String> = [(1, 10, "aa"), (2, 20, "bb"), (3, 30, "cc")]
            .iter()
            .flat_map(|&(r, s, h)| round_lines(&k, r, s, h))
            .collect();
        let report = verify_history(&good.join("\n"), None);
        assert!(report.ok(), "{:?}", report.problems);
        assert_eq!((report.results, report.seals), (3, 3));
        assert_eq!(report.heads, Some((10, 30)));
        // The same messages again (a viewer that reconnected) are fine.
        let again = [good.clone(), good[6..].to_vec()].concat();
        assert!(verify_history(&again.join("\n"), None).ok());
        // Round 3 again at a lower head: the log was cut back and played on.
        let cut = [good.clone(), round_lines(&k, 3, 25, "dd")].concat();
        let report = verify_history(&cut.join("\n"), None);
        assert!(
            report.problems.iter().any(|p| p.contains("truncated log")),
            "{report:?}"
        );
        // The same head with another hash: a fork.
        let fork = [good.clone(), round_lines(&k, 4, 30, "ee")].concat();
        let report = verify_history(&fork.join("\n"), None);
        assert!(
            report.problems.iter().any(|p| p.contains("forked")),
            "{report:?}"
        );
        // A round below the last one at a later head: played on from a cut log.
        let back = [good.clone(), round_lines(&k, 2, 40, "ff")].concat();
        let report = verify_history(&back.join("\n"), None);
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.contains("round numbers went back")),
            "{report:?}"
        );
        // Another table key halfway through.
        let other = TableKeys::from_secrets([6; 32], [5; 32]);
        let swapped = [good.clone(), round_lines(&other, 4, 50, "11")].concat();
        let report = verify_history(&swapped.join("\n"), None);
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.contains("table key changed")),
            "{report:?}"
        );
        // Nothing to verify is not a success.
        assert!(!verify_history("", None).ok());
    }
}
