//! The studio's alert rules and dashboard (`config/monitoring/`): the rules pass `promtool
//! check rules` and their unit tests (`promtool test rules`, every alert both firing and
//! not); the dashboard is valid JSON whose every panel queries through the `${datasource}`
//! variable; and every metric the rules and the dashboard name — with every label value
//! they match on — exists in a live scrape of the real processes: a table publishing to a
//! test nats-server, a relay serving it and a floor ingesting it into PostgreSQL.
//!
//! Needs promtool, nats-server and PostgreSQL: skipped locally without them, fails under
//! CI (`.ci/run` installs them).

use crate::proc;
use crate::prom;
use crate::promtool;
use crate::roles;
use crate::studio_table;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn monitoring() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config/monitoring")
}

fn read(name: &str) -> String {
    std::fs::read_to_string(monitoring().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Runs promtool in `config/monitoring` (the test file names the rules relative to it).
fn run_promtool(promtool: &str, args: &[&str]) {
    let out = Command::new(promtool)
        .args(args)
        .current_dir(monitoring())
        .output()
        .expect("promtool runs");
    assert!(
        out.status.success(),
        "promtool {args:?}:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The alert names in the rules file.
fn alerts(rules: &str) -> Vec<String> {
    rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- alert: "))
        .map(|a| a.trim().to_string())
        .collect()
}

/// Every `expr:` of the rules file, a `|` block included.
fn rule_exprs(rules: &str) -> Vec<String> {
    let lines: Vec<&str> = rules.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(expr) = line.trim().strip_prefix("expr:") else {
            continue;
        };
        let expr = expr.trim();
        if expr != "|" {
            out.push(expr.to_string());
            continue;
        }
        let indent = |l: &str| l.len() - l.trim_start().len();
        let own = indent(line);
        let block: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| l.trim().is_empty() || indent(l) > own)
            .map(|l| l.trim())
            .collect();
        out.push(block.join(" "));
    }
    out
}

#[test]
fn the_rules_pass_promtool_and_their_tests_cover_every_alert_both_ways() {
    let Some(promtool) = promtool::promtool() else {
        return;
    };
    run_promtool(promtool, &["check", "rules", "croupier-alerts.yml"]);
    run_promtool(promtool, &["test", "rules", "croupier-alerts.test.yml"]);

    // Each alert is shown firing and not firing: `alertname: X` followed by an
    // `exp_alerts: []` (silent) or an `exp_alerts:` list (firing).
    let tests = read("croupier-alerts.test.yml");
    let lines: Vec<&str> = tests.lines().map(str::trim).collect();
    let mut seen: BTreeMap<String, (bool, bool)> = BTreeMap::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(name) = line.strip_prefix("alertname: ") {
            let next = lines.get(i + 1).copied().unwrap_or("");
            let e = seen.entry(name.trim().to_string()).or_default();
            if next == "exp_alerts: []" {
                e.1 = true;
            } else if next == "exp_alerts:" {
                e.0 = true;
            }
        }
    }
    let names = alerts(&read("croupier-alerts.yml"));
    assert!(names.len() >= 20, "{names:?}");
    for name in names {
        assert_eq!(
            seen.get(&name),
            Some(&(true, true)),
            "{name}: tested firing and not firing"
        );
    }
}

/// The dashboard's panels that query (rows only group them).
fn query_panels(dashboard: &Value) -> Vec<&Value> {
    dashboard["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .filter(|p| p["type"] != "row")
        .collect()
}

#[test]
fn the_dashboard_is_valid_and_queries_through_its_datasource_variable() {
    let dashboard: Value =
        serde_json::from_str(&read("croupier-studio-dashboard.json")).expect("valid JSON");
    let version = dashboard["schemaVersion"].as_u64().expect("schemaVersion");
    assert!((36..=39).contains(&version), "schemaVersion {version}");
    let variables = dashboard["templating"]["list"]
        .as_array()
        .expect("templating");
    assert!(
        variables.iter().any(|v| v["name"] == "datasource"
            && v["type"] == "datasource"
            && v["query"] == "prometheus"),
        "a ${{datasource}} variable of Prometheus data sources"
    );
    let panels = query_panels(&dashboard);
    assert!(panels.len() >= 15, "{} panels", panels.len());
    let mut ids = BTreeSet::new();
    let mut titles = String::new();
    for p in &panels {
        let title = p["title"].as_str().expect("a title");
        titles.push_str(title);
        assert!(
            ids.insert(p["id"].as_u64().expect("id")),
            "{title}: id used twice"
        );
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{title}");
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{title}: no targets");
        for t in targets {
            let expr = t["expr"].as_str().unwrap_or("");
            assert!(!expr.trim().is_empty(), "{title}: a target without a query");
            assert_eq!(t["datasource"]["uid"], "${datasource}", "{title}");
        }
    }
    // Tables, relays and the floor each have their panels.
    let exprs = dashboard_exprs(&dashboard).join(" ");
    for part in ["croupier_table_", "croupier_relay_", "croupier_floor_"] {
        assert!(exprs.contains(part), "no panel queries {part}*");
    }
}

fn dashboard_exprs(dashboard: &Value) -> Vec<String> {
    query_panels(dashboard)
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t["expr"].as_str().map(str::to_string))
        .collect()
}

/// A metric a query selects, with the label values it matches on (`=`, and each word of a
/// `=~"a|b"` alternative).
#[derive(Debug, PartialEq)]
struct Selector {
    metric: String,
    labels: Vec<(String, String)>,
}

/// PromQL's keywords and aggregation operators (an aggregation may put `by (…)` before its
/// parenthesis, so it is not always followed by `(`).
const KEYWORDS: [&str; 23] = [
    "and",
    "or",
    "unless",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "offset",
    "bool",
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
];

/// The metric selectors in a PromQL expression: identifiers that are not functions
/// (followed by `(`), keywords, label names (in `{…}` or after `by`/`without`), durations
/// or numbers.
fn selectors(expr: &str) -> Vec<Selector> {
    let chars: Vec<char> = expr.chars().collect();
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut out: Vec<Selector> = Vec::new();
    let mut i = 0;
    let mut grouping = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += 1 + usize::from(chars[i] == '\\');
            }
            i += 1;
        } else if c == '[' {
            // A range or subquery duration.
            while i < chars.len() && chars[i] != ']' {
                i += 1;
            }
        } else if c == '{' {
            let end = chars[i..]
                .iter()
                .position(|c| *c == '}')
                .map_or(chars.len(), |e| i + e);
            let body: String = chars[i + 1..end].iter().collect();
            if let Some(last) = out.last_mut() {
                last.labels.extend(matchers(&body));
            }
            i = end + 1;
        } else if c == '(' && grouping {
            // by (…) / without (…): label names.
            while i < chars.len() && chars[i] != ')' {
                i += 1;
            }
            grouping = false;
        } else if ident(c) && !c.is_ascii_digit() && (i == 0 || !ident(chars[i - 1])) {
            let start = i;
            while i < chars.len() && ident(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let next = chars[i..].iter().find(|c| !c.is_whitespace()).copied();
            if word == "by" || word == "without" {
                grouping = true;
            } else if !KEYWORDS.contains(&word.as_str()) && next != Some('(') {
                out.push(Selector {
                    metric: word,
                    labels: Vec::new(),
                });
            }
            continue;
        } else if ident(c) {
            // The rest of a number or a duration.
            while i < chars.len() && ident(chars[i]) {
                i += 1;
            }
            continue;
        }
        i += 1;
    }
    out
}

