//! Every dispute resolution end to end through the running service: bets and decisions
//! over HTTP, cards through the simulated shoe on a real PTY, disputes raised, previewed,
//! confirmed over HTTP; the public stream marks results provisional, then final; a
//! corrected hole card is told, and still verifies, in `croupier verify-results` and on the
//! public page in a real Chromium.

#[allow(dead_code)] // `tap`: this test only reads the public page
use crate::cdp;
use crate::common;
use crate::running;

use croupier::auth::Role;
use croupier::web::client::request_with;
use croupier_drivers::sim::{SimConfig, SimShoe};
use croupier_drivers::ShoeItem;
use running::Running;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::timeout;

const STEP: Duration = Duration::from_secs(10);

struct Table {
    run: Running,
    sim: SimShoe,
    /// Session cookies: the dealer (bets, decisions, raising disputes) and the supervisor
    /// (resolving them).
    dealer: String,
    supervisor: String,
}

impl Table {
    fn addr(&self) -> SocketAddr {
        self.run.addr
    }

    /// A request as the supervisor for resolutions, as the dealer for everything else.
    async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let supervisor =
            path.ends_with("/propose") || path.ends_with("/confirm") || path.ends_with("/withdraw");
        let cookie = if supervisor {
            &self.supervisor
        } else {
            &self.dealer
        };
        self.call_as(cookie, method, path, body).await
    }

    async fn call_as(
        &self,
        cookie: &str,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let body = body.map(|b| b.to_string());
        let headers: Vec<(&str, &str)> = if cookie.is_empty() {
            vec![]
        } else {
            vec![("Cookie", cookie)]
        };
        let reply = request_with(
            &self.addr().to_string(),
            method,
            path,
            body.as_deref(),
            &headers,
            STEP,
        )
        .await
        .expect("request");
        (
            reply.status,
            serde_json::from_str(&reply.body).unwrap_or(Value::String(reply.body)),
        )
    }

    async fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, v) = self.call(method, path, body).await;
        assert_eq!(status, 200, "{method} {path}: {v}");
        v
    }

    /// Deals `cards` through the PTY, each one recorded before the next.
    async fn deal(&self, cards: &[&str]) {
        let items = cards
            .iter()
            .map(|c| ShoeItem::Card(c.parse().expect("card")))
            .collect();
        self.sim.load(items).await.expect("load");
        for _ in cards {
            let mut watch = self.run.handle.watch();
            let before = watch.borrow().seq;
            self.sim.deal(1).await.expect("deal");
            timeout(STEP, watch.wait_for(|s| s.seq > before))
                .await
                .expect("recorded")
                .expect("running");
        }
    }

    /// Bets through the window; returns each seat's (round, dispute token).
    async fn bets(&self, seats: &[(u8, i64)]) -> Vec<(u64, String)> {
        self.ok("POST", "/api/betting/open", None).await;
        let mut tokens = Vec::new();
        for (seat, main) in seats {
            let v = self
                .ok(
                    "POST",
                    "/api/bets",
                    Some(json!({"seat": seat, "main": main})),
                )
                .await;
            tokens.push((
                v["round"].as_u64().expect("round"),
                v["dispute_token"].as_str().expect("token").to_string(),
            ));
        }
        self.ok("POST", "/api/betting/close", None).await;
        tokens
    }

    async fn decide(&self, seat: u8, action: &str) {
        self.ok(
            "POST",
            "/api/decision",
            Some(json!({"seat": seat, "action": action})),
        )
        .await;
    }

    async fn dispute(&self, seat: u8) -> u64 {
        let v = self
            .ok(
                "POST",
                "/api/disputes",
                Some(json!({"seat": seat, "reason": "the player disputes the card"})),
            )
            .await;
        v["dispute"].as_u64().expect("id")
    }

    /// Proposes, checks the preview, confirms; returns the preview.
    async fn resolve(&self, id: u64, resolution: Value) -> Value {
        let preview = self
            .ok(
                "POST",
                &format!("/api/disputes/{id}/propose"),
                Some(json!({"resolution": resolution, "reason": "checked on camera"})),
            )
            .await;
        let current = self.ok("GET", "/api/disputes/current", None).await;
        assert_eq!(current["proposal"], preview, "the panel shows the preview");
        self.ok(
            "POST",
            &format!("/api/disputes/{id}/confirm"),
            Some(json!({"proposal": preview["proposal"]})),
        )
        .await;
        preview
    }

    fn seat_cards(&self, seat: u8) -> Vec<String> {
        self.run
            .handle
            .snapshot()
            .round
            .hands
            .iter()
            .filter(|h| h.seat == seat)
            .flat_map(|h| h.cards.iter().map(|c| c.to_string()))
            .collect()
    }
}

