//! `croupier paytables`, `croupier check-variant`'s RTP warnings and `croupier simulate` through the
//! real binary.

use serde_json::Value;
use std::process::Command;

fn croupier() -> Command {
    match std::env::var_os("CROUPIER_EXE") {
        Some(exe) => Command::new(exe),
        None => Command::new(env!("CARGO_BIN_EXE_croupier")),
    }
}

#[test]
fn paytables_json_gives_each_line_and_the_rtp() {
    let v = json_of(&["paytables", "--variant", "ultimate", "--json"]);
    let bets = v[0]["bets"].as_array().expect("bets");
    let names: Vec<&str> = bets.iter().filter_map(|b| b["bet"].as_str()).collect();
    assert_eq!(names, ["21+3", "insurance"]);
    let rtp = bets[0]["rtp"].as_f64().expect("rtp");
    assert_eq!(format!("{:.2}", rtp * 100.0), "92.86");
    let lines = bets[0]["lines"].as_array().expect("lines");
    assert_eq!(lines.len(), 5);
    let sum: f64 = lines
        .iter()
        .map(|l| l["contribution"].as_f64().expect("contribution"))
        .sum();
    assert!((sum - rtp).abs() < 1e-12);
    // The text form: a block per bet, a line per combination (IN FOR 6's hard sixes by
    // bonus class).
    let text = croupier()
        .args(["paytables", "--variant", "infor6"])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("in_for_6 [in_for_6]: RTP 95.95"), "{text}");
    assert!(text.contains("hard_six:exacta"), "{text}");
    assert!(text.contains("insurance [insurance]: RTP 92.53"), "{text}");
    assert!(!text.contains("warning"), "{text}");
    let bad = croupier()
        .args(["paytables", "--variant", "nosuch"])
        .output()
        .expect("runs");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown variant \"nosuch\""));
}

#[test]
fn check_variant_warns_about_a_losing_pay_table_and_a_wrong_rtp() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/variants/ultimate.toml"
    ))
    .expect("shipped file")
    .replace("flush = \"5:1\"", "flush = \"9:1\"")
    .replace(
        "kind = \"twenty_one_plus_three\"",
        "kind = \"twenty_one_plus_three\"\nrtp = 92.86",
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ultimate-9to1.toml");
    std::fs::write(&path, text).expect("write");
    let out = croupier()
        .arg("check-variant")
        .arg(&path)
        .output()
        .expect("runs");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning: 21+3: returns 116.22"), "{err}");
    assert!(
        err.contains("warning: 21+3: declares rtp = 92.86 but its pay table returns 116.22"),
        "{err}"
    );
    // The shipped files have no warning: the library test
    // `no_shipped_bet_returns_the_stake_or_more_and_declared_rtps_hold` checks each.
}

/// `croupier ARGS`'s JSON answer; the command must succeed.
fn json_of(args: &[&str]) -> Value {
    let out = croupier().args(args).output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// `croupier simulate ARGS --json`'s report, less its timing (the only part a seed does not
/// decide).
fn simulate_json(args: &[&str]) -> Value {
    let mut v = json_of(&[&["simulate"], args, &["--json"]].concat());
    v["seconds"] = Value::Null;
    v["rounds_per_second"] = Value::Null;
    v
}

/// `croupier simulate --json`: the report's figures, the same for the same seed and thread
/// count, and a clear refusal for an unknown variant and for options a run cannot take.
#[test]
fn simulate_json_is_determined_by_seed_and_threads() {
    let run = |seed: &str| {
        let v = simulate_json(&[
            "--variant",
            "ultimate",
            "--rounds",
            "4000",
            "--threads",
            "2",
            "--seed",
            seed,
        ]);
        assert_eq!(v["rounds"], 4000);
        assert_eq!(v["threads"], 2);
        let main = &v["main"];
        let [lo, hi] =
            [&main["ci95_pct"][0], &main["ci95_pct"][1]].map(|x| x.as_f64().expect("ci"));
        let rtp = main["rtp_pct"].as_f64().expect("rtp");
        assert!(lo < rtp && rtp < hi, "{lo} < {rtp} < {hi}");
        assert_eq!(v["side_bets"][0]["name"], "21+3");
        v
    };
    assert_eq!(run("5"), run("5"));
    assert_ne!(run("5")["main"], run("6")["main"]);
    let refused = [
        vec!["--variant", "nosuch"],
        vec!["--variant", "ultimate", "--boxes", "1"],
        vec!["--variant", "multihand", "--boxes", "4"],
        vec!["--variant", "multihand", "--specials", "top_21+3"],
    ];
    let why = [
        "unknown variant",
        "--boxes and --specials are for a common draw",
        "--boxes must be 1 to 3",
        "top_21+3 is placed only with 21+3",
    ];
    for (args, why) in refused.iter().zip(why) {
        let out = croupier()
            .args(["simulate", "--rounds", "10"])
            .args(args)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{err}");
    }
}

/// `croupier simulate --variant multihand`: the common draw, one player on the chosen boxes
/// with the chosen special bets, the same for the same seed and threads.
#[test]
fn simulate_plays_the_common_draw() {
    let run = |boxes: &str| {
        simulate_json(&[
            "--variant",
            "multihand",
            "--rounds",
            "3000",
            "--threads",
            "2",
            "--boxes",
            boxes,
            "--specials",
            "21+3,top_21+3,sevens",
        ])
    };
    let three = run("3");
    assert_eq!(three["rounds"], 3000);
    assert_eq!(three["boxes"], 3);
    let names: Vec<&str> = three["side_bets"]
        .as_array()
        .expect("side bets")
        .iter()
        .map(|s| s["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["21+3", "top_21+3", "sevens"]);
    assert_eq!(three, run("3"));
    let one = run("1");
    assert_eq!(one["boxes"], 1);
    assert_ne!(one["main"], three["main"]);
}
