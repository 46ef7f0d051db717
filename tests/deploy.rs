//! The systemd unit and the install script: the unit verifies with `systemd-analyze` and
//! keeps its hardening (exposure stays low); the script installs idempotently, never
//! overwrites an existing config, and uninstalls.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The unit with its ExecStart pointing at the binary under test.
fn unit_for_test(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(repo().join("systemd/croupier.service")).expect("unit");
    assert!(
        text.contains("ExecStart=/usr/local/bin/croupier run --config /etc/croupier/table.toml")
    );
    let text = text.replace("/usr/local/bin/croupier", env!("CARGO_BIN_EXE_croupier"));
    let path = dir.join("croupier.service");
    std::fs::write(&path, text).expect("write unit");
    path
}

#[test]
fn the_unit_verifies_and_stays_hardened() {
    let dir = tempfile::tempdir().expect("tmp");
    let unit = unit_for_test(dir.path());
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit)
        .output()
        .expect("systemd-analyze (Debian package systemd) is installed");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.trim().is_empty(),
        "systemd-analyze verify: {said}"
    );

    let out = Command::new("systemd-analyze")
        .args(["security", "--offline=true", "--no-pager"])
        .arg(&unit)
        .output()
        .expect("systemd-analyze security");
    let report = String::from_utf8_lossy(&out.stdout);
    let exposure: f64 = report
        .lines()
        .find_map(|l| l.split("exposure level for croupier.service: ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level in {report}"));
    assert!(exposure <= 2.0, "exposure {exposure} (README records 1.6)");

    let unit_text = std::fs::read_to_string(&unit).expect("unit");
    for needed in [
        "Type=notify",
        "WatchdogSec=",
        "Restart=on-failure",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "StateDirectory=croupier",
    ] {
        assert!(unit_text.contains(needed), "{needed} missing");
    }
}

#[test]
fn install_is_idempotent_keeps_the_config_and_uninstalls() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    let run = |args: &[&str]| {
        let out = Command::new("bash")
            .arg(repo().join("systemd/install.sh"))
            .args(["--binary", env!("CARGO_BIN_EXE_croupier")])
            .args(args)
            .env("DESTDIR", root)
            .output()
            .expect("bash");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first = run(&[]);
    assert!(first.contains("wrote /etc/croupier/table.toml"), "{first}");
    for f in [
        "usr/local/bin/croupier",
        "etc/systemd/system/croupier.service",
        "etc/udev/rules.d/99-croupier.rules",
        "etc/croupier/table.toml",
    ] {
        assert!(root.join(f).exists(), "{f} not installed");
    }
    let config = root.join("etc/croupier/table.toml");
    std::fs::write(
        &config,
        std::fs::read_to_string(&config)
            .expect("read")
            .replace("Table 1", "Table 7"),
    )
    .expect("edit");
    let second = run(&[]);
    assert!(
        second.contains("kept the existing /etc/croupier/table.toml"),
        "{second}"
    );
    assert!(
        std::fs::read_to_string(&config)
            .expect("read")
            .contains("Table 7"),
        "the operator's config was overwritten"
    );
    run(&["--uninstall"]);
    assert!(!root.join("usr/local/bin/croupier").exists());
    assert!(!root.join("etc/systemd/system/croupier.service").exists());
    assert!(config.exists(), "uninstall keeps the config");
}
