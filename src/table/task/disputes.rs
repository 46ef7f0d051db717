//! Disputes at the table: raising one halts the round, a supervisor proposes a resolution
//! (a preview, changing nothing), confirming records it; and the dispute window after each
//! settled round. The corrected inputs come from the pure `table::dispute::correct`.

use super::command::Raise;
use super::errors::DisputeError;
use super::table::{OpenDispute, Proposal, Table};
use crate::store::audit::{actions, AuditEntry};
use crate::store::{RaisedDispute, Record, ResolvedDispute};
use crate::table::dispute::{self, Correction, Resolution};
use crate::table::state::ProposalView;
use tracing::{info, warn};

impl Table {
    pub(super) async fn on_raise(&mut self, raise: Raise) -> Result<u64, DisputeError> {
        if let Some(why) = &self.broken {
            return Err(DisputeError::Broken(why.clone()));
        }
        if let Some(d) = &self.dispute {
            return Err(DisputeError::AlreadyOpen(d.head.id));
        }
        let current = self.view.number;
        let in_play = current > 0 && !self.view.settled;
        let open = in_play || self.provisional() == Some(current);
        match raise.round {
            Some(r) if r != current || !open => return Err(DisputeError::RoundFinal(r)),
            None if current == 0 => return Err(DisputeError::NoRound),
            None if !open => return Err(DisputeError::RoundFinal(current)),
            _ => {}
        }
        self.events.clear();
        let frozen = self.decorate(self.view.clone(), &self.engine);
        let entry = AuditEntry::new(raise.by.clone(), actions::DISPUTE)
            .subject(format!("{} round {current}", self.id))
            .values(serde_json::to_string(&frozen).ok(), None)
            .reason(raise.reason.clone())
            .detail(serde_json::json!({"origin": raise.origin.as_str(), "seat": raise.seat}));
        let record = Record::Dispute(RaisedDispute {
            origin: raise.origin,
            seat: raise.seat,
            round: current,
            reason: raise.reason,
            by: raise.by,
            frozen: serde_json::to_value(&frozen).ok().map(Box::new),
        });
        self.record_audited(record, Some(&entry))
            .await
            .ok_or_else(|| DisputeError::Broken(self.broken.clone().unwrap_or_default()))
    }

    /// The open dispute, if it is `id`.
    pub(super) fn open_dispute(&self, id: u64) -> Result<&OpenDispute, DisputeError> {
        if let Some(why) = &self.broken {
            return Err(DisputeError::Broken(why.clone()));
        }
        match &self.dispute {
            Some(d) if d.head.id == id => Ok(d),
            _ => Err(DisputeError::NotOpen(id)),
        }
    }

    /// The correction `resolution` makes, checked against what may be corrected.
    pub(super) fn correction(&self, resolution: &Resolution) -> Result<Correction, DisputeError> {
        if *resolution == Resolution::Cancel {
            let in_play = self.view.number > 0 && !self.view.settled;
            if !in_play && self.provisional() != Some(self.view.number) {
                return Err(DisputeError::NotCancellable);
            }
        }
        Ok(dispute::correct(
            &self.base.engine,
            &self.round_inputs,
            &self.held(),
            resolution,
        )?)
    }

    pub(super) fn on_propose(
        &mut self,
        id: u64,
        resolution: Resolution,
        reason: String,
        by: String,
    ) -> Result<ProposalView, DisputeError> {
        self.open_dispute(id)?;
        let c = self.correction(&resolution)?;
        let (round, _, last) = self.corrected_view(&c.inputs, &c.events);
        let round = self.decorate(round, &c.engine);
        let result = last.filter(|r| r.round == round.number && round.settled);
        let mut view = ProposalView {
            dispute: id,
            resolution: resolution.clone(),
            reason: reason.clone(),
            proposed_by: by.clone(),
            second_person: self.disputes.two_person_rule && resolution.needs_second_person(),
            round,
            result,
            expecting: c.engine.expectation().to_string(),
            inputs: c.inputs.iter().map(dispute::describe).collect(),
            voided: c.voided.clone(),
            proposal: String::new(),
        };
        view.proposal = view.digest();
        info!(table = %self.id, dispute = id, op = resolution.name(), %by, proposal = %view.proposal, "resolution proposed");
        self.proposal = Some(Proposal {
            resolution,
            reason,
            by,
            view: view.clone(),
        });
        self.publish_state();
        Ok(view)
    }

