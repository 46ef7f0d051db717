//! The platform's side of remote play: sessions it opens, a short balance refusing a bet
//! whole, and links or players shut out on their next request.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_platform_opens_sessions_and_a_short_balance_refuses_the_bet_whole() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config_with(
            dir.path(),
            &[("betting_seconds = 3", "betting_seconds = 60")],
        );
        let c = cfg.display().to_string();
        let (ok, key) = croupier(&["player", "platform-key", "--config", &c]);
        assert!(ok, "{key}");
        let key = key.trim().to_string();
        let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
        let body = r#"{"player": "p-77", "name": "Carol"}"#;
        // The local token (staff, admin) is not the platform.
        let (status, _) = p.post("/api/play/sessions", body).await;
        assert_eq!(status, 401);
        p.headers = vec![("Authorization".into(), format!("Bearer {key}"))];
        let (status, reply) = p.post("/api/play/sessions", body).await;
        assert_eq!(status, 200, "{reply}");
        let reply: Value = serde_json::from_str(&reply).expect("json");
        let token = reply["token"].as_str().expect("token").to_string();
        assert_eq!(reply["launch"], format!("/play#t={token}"));
        // The platform's credential is no player.
        let (status, _) = p.post("/api/play/join", r#"{"seat": 6}"#).await;
        assert_eq!(status, 401);
        as_player(&mut p, &token);
        let s = state(&p).await;
        assert_eq!(
            (
                s["player"].as_str(),
                s["name"].as_str(),
                s["balance"].as_i64()
            ),
            (Some("p-77"), Some("Carol"), Some(0))
        );
        taken(&p, "/api/play/join", r#"{"seat": 6}"#).await;
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        let (status, body) = p.post("/api/play/bet", r#"{"main": 2500}"#).await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(
            serde_json::from_str::<Value>(&body).expect("json")["error"]["code"],
            "insufficient_funds"
        );
        let s = state(&p).await;
        assert_eq!(s["betting"]["my_bet"], Value::Null, "nothing placed: {s}");
        assert_eq!(s["balance"], 0);
        // Funds arrive (the operator's deposit); the same bet goes through.
        let (ok, text) = croupier(&["player", "credit", "p-77", "30.00", "--config", &c]);
        assert!(ok, "{text}");
        let body = taken(&p, "/api/play/bet", r#"{"main": 2500}"#).await;
        assert_eq!(
            serde_json::from_str::<Value>(&body).expect("json")["balance"],
            500
        );
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}

/// The token in a launch link `croupier player link` printed.
fn token_of(link: &str) -> String {
    let (_, token) = link.trim().rsplit_once("#t=").expect("a link");
    token.to_string()
}

/// The status of the player's state with `token`.
async fn status_as(p: &mut proc::Proc, token: &str) -> u16 {
    as_player(p, token);
    p.send("GET", "/api/play/state", None).await.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_link_or_a_disabled_player_is_refused_on_the_next_request() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config(dir.path());
        let c = cfg.display().to_string();
        let first = add_player(&cfg, "Alice", "50.00");
        let (ok, link) = croupier(&["player", "link", "alice", "--config", &c]);
        assert!(ok, "{link}");
        let second = token_of(&link);
        let (ok, key) = croupier(&["player", "platform-key", "--config", &c]);
        assert!(ok, "{key}");
        let key = key.trim().to_string();
        let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
        assert_eq!(status_as(&mut p, &first).await, 200);
        assert_eq!(status_as(&mut p, &second).await, 200);
        // One link, by the CLI: that token is refused on its next request, on every
        // route; the other link goes on.
        let (ok, text) = croupier(&["player", "revoke", "--link", &link, "--config", &c]);
        assert!(ok, "{text}");
        assert_eq!(status_as(&mut p, &second).await, 401);
        let (status, _) = p.post("/api/play/join", r#"{"seat": 5}"#).await;
        assert_eq!(status, 401, "refused on a write route too");
        assert_eq!(status_as(&mut p, &first).await, 200);
        // Every session of the player, by the platform's API.
        p.headers = vec![("Authorization".into(), format!("Bearer {key}"))];
        let body = taken(&p, "/api/play/sessions/revoke", r#"{"player": "alice"}"#).await;
        assert_eq!(
            serde_json::from_str::<Value>(&body).expect("json")["revoked"],
            1
        );
        assert_eq!(status_as(&mut p, &first).await, 401);
        // A new session works until the player is disabled; then none opens.
        p.headers = vec![("Authorization".into(), format!("Bearer {key}"))];
        let body = taken(&p, "/api/play/sessions", r#"{"player": "alice"}"#).await;
        let third = serde_json::from_str::<Value>(&body).expect("json")["token"]
            .as_str()
            .expect("token")
            .to_string();
        assert_eq!(status_as(&mut p, &third).await, 200);
        let (ok, text) = croupier(&["player", "disable", "alice", "--config", &c]);
        assert!(ok && text.contains("1 session(s) revoked"), "{text}");
        assert_eq!(status_as(&mut p, &third).await, 401);
        p.headers = vec![("Authorization".into(), format!("Bearer {key}"))];
        let (status, body) = p.post("/api/play/sessions", r#"{"player": "alice"}"#).await;
        assert_eq!(
            (status, code_of(&body).as_str()),
            (403, "player_disabled"),
            "{body}"
        );
        let (ok, text) = croupier(&["player", "link", "alice", "--config", &c]);
        assert!(!ok && text.contains("disabled"), "{text}");
        // Enabled again, by the platform: a new link works, the revoked ones stay revoked.
        taken(
            &p,
            "/api/play/players/disable",
            r#"{"player": "alice", "disabled": false}"#,
        )
        .await;
        let (ok, link) = croupier(&["player", "link", "alice", "--config", &c]);
        assert!(ok, "{link}");
        let fourth = token_of(&link);
        assert_eq!(status_as(&mut p, &fourth).await, 200);
        assert_eq!(status_as(&mut p, &first).await, 401);
        assert_eq!(status_as(&mut p, &third).await, 401);
        // A player's token is not the platform's.
        let (status, _) = p
            .post("/api/play/sessions/revoke", r#"{"player": "alice"}"#)
            .await;
        assert_eq!(status, 401);
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}
