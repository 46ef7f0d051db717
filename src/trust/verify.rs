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
//!   cut back and played on from there shows as a head or a round going backwards;
//! - a hole card a supervisor's resolution replaced is said, not re-committed: the seal
//!   opens the card as dealt, names the corrected card (`Seal::corrected`), and the
//!   signed result's second dealer card is the corrected one — reported as a correction
//!   ([`Report::corrections`]), not as a problem;
//! - a round whose hole card was committed has a signed result that opens it: a result
//!   signed with no seal, or a committed round older than the last result left unopened,
//!   is a problem;
//! - no result is missing: every round between the first and the last result seen has
//!   one (a `resync` view in between says the viewer skipped messages: no gap is claimed
//!   across it);
//! - the same signed result again (a viewer that reconnected) is counted once and noted;
//! - a change of the table's timeline (views and signed statements name it after the
//!   first: a restore, an operator's `croupier timeline continue`) is reported as one —
//!   round numbers and heads start over on the new timeline, and are checked within it —
//!   not as a cut log, and not as nothing: [`Report::timelines`]. A timeline that goes
//!   back to an earlier one is a problem.

use super::attest::{self, Signed, Statement};
use super::seal::{self, Seal};
use crate::store::Timeline;
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
    /// What is worth knowing but is no problem (a result received again).
    pub notes: Vec<String>,
    /// Each change of the table's timeline the history spans, with its line.
    pub timelines: Vec<String>,
    /// Each signed result whose hole card a supervisor's resolution replaced, with its
    /// line: the seal opens the card as dealt, the result played the corrected one.
    pub corrections: Vec<String>,
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
    /// A view sent after the viewer missed messages.
    #[serde(default)]
    resync: bool,
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
    #[serde(default)]
    timeline: Option<Timeline>,
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
    /// Signed results already counted: (head seq, head hash, round) → their first line.
    counted: BTreeMap<(u64, String, u64), usize>,
    /// Rounds whose seal a view or a signed result opened.
    opened: std::collections::BTreeSet<u64>,
    /// Rounds counted in `Report::seals`: a round re-settled by a resolution (a second
    /// signed result opening the same seal) counts once.
    matched: std::collections::BTreeSet<u64>,
    /// Rounds with a result since the last resync (or the start), and the first of them.
    settled: std::collections::BTreeSet<u64>,
    /// Rounds settled before the last resync: no gap is claimed below it.
    resynced_at: Option<u64>,
    /// The timeline the history is on (`None`: the table's first).
    timeline: Option<Timeline>,
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
        counted: BTreeMap::new(),
        opened: Default::default(),
        matched: Default::default(),
        settled: Default::default(),
        resynced_at: None,
        timeline: None,
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
    c.finish();
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

    /// A view or a signed statement names timeline `next` (`None`: the first): a change
    /// closes the checks of the timeline before — its missing results; its committed
    /// cards never opened are noted, the new timeline having superseded their rounds —
    /// and starts the round checks again.
    fn on_timeline(&mut self, n: usize, next: Option<&Timeline>) {
        let epoch = |t: Option<&Timeline>| t.map_or(0, |t| t.epoch);
        let id = |t: Option<&Timeline>| t.map(|t| t.id.clone());
        if id(next) == id(self.timeline.as_ref()) {
            return;
        }
        if epoch(next) <= epoch(self.timeline.as_ref()) {
            self.problem(
                n,
                format!(
                    "the timeline went back: {} after {} (epoch {} after {})",
                    id(next).unwrap_or_else(|| "the first".into()),
                    id(self.timeline.as_ref()).unwrap_or_else(|| "the first".into()),
                    epoch(next),
                    epoch(self.timeline.as_ref())
                ),
            );
            return;
        }
        let before = self.problems_before_change();
        self.report.notes.extend(before);
        let Some(t) = next else {
            return;
        };
        self.report.timelines.push(format!(
            "line {n}: the table's log began timeline {} (epoch {}) at its row {}: a restore from a backup or an operator's `croupier timeline continue`. Its rounds are checked on their own; what the earlier timeline showed after row {} was superseded",
            t.id,
            t.epoch,
            t.from_seq,
            t.from_seq.saturating_sub(1)
        ));
        self.timeline = Some(t.clone());
        self.commitments.clear();
        self.hidden.clear();
        self.opened.clear();
        self.matched.clear();
        self.settled.clear();
        self.resynced_at = None;
        self.last = None;
    }

    /// At a timeline change: the earlier timeline's missing results stay problems; its
    /// rounds committed and never opened are returned as notes (superseded).
    fn problems_before_change(&mut self) -> Vec<String> {
        let before = self.report.problems.len();
        self.finish();
        let mut notes = Vec::new();
        let mut kept = Vec::new();
        for p in self.report.problems.drain(before..) {
            if p.contains("never opened") {
                notes.push(format!("{p} (its timeline was superseded)"));
            } else {
                kept.push(p);
            }
        }
        self.report.problems.extend(kept);
        notes
    }

    /// After the last line: missing results and committed cards never opened.
    fn finish(&mut self) {
        let Some(&last) = self.settled.iter().next_back() else {
            return;
        };
        let mut missing = Vec::new();
        let mut expected = *self.settled.iter().next().unwrap_or(&last);
        for &round in &self.settled {
            if round > expected {
                missing.push((expected, round - 1));
            }
            expected = round + 1;
        }
        for (from, to) in missing {
            let rounds = if from == to {
                format!("round {from} has")
            } else {
                format!("rounds {from} to {to} have")
            };
            self.report
                .problems
                .push(format!("{rounds} no result: missing from the history"));
        }
        let unopened: Vec<u64> = self
            .commitments
            .keys()
            .copied()
            .filter(|r| *r < last && !self.opened.contains(r))
            .filter(|r| self.resynced_at.is_none_or(|at| *r > at) || self.settled.contains(r))
            .collect();
        for round in unopened {
            self.report.problems.push(format!(
                "round {round}: its hole card was committed and never opened by a signed result"
            ));
        }
    }

    fn line(&mut self, n: usize, line: Line) {
        if line.kind == "view" && line.resync {
            // Messages were skipped here: no result is claimed missing across it.
            if let Some(&last) = self.settled.iter().next_back() {
                self.resynced_at = Some(last);
                self.settled.clear();
            }
        }
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
        self.on_timeline(n, view.timeline.as_ref());
        if let Some(k) = &view.table_key {
            self.set_key(n, k);
        }
        if let Some(s) = &view.round.seal {
            let round = view.round.number;
            self.commitment(n, round, &s.commitment);
            match seal::check(s, &view.table, round) {
                Ok(true) => {
                    self.opened.insert(round);
                }
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
        self.on_timeline(n, statement.timeline.as_ref());
        let id = (
            statement.head.seq,
            statement.head.hash.clone(),
            statement.round,
        );
        if let Some(first) = self.counted.get(&id) {
            self.report.notes.push(format!(
                "line {n}: round {round}'s result again (first on line {first}): counted once"
            ));
            return;
        }
        self.counted.insert(id, n);
        match &statement.seal {
            Some(s) => self.signed_seal(n, &statement, s),
            None if self.commitments.contains_key(&round) => self.problem(
                n,
                format!(
                    "round {round}'s hole card was committed, and its signed result opens no seal"
                ),
            ),
            None => {}
        }
        self.head(n, &statement);
        self.settled.insert(round);
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
        if st.result.dealer_cards.get(1).copied() != s.played() {
            self.problem(
                n,
                format!("round {round}: the revealed card is not the dealer's second card"),
            );
            return;
        }
        if let (Some(dealt), Some(to)) = (s.card, s.corrected) {
            self.report.corrections.push(format!(
                "line {n}: round {round}'s hole card was corrected by a supervisor from {dealt} (the card sealed) to {to}"
            ));
        }
        self.opened.insert(round);
        if self.hidden.contains(&round) && self.matched.insert(round) {
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
        if self.last.as_ref().is_none_or(|l| head.0 >= l.0) {
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

    /// Round `round`'s result: the dealer's ten and `hole`.
    fn result_of(round: u64, hole: crate::cards::Card) -> RoundResult {
        RoundResult {
            round,
            shoe: 1,
            dealer_cards: vec!["TS".parse().expect("card"), hole],
            dealer_total: 19,
            dealer_natural: false,
            hands: Vec::new(),
            bets: Vec::new(),
            burned: Vec::new(),
            cancelled: false,
        }
    }

    /// `rounds`' lines, round `i`'s cut to its first `n`.
    fn cut(rounds: &[Vec<String>], i: usize, n: usize) -> Vec<String> {
        rounds
            .iter()
            .enumerate()
            .flat_map(|(j, l)| if j == i { l[..n].to_vec() } else { l.clone() })
            .collect()
    }

    /// A view of `round` with its sealed card (hidden or opened) and a signed result line.
    fn round_lines(keys: &TableKeys, round: u64, seq: u64, hash: &str) -> Vec<String> {
        round_lines_on(keys, round, seq, hash, None)
    }

    /// [`round_lines`] on `timeline` (`None`: the first), whose hole card differs.
    fn round_lines_on(
        keys: &TableKeys,
        round: u64,
        seq: u64,
        hash: &str,
        timeline: Option<&Timeline>,
    ) -> Vec<String> {
        let hole = if timeline.is_some() { "8C" } else { "9H" }
            .parse()
            .expect("card");
        let salt = format!("{round:02}{hash}");
        let hidden =
            crate::trust::seal::seal_hole(keys, "t1", round, Some(&salt), hole, hole, false);
        let opened =
            crate::trust::seal::seal_hole(keys, "t1", round, Some(&salt), hole, hole, true);
        let view = |seal: &Seal| {
            let mut v = json!({"type": "view", "view": {"table": "t1", "table_key": keys.public_hex(),
                   "round": {"number": round, "seal": seal}}});
            if let Some(t) = timeline {
                v["view"]["timeline"] = json!(t);
            }
            v.to_string()
        };
        let result = result_of(round, hole);
        vec![
            view(&hidden),
            view(&opened),
            result_line(keys, result, Some(opened.clone()), (seq, hash), timeline),
        ]
    }

    /// The `result` message of `result`, signed with `seal` at log head `head` (seq, hash).
    fn result_line(
        keys: &TableKeys,
        result: RoundResult,
        seal: Option<Seal>,
        head: (u64, &str),
        timeline: Option<&Timeline>,
    ) -> String {
        let signed = sign(
            keys,
            &Statement {
                v: 1,
                table: "t1".into(),
                round: result.round,
                result: result.clone(),
                seal,
                head: Head {
                    seq: head.0,
                    hash: head.1.into(),
                },
                timeline: timeline.cloned(),
            },
        );
        json!({"type": "result", "result": result, "signed": signed}).to_string()
    }

    #[test]
    fn a_timeline_change_is_reported_as_one_and_checked_on_its_own() {
        let k = keys();
        let first: Vec<String> = [(1, 10, "aa"), (2, 20, "bb"), (3, 30, "cc")]
            .iter()
            .flat_map(|&(r, s, h)| round_lines(&k, r, s, h))
            .collect();
        // Restored from a backup taken at row 24: round 3 is played again (another hole
        // card, another commitment) at lower heads, on timeline `r`.
        let restored = Timeline {
            id: "r".repeat(32),
            epoch: 1,
            from_seq: 25,
        };
        let second: Vec<String> = [(3, 28, "dd"), (4, 38, "ee")]
            .iter()
            .flat_map(|&(r, s, h)| round_lines_on(&k, r, s, h, Some(&restored)))
            .collect();
        let history = [first.clone(), second.clone()].concat();
        let report = verify_history(&history.join("\n"), None);
        assert!(report.ok(), "not tampering: {:?}", report.problems);
        assert_eq!(report.timelines.len(), 1, "{report:?}");
        assert!(report.timelines[0].contains("at its row 25"), "{report:?}");
        assert_eq!(report.results, 5);
        // Heads are still checked within the new timeline.
        let cut = [
            history.clone(),
            round_lines_on(&k, 4, 30, "ff", Some(&restored)),
        ]
        .concat();
        let report = verify_history(&cut.join("\n"), None);
        assert!(
            report.problems.iter().any(|p| p.contains("truncated log")),
            "{report:?}"
        );
        // Back to the first timeline after the restore: a problem.
        let back = [history, round_lines(&k, 5, 50, "gg")].concat();
        let report = verify_history(&back.join("\n"), None);
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.contains("timeline went back")),
            "{report:?}"
        );
        // The same lines without the timeline: a cut log, as before.
        let unmarked: Vec<String> = [(3, 28, "dd"), (4, 38, "ee")]
            .iter()
            .flat_map(|&(r, s, h)| round_lines(&k, r, s, h))
            .collect();
        let report = verify_history(&[first, unmarked].concat().join("\n"), None);
        assert!(
            report.problems.iter().any(|p| p.contains("truncated log")),
            "{report:?}"
        );
        assert!(report.timelines.is_empty());
    }

    /// Round `round` re-settled at head `seq` after a supervisor corrected its hole card
    /// (dealt 9H, as `round_lines` seals it) to `to`; the statement's seal says `says`.
    fn corrected_lines(
        keys: &TableKeys,
        round: u64,
        seq: u64,
        to: &str,
        says: &str,
    ) -> Vec<String> {
        let dealt = "9H".parse().expect("card");
        let to = to.parse().expect("card");
        let salt = format!("{round:02}aa");
        let mut opened =
            crate::trust::seal::seal_hole(keys, "t1", round, Some(&salt), dealt, to, true);
        opened.corrected = Some(says.parse().expect("card"));
        let hash = format!("{seq:02}");
        vec![result_line(
            keys,
            result_of(round, to),
            Some(opened),
            (seq, &hash),
            None,
        )]
    }

    #[test]
    fn a_corrected_hole_card_is_reported_and_a_false_claim_of_one_is_caught() {
        let k = keys();
        let played = [round_lines(&k, 1, 10, "aa"), round_lines(&k, 2, 20, "aa")].concat();
        // A supervisor corrects round 2's hole card from 9H to 5C: the round is signed
        // again, its seal opening 9H as dealt and naming 5C, the card its result played.
        let corrected = [played.clone(), corrected_lines(&k, 2, 25, "5C", "5C")].concat();
        let report = verify_history(&corrected.join("\n"), None);
        assert!(report.ok(), "{:?}", report.problems);
        assert_eq!(
            (report.results, report.seals),
            (3, 2),
            "round 2's seal counts once"
        );
        assert_eq!(report.corrections.len(), 1, "{report:?}");
        assert!(
            report.corrections[0].contains(
                "round 2's hole card was corrected by a supervisor from 9H (the card sealed) to 5C"
            ),
            "{report:?}"
        );
        // A seal that names one correction over a result that played another card: caught.
        let false_claim = [played, corrected_lines(&k, 2, 25, "5C", "6C")].concat();
        let report = verify_history(&false_claim.join("\n"), None);
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.contains("the revealed card is not the dealer's second card")),
            "{report:?}"
        );
        assert!(report.corrections.is_empty(), "{report:?}");
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
        // The same messages again (a viewer that reconnected) are fine, counted once.
        let again = [good.clone(), good[6..].to_vec(), good[6..].to_vec()].concat();
        let report = verify_history(&again.join("\n"), None);
        assert!(report.ok(), "{report:?}");
        assert_eq!(report.results, 3, "a repeated result is counted once");
        assert_eq!(report.notes.len(), 2, "{report:?}");
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

    #[test]
    fn a_result_dropped_or_a_seal_left_unopened_is_caught() {
        let k = keys();
        let rounds: Vec<Vec<String>> = (1..=5)
            .map(|r| round_lines(&k, r, r * 10, &format!("{r:02}")))
            .collect();
        // Round 3's result dropped from the middle.
        let dropped = cut(&rounds, 2, 2);
        let report = verify_history(&dropped.join("\n"), None);
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.contains("round 3 has no result")),
            "{report:?}"
        );
        // Round 4's hole card committed, its reveal and result gone: never opened (and
        // its result missing).
        let unopened = cut(&rounds, 3, 1);
        let report = verify_history(&unopened.join("\n"), None);
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.contains("round 4: its hole card was committed and never opened")),
            "{report:?}"
        );
        // A result signed without its seal for a committed round.
        let hole = "9H".parse().expect("card");
        let result = result_of(6, hole);
        let committed = crate::trust::seal::seal_hole(&k, "t1", 6, Some("06"), hole, hole, false);
        let view = json!({"type": "view", "view": {"table": "t1", "table_key": k.public_hex(),
                          "round": {"number": 6, "seal": committed}}})
        .to_string();
        let line = result_line(&k, result, None, (60, "66"), None);
        let all: Vec<String> = [rounds.concat(), vec![view, line]].concat();
        let report = verify_history(&all.join("\n"), None);
        assert!(
            report.problems.iter().any(|p| p.contains("opens no seal")),
            "{report:?}"
        );
        // Across a resync view (the viewer skipped messages) no gap is claimed.
        let resync = json!({"type": "view", "resync": true, "view": {"table": "t1",
                            "table_key": k.public_hex(), "round": {"number": 5}}})
        .to_string();
        let skipped: Vec<String> = [rounds[0].clone(), vec![resync], rounds[4].clone()].concat();
        let report = verify_history(&skipped.join("\n"), None);
        assert!(report.ok(), "{report:?}");
    }
}
