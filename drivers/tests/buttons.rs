//! The button box end to end over the fake GPIO: edges in, debounced events out, through
//! the same `ButtonBox` task the rppal driver uses. Time is tokio's paused clock, so
//! holds of seconds take no real time and nothing depends on scheduling.

use std::time::Duration;

use croupier_drivers::buttons::{
    ButtonAction, ButtonBox, ButtonDriver, ButtonError, ButtonEvent, ButtonsConfig,
};
use tokio::time::{advance, timeout};

const STAND: u8 = 5;
const CLOSE: u8 = 21;

fn fake_config() -> ButtonsConfig {
    ButtonsConfig {
        driver: ButtonDriver::Fake,
        ..ButtonsConfig::default()
    }
}

async fn next(buttons: &mut ButtonBox) -> ButtonEvent {
    timeout(Duration::from_secs(60), buttons.next_event())
        .await
        .expect("event in time")
        .expect("button box running")
}

async fn quiet(buttons: &mut ButtonBox, span: Duration) {
    if let Ok(event) = timeout(span, buttons.next_event()).await {
        panic!("unexpected {event:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn bounce_press_long_press_and_stuck_through_the_fake() {
    let (mut buttons, fake) = ButtonBox::from_config(&fake_config()).expect("fake starts");
    let fake = fake.expect("fake driver hands out its handle");

    // A bouncing press of Stand: one action.
    for _ in 0..3 {
        fake.press(STAND);
        advance(Duration::from_millis(2)).await;
        fake.release(STAND);
        advance(Duration::from_millis(1)).await;
    }
    fake.press(STAND);
    assert_eq!(
        next(&mut buttons).await,
        ButtonEvent::Action {
            action: ButtonAction::Stand,
            pin: STAND,
            long: false
        }
    );
    fake.release(STAND);
    quiet(&mut buttons, Duration::from_millis(500)).await;

    // Close bets held for 1.5 s: the long action, new shoe.
    fake.press(CLOSE);
    assert_eq!(
        next(&mut buttons).await,
        ButtonEvent::Action {
            action: ButtonAction::NewShoe,
            pin: CLOSE,
            long: true
        }
    );
    advance(Duration::from_millis(500)).await;
    fake.release(CLOSE);
    quiet(&mut buttons, Duration::from_millis(500)).await;

    // Held past stuck_after_s: a fault, then freed.
    fake.press(STAND);
    assert!(matches!(
        next(&mut buttons).await,
        ButtonEvent::Action { pin: STAND, .. }
    ));
    assert_eq!(next(&mut buttons).await, ButtonEvent::Stuck { pin: STAND });
    fake.release(STAND);
    assert_eq!(
        next(&mut buttons).await,
        ButtonEvent::Unstuck { pin: STAND }
    );
}

#[tokio::test]
async fn the_real_driver_without_gpio_names_the_fake_switch() {
    if std::path::Path::new("/dev/gpiomem").exists() {
        return; // on a Pi the real driver opens; nothing to check here
    }
    let err = ButtonBox::from_config(&ButtonsConfig::default()).expect_err("no GPIO here");
    assert!(matches!(err, ButtonError::NoGpio(_)), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("driver = \"fake\"") && message.contains("[buttons]"),
        "{message}"
    );
}
