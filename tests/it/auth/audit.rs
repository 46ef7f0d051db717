//! The audit log: `croupier audit verify` names edited, deleted and inserted rows; the user
//! and alarm commands while the service runs; a configuration change audited once.

use super::*;

/// `croupier alarm clear` against the service at `addr` with `reason`, as the user with
/// `badge` and secret (given on stdin) or else with the local token.
fn alarm_clear(
    cfg: &str,
    addr: &str,
    reason: &str,
    badge: Option<(&str, &str)>,
) -> std::process::Output {
    let mut args = vec![
        "alarm", "clear", "--config", cfg, "--addr", addr, "--reason", reason,
    ];
    let stdin = badge.map(|(badge, secret)| {
        args.extend(["--badge", badge, "--secret-stdin"]);
        format!("{secret}\n")
    });
    croupier(&args, stdin.as_deref())
}

/// `croupier user add` through the binary, the secret on stdin.
fn add_user(
    config: &str,
    badge: &str,
    name: &str,
    role: &str,
    secret: &str,
) -> std::process::Output {
    croupier(
        &[
            "user",
            "add",
            "--config",
            config,
            "--badge",
            badge,
            "--name",
            name,
            "--role",
            role,
            "--secret-stdin",
        ],
        Some(&format!("{secret}\n")),
    )
}

