//! The systemd units and the install script: the units verify with `systemd-analyze`, the
//! service keeps its hardening (exposure stays low); the script installs idempotently, never
//! overwrites an existing config, and uninstalls.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A unit file from `systemd/` with its commands pointing at the binary under test.
fn unit_for_test(dir: &Path, name: &str) -> PathBuf {
    let text = std::fs::read_to_string(repo().join("systemd").join(name)).expect("unit");
    let text = text.replace("/usr/local/bin/croupier", env!("CARGO_BIN_EXE_croupier"));
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write unit");
    path
}

/// `systemd-analyze verify` passes without a word.
fn verify(unit: &Path) {
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(unit)
        .output()
        .expect("systemd-analyze (Debian package systemd) is installed");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.trim().is_empty(),
        "systemd-analyze verify {}: {said}",
        unit.display()
    );
}

#[test]
fn the_service_verifies_and_stays_hardened() {
    let dir = tempfile::tempdir().expect("tmp");
    let unit = unit_for_test(dir.path(), "croupier.service");
    let text = std::fs::read_to_string(&unit).expect("unit");
    assert!(text.contains(" run --config /etc/croupier/table.toml"));
    verify(&unit);

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
    assert!(exposure <= 2.0, "exposure {exposure} (README records 1.9)");
    for needed in [
        "Type=notify",
        "WatchdogSec=",
        "Restart=on-failure",
        "ProtectSystem=strict",
        "NoNewPrivileges=yes",
        "StateDirectory=croupier",
        "DevicePolicy=closed",
        // Enough descriptors for the viewers the public stream is sized for.
        "LimitNOFILE=16384",
    ] {
        assert!(text.contains(needed), "{needed} missing");
    }
}

#[test]
fn the_backup_timer_verifies() {
    let dir = tempfile::tempdir().expect("tmp");
    let service = unit_for_test(dir.path(), "croupier-backup.service");
    let timer = unit_for_test(dir.path(), "croupier-backup.timer");
    verify(&service);
    verify(&timer);
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
            // A staging install: files only, no users, no systemctl.
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
        "etc/systemd/system/croupier-backup.service",
        "etc/systemd/system/croupier-backup.timer",
        "etc/udev/rules.d/99-croupier.rules",
        "etc/croupier/table.toml",
    ] {
        assert!(root.join(f).exists(), "{f} not installed");
    }
    let config = root.join("etc/croupier/table.toml");
    let edited = std::fs::read_to_string(&config)
        .expect("read")
        .replace("Table 1", "Table 7");
    std::fs::write(&config, edited).expect("edit");
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
    assert!(!root
        .join("etc/systemd/system/croupier-backup.timer")
        .exists());
    assert!(config.exists(), "uninstall keeps the config");
}
