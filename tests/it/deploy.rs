//! The systemd units and the install script: the units verify with `systemd-analyze`, the
//! services keep their hardening (exposure stays low; the relay's and the floor's no worse
//! than the table's); the script installs the role it is given idempotently, never
//! overwrites an existing config, and uninstalls that role.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A unit file from `systemd/` with its commands pointing at the binary under test.
fn unit_for_test(dir: &Path, name: &str) -> PathBuf {
    let text = std::fs::read_to_string(repo().join("systemd").join(name)).expect("unit");
    let text = text.replace("/usr/bin/croupier", env!("CARGO_BIN_EXE_croupier"));
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

/// `systemd-analyze security`'s overall exposure level for `unit` (lower is safer).
fn exposure(unit: &Path) -> f64 {
    let out = Command::new("systemd-analyze")
        .args(["security", "--offline=true", "--no-pager"])
        .arg(unit)
        .output()
        .expect("systemd-analyze security");
    let report = String::from_utf8_lossy(&out.stdout);
    let name = unit.file_name().expect("name").to_string_lossy();
    report
        .lines()
        .find_map(|l| l.split(&format!("exposure level for {name}: ")).nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level in {report}"))
}

#[test]
fn the_service_verifies_and_stays_hardened() {
    let dir = tempfile::tempdir().expect("tmp");
    let unit = unit_for_test(dir.path(), "croupier.service");
    let text = std::fs::read_to_string(&unit).expect("unit");
    assert!(text.contains(" run --config /etc/croupier/table.toml"));
    verify(&unit);
    let exposure = exposure(&unit);
    assert!(
        exposure <= 2.0,
        "exposure {exposure} (docs/src/operations.md records 1.9)"
    );
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

/// The value of `key=` in a unit (its last setting).
fn setting<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in the unit"))
}

/// The relay's and the floor's units: they verify, score at least as well as the table's,
/// are notify services with a watchdog, have no device and no device group, take their
/// arguments from the role's environment file and hold no secret.
#[test]
fn the_relay_and_floor_units_verify_and_are_as_hardened_as_the_table() {
    let dir = tempfile::tempdir().expect("tmp");
    let table = exposure(&unit_for_test(dir.path(), "croupier.service"));
    for (role, min_files) in [("relay", 65536), ("floor", 4096)] {
        let name = format!("croupier-{role}.service");
        let unit = unit_for_test(dir.path(), &name);
        let text = std::fs::read_to_string(&unit).expect("unit");
        verify(&unit);
        let exposure = exposure(&unit);
        assert!(
            exposure <= table,
            "{name}: exposure {exposure}, the table's is {table}"
        );
        for needed in [
            "Type=notify",
            "NotifyAccess=main",
            "Restart=on-failure",
            "ProtectSystem=strict",
            "NoNewPrivileges=yes",
            "PrivateDevices=yes",
            "DevicePolicy=closed",
            "User=croupier",
        ] {
            assert!(text.contains(needed), "{name}: {needed} missing");
        }
        let watchdog = setting(&text, "WatchdogSec");
        assert!(
            watchdog.ends_with('s') && watchdog != "0s",
            "{name}: WatchdogSec={watchdog}"
        );
        let files: u64 = setting(&text, "LimitNOFILE").parse().expect("a number");
        assert!(files >= min_files, "{name}: LimitNOFILE={files}");
        // The arguments from the role's file, split into words ($VAR, not ${VAR}).
        assert_eq!(
            setting(&text, "EnvironmentFile"),
            format!("/etc/croupier/{role}.env")
        );
        let upper = role.to_uppercase();
        assert!(
            setting(&text, "ExecStart").ends_with(&format!(" {role} $CROUPIER_{upper}_ARGS")),
            "{name}: {}",
            setting(&text, "ExecStart")
        );
        // Neither the shoe, the GPIO, their groups nor a state directory.
        for absent in ["DeviceAllow=", "SupplementaryGroups=", "StateDirectory="] {
            assert!(!text.contains(absent), "{name}: {absent}");
        }
        // No secret in a unit's settings (anyone can read /etc/systemd/system and
        // `systemctl show`); its comments may say where they are.
        let lower = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
            .to_lowercase();
        for secret in [
            "postgres://",
            "nats://",
            "tls://",
            "password",
            "pgpass",
            ".nk",
            ".creds",
        ] {
            assert!(!lower.contains(secret), "{name} holds {secret:?}");
        }
    }
}

/// The environment files install.sh installs name only arguments the binary knows, and
/// keep the database's password out of the command line.
#[test]
fn the_role_environment_files_name_real_arguments() {
    for role in ["relay", "floor"] {
        let text =
            std::fs::read_to_string(repo().join(format!("systemd/{role}.env"))).expect("env file");
        let key = format!("CROUPIER_{}_ARGS=", role.to_uppercase());
        let args = text
            .lines()
            .find_map(|l| l.strip_prefix(&key))
            .unwrap_or_else(|| panic!("{role}.env sets no {key}"));
        let help = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args([role, "--help"])
            .output()
            .expect("croupier --help");
        let help = String::from_utf8_lossy(&help.stdout);
        let flags: Vec<&str> = args
            .split_whitespace()
            .filter(|a| a.starts_with("--"))
            .collect();
        assert!(flags.contains(&"--nats"), "{role}.env: {args}");
        for flag in flags {
            assert!(
                help.contains(&format!("{flag} ")),
                "{role}.env: `croupier {role}` has no {flag}"
            );
        }
        for url in args.split_whitespace().filter(|a| a.contains("://")) {
            let authority = url.split("://").nth(1).unwrap_or("");
            let userinfo = authority
                .split('@')
                .next()
                .filter(|_| authority.contains('@'));
            assert!(
                !userinfo.is_some_and(|u| u.contains(':')),
                "{role}.env: a password in {url}"
            );
        }
    }
    let floor = std::fs::read_to_string(repo().join("systemd/floor.env")).expect("floor.env");
    assert!(floor.lines().any(|l| l.starts_with("PGPASSWORD=")));
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
    let run = |args: &[&str]| install(root, args);
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

/// A DESTDIR staging install as `bash install.sh --binary BIN ARGS...`: its stdout.
fn install(root: &Path, args: &[&str]) -> String {
    let out = Command::new("bash")
        .arg(repo().join("systemd/install.sh"))
        .args(["--binary", env!("CARGO_BIN_EXE_croupier")])
        .args(args)
        .env("DESTDIR", root)
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "install.sh {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `--role relay` and `--role floor` install their unit and their environment file (root's
/// alone), nothing of a table's; a second run keeps the edited file; uninstalling a role
/// removes its unit only, and the binary goes with the last role.
#[test]
fn install_names_the_role_and_installs_only_its_files() {
    use std::os::unix::fs::PermissionsExt;
    for role in ["relay", "floor"] {
        let dir = tempfile::tempdir().expect("tmp");
        let root = dir.path();
        let first = install(root, &["--role", role]);
        assert!(
            first.contains(&format!("wrote /etc/croupier/{role}.env")),
            "{first}"
        );
        let unit = root.join(format!("etc/systemd/system/croupier-{role}.service"));
        let env = root.join(format!("etc/croupier/{role}.env"));
        assert!(root.join("usr/local/bin/croupier").exists());
        assert!(unit.exists(), "{role}: unit not installed");
        // The package's unit, with the locally built binary's place.
        assert_eq!(
            std::fs::read_to_string(&unit).expect("unit"),
            std::fs::read_to_string(repo().join(format!("systemd/croupier-{role}.service")))
                .expect("unit")
                .replace("/usr/bin/croupier", "/usr/local/bin/croupier")
        );
        let mode = std::fs::metadata(&env).expect("env").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{role}.env mode {mode:o}");
        for other in [
            "etc/systemd/system/croupier.service",
            "etc/systemd/system/croupier-backup.timer",
            "etc/udev/rules.d/99-croupier.rules",
            "etc/croupier/table.toml",
        ] {
            assert!(
                !root.join(other).exists(),
                "--role {role} installed {other}"
            );
        }
        std::fs::write(&env, "CROUPIER_ARGS=edited\n").expect("edit");
        let second = install(root, &["--role", role]);
        assert!(
            second.contains(&format!("kept the existing /etc/croupier/{role}.env")),
            "{second}"
        );
        assert_eq!(
            std::fs::read_to_string(&env).expect("env"),
            "CROUPIER_ARGS=edited\n"
        );

        // A table beside it: removing the role keeps the table and the binary.
        install(root, &[]);
        install(root, &["--role", role, "--uninstall"]);
        assert!(!unit.exists(), "{role}: unit not removed");
        assert!(env.exists(), "uninstall keeps the configuration");
        assert!(root.join("etc/systemd/system/croupier.service").exists());
        assert!(
            root.join("usr/local/bin/croupier").exists(),
            "the table still needs it"
        );
        install(root, &["--uninstall"]);
        assert!(
            !root.join("usr/local/bin/croupier").exists(),
            "no role left"
        );
    }
    let dir = tempfile::tempdir().expect("tmp");
    let out = Command::new("bash")
        .arg(repo().join("systemd/install.sh"))
        .args(["--role", "dealer"])
        .env("DESTDIR", dir.path())
        .output()
        .expect("bash");
    assert_eq!(out.status.code(), Some(2), "an unknown role is refused");
}

/// A table's build (`--no-default-features`) has no studio command; install.sh refuses it
/// for a relay or a floor, and for a table on a machine that already runs one (one binary
/// serves every role there), installing nothing. The stand-in answers `help relay` and
/// `help floor` as the table's build does (clap's "unrecognized subcommand", status 2);
/// `.ci/aarch64` checks the real build has no `relay` command.
#[test]
fn a_tables_build_is_refused_where_a_studio_role_needs_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tmp");
    let table_build = dir.path().join("croupier-table");
    std::fs::write(
        &table_build,
        format!(
            "#!/bin/sh\nif [ \"$1\" = help ] && {{ [ \"$2\" = relay ] || [ \"$2\" = floor ]; }}; then\n  echo \"error: unrecognized subcommand '$2'\" >&2; exit 2\nfi\nexec {} \"$@\"\n",
            env!("CARGO_BIN_EXE_croupier")
        ),
    )
    .expect("write");
    std::fs::set_permissions(&table_build, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let root = dir.path().join("root");
    let with_table_build = |args: &[&str]| {
        Command::new("bash")
            .arg(repo().join("systemd/install.sh"))
            .args(args)
            .arg("--binary")
            .arg(&table_build)
            .env("DESTDIR", &root)
            .output()
            .expect("bash")
    };
    for role in ["relay", "floor"] {
        let out = with_table_build(&["--role", role]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "--role {role} took a table's build");
        assert!(err.contains(&format!("has no '{role}' command")), "{err}");
        assert!(
            !root.join("usr/local/bin/croupier").exists(),
            "{role}: installed anyway"
        );
    }
    // A table takes it.
    let out = with_table_build(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(root.join("etc/systemd/system/croupier.service").exists());
    // With a floor on the machine (the full build), the table's build is refused and the
    // installed binary stays the floor's.
    install(&root, &["--role", "floor"]);
    let installed = std::fs::read(root.join("usr/local/bin/croupier")).expect("binary");
    let out = with_table_build(&[]);
    assert!(
        !out.status.success(),
        "a table's build replaced the floor's binary"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no 'floor' command"));
    assert_eq!(
        std::fs::read(root.join("usr/local/bin/croupier")).expect("binary"),
        installed
    );
}
