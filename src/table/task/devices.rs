//! The devices' own state beside the log: whether the shoe is connected, what its sensors
//! last said, which buttons are stuck. An alarm a device raised cannot be cleared (nor
//! its dispute resolved) while the device still reports the fault, and a shoe that comes
//! back after a disconnection nobody is dealing with locks the table again.

use super::alarms::describe_status;
use super::table::Table;
use crate::metrics::AlarmKind;
use croupier_drivers::event::ShoeStatus;
use tracing::info;

impl Table {
    /// What a device still reports, which clearing would not fix: `None` when nothing.
    pub(super) fn device_fault(&self) -> Option<String> {
        let mut faults = Vec::new();
        // A link seen going down; "waiting" (no link yet this run, or a table with no shoe
        // driver) is not a fault of its own.
        if self.link.starts_with("disconnected") {
            faults.push(format!("the shoe is not connected ({})", self.link));
        }
        if self.shoe_status != ShoeStatus::default() {
            faults.push(format!(
                "the shoe still reports {}",
                describe_status(self.shoe_status)
            ));
        }
        if !self.stuck.is_empty() {
            let pins: Vec<String> = self.stuck.iter().map(|p| format!("GPIO {p}")).collect();
            faults.push(format!("the button on {} is still stuck", pins.join(", ")));
        }
        (!faults.is_empty()).then(|| faults.join("; "))
    }

    /// The shoe's link came up. After a disconnection, a table that is not locked (its
    /// alarm was resolved, or could not be recorded) locks again: cards may have been
    /// dealt that the shoe never read.
    pub(super) async fn on_connected(&mut self, port: String) {
        let was_down = self.link.starts_with("disconnected");
        info!(table = %self.id, %port, "shoe connected");
        self.link = crate::table::state::LINK_CONNECTED.into();
        // The sensors are reported afresh by the shoe on the new link.
        self.shoe_status = ShoeStatus::default();
        if was_down && self.alarm.is_none() && self.broken.is_none() {
            self.raise(
                AlarmKind::ShoeDisconnected,
                format!("the shoe reconnected on {port} after a disconnection"),
                "cards dealt while it was disconnected were not read: re-feed them; then clear \
                 the alarm"
                    .into(),
                None,
            )
            .await;
            return;
        }
        self.publish_state();
    }
}