/// `k="v"` and the words of `k=~"a|b"` in a selector's braces.
fn matchers(body: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for m in body.split(',') {
        let m = m.trim();
        let (key, value, regex) = if let Some((k, v)) = m.split_once("=~") {
            (k, v, true)
        } else if m.contains("!=") || m.contains("!~") {
            continue;
        } else if let Some((k, v)) = m.split_once('=') {
            (k, v, false)
        } else {
            continue;
        };
        let value = value.trim().trim_matches('"');
        let words: Vec<&str> = if regex {
            // Only a plain alternative of words is checked word by word.
            if !value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
            {
                continue;
            }
            value.split('|').collect()
        } else {
            vec![value]
        };
        out.extend(
            words
                .into_iter()
                .map(|w| (key.trim().to_string(), w.to_string())),
        );
    }
    out
}

#[test]
fn the_selector_reader_finds_metrics_and_labels_only() {
    let found = selectors(
        r#"histogram_quantile(0.99, sum by (instance, le) (rate(croupier_commit_latency_seconds_bucket[5m]))) > 1e3
           and sum by (job) (croupier_relay_viewers offset 5m) >= 100
           and croupier_publish_state{state=~"connecting|disconnected", job!="x"} == 1 or up{job="croupier-table"}"#,
    );
    let names: Vec<&str> = found.iter().map(|s| s.metric.as_str()).collect();
    assert_eq!(
        names,
        [
            "croupier_commit_latency_seconds_bucket",
            "croupier_relay_viewers",
            "croupier_publish_state",
            "up"
        ]
    );
    assert_eq!(
        found[2].labels,
        [
            ("state".to_string(), "connecting".to_string()),
            ("state".to_string(), "disconnected".to_string())
        ]
    );
}

/// `croupier ARGS`, once it announces its address.
async fn spawn(args: &[&str], log: &Path) -> proc::Proc {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    proc::announced(proc::spawn_args(&args, log)).await
}

/// `host:port` after `pit page http://` in the floor's announce line.
fn pit_addr(announce: &str) -> String {
    announce
        .split("pit page http://")
        .nth(1)
        .map(|s| s.trim().trim_end_matches('/').to_string())
        .unwrap_or_else(|| panic!("no pit page in {announce:?}"))
}

async fn scrape(addr: &str) -> String {
    let (status, text) =
        croupier::web::client::request(addr, "GET", "/metrics", None, Duration::from_secs(10))
            .await
            .unwrap_or_else(|e| panic!("scrape {addr}: {e}"));
    assert_eq!(status, 200, "{addr}: {text}");
    text
}