/// Runs raw SQL on a copy (the tamperer's view: triggers dropped first).
async fn tamper(db: &Path, statements: &[&str]) {
    use sqlx::{Connection, Executor};
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
        .await
        .expect("open");
    conn.execute("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;")
        .await
        .expect("drop triggers");
    for sql in statements {
        conn.execute(*sql).await.expect(sql);
    }
    conn.close().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_verify_names_an_edited_a_deleted_and_an_inserted_row() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("a.db");
        let dbs = db.display().to_string();
        // Five rows through the real binary: three users added, one disabled, one unlocked.
        for (badge, pin) in [("1", "1234"), ("2", "2345"), ("3", "3456")] {
            let out = croupier(
                &["user", "add", "--db", &dbs, "--badge", badge, "--name", "N", "--role", "dealer", "--secret-stdin"],
                Some(&format!("{pin}\n")),
            );
            assert!(out.status.success(), "{}", text(&out));
        }
        assert!(croupier(&["user", "disable", "--db", &dbs, "--badge", "2", "--reason", "r"], None).status.success());
        assert!(croupier(&["user", "unlock", "--db", &dbs, "--badge", "3"], None).status.success());
        let out = croupier(&["audit", "verify", "--db", &dbs], None);
        assert!(out.status.success(), "{}", text(&out));
        assert!(text(&out).contains("5 rows, hash chain intact"), "{}", text(&out));
        // Export: JSON lines, with --since.
        let out = croupier(&["audit", "export", "--db", &dbs, "--since", "3"], None);
        let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!((lines[0]["seq"].as_u64(), lines[0]["action"].as_str()), (Some(4), Some("user_disable")));
        assert!(lines[0]["actor"].as_str().is_some_and(|a| a.starts_with("cli:")), "{}", lines[0]);

        // The database with its write-ahead log: a command that exits before its last
        // connection's checkpoint (under load) leaves its latest rows in `-wal`, and a copy
        // of the main file alone would miss them.
        let copy = |name: &str| {
            let p = dir.path().join(name);
            std::fs::copy(&db, &p).expect("copy");
            for suffix in ["-wal", "-shm"] {
                let from = PathBuf::from(format!("{}{suffix}", db.display()));
                let to = PathBuf::from(format!("{}{suffix}", p.display()));
                if from.exists() {
                    std::fs::copy(&from, &to).expect("copy the log");
                }
            }
            p
        };
        let verify = |p: &Path| croupier(&["audit", "verify", "--db", &p.display().to_string()], None);

        let edited = copy("edited.db");
        tamper(&edited, &["UPDATE audit SET reason = 'nothing happened' WHERE seq = 4"]).await;
        let out = verify(&edited);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains("broken at seq 4: edited"), "{}", text(&out));
        // A backup's verification sees it too.
        assert!(croupier::store::verify(&edited).await.is_err());

        let deleted = copy("deleted.db");
        tamper(&deleted, &["DELETE FROM audit WHERE seq = 2"]).await;
        let out = verify(&deleted);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains("broken at seq 2: deleted"), "{}", text(&out));

        // Inserted: a row forged with a valid hash (made by the library on a copy cut
        // after seq 2), slipped in as seq 3 with the later rows renumbered.
        let forge = copy("forge.db");
        tamper(&forge, &["DELETE FROM audit WHERE seq > 2"]).await;
        let pool = croupier::auth::open_pool(&forge).await.expect("pool");
        croupier::store::audit::append_now(
            &pool,
            &croupier::store::audit::AuditEntry::new("user:1", "alarm_clear").reason("forged"),
        )
        .await
        .expect("forge");
        let forged: (String, String, String, Vec<u8>, Vec<u8>) =
            sqlx::query_as("SELECT at, actor, action, prev_hash, hash FROM audit WHERE seq = 3")
                .fetch_one(&pool)
                .await
                .expect("forged row");
        pool.close().await;
        let inserted = copy("inserted.db");
        {
            use sqlx::{Connection, Executor};
            tamper(&inserted, &["UPDATE audit SET seq = seq + 100 WHERE seq >= 3", "UPDATE audit SET seq = seq - 99 WHERE seq >= 100"]).await;
            let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", inserted.display()))
                .await
                .expect("open");
            sqlx::query(
                "INSERT INTO audit (seq, at, actor, action, subject, old_value, new_value, reason, detail, prev_hash, hash) \
                 VALUES (3, ?, ?, ?, '', NULL, NULL, 'forged', '{}', ?, ?)",
            )
            .bind(&forged.0)
            .bind(&forged.1)
            .bind(&forged.2)
            .bind(&forged.3)
            .bind(&forged.4)
            .execute(&mut conn)
            .await
            .expect("insert");
            conn.execute("SELECT 1").await.expect("still open");
            conn.close().await.expect("close");
        }
        let out = verify(&inserted);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains("broken at seq 3: inserted"), "{}", text(&out));

        // The untouched original still verifies.
        assert!(verify(&db).status.success());
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_and_alarm_commands_work_while_the_service_runs() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let card: croupier_drivers::ShoeItem =
            croupier_drivers::ShoeItem::Card("QS".parse().expect("card"));
        let sim = SimShoe::start(SimConfig {
            items: vec![card; 3],
            ..SimConfig::default()
        })
        .expect("pty");
        let cfg = common::config_file(dir.path(), &sim.path(), "deluxe");
        let cfgs = cfg.display().to_string();
        let mut p = common_proc::spawn(&cfg, &dir.path().join("croupier.log")).await;

        // `user add` while the service holds the database's lock.
        let out = add_user(&cfgs, "77", "Sam Super", "supervisor", "2468");
        assert!(out.status.success(), "{}", text(&out));
        let out = add_user(&cfgs, "78", "Dee Dealer", "dealer", "1357");
        assert!(out.status.success(), "{}", text(&out));
        // The policy and duplicates are refused with a reason.
        let out = add_user(&cfgs, "79", "X", "dealer", "12");
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out).contains("4 to 12 digits"), "{}", text(&out));
        let out = add_user(&cfgs, "77", "X", "dealer", "1234");
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out).contains("already exists"), "{}", text(&out));
        // Without --secret-stdin and without a terminal, it says how.
        let out = croupier(
            &["user", "passwd", "--config", &cfgs, "--badge", "77"],
            None,
        );
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out).contains("--secret-stdin"), "{}", text(&out));
        let out = croupier(&["user", "list", "--config", &cfgs], None);
        let listed = text(&out);
        assert!(
            listed.contains("77") && listed.contains("supervisor") && listed.contains("active"),
            "{listed}"
        );

        // The new supervisor logs in at once.
        p.login("77", "2468").await;
        let me = p.get("/api/me").await;
        assert_eq!(me["name"], "Sam Super");

        // A card now is refused: the table locks.
        assert_eq!(sim.deal(1).await.expect("deal").len(), 1);
        let locked = |p: &common_proc::Proc| {
            let p_addr = p.addr.clone();
            let headers = p.headers.clone();
            async move {
                for _ in 0..100 {
                    let h: Vec<(&str, &str)> = headers
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect();
                    let r = request_with(&p_addr, "GET", "/api/alarm", None, &h, STEP)
                        .await
                        .expect("alarm");
                    if r.body.contains("\"locked\"") {
                        return true;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                false
            }
        };
        assert!(locked(&p).await, "the table locks");
        // A dealer's badge cannot clear it; the supervisor's can.
        let out = alarm_clear(&cfgs, &p.addr, "misdeal", Some(("78", "1357")));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains("403"), "{}", text(&out));
        // Said for people: the API's message and code, not its raw JSON.
        assert!(
            text(&out).contains("refused: ") && !text(&out).contains("{\""),
            "{}",
            text(&out)
        );
        let out = alarm_clear(&cfgs, &p.addr, "card removed", Some(("77", "2468")));
        assert!(out.status.success(), "{}", text(&out));
        // Again, with the local token (as the service's user on the table's machine).
        assert_eq!(sim.deal(1).await.expect("deal").len(), 1);
        assert!(locked(&p).await, "the table locks again");
        let out = alarm_clear(&cfgs, &p.addr, "second card removed", None);
        assert!(out.status.success(), "{}", text(&out));

        // `user disable` while running ends the session.
        let out = croupier(
            &[
                "user",
                "disable",
                "--config",
                &cfgs,
                "--badge",
                "77",
                "--reason",
                "shift over",
            ],
            None,
        );
        assert!(out.status.success(), "{}", text(&out));
        let h: Vec<(&str, &str)> = p
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let r = request_with(&p.addr, "GET", "/api/me", None, &h, STEP)
            .await
            .expect("me");
        assert_eq!(r.status, 401);

        let db = dir.path().join("croupier.db");
        let rows = audit_rows(&db).await;
        let clears: Vec<(&str, &str)> = rows
            .iter()
            .filter(|r| r.entry.action == "alarm_clear")
            .map(|r| (r.entry.actor.as_str(), r.entry.reason.as_str()))
            .collect();
        assert_eq!(clears.len(), 2, "{clears:?}");
        assert_eq!(clears[0], ("user:77", "card removed"));
        // The local token is one actor whoever holds it (no header names anyone).
        assert_eq!(clears[1].0, "local", "{clears:?}");
        assert!(rows.iter().any(|r| r.entry.action == "user_add"
            && r.entry.subject == "77"
            && r.entry.actor.starts_with("cli:")));
        // Every command kept the chain intact.
        let out = croupier(&["audit", "verify", "--config", &cfgs], None);
        assert!(out.status.success(), "{}", text(&out));
        assert!(p.terminate());
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configuration_change_is_audited_once() {
    timeout(Duration::from_secs(90), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig::default()).expect("pty");
        let mut config = common::config(dir.path(), &sim.path(), "deluxe");
        let db = config.store.path.clone();
        running::start(config.clone()).await.stop().await;
        running::start(config.clone()).await.stop().await;
        let rows: Vec<_> = audit_rows(&db)
            .await
            .into_iter()
            .filter(|r| r.entry.action == "config")
            .collect();
        assert_eq!(rows.len(), 1, "an unchanged config is not recorded again");
        config.table.name = "Renamed".into();
        running::start(config).await.stop().await;
        let rows: Vec<_> = audit_rows(&db)
            .await
            .into_iter()
            .filter(|r| r.entry.action == "config")
            .collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].entry.old_value, rows[0].entry.new_value);
        let new: Value =
            serde_json::from_str(rows[1].entry.new_value.as_deref().expect("new")).expect("json");
        assert_eq!(new["config"]["table"]["name"], "Renamed");
        assert_eq!(rows[1].entry.actor, "system");
    })
    .await
    .expect("bounded");
}
