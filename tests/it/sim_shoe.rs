//! The simulated shoe keeps the table's `[shoe.sim]` (decks, where the cut card goes) in
//! every shoe it loads, the one the dealer's panel asks for included: `POST /api/shuffle`
//! once loaded the game's own decks with the cut card at a fixed 0.75.

use crate::running;

use croupier::engine::{Action, Expectation, Input};
use croupier::store::Source;
use croupier::web::client::request_with;
use std::time::Duration;
use tokio::time::timeout;

const STEP: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panels_shuffle_loads_the_configured_shoe() {
    // Deluxe is an eight-deck game; the table's simulator is told one deck, cut at half.
    let (run, _fixture) = running::served_with("deluxe", |c| {
        c.shoe.simulated = true;
        c.shoe.sim.decks = 1;
        c.shoe.sim.penetration = 0.5;
        c.shoe.sim.seed = 11;
    })
    .await;
    let addr = run.addr.to_string();
    let dealer = running::login_as(run.addr, croupier::auth::Role::Dealer).await;
    let post = |path: &'static str, body: &'static str| {
        let (addr, dealer) = (addr.clone(), dealer.clone());
        async move {
            let reply = request_with(
                &addr,
                "POST",
                path,
                Some(body),
                &[("Cookie", &dealer)],
                STEP,
            )
            .await
            .expect("request");
            assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        }
    };
    let handle = &run.handle;
    let mut watch = handle.watch();
    // Between rounds on a new table: the panel's shuffle starts the next shoe.
    let before = handle.snapshot().shoe.number;
    post("/api/shuffle", "{}").await;
    assert_eq!(handle.snapshot().shoe.number, before + 1);

    // One seat stands on every hand, the dealer deals each card from the simulated shoe,
    // until the shoe is finished.
    let dealt = timeout(Duration::from_secs(60), async {
        loop {
            let snap = handle.snapshot();
            // A one-deck shoe cannot deal a 53rd card: the shoe is not the configured one.
            assert!(
                snap.shoe.dealt <= 52,
                "{} cards from one deck",
                snap.shoe.dealt
            );
            let input = match &snap.expectation {
                Expectation::Shuffle => break snap.shoe.clone(),
                Expectation::Bets => {
                    Some(Input::Bets(vec![
                        croupier::table::demo::main_bet(1, 1000).expect("a bet")
                    ]))
                }
                Expectation::Decision { seat, .. } => Some(Input::Decision {
                    seat: *seat,
                    action: Action::Stand,
                }),
                Expectation::InsuranceAnswers { seats, .. } => Some(Input::Decision {
                    seat: seats[0],
                    action: Action::NoInsurance,
                }),
                Expectation::Bonus(seats) => Some(Input::Bonus {
                    seat: seats[0],
                    multiplier: snap
                        .bonus_options
                        .get(&seats[0])
                        .and_then(|o| o.first().copied())
                        .unwrap_or(1),
                }),
                _ => None,
            };
            match input {
                Some(input) => {
                    handle.submit(input, Source::Api).await.expect("accepted");
                }
                None => post("/api/sim/deal", "{}").await,
            }
            watch
                .wait_for(|s| s.seq > snap.seq)
                .await
                .expect("the table runs");
        }
    })
    .await
    .expect("the shoe is played out within a minute");
    assert!(dealt.cut_seen, "{dealt:?}");
    // The cut card stood after half the deck: the shoe ends with the round it came out in.
    assert!((26..=52).contains(&dealt.dealt), "{dealt:?}");
    run.stop().await;
}