/// Scrapes `addr` until `ready` holds (the families that need a table to be followed).
async fn scrape_until(addr: &str, what: &str, ready: impl Fn(&str) -> bool) -> String {
    let started = Instant::now();
    loop {
        let text = scrape(addr).await;
        if ready(&text) {
            return text;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{what} within a minute:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// What the scrapes hold: each family's type, and every series as written.
#[derive(Default)]
struct Live {
    types: BTreeMap<String, String>,
    series: BTreeSet<String>,
}

impl Live {
    fn add(&mut self, text: &str) {
        let scrape = prom::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        self.types.extend(scrape.types);
        self.series.extend(scrape.samples.into_keys());
    }

    /// The family `metric` belongs to: itself, or a histogram's `_bucket`, `_sum`,
    /// `_count`.
    fn family(&self, metric: &str) -> Option<String> {
        if self.types.contains_key(metric) {
            return Some(metric.to_string());
        }
        ["_bucket", "_sum", "_count"].iter().find_map(|suffix| {
            let base = metric.strip_suffix(suffix)?;
            (self.types.get(base).map(String::as_str) == Some("histogram"))
                .then(|| base.to_string())
        })
    }

    /// Whether a series of `metric` carries `key="value"` (a family without samples yet
    /// — a counter of refusals none happened to — cannot say, and passes).
    fn has_label(&self, metric: &str, key: &str, value: &str) -> bool {
        let prefix = format!("{metric}{{");
        let mut of = self
            .series
            .iter()
            .filter(|s| s.starts_with(&prefix))
            .peekable();
        of.peek().is_none() || of.any(|s| s.contains(&format!("{key}=\"{value}\"")))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_the_rules_and_dashboard_query_is_in_a_live_scrape() {
    let Some(roles::Needs { dir, broker, db }) = roles::needs().await else {
        return;
    };
    let url = broker.url();

    // A dealing table publishing to the broker.
    let mut table = studio_table::Table::new(dir.path(), "t1", &url);
    table.start(true).await;
    let table_addr = table.addr();

    // A relay serving it.
    let keys = dir.path().join("table-keys.toml");
    studio_table::pin_keys(&keys, [("t1", table.db.as_path())]);
    let keys = keys.display().to_string();
    let relay = spawn(&roles::relay(&url, &keys), &dir.path().join("relay.log")).await;

    // A floor ingesting it, with its pit page and /metrics.
    let floor = spawn(
        &roles::floor(&url, &db.url, &keys),
        &dir.path().join("floor.log"),
    )
    .await;
    let floor_addr = pit_addr(&floor.announce);

    let mut live = Live::default();
    live.add(
        &scrape_until(&table_addr, "the table publishes and commits", |t| {
            t.contains("croupier_publish_acked_seq")
                && t.contains("croupier_commit_latency_seconds_bucket")
        })
        .await,
    );
    live.add(
        &scrape_until(&relay.addr, "the relay serves t1", |t| {
            t.contains("croupier_relay_viewers{") && t.contains("table=\"t1\"")
        })
        .await,
    );
    live.add(
        &scrape_until(&floor_addr, "the floor follows t1", |t| {
            t.contains("croupier_floor_lag_messages{table=\"t1\"}")
                && t.contains("croupier_floor_broker_connected 1")
                && t.contains("croupier_floor_database_up 1")
        })
        .await,
    );

    let dashboard: Value =
        serde_json::from_str(&read("croupier-studio-dashboard.json")).expect("valid JSON");
    let mut exprs: Vec<(String, String)> = dashboard_exprs(&dashboard)
        .into_iter()
        .map(|e| ("dashboard".to_string(), e))
        .collect();
    exprs.extend(
        rule_exprs(&read("croupier-alerts.yml"))
            .into_iter()
            .map(|e| ("alert rules".to_string(), e)),
    );
    assert!(exprs.len() >= 40, "{} queries", exprs.len());
    let mut checked = BTreeSet::new();
    for (place, expr) in &exprs {
        let found = selectors(expr);
        assert!(!found.is_empty(), "{place}: no metric in {expr}");
        for s in found {
            // `up` is the series Prometheus writes for each target it scrapes.
            if s.metric == "up" {
                continue;
            }
            let family = live.family(&s.metric).unwrap_or_else(|| {
                panic!("{place}: {} (in {expr}) is in no live scrape", s.metric)
            });
            for (key, value) in &s.labels {
                assert!(
                    live.has_label(&family, key, value) || live.has_label(&s.metric, key, value),
                    "{place}: no series {}{{{key}=\"{value}\"}} in the live scrapes (in {expr})",
                    s.metric
                );
            }
            checked.insert(s.metric);
        }
    }
    // The table's, the relay's and the floor's own families were all among them.
    for part in [
        "croupier_dispute_open_age_seconds",
        "croupier_relay_broker_connected",
        "croupier_floor_stalled_seconds",
    ] {
        assert!(checked.contains(part), "{part} not queried");
    }

    assert!(floor.terminate(), "the floor stops cleanly");
    assert!(relay.terminate(), "the relay stops cleanly");
    table.stop();
    drop(broker);
}
