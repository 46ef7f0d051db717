//! Alarms: shoe items, device faults and button presses that lock the table, the held
//! items recorded while it is locked, and clearing.

use super::errors::ClearError;
use super::table::Table;
use crate::engine::{Action, Expectation, Input};
use crate::metrics::{AlarmKind, CardOutcome};
use crate::store::audit::{actions, AuditEntry};
use crate::store::{Record, Source};
use croupier_drivers::buttons::{ButtonAction, ButtonEvent};
use croupier_drivers::event::{ShoeEvent, ShoeStatus};
use croupier_drivers::ShoeItem;
use tracing::{error, info, warn};

pub(super) fn describe_status(status: ShoeStatus) -> String {
    let mut parts = Vec::new();
    if status.lid_open {
        parts.push("lid open");
    }
    if status.jam {
        parts.push("a jam");
    }
    if status.misread {
        parts.push("a misread card");
    }
    parts.join(", ")
}

impl Table {
    pub(super) async fn on_shoe(&mut self, event: ShoeEvent) {
        let item = match event {
            ShoeEvent::Card(card) => ShoeItem::Card(card),
            ShoeEvent::CutCard => ShoeItem::CutCard,
            ShoeEvent::Connected { port } => {
                self.on_connected(port).await;
                return;
            }
            ShoeEvent::Disconnected { reason } => {
                self.link = format!("disconnected: {reason}");
                self.raise(
                    AlarmKind::ShoeDisconnected,
                    format!("the shoe is disconnected: {reason}"),
                    "check the shoe's cable and power; cards dealt meanwhile were not read, \
                     so re-feed them; then clear the alarm"
                        .into(),
                    None,
                )
                .await;
                return;
            }
            ShoeEvent::Status(status) => {
                self.shoe_status = status;
                if status != ShoeStatus::default() {
                    self.raise(
                        AlarmKind::ShoeStatus,
                        format!("the shoe reports {}", describe_status(status)),
                        "close the lid / free the jam / re-feed the misread card; then clear \
                         the alarm"
                            .into(),
                        None,
                    )
                    .await;
                }
                return;
            }
            ShoeEvent::Fault(fault) => {
                self.raise(
                    AlarmKind::ShoeFault,
                    format!("the shoe sent an invalid frame ({fault})"),
                    "check the shoe and its cable; if a card was being read, re-feed it; then \
                     clear the alarm"
                        .into(),
                    None,
                )
                .await;
                return;
            }
            // Events a later driver adds: logged, not acted on, until the table knows them.
            #[allow(unreachable_patterns)]
            other => {
                warn!(table = %self.id, event = ?other, "shoe event not handled");
                return;
            }
        };
        let code = item.to_string();
        // Cards are counted once their fate is durable (or known unrecordable): the tally
        // is taken when the row commits, before it is published.
        let card = matches!(item, ShoeItem::Card(_));
        let tally = |outcome| card.then_some(outcome);
        if self.broken.is_some() {
            error!(table = %self.id, item = %code, "shoe item NOT RECORDED: the store is unusable; spilled");
            self.spill_now(crate::store::spill::Spilled::Item(code));
            if card {
                self.metrics.card(CardOutcome::Unrecorded);
            }
            self.publish_state();
            return;
        }
        if self.alarm.is_some() || self.dispute.is_some() {
            self.events.clear();
            self.tally.card = tally(CardOutcome::Held);
            self.record(Record::Held { item: code }).await;
            return;
        }
        let input = match item {
            ShoeItem::Card(card) => Input::Card(card),
            ShoeItem::CutCard => Input::CutCard,
        };
        self.tick_before(&input).await;
        if self.broken.is_some() {
            // The tick's row could not be written: the card goes where an unrecordable
            // item goes.
            self.spill_now(crate::store::spill::Spilled::Item(code));
            if card {
                self.metrics.card(CardOutcome::Unrecorded);
            }
            self.publish_state();
            return;
        }
        let decided = self.apply_input(&input);
        match decided {
            Ok(()) => {
                self.tally.card = tally(CardOutcome::Applied);
                self.record(Record::Input {
                    source: Source::Shoe,
                    input,
                })
                .await;
            }
            Err(rejection) => {
                let expecting = self.engine.expectation();
                let card_tally = tally(CardOutcome::Refused);
                self.raise_counting(
                    card_tally,
                    AlarmKind::CardRefused,
                    format!("{code} out of the shoe was refused: {rejection}"),
                    format!(
                        "take the {code} out of play; the table expects {expecting}; then \
                         clear the alarm"
                    ),
                    Some(code),
                )
                .await;
            }
        }
    }

