//! Sessions: ended at logout, expiry, idleness and disabling; the panel over TLS with secure
//! cookies.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_end_at_logout_expiry_idleness_and_disabling() {
    timeout(Duration::from_secs(90), async {
        // Sessions run on monotonic time: the test moves it by hand.
        let clock = croupier::auth::time::ManualClock::at_system_now();
        let (run, fixture) = running::served_on("deluxe", |_| {}, clock.clone()).await;
        let db = fixture.db();
        let addr = run.addr;

        // The cookie: HttpOnly, SameSite=Strict, no Secure without TLS.
        let body = r#"{"badge": "d1", "secret": "1111"}"#;
        let reply = request_with(
            &addr.to_string(),
            "POST",
            "/api/login",
            Some(body),
            &[],
            STEP,
        )
        .await
        .expect("login");
        let set = reply
            .headers
            .iter()
            .find(|(k, _)| k == "set-cookie")
            .map(|(_, v)| v.clone())
            .expect("set-cookie");
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
        assert!(!set.contains("Secure"), "{set}");
        let cookie = reply.session_cookie().expect("cookie");
        let (status, v) = call(addr, "GET", "/api/me", None, &cookie).await;
        assert_eq!(status, 200);
        assert_eq!(
            (v["badge"].as_str(), v["role"].as_str()),
            (Some("d1"), Some("dealer"))
        );

        // CSRF: a state change by cookie must be JSON — exactly that media type.
        let post_as = |path: &'static str, content_type: &'static str| {
            let cookie = cookie.clone();
            async move {
                let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("tcp");
                let req = format!(
                    "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nCookie: {cookie}\r\n\
                     Content-Type: {content_type}\r\nContent-Length: 0\r\n\r\n"
                );
                tcp.write_all(req.as_bytes()).await.expect("write");
                let mut raw = Vec::new();
                tcp.read_to_end(&mut raw).await.expect("read");
                croupier::web::client::parse("x", &raw)
                    .expect("http")
                    .status
            }
        };
        assert_eq!(
            post_as("/api/betting/open", "application/x-www-form-urlencoded").await,
            415,
            "a form post with the cookie is refused"
        );
        for lookalike in [
            "application/jsonp",
            "application/json-seq",
            "application/json2",
        ] {
            assert_eq!(
                post_as("/api/betting/open", lookalike).await,
                415,
                "{lookalike} is not JSON"
            );
        }
        // Logout is a state change too: a cross-site text/plain post does not end it.
        assert_eq!(post_as("/api/logout", "text/plain").await, 415);
        assert_eq!(call(addr, "GET", "/api/me", None, &cookie).await.0, 200);

        // Logout ends it (and is audited).
        let (status, _) = call(addr, "POST", "/api/logout", None, &cookie).await;
        assert_eq!(status, 200);
        assert_eq!(call(addr, "GET", "/api/me", None, &cookie).await.0, 401);

        // Expiry and idleness, by moving the service's (monotonic) clock on: 13 h of
        // use every 30 min passes the 12 h lifetime; 2 h without use passes the idle limit.
        let pool = croupier::auth::open_pool(&db).await.expect("pool");
        for (what, steps, step) in [("expiry", 26, 1800u64), ("idleness", 1, 7200)] {
            let cookie = running::login_as(addr, Role::Dealer).await;
            assert_eq!(call(addr, "GET", "/api/me", None, &cookie).await.0, 200);
            let mut status = 200;
            for _ in 0..steps {
                clock.advance(Duration::from_secs(step));
                status = call(addr, "GET", "/api/me", None, &cookie).await.0;
            }
            assert_eq!(status, 401, "{what}");
        }
        // Disabling a user ends their sessions at once.
        let cookie = running::login_as(addr, Role::Supervisor).await;
        croupier::auth::accounts::set_disabled(&pool, "test", "s1", true, "left")
            .await
            .expect("disable");
        assert_eq!(call(addr, "GET", "/api/me", None, &cookie).await.0, 401);
        let (status, v) = call(
            addr,
            "POST",
            "/api/login",
            Some(r#"{"badge": "s1", "secret": "2222"}"#),
            "",
        )
        .await;
        assert_eq!((status, code(&v)), (401, "invalid_credentials"), "{v}");
        pool.close().await;

        let actions: Vec<String> = audit_rows(&db)
            .await
            .into_iter()
            .map(|r| r.entry.action)
            .collect();
        assert!(actions.contains(&"logout".to_string()), "{actions:?}");
        assert!(actions.contains(&"user_disable".to_string()), "{actions:?}");
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panel_is_served_over_tls_with_secure_cookies() {
    timeout(Duration::from_secs(90), async {
        use rustls_pki_types::pem::PemObject;
        let dir = tempfile::tempdir().expect("tempdir");
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("cert");
        let cert_pem = cert.cert.pem();
        std::fs::write(dir.path().join("cert.pem"), &cert_pem).expect("write");
        std::fs::write(dir.path().join("key.pem"), cert.signing_key.serialize_pem()).expect("write");
        let sim = SimShoe::start(SimConfig::default()).expect("pty");
        let mut config = common::config(dir.path(), &sim.path(), "deluxe");
        config.http.tls = Some(croupier::table::config::TlsSection {
            cert: dir.path().join("cert.pem"),
            key: dir.path().join("key.pem"),
        });
        running::add_users(&config.store.path).await;
        let run = running::start(config).await;

        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(rustls_pki_types::CertificateDer::from_pem_slice(cert_pem.as_bytes()).expect("pem"))
            .expect("root");
        let client = std::sync::Arc::new(
            rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_root_certificates(roots)
            .with_no_client_auth(),
        );
        let https = |request: String| {
            let client = client.clone();
            async move {
                let tcp = tokio::net::TcpStream::connect(run.addr).await.expect("tcp");
                let name = rustls_pki_types::ServerName::try_from("localhost").expect("name");
                let mut tls = tokio_rustls::TlsConnector::from(client)
                    .connect(name, tcp)
                    .await
                    .expect("TLS handshake with the configured certificate");
                tls.write_all(request.as_bytes()).await.expect("write");
                let mut raw = Vec::new();
                let _ = tls.read_to_end(&mut raw).await;
                croupier::web::client::parse("tls", &raw).expect("http")
            }
        };
        let body = r#"{"badge": "d1", "secret": "1111"}"#;
        let reply = https(format!(
            "POST /api/login HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ))
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let set = reply.headers.iter().find(|(k, _)| k == "set-cookie").map(|(_, v)| v.clone()).expect("cookie");
        assert!(set.contains("; Secure"), "{set}");
        let cookie = reply.session_cookie().expect("cookie");
        let reply = https(format!(
            "GET /api/me HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nCookie: {cookie}\r\n\r\n"
        ))
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert!(reply.body.contains("\"d1\""), "{}", reply.body);
        // The public feed over TLS: a viewer with a task of its own (the fan-out's shards
        // write to plain TCP only), starting from a resync view.
        {
            let tcp = tokio::net::TcpStream::connect(run.addr).await.expect("tcp");
            let name = rustls_pki_types::ServerName::try_from("localhost").expect("name");
            let tls = tokio_rustls::TlsConnector::from(client.clone())
                .connect(name, tcp)
                .await
                .expect("TLS handshake");
            let (mut ws, _) = tokio_tungstenite::client_async("wss://localhost/ws/public", tls)
                .await
                .expect("wss upgrade");
            let first = timeout(Duration::from_secs(10), futures::StreamExt::next(&mut ws))
                .await
                .expect("a message")
                .expect("open")
                .expect("ok");
            let v: Value = serde_json::from_str(first.to_text().expect("text")).expect("json");
            assert_eq!(v["resync"], true, "{v}");
        }
        // Plain HTTP on the TLS port gets no answer from the API.
        let plain = request_with(&run.addr.to_string(), "GET", "/api/public", None, &[], Duration::from_secs(3)).await;
        assert!(plain.map(|r| r.status != 200).unwrap_or(true));
        run.stop().await;
    })
    .await
    .expect("bounded");
}