    /// The proposal of dispute `id`, if it is the one named `named` (its hash).
    fn named_proposal(&self, id: u64, named: &str) -> Result<&Proposal, DisputeError> {
        self.open_dispute(id)?;
        let Some(p) = &self.proposal else {
            return Err(DisputeError::NoProposal(id));
        };
        if p.view.proposal != named {
            return Err(DisputeError::ProposalChanged {
                named: named.to_string(),
                current: p.view.proposal.clone(),
            });
        }
        Ok(p)
    }

    /// Applies the named proposal; under the two-person rule only if two different
    /// people took part, neither of them the local token (`dispute::is_person`).
    pub(super) async fn on_confirm(
        &mut self,
        id: u64,
        named: &str,
        by: String,
    ) -> Result<u64, DisputeError> {
        let p = self.named_proposal(id, named)?.clone();
        if p.view.second_person {
            if let Some(token) = [&by, &p.by].into_iter().find(|a| !dispute::is_person(a)) {
                return Err(DisputeError::NotAPerson(token.clone()));
            }
            if dispute::same_person(&p.by, &by) {
                return Err(DisputeError::SamePerson(by));
            }
        }
        if self.alarm.is_some() {
            if let Some(why) = self.device_fault() {
                return Err(DisputeError::Persists(why));
            }
        }
        let c = self.correction(&p.resolution)?;
        // The override on the record: the round before and after, who proposed and who
        // confirmed, in the same transaction as the log row that applies it.
        let before = self.decorate(self.view.clone(), &self.engine);
        let entry = AuditEntry::new(by.clone(), actions::OVERRIDE)
            .subject(format!("{} round {} dispute {id}", self.id, before.number))
            .values(
                serde_json::to_string(&before).ok(),
                serde_json::to_string(&p.view.round).ok(),
            )
            .reason(p.reason.clone())
            .detail(serde_json::json!({
                "resolution": p.resolution,
                "proposed_by": p.by,
                "confirmed_by": by,
                "proposal": p.view.proposal,
                "voided": c.voided,
                "result": p.view.result,
            }));
        let record = Record::Resolve(ResolvedDispute {
            dispute: id,
            resolution: p.resolution,
            reason: p.reason,
            proposed_by: p.by,
            confirmed_by: by,
            inputs: c.inputs,
            voided: c.voided,
        });
        self.events = c.events;
        self.record_audited(record, Some(&entry))
            .await
            .ok_or_else(|| DisputeError::Broken(self.broken.clone().unwrap_or_default()))
    }

    /// Withdraws the named proposal: any supervisor may (the route's role; a proposer may
    /// have left the floor), and the audit log says who withdrew whose proposal.
    pub(super) async fn on_withdraw(
        &mut self,
        id: u64,
        named: &str,
        by: String,
    ) -> Result<(), DisputeError> {
        let p = self.named_proposal(id, named)?;
        let round = self.view.number;
        let entry = AuditEntry::new(by.clone(), actions::DISPUTE_WITHDRAW)
            .subject(format!("{} round {round} dispute {id}", self.id))
            .values(serde_json::to_string(&p.resolution).ok(), None)
            .reason(p.reason.clone())
            .detail(serde_json::json!({
                "table": self.id,
                "proposal": p.view.proposal,
                "proposed_by": p.by,
                "withdrawn_by": by,
            }));
        let Some(store) = self.store.as_mut() else {
            return Err(DisputeError::Broken(
                self.broken.clone().unwrap_or_default(),
            ));
        };
        // Audited first: a withdrawal that is not on the record does not happen.
        if let Err(e) = store.audit(&entry).await {
            warn!(table = %self.id, dispute = id, error = %e, "withdrawal not recorded");
            return Err(DisputeError::NotRecorded(e.to_string()));
        }
        info!(table = %self.id, dispute = id, %by, "resolution withdrawn");
        self.proposal = None;
        self.publish_state();
        Ok(())
    }

    /// The provisional round's window closed: its result becomes final.
    pub(super) async fn on_window_closed(&mut self) {
        self.final_at = None;
        let Some(round) = self.provisional() else {
            return;
        };
        if self.dispute.is_some() || self.alarm.is_some() {
            // A halted round stays provisional until it is resolved.
            return;
        }
        self.events.clear();
        self.record(Record::Final { round }).await;
    }
}
