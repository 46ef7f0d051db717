//! The button box's behaviour as a pure state machine fed with `(pin, level, instant)`:
//! debounce, short and long press, stuck detection. Drivers only feed it edges, so all
//! of this is tested without GPIO.
//!
//! Buttons are wired to ground with pull-ups, so pressed is [`Level::Low`].

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;

use super::config::{ButtonAction, ButtonsConfig, PinBinding};

/// A pin's electrical level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// Pulled to ground: pressed.
    Low,
    /// Pulled up: released.
    High,
}

/// A raw level change on a pin, as an interrupt reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// BCM GPIO number.
    pub pin: u8,
    /// The level after the change.
    pub level: Level,
    /// When it happened.
    pub at: Instant,
}

/// What the button box tells the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ButtonEvent {
    /// A button asked for `action`.
    Action {
        /// What to do.
        action: ButtonAction,
        /// Which pin.
        pin: u8,
        /// It was the long-press action.
        long: bool,
    },
    /// A button has been held past `stuck_after_s`: a fault for the supervisor. Its press
    /// does nothing.
    Stuck {
        /// Which pin.
        pin: u8,
    },
    /// A stuck button came free.
    Unstuck {
        /// Which pin.
        pin: u8,
    },
}

#[derive(Debug, Clone)]
struct PinState {
    binding: PinBinding,
    raw: Level,
    raw_since: Instant,
    /// The debounced press, if the button is down: when it went down.
    pressed_at: Option<Instant>,
    long_fired: bool,
    stuck: bool,
}

/// Debounce, long-press and stuck-button logic for every configured pin.
#[derive(Debug, Clone)]
pub struct ButtonLogic {
    pins: BTreeMap<u8, PinState>,
    debounce: Duration,
    long_press: Duration,
    stuck_after: Duration,
}

impl ButtonLogic {
    /// All configured buttons, released as of `now`.
    pub fn new(config: &ButtonsConfig, now: Instant) -> ButtonLogic {
        let pins = config
            .pins
            .iter()
            .map(|&binding| {
                let state = PinState {
                    binding,
                    raw: Level::High,
                    raw_since: now,
                    pressed_at: None,
                    long_fired: false,
                    stuck: false,
                };
                (binding.pin, state)
            })
            .collect();
        ButtonLogic {
            pins,
            debounce: config.debounce(),
            long_press: config.long_press(),
            stuck_after: config.stuck_after(),
        }
    }

    /// Records a raw edge. Edges on unconfigured pins are ignored. Edges must come in
    /// time order; events that became due before `edge.at` are returned first.
    pub fn on_edge(&mut self, edge: Edge) -> Vec<ButtonEvent> {
        let mut events = self.advance(edge.at);
        if let Some(state) = self.pins.get_mut(&edge.pin) {
            if state.raw != edge.level {
                state.raw = edge.level;
                state.raw_since = edge.at;
            }
        }
        // A level that is already the debounced one needs no waiting.
        events.extend(self.advance(edge.at));
        events
    }

    /// Fires whatever has come due by `now`: settled levels, long presses, stuck buttons.
    pub fn advance(&mut self, now: Instant) -> Vec<ButtonEvent> {
        let mut events = Vec::new();
        for (&pin, state) in &mut self.pins {
            let pressed = state.pressed_at.is_some();
            let settled = now.saturating_duration_since(state.raw_since) >= self.debounce;
            if settled && (state.raw == Level::Low) != pressed {
                if state.raw == Level::Low {
                    state.pressed_at = Some(state.raw_since);
                    state.long_fired = false;
                    state.stuck = false;
                    if state.binding.long_press.is_none() {
                        events.push(action(state.binding.action, pin, false));
                    }
                } else {
                    state.pressed_at = None;
                    if state.stuck {
                        events.push(ButtonEvent::Unstuck { pin });
                    } else if state.binding.long_press.is_some() && !state.long_fired {
                        events.push(action(state.binding.action, pin, false));
                    }
                }
            }
            let Some(pressed_at) = state.pressed_at else {
                continue;
            };
            let held = now.saturating_duration_since(pressed_at);
            if let Some(long) = state.binding.long_press {
                if held >= self.long_press && !state.long_fired && !state.stuck {
                    state.long_fired = true;
                    events.push(action(long, pin, true));
                }
            }
            if held >= self.stuck_after && !state.stuck {
                state.stuck = true;
                events.push(ButtonEvent::Stuck { pin });
            }
        }
        events
    }

    /// When [`ButtonLogic::advance`] next has something to do, if ever.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.pins
            .values()
            .flat_map(|state| {
                let pressed = state.pressed_at.is_some();
                let settling =
                    ((state.raw == Level::Low) != pressed).then(|| state.raw_since + self.debounce);
                let long = state
                    .pressed_at
                    .filter(|_| state.binding.long_press.is_some() && !state.long_fired)
                    .map(|at| at + self.long_press);
                let stuck = state
                    .pressed_at
                    .filter(|_| !state.stuck)
                    .map(|at| at + self.stuck_after);
                [settling, long, stuck]
            })
            .flatten()
            .min()
    }
}