async fn start(dir: &std::path::Path, window_seconds: u32) -> Table {
    let sim = SimShoe::start(SimConfig::default()).expect("pty");
    let mut config = common::config(dir, &sim.path(), "deluxe");
    config.disputes.window_seconds = window_seconds;
    running::add_users(&config.store.path).await;
    let run = running::start(config).await;
    let dealer = running::login_as(run.addr, Role::Dealer).await;
    let supervisor = running::login_as(run.addr, Role::Supervisor).await;
    Table {
        run,
        sim,
        dealer,
        supervisor,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_resolution_through_the_api_and_the_pty_shoe() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = start(dir.path(), 0).await;

        // Void: 2D exposed on its way to seat 1; 9D dealt during the halt takes its place.
        t.bets(&[(1, 100), (2, 100)]).await;
        t.deal(&["9H", "5S", "7C", "2D"]).await;
        let id = t.dispute(1).await;
        let (status, v) = t
            .call(
                "POST",
                "/api/decision",
                Some(json!({"seat": 1, "action": "stand"})),
            )
            .await;
        assert_eq!(
            (status, v["error"]["code"].as_str()),
            (409, Some("disputed"))
        );
        t.deal(&["9D"]).await;
        let current = t.ok("GET", "/api/disputes/current", None).await;
        assert_eq!(current["held"], json!(["9D"]));
        // Malformed and stale requests change nothing.
        for (body, want) in [
            (
                json!({"resolution": {"op": "fly"}, "reason": "x y z"}),
                (400, "malformed"),
            ),
            (
                json!({"resolution": {"op": "reject"}, "reason": ""}),
                (400, "malformed"),
            ),
            (
                json!({"resolution": {"op": "void", "index": 3, "card": "9D"}, "reason": "abc"}),
                (409, "wrong_card"),
            ),
        ] {
            let (status, v) = t
                .call("POST", &format!("/api/disputes/{id}/propose"), Some(body))
                .await;
            assert_eq!(
                (status, v["error"]["code"].as_str().unwrap_or("")),
                want,
                "{v}"
            );
        }
        // The dealer cannot override.
        let (status, v) = t
            .call_as(
                &t.dealer,
                "POST",
                &format!("/api/disputes/{id}/propose"),
                Some(json!({"resolution": {"op": "reject"}, "reason": "abc"})),
            )
            .await;
        assert_eq!(
            (status, v["error"]["code"].as_str()),
            (403, Some("forbidden"))
        );
        let (status, v) = t
            .call(
                "POST",
                &format!("/api/disputes/{id}/confirm"),
                Some(json!({"proposal": "0".repeat(64)})),
            )
            .await;
        assert_eq!(
            (status, v["error"]["code"].as_str()),
            (409, Some("no_proposal"))
        );
        let preview = t
            .resolve(id, json!({"op": "void", "index": 3, "card": "2D"}))
            .await;
        assert_eq!(preview["round"]["hands"][0]["cards"], json!(["9H", "9D"]));
        assert_eq!(t.seat_cards(1), ["9H", "9D"]);

        // Correct: the shoe read TS; the card is the TH. (Positions count the round's cards
        // in play: the voided 2D is no longer one, so TS is card 4.)
        t.deal(&["TS", "8C"]).await;
        let id = t.dispute(2).await;
        t.resolve(
            id,
            json!({"op": "correct", "index": 4, "card": "TS", "to": "TH"}),
        )
        .await;
        assert_eq!(t.seat_cards(2), ["5S", "TH"]);

        // Undo: seat 1 stood by mistake.
        t.decide(1, "stand").await;
        let id = t.dispute(1).await;
        t.resolve(id, json!({"op": "undo_decision"})).await;
        let snap = t.run.handle.snapshot();
        assert!(
            snap.expecting.starts_with("decision from seat 1"),
            "{}",
            snap.expecting
        );

        // Reject: play continues; then cancel the round in play.
        let id = t.dispute(1).await;
        t.resolve(id, json!({"op": "reject"})).await;
        assert!(t.run.handle.snapshot().dispute.is_none());
        let id = t.dispute(1).await;
        let preview = t.resolve(id, json!({"op": "cancel"})).await;
        assert_eq!(preview["result"]["cancelled"], true);
        let last = t.run.handle.snapshot().last_result.clone().expect("result");
        assert!(last.cancelled);
        assert!(last.bets.iter().all(|b| b.returned == b.staked));

        // Move: the next round's first two cards went to the wrong seats.
        t.bets(&[(1, 100), (2, 100)]).await;
        t.deal(&["4H", "QD"]).await;
        let id = t.dispute(2).await;
        t.resolve(
            id,
            json!({"op": "move", "index": 0, "card": "4H", "to": {"hand": {"seat": 2, "hand": 0}}}),
        )
        .await;
        assert_eq!(t.seat_cards(1), ["QD"]);
        assert_eq!(t.seat_cards(2), ["4H"]);

        // The record: every dispute with its resolution, newest first.
        let history = t.ok("GET", "/api/disputes", None).await;
        let ops: Vec<&str> = history
            .as_array()
            .expect("list")
            .iter()
            .map(|d| d["resolution"]["op"].as_str().unwrap_or("open"))
            .collect();
        assert_eq!(
            ops,
            [
                "move",
                "cancel",
                "reject",
                "undo_decision",
                "correct",
                "void"
            ]
        );
        t.run.stop().await;
    })
    .await
    .expect("in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_are_provisional_then_final_and_no_dispute_after() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = start(dir.path(), 1).await;
        let url = format!("ws://{}/ws/public", t.addr());
        let (mut ws, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("ws");
        let tokens = t.bets(&[(1, 100)]).await;
        t.deal(&["TH", "7S", "9S", "5D"]).await;
        // The player disputes with their seat's token, no account: a token for another
        // seat or round is refused.
        let (round, token) = tokens[0].clone();
        for (r, seat) in [(round, 2), (round + 1, 1)] {
            let body =
                json!({"round": r, "seat": seat, "token": token, "reason": "my card was a ten"});
            let (status, v) = t
                .call_as("", "POST", "/api/disputes/player", Some(body))
                .await;
            assert_eq!(
                (status, v["error"]["code"].as_str()),
                (403, Some("invalid_token")),
                "{v}"
            );
        }
        let body =
            json!({"round": round, "seat": 1, "token": token, "reason": "my card was a ten"});
        let (status, v) = t
            .call_as("", "POST", "/api/disputes/player", Some(body))
            .await;
        assert_eq!(status, 200, "{v}");
        let id = v["dispute"].as_u64().expect("id");
        let current = t.ok("GET", "/api/disputes/current", None).await;
        assert_eq!(
            (current["origin"].as_str(), current["seat"].as_u64()),
            (Some("player"), Some(1))
        );
        t.resolve(id, json!({"op": "reject"})).await;
        t.decide(1, "stand").await;
        t.deal(&["TC"]).await; // dealer 7 5 T = 22
        let mut statuses = Vec::new();
        use futures::StreamExt;
        while statuses.len() < 2 {
            let m = timeout(STEP, ws.next())
                .await
                .expect("message")
                .expect("open")
                .expect("ok");
            let v: Value = serde_json::from_str(m.to_text().expect("text")).expect("json");
            if v["type"] == "result" || v["type"] == "final" {
                assert_eq!(v["round"], 1);
                statuses.push(format!(
                    "{}:{}",
                    v["type"].as_str().unwrap_or(""),
                    v["status"].as_str().unwrap_or("")
                ));
            }
        }
        assert_eq!(statuses, ["result:provisional", "final:final"]);
        let (status, v) = t
            .call(
                "POST",
                "/api/disputes",
                Some(json!({"reason": "too late now"})),
            )
            .await;
        assert_eq!(
            (status, v["error"]["code"].as_str()),
            (409, Some("round_final"))
        );
        t.run.stop().await;
    })
    .await
    .expect("in time");
}