    pub(super) async fn on_button(&mut self, event: ButtonEvent) {
        match event {
            ButtonEvent::Action { action, pin, .. } => {
                let expectation = self.engine.expectation();
                let decide = |action| match &expectation {
                    Expectation::Decision { seat, .. } => Some(Input::Decision {
                        seat: *seat,
                        action,
                    }),
                    _ => None,
                };
                let input = match action {
                    ButtonAction::Stand => decide(Action::Stand),
                    ButtonAction::Double => decide(Action::Double),
                    ButtonAction::Split => decide(Action::Split),
                    ButtonAction::Surrender => decide(Action::Surrender),
                    ButtonAction::InsuranceYes | ButtonAction::InsuranceNo => {
                        self.insurance_seats().first().map(|&seat| Input::Decision {
                            seat,
                            action: if action == ButtonAction::InsuranceYes {
                                Action::Insurance
                            } else {
                                Action::NoInsurance
                            },
                        })
                    }
                    ButtonAction::NewShoe => Some(Input::Shuffle),
                    ButtonAction::CallSupervisor => {
                        self.raise(
                            AlarmKind::SupervisorCalled,
                            "the dealer called the supervisor".into(),
                            "the supervisor decides, then clears the alarm".into(),
                            None,
                        )
                        .await;
                        return;
                    }
                    ButtonAction::Confirm | ButtonAction::CloseBets => {
                        info!(table = %self.id, pin, ?action, "button has no effect yet");
                        None
                    }
                    #[allow(unreachable_patterns)]
                    _ => {
                        info!(table = %self.id, pin, ?action, "button not handled");
                        None
                    }
                };
                let Some(input) = input else {
                    warn!(table = %self.id, pin, ?action, expecting = %expectation, "button press does not fit what the table expects; ignored");
                    return;
                };
                // A remote player's seat is decided on their own screen (or by the table's
                // timer): the dealer's box must not take the choice from them.
                if let Input::Decision { seat, .. } = &input {
                    if self.remote.as_ref().is_some_and(|r| r.is_remote(*seat)) {
                        warn!(table = %self.id, pin, ?action, seat, "button press for a remote player's seat; ignored: they decide on their own screen");
                        return;
                    }
                }
                if let Err(e) = self.on_input(input, Source::Buttons).await {
                    warn!(table = %self.id, pin, ?action, error = %e, "button press refused");
                }
            }
            ButtonEvent::Stuck { pin } => {
                self.stuck.insert(pin);
                self.raise(
                    AlarmKind::ButtonStuck,
                    format!("the button on GPIO {pin} is stuck"),
                    "free the button; then clear the alarm".into(),
                    None,
                )
                .await;
            }
            ButtonEvent::Unstuck { pin } => {
                self.stuck.remove(&pin);
                info!(table = %self.id, pin, "button came free");
            }
            #[allow(unreachable_patterns)]
            other => warn!(table = %self.id, event = ?other, "button event not handled"),
        }
    }

    pub(super) async fn on_clear(
        &mut self,
        reason: String,
        actor: String,
    ) -> Result<u64, ClearError> {
        if let Some(why) = &self.broken {
            return Err(ClearError::Broken(why.clone()));
        }
        let Some(alarm) = &self.alarm else {
            return Err(ClearError::NotLocked);
        };
        if let Some(why) = self.device_fault() {
            return Err(ClearError::Persists(why));
        }
        let voided = alarm.held.clone();
        let actor_name = actor.clone();
        let entry = AuditEntry::new(actor, actions::ALARM_CLEAR)
            .subject(self.id.clone())
            .values(Some(alarm.reason.clone()), Some("cleared".into()))
            .reason(reason.clone())
            .detail(serde_json::json!({"voided": voided}));
        self.events.clear();
        match self
            .record_audited(
                Record::Clear {
                    reason,
                    voided,
                    by: actor_name,
                },
                Some(&entry),
            )
            .await
        {
            Some(seq) => Ok(seq),
            None => Err(ClearError::Store(self.broken.clone().unwrap_or_default())),
        }
    }

    /// Records an alarm of `kind`; returns whether its row is durable.
    pub(super) async fn raise(
        &mut self,
        kind: AlarmKind,
        reason: String,
        expected: String,
        item: Option<String>,
    ) -> bool {
        self.raise_counting(None, kind, reason, expected, item)
            .await
    }

    /// [`Table::raise`], counting the refused card as `card` when the row commits.
    pub(super) async fn raise_counting(
        &mut self,
        card: Option<CardOutcome>,
        kind: AlarmKind,
        reason: String,
        expected: String,
        item: Option<String>,
    ) -> bool {
        if self.broken.is_some() {
            error!(table = %self.id, %reason, "alarm NOT RECORDED: the store is unusable; spilled");
            if card.is_some() {
                self.metrics.card(CardOutcome::Unrecorded);
            }
            if let Some(item) = item {
                self.spill_now(crate::store::spill::Spilled::Item(item));
            }
            self.spill_now(crate::store::spill::Spilled::Alarm(reason));
            self.publish_state();
            return false;
        }
        self.events.clear();
        self.tally = super::table::Tally {
            card,
            alarm: Some(kind),
        };
        self.record(Record::Alarm {
            reason,
            expected,
            item,
        })
        .await
        .is_some()
    }
}