fn action(action: ButtonAction, pin: u8, long: bool) -> ButtonEvent {
    ButtonEvent::Action { action, pin, long }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ButtonAction::*;

    const STAND: u8 = 5;
    const CLOSE: u8 = 21;

    struct Bench {
        logic: ButtonLogic,
        t0: Instant,
    }

    impl Bench {
        fn new() -> Bench {
            let t0 = Instant::now();
            let cfg = ButtonsConfig {
                debounce_ms: 20,
                long_press_ms: 1_000,
                stuck_after_s: 5,
                ..ButtonsConfig::default()
            };
            Bench {
                logic: ButtonLogic::new(&cfg, t0),
                t0,
            }
        }
        fn at(&self, ms: u64) -> Instant {
            self.t0 + Duration::from_millis(ms)
        }
        fn edge(&mut self, pin: u8, level: Level, ms: u64) -> Vec<ButtonEvent> {
            let at = self.at(ms);
            self.logic.on_edge(Edge { pin, level, at })
        }
        fn advance(&mut self, ms: u64) -> Vec<ButtonEvent> {
            let at = self.at(ms);
            self.logic.advance(at)
        }
    }

    #[test]
    fn bouncy_press_fires_once_after_debounce() {
        let mut b = Bench::new();
        let mut events = Vec::new();
        // Contact bounce: five transitions within 6 ms, then held.
        for (i, ms) in [100, 101, 102, 104, 106].into_iter().enumerate() {
            let level = if i % 2 == 0 { Level::Low } else { Level::High };
            events.extend(b.edge(STAND, level, ms));
        }
        assert_eq!(b.logic.next_deadline(), Some(b.at(126)));
        events.extend(b.advance(125));
        assert!(events.is_empty(), "not settled yet: {events:?}");
        events.extend(b.advance(126));
        assert_eq!(events, vec![action(Stand, STAND, false)]);
        // Release bounce, then a clean release: nothing more for a button without long press.
        assert!(b.edge(STAND, Level::High, 300).is_empty());
        assert!(b.edge(STAND, Level::Low, 302).is_empty());
        assert!(b.edge(STAND, Level::High, 303).is_empty());
        assert!(b.advance(400).is_empty());
        assert_eq!(b.logic.next_deadline(), None);
    }

    #[test]
    fn glitch_shorter_than_debounce_is_ignored() {
        let mut b = Bench::new();
        assert!(b.edge(STAND, Level::Low, 100).is_empty());
        assert!(b.edge(STAND, Level::High, 110).is_empty());
        assert!(b.advance(1_000).is_empty());
    }

    #[test]
    fn short_and_long_press_on_a_dual_button() {
        let mut b = Bench::new();
        b.edge(CLOSE, Level::Low, 0);
        assert!(b.advance(30).is_empty(), "waits to see if it is long");
        assert_eq!(
            b.edge(CLOSE, Level::High, 500),
            Vec::<ButtonEvent>::new(),
            "release not settled yet"
        );
        assert_eq!(b.advance(520), vec![action(CloseBets, CLOSE, false)]);

        b.edge(CLOSE, Level::Low, 2_000);
        assert_eq!(b.logic.next_deadline(), Some(b.at(2_020)));
        assert!(b.advance(2_020).is_empty());
        assert_eq!(b.logic.next_deadline(), Some(b.at(3_000)));
        assert_eq!(b.advance(3_000), vec![action(NewShoe, CLOSE, true)]);
        b.edge(CLOSE, Level::High, 3_500);
        assert!(
            b.advance(3_600).is_empty(),
            "long press consumed the release"
        );
    }

    #[test]
    fn a_held_button_becomes_stuck_and_does_nothing_when_freed() {
        let mut b = Bench::new();
        assert_eq!(b.edge(STAND, Level::Low, 0), vec![]);
        assert_eq!(b.advance(20), vec![action(Stand, STAND, false)]);
        assert!(b.advance(4_999).is_empty());
        assert_eq!(b.advance(5_000), vec![ButtonEvent::Stuck { pin: STAND }]);
        assert!(b.advance(60_000).is_empty(), "reported once");
        b.edge(STAND, Level::High, 60_001);
        assert_eq!(b.advance(60_021), vec![ButtonEvent::Unstuck { pin: STAND }]);

        // A dual button that sticks fires its long action once, then the fault, and no
        // short action on release.
        b.edge(CLOSE, Level::Low, 70_000);
        let held: Vec<_> = (1..=6)
            .flat_map(|s| b.advance(70_000 + s * 1_000))
            .collect();
        assert_eq!(
            held,
            vec![
                action(NewShoe, CLOSE, true),
                ButtonEvent::Stuck { pin: CLOSE }
            ]
        );
        b.edge(CLOSE, Level::High, 80_000);
        assert_eq!(b.advance(80_100), vec![ButtonEvent::Unstuck { pin: CLOSE }]);
    }

    #[test]
    fn unconfigured_pins_and_repeated_levels_are_ignored() {
        let mut b = Bench::new();
        assert!(b.edge(2, Level::Low, 0).is_empty());
        assert!(b.advance(10_000).is_empty());
        b.edge(STAND, Level::Low, 100);
        // A repeated Low (missed High edge) must not restart the debounce or the press.
        b.edge(STAND, Level::Low, 115);
        assert_eq!(b.advance(120), vec![action(Stand, STAND, false)]);
    }
}