/// A supervisor corrects the dealer's face-down card after the round settled (found by
/// `browser_play_states`: the table re-committed to the corrected card, and every
/// player's page raised "the signed hole card does not match its seal"). The seal keeps
/// the commitment published while the card lay face down and opens the card as dealt;
/// it names the corrected card, which the signed result plays. `verify-results` reports
/// the correction and passes; the public page says it on the seal's badge, no alarm; a
/// correction claimed for another card than the result played fails both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrected_hole_card_is_told_and_its_seal_still_verifies() {
    timeout(Duration::from_secs(120), async {
        use futures::StreamExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let t = start(dir.path(), 30).await;
        let url = format!("ws://{}/ws/public", t.addr());
        let (mut ws, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("ws");
        let browser = if cdp::chromium_present() {
            Some(cdp::Browser::launch().await)
        } else {
            None
        };
        let public = match &browser {
            Some(b) => Some(b.page(&format!("http://{}/public", t.addr()), 1280, 800).await),
            None => None,
        };
        t.bets(&[(1, 100)]).await;
        // Seat 1: 9H TS (19); the dealer: 7C up, 8D face down, 5S: 20.
        t.deal(&["9H", "7C", "TS", "8D"]).await;
        // The viewer's history: the commitment while face down (read before the decision
        // turns the card over: the feed sends the latest view, not every one), the first
        // result, the corrected one.
        let (mut lines, mut results, mut committed) = (Vec::new(), Vec::new(), None);
        let mut read = async |lines: &mut Vec<String>| -> Value {
            let m = timeout(STEP, ws.next()).await.expect("message").expect("open").expect("ok");
            let text = m.to_text().expect("text").to_string();
            lines.push(text.clone());
            serde_json::from_str(&text).expect("json")
        };
        while committed.is_none() {
            let v = read(&mut lines).await;
            let seal = &v["view"]["round"]["seal"];
            if v["type"] == "view" && seal["commitment"].is_string() && seal["card"].is_null() {
                committed = Some(seal["commitment"].clone());
            }
        }
        t.decide(1, "stand").await;
        t.deal(&["5S"]).await;
        let dealt = t.run.handle.snapshot().last_result.clone().expect("settled");
        assert_eq!(dealt.dealer_cards.iter().map(ToString::to_string).collect::<Vec<_>>(), ["7C", "8D", "5S"]);
        // The camera shows the face-down card was the 9D: the dealer had 21.
        let id = t.dispute(1).await;
        t.resolve(id, json!({"op": "correct", "index": 3, "card": "8D", "to": "9D"}))
            .await;
        let fixed = t.run.handle.snapshot().last_result.clone().expect("settled");
        assert_eq!(fixed.dealer_cards.iter().map(ToString::to_string).collect::<Vec<_>>(), ["7C", "9D", "5S"]);
        assert_eq!(fixed.dealer_total, 21);

        while results.len() < 2 {
            let v = read(&mut lines).await;
            if v["type"] == "result" {
                results.push(v);
            }
        }
        let committed = committed.expect("read above");
        let statement = |v: &Value| -> Value {
            serde_json::from_str(v["signed"]["payload"].as_str().expect("payload")).expect("statement")
        };
        let first = statement(&results[0])["seal"].clone();
        let second = statement(&results[1])["seal"].clone();
        assert_eq!(first, json!({"position": "dealer.1", "commitment": committed, "card": "8D", "nonce": first["nonce"]}));
        assert_eq!(
            second,
            json!({"position": "dealer.1", "commitment": committed, "card": "8D", "nonce": first["nonce"], "corrected": "9D"}),
            "the seal opens the card as dealt, and names the correction"
        );
        assert_eq!(results[1]["result"]["dealer_cards"], json!(["7C", "9D", "5S"]));
        let verify = |lines: &[String]| {
            let out = common::croupier(&["verify-results", "-"], Some(&(lines.join("\n") + "\n")));
            (out.status.code(), common::text(&out))
        };
        let (code, out) = verify(&lines);
        assert_eq!(code, Some(0), "{out}");
        assert!(
            out.contains("round 1's hole card was corrected by a supervisor from 8D (the card sealed) to 9D")
                && out.contains("verified: 2 signed results, 1 sealed cards opened (1 hole card corrected by a supervisor)"),
            "{out}"
        );
        // A table that claims a correction the result did not play: caught. (The
        // signature covers the claim, so the claim is re-signed here as only a table could.)
        let keys = croupier::trust::TableKeys::load(&croupier::trust::keys::path_for(&dir.path().join("croupier.db")))
            .expect("the table's key file");
        let mut forged: croupier::trust::Statement = serde_json::from_value(statement(&results[1])).expect("statement");
        forged.seal.as_mut().expect("seal").corrected = Some("TD".parse().expect("card"));
        let resigned = croupier::trust::attest::sign(&keys, &forged);
        let genuine: croupier::trust::Signed = serde_json::from_value(results[1]["signed"].clone()).expect("signed");
        // The message's text kept as the table wrote it, but for the statement and its
        // signature (a page compares the result's JSON text with the statement's).
        let last = lines.iter().rposition(|l| l.contains("\"type\":\"result\"")).expect("result line");
        let quoted = |t: &str| serde_json::to_string(t).expect("json");
        let tampered = lines[last]
            .replace(&quoted(&genuine.payload), &quoted(&resigned.payload))
            .replace(&genuine.sig, &resigned.sig);
        assert_ne!(tampered, lines[last]);
        let mut bad = lines.clone();
        bad[last] = tampered.clone();
        let (code, out) = verify(&bad);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("the revealed card is not the dealer's second card"), "{out}");

        // The public page: the seal verified and the correction said on its badge, both
        // results signed, no alarm; the forged claim raises one.
        if let (Some(page), Some(browser)) = (public, browser) {
            page.wait_for(
                "document.querySelector('#seal[data-state=\"corrected\"]') && document.querySelectorAll('.result[data-round=\"1\"] [data-sig=\"verified\"]').length >= 1",
                STEP,
            )
            .await;
            assert_eq!(
                page.text("#seal").await,
                "\u{2713} hole card seal verified \u{b7} a supervisor corrected the card from 8\u{2666} to 9\u{2666}"
            );
            assert_eq!(page.eval("JSON.stringify([window.publicTrust.alarms, window.publicTrust.sigs[1]])").await, json!("[[],\"verified\"]"));
            page.screenshot(&cdp::artifacts().join("public-1280x800-seal-corrected.png")).await;
            page.eval(&format!("window.publicOnMessage({tampered})")).await;
            page.wait_for("!!document.querySelector('#trust-alarm')", STEP).await;
            let alarm = page.text("#trust-alarm").await;
            assert!(alarm.contains("round 1: the signed hole card does not match its seal"), "{alarm}");
            browser.close().await;
        }
        t.run.stop().await;
    })
    .await
    .expect("in time");
}
