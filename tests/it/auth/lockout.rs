//! Failed logins: the account's lockout and its audit rows, guessing that tells no badges and
//! locks out only the guesser, failures spread over many addresses, and a login flood.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_failures_lock_the_account_and_every_attempt_is_audited() {
    timeout(Duration::from_secs(90), async {
        let (run, fixture) = running::served_with("deluxe", |c| c.auth.lockout_seconds = 2).await;
        let db = fixture.db();
        let login = |badge: &'static str, secret: &'static str| {
            let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
            async move { call(run.addr, "POST", "/api/login", Some(&body), "").await }
        };
        let (status, v) = login("d1", "9999").await;
        assert_eq!((status, code(&v)), (401, "invalid_credentials"), "{v}");
        let (status, v) = login("d1", "9998").await;
        assert_eq!((status, code(&v)), (401, "invalid_credentials"), "{v}");
        let (status, v) = login("d1", "9997").await;
        assert_eq!(
            (status, code(&v)),
            (423, "account_locked"),
            "the third failure locks: {v}"
        );
        let (status, v) = login("d1", "1111").await;
        assert_eq!(
            (status, code(&v)),
            (423, "account_locked"),
            "the right PIN is refused while locked: {v}"
        );
        // Unknown badges get the same answer as a wrong secret, and are logged too.
        let (status, v) = login("nobody", "1234").await;
        assert_eq!((status, code(&v)), (401, "invalid_credentials"), "{v}");
        // Lockout is per account: another account still logs in.
        let (status, _) = login("s1", "2222").await;
        assert_eq!(status, 200);

        let rows = audit_rows(&db).await;
        let attempts: Vec<(&str, &str, &str)> = rows
            .iter()
            .filter(|r| r.entry.action.starts_with("login"))
            .map(|r| {
                (
                    r.entry.action.as_str(),
                    r.entry.subject.as_str(),
                    r.entry.detail["why"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            attempts,
            vec![
                ("login_failed", "d1", "wrong secret"),
                ("login_failed", "d1", "wrong secret"),
                ("login_locked", "d1", "wrong secret"),
                ("login_locked", "d1", "account locked"),
                ("login_failed", "nobody", "unknown badge"),
                ("login", "s1", ""),
            ]
        );
        assert!(
            rows.iter()
                .all(|r| !r.entry.detail.to_string().contains("9999")),
            "no secret in the log"
        );
        assert_eq!(
            rows.iter()
                .find(|r| r.entry.subject == "nobody")
                .expect("row")
                .entry
                .actor,
            "anonymous"
        );

        // The lockout runs out; the right PIN then works and resets the count.
        tokio::time::sleep(Duration::from_millis(2100)).await;
        let (status, v) = login("d1", "1111").await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["role"], "dealer");

        // An admin unlocks early (`croupier user unlock`).
        for pin in ["1", "2", "3"] {
            let _ = login("d1", pin).await;
        }
        assert_eq!(login("d1", "1111").await.0, 423);
        let pool = croupier::auth::open_pool(&db).await.expect("pool");
        croupier::auth::accounts::unlock(&pool, "test", "d1", "they remembered")
            .await
            .expect("unlock");
        pool.close().await;
        assert_eq!(login("d1", "1111").await.0, 200);
        run.stop().await;
    })
    .await
    .expect("bounded");
}

/// `POST /api/login` from the source address `from` (any 127.x.y.z reaches the service).
async fn login_from(addr: SocketAddr, from: &str, badge: &str, secret: &str) -> (u16, Value) {
    let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
    let reply = common::post_json_from(addr, from, "/api/login", &body).await;
    (
        reply.status,
        serde_json::from_str(&reply.body).unwrap_or(Value::String(reply.body)),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guessing_tells_no_badges_locks_out_only_the_guesser_and_throttles_its_address() {
    timeout(Duration::from_secs(90), async {
        let (run, _fixture) = running::served("deluxe").await;
        let addr = run.addr;
        let guesser = "127.0.0.7";
        // Unknown and real badges answer alike: 401, 401, then 423 on the third failure.
        for badge in ["s1", "nobody"] {
            let mut answers = Vec::new();
            for pin in ["9991", "9992", "9993", "9994"] {
                let (status, v) = login_from(addr, guesser, badge, pin).await;
                answers.push((status, code(&v).to_string()));
            }
            assert_eq!(
                answers,
                [
                    (401, "invalid_credentials".to_string()),
                    (401, "invalid_credentials".to_string()),
                    (423, "account_locked".to_string()),
                    (423, "account_locked".to_string()),
                ],
                "{badge}"
            );
        }
        // The guesser locked the supervisor out — of the guesser's address only: at the
        // table's own terminal the supervisor still logs in.
        let (badge, secret) = running::user(Role::Supervisor);
        assert_eq!(login_from(addr, guesser, badge, secret).await.0, 423);
        assert_eq!(login_from(addr, "127.0.0.1", badge, secret).await.0, 200);
        // Guessing on from one address: after 20 failures it is refused outright (429 and
        // when to retry), whatever it sends; other addresses are not.
        for i in 0..20 {
            let (status, v) = login_from(addr, guesser, &format!("g{i}"), "0000").await;
            if status == 429 {
                assert_eq!(code(&v), "too_many_attempts", "{v}");
                break;
            }
        }
        let (status, v) = login_from(addr, guesser, badge, secret).await;
        assert_eq!((status, code(&v)), (429, "too_many_attempts"), "{v}");
        assert_eq!(login_from(addr, "127.0.0.1", badge, secret).await.0, 200);
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_from_many_addresses_cannot_lock_a_supervisor_out_of_the_table() {
    timeout(Duration::from_secs(120), async {
        let (run, _fixture) = running::served("deluxe").await;
        let addr = run.addr;
        let (badge, secret) = running::user(Role::Supervisor);
        // The table's terminal: the supervisor has logged in from it.
        assert_eq!(login_from(addr, "127.0.0.1", badge, secret).await.0, 200);
        // Three guessers, three failures each (nine in all): each locks itself out only;
        // the supervisor logs in from the terminal and from a fresh address alike.
        for g in 1..=3 {
            let from = format!("127.0.1.{g}");
            let mut last = 0;
            for pin in ["9991", "9992", "9993"] {
                last = login_from(addr, &from, badge, pin).await.0;
            }
            assert_eq!(last, 423, "{from} locked itself out");
            assert_eq!(
                login_from(addr, &from, badge, secret).await.0,
                423,
                "{from}"
            );
        }
        assert_eq!(
            login_from(addr, "127.0.2.1", badge, secret).await.0,
            200,
            "fresh address"
        );
        assert_eq!(
            login_from(addr, "127.0.0.1", badge, secret).await.0,
            200,
            "the terminal"
        );
        // Guessing spread over many addresses is capped per badge: after ten failures in a
        // lockout length, every address that never logged into it is locked out (so a
        // botnet gets ten guesses per five minutes), the table's terminals are not. An
        // unknown badge answers the same way.
        for target in [badge, "nobody"] {
            let mut answers = Vec::new();
            for n in 1..=12 {
                let (status, _) = login_from(addr, &format!("127.0.3.{n}"), target, "9999").await;
                answers.push(status);
            }
            assert_eq!(
                answers,
                [401, 401, 401, 401, 401, 401, 401, 401, 401, 423, 423, 423],
                "{target}"
            );
            let (status, v) = login_from(addr, "127.0.4.1", target, "1357").await;
            assert_eq!(
                (status, code(&v)),
                (423, "account_locked"),
                "{target}: a fresh address"
            );
        }
        assert_eq!(
            login_from(addr, "127.0.4.2", badge, secret).await.0,
            423,
            "fresh: capped"
        );
        assert_eq!(
            login_from(addr, "127.0.0.1", badge, secret).await.0,
            200,
            "the terminal"
        );
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_flood_is_answered_429_beyond_the_admitted_and_a_real_login_gets_through() {
    timeout(Duration::from_secs(90), async {
        let (run, _fixture) = running::served("deluxe").await;
        let addr = run.addr;
        // Forty guesses at once at unknown badges (no account gets locked by them).
        let flood: Vec<_> = (0..40)
            .map(|i| {
                tokio::spawn(async move {
                    let body = serde_json::json!({"badge": format!("x{i}"), "secret": "0000"});
                    let reply = request_with(
                        &addr.to_string(),
                        "POST",
                        "/api/login",
                        Some(&body.to_string()),
                        &[],
                        STEP,
                    )
                    .await
                    .expect("answered");
                    let retry = reply
                        .headers
                        .iter()
                        .any(|(k, v)| k == "retry-after" && v == "1");
                    (reply.status, reply.body, retry)
                })
            })
            .collect();
        let mut refused = 0;
        for task in flood {
            let (status, body, retry) = task.await.expect("join");
            match status {
                401 => {}
                429 => {
                    refused += 1;
                    assert!(body.contains("too_many_logins") && retry, "{body}");
                }
                other => panic!("{other}: {body}"),
            }
        }
        assert!(
            refused > 0,
            "a flood beyond {} logins at once is refused",
            croupier::auth::LOGINS_ADMITTED
        );
        assert!(refused < 40, "the admitted ones are answered");
        // The flood is over: a real login works at once.
        let (badge, secret) = running::user(Role::Supervisor);
        let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
        assert_eq!(
            call(addr, "POST", "/api/login", Some(&body), "").await.0,
            200
        );
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_lockout_holds_until_it_ends_whoever_logs_in_elsewhere() {
    timeout(Duration::from_secs(90), async {
        let clock = croupier::auth::time::ManualClock::at_system_now();
        let (run, _fixture) = running::served_on("deluxe", |_| {}, clock.clone()).await;
        let addr = run.addr;
        let (badge, secret) = running::user(Role::Supervisor);
        let guesser = "127.0.0.7";
        let mut last = 0;
        for pin in ["9991", "9992", "9993"] {
            last = login_from(addr, guesser, badge, pin).await.0;
        }
        assert_eq!(last, 423, "the third failure locks the guesser's address");
        // The badge's owner logs in at the table's terminal, inside the guesser's lockout.
        assert_eq!(login_from(addr, "127.0.0.1", badge, secret).await.0, 200);
        // The guesser's lockout holds: the right and a wrong secret answer alike.
        let (right, r) = login_from(addr, guesser, badge, secret).await;
        let (wrong, w) = login_from(addr, guesser, badge, "9994").await;
        assert_eq!(
            (wrong, code(&w), right, code(&r)),
            (423, "account_locked", 423, "account_locked"),
            "locked, whatever the secret: {w} {r}"
        );
        // Until it ends: a second inside it, still locked; past it, the right secret works.
        clock.advance(Duration::from_secs(299));
        assert_eq!(login_from(addr, guesser, badge, secret).await.0, 423);
        clock.advance(Duration::from_secs(2));
        assert_eq!(login_from(addr, guesser, badge, secret).await.0, 200);
        run.stop().await;
    })
    .await
    .expect("bounded");
}
