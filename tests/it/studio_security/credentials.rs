//! Credentials in a broker URL: used and never logged; an exposed one stops the table.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_and_password_in_the_url_are_used_and_never_logged() {
    timeout(Duration::from_secs(120), async {
        let Some(bin) = nats::nats_server() else {
            return;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let port = nats::free_port();
        let store = dir.path().join("js");
        let args = [
            "-js",
            "-a",
            "127.0.0.1",
            "--user",
            "tbla",
            "--pass",
            "tbla-pw",
            "-p",
        ];
        let mut args: Vec<std::ffi::OsString> = args.iter().map(|a| a.into()).collect();
        args.extend([
            port.to_string().into(),
            "-sd".into(),
            store.into_os_string(),
        ]);
        let mut server = nats::spawn_listening(&bin, &args, port);
        let url = format!("nats://tbla:tbla-pw@127.0.0.1:{port}");
        let cfg = table_config(dir.path(), "t1", &url, "");
        let log = dir.path().join("t1.log");
        let table = announced(proc::spawn_raw(&cfg, &log)).await;
        // The broker requires the user: the table publishes only if it used it.
        let started = Instant::now();
        loop {
            let (_, r) = get(&table.addr, "/readyz").await;
            if r["publish"]["state"] == "publishing" && r["publish"]["acked"].as_u64() > Some(5) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the table publishes with the URL's user: {r}"
            );
            sleep(Duration::from_millis(200)).await;
        }
        assert!(table.terminate(), "stops cleanly");
        let text = std::fs::read_to_string(&log).expect("log");
        assert!(
            text.contains("tbla:***@127.0.0.1"),
            "shown redacted: {text}"
        );
        assert!(!text.contains("tbla-pw"), "the password is logged: {text}");
        let _ = server.kill();
        let _ = server.wait();
    })
    .await
    .expect("bounded");
}

#[test]
fn a_password_in_the_url_is_never_logged_and_an_exposed_credential_stops_the_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let creds = dir.path().join("t.nk");
    std::fs::write(
        &creds,
        "SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4\n",
    )
    .expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&creds, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let cfg = table_config(
        dir.path(),
        "t1",
        "nats://127.0.0.1:1",
        &format!("credentials = {:?}\n", creds.display().to_string()),
    );
    let out = common::croupier(&["check-config", cfg.to_str().expect("utf-8")], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("chmod 600"), "{err}");
    let out = common::croupier(&["run", "--config", cfg.to_str().expect("utf-8")], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("chmod 600"), "{err}");

    // A user and password in the URL: used (a refused connection is the broker's answer,
    // not a silent anonymous one) and never written to the log.
    let cfg = table_config(dir.path(), "t2", "nats://tbla:tbla-pw@127.0.0.1:1", "");
    let mut child = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["run", "--config", cfg.to_str().expect("utf-8")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run");
    // Read until the publisher has named its broker (a loaded machine once took over the
    // 3 s this test used to wait in all), then 3 s more of its connection attempts, then
    // everything after the kill.
    let stderr = child.stderr.take().expect("stderr");
    let (lines, heard) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut err = String::new();
    let mut limit = std::time::Instant::now() + Duration::from_secs(60);
    let mut named = false;
    loop {
        if !named && err.contains("127.0.0.1:1") {
            named = true;
            limit = std::time::Instant::now() + Duration::from_secs(3);
        }
        let left = limit.saturating_duration_since(std::time::Instant::now());
        match heard.recv_timeout(left) {
            Ok(line) => {
                err.push_str(&line);
                err.push('\n');
            }
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    reader.join().expect("the reader");
    err.extend(heard.try_iter().map(|l| l + "\n"));
    assert!(
        err.contains("tbla:***@127.0.0.1:1"),
        "the URL is shown redacted: {err}"
    );
    assert!(!err.contains("tbla-pw"), "the password is logged: {err}");
}
