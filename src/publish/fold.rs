//! The public feed as a function of the committed log: what the publisher sends on
//! `croupier.<table>.public`.
//!
//! The table's own feed (`web::feed`) follows the latest snapshot, so how many view
//! messages a burst of rows makes depends on timing, betting-window changes (kept only in
//! memory) are messages too, and its `n` starts again at every start. A stream that any
//! number of relays serve, and that must come out the same after a crash, cannot depend on
//! any of that. So here every committed row is folded through a [`Follower`] (the same
//! `replay` + `absorb` as recovery) and makes, in this order:
//!
//! 1. a `view` message when the public view after it differs from the last one sent
//!    (ignoring `seq`), with the last result left out, as the table's feed does;
//! 2. a `result` message per round the row settled (`provisional` while its dispute
//!    window is open, a resolution's re-settled round again);
//! 3. a `final` message when the row closed a round's dispute window.
//!
//! The messages of row `seq` are `seq.0`, `seq.1`, ...; `at_ms` is the row's commit time;
//! `n` is the message's position in the table's public stream (the stream's own sequence,
//! see `super::subjects`), given by the publisher. The text is `web::feed::encode`, the
//! table feed's own encoder. Betting-window changes are not log rows and are not
//! published; the round the window opens is.

use crate::engine::{Event, RoundResult, Variant};
use crate::store::{LogRow, Record};
use crate::table::{DisputeSettings, Follower};
use crate::trust::{Signed, TableKeys};
use crate::web::feed::{encode, Body};
use crate::web::view::{public_view, PublicView};
use std::sync::Arc;

/// One public message before it is numbered.
#[derive(Debug, Clone)]
pub struct Draft {
    /// Its row.
    pub seq: u64,
    /// Its index among the row's messages.
    pub sub: u32,
    /// What it says.
    pub what: What,
}

/// What a [`Draft`] says.
#[derive(Debug, Clone)]
pub enum What {
    /// The public view (without its last result).
    View(Box<PublicView>),
    /// A settled round's result, whether it is still provisional, and its signed
    /// statement (none without table keys).
    Result(RoundResult, bool, Option<Signed>),
    /// A round's result became final.
    Final(u64),
}

impl Draft {
    /// The message's id.
    pub fn key(&self) -> (u64, u32) {
        (self.seq, self.sub)
    }

    /// The message's text as number `n`, published at `at_ms`.
    pub fn text(&self, n: u64, at_ms: u64) -> String {
        self.text_as(self.key(), n, at_ms)
    }

    /// The message's text with id `id` (a branch's ids are offset: `Lineage::branch_at`)
    /// as number `n`, published at `at_ms`.
    pub fn text_as(&self, id: (u64, u32), n: u64, at_ms: u64) -> String {
        let body = match &self.what {
            What::View(view) => Body::View {
                view,
                resync: false,
                signed: None,
            },
            What::Result(result, provisional, signed) => Body::Result {
                result,
                provisional: *provisional,
                signed: signed.as_ref(),
            },
            What::Final(round) => Body::Final { round: *round },
        };
        encode(id.0, id.1, n, at_ms, body)
    }
}

/// The fold: the table as of the last row, and the last public view sent.
pub struct PublicFold {
    follower: Follower,
    last: Option<PublicView>,
}

impl PublicFold {
    /// Before the first row of `table`.
    pub fn new(
        table: &str,
        name: &str,
        variant_name: &str,
        variant: Arc<Variant>,
        disputes: DisputeSettings,
    ) -> PublicFold {
        PublicFold {
            follower: Follower::new(table, name, variant_name, variant, disputes),
            last: None,
        }
    }

    /// Writes the views in the table's currency (`[table] currency`), as the table does;
    /// without it they said the euro whatever the table played in.
    pub fn with_currency(mut self, currency: crate::currency::Currency) -> PublicFold {
        self.follower.set_currency(currency);
        self
    }

    /// Counts the free seats for remote players when `on` (`[play] enabled`), as the table
    /// itself does (`TableOffer::seats_free`, a function of the log like the rest).
    pub fn with_remote_play(mut self, on: bool) -> PublicFold {
        self.follower.set_remote_play(on);
        self
    }

    /// Seals and signs with the table's keys, as the table itself does (its key file,
    /// `trust::keys`): the published stream is then the table's own, signatures included.
    pub fn with_trust(mut self, keys: Arc<TableKeys>) -> PublicFold {
        self.follower.set_trust(keys);
        self
    }

    /// The last row folded.
    pub fn seq(&self) -> u64 {
        self.follower.seq()
    }

    /// The whole public view as of the last row (its last result inside): the snapshot
    /// for late joiners.
    pub fn view(&self) -> Option<&PublicView> {
        self.last.as_ref()
    }

    /// Folds the next row; returns its public messages. An error is a row that does not
    /// replay (the table itself would be out of service on it).
    pub fn row(&mut self, row: &LogRow) -> Result<Vec<Draft>, String> {
        let (snapshot, events) = self.follower.follow(row)?;
        let view = public_view(&snapshot);
        let mut what = Vec::new();
        let same = self.last.as_ref().is_some_and(|v| {
            PublicView {
                seq: view.seq,
                ..v.clone()
            } == view
        });
        if !same {
            what.push(What::View(Box::new(PublicView {
                last_result: None,
                ..view.clone()
            })));
            self.last = Some(view);
        } else if let Some(last) = &mut self.last {
            // Keep what a late joiner gets current (a result alone changes it).
            last.last_result = view.last_result;
        }
        let mut signed = self.follower.attest(row, &events).into_iter();
        for e in &events {
            if let Event::RoundSettled(result) = e {
                let provisional = snapshot.provisional == Some(result.round);
                let mut public = (**result).clone();
                snapshot.pseudonyms.result(&mut public);
                what.push(What::Result(public, provisional, signed.next()));
            }
        }
        if let Record::Final { round } = &row.record {
            what.push(What::Final(*round));
        }
        Ok(what
            .into_iter()
            .enumerate()
            .map(|(sub, what)| Draft {
                seq: row.seq,
                sub: u32::try_from(sub).unwrap_or(u32::MAX),
                what,
            })
            .collect())
    }
}
