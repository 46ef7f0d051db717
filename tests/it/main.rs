//! The integration tests, one crate (issue #63 item 3): each module was a test target of
//! its own, and each compiled the support code it included; here the support modules are
//! compiled once, at this root, and the tests share them (`use crate::nats;`). The
//! benchmarks include the same support files by path (`benches/`).

// Support code: each test uses its part.

#[path = "../support/a11y.rs"]
mod a11y;
#[path = "../support/cdp.rs"]
mod cdp;
#[path = "../support/clock_skew.rs"]
mod clock_skew;
#[path = "../common/mod.rs"]
mod common;
#[path = "../support/fault_proxy.rs"]
mod fault_proxy;
#[path = "../support/fit.rs"]
mod fit;
#[path = "../support/floor_check.rs"]
mod floor_check;
#[path = "../support/json_subset.rs"]
mod json_subset;
#[path = "../support/mid_round.rs"]
mod mid_round;
#[path = "../support/nats.rs"]
mod nats;
#[path = "../support/nats_cluster.rs"]
mod nats_cluster;
#[path = "../support/netns.rs"]
mod netns;
#[path = "../support/notify.rs"]
mod notify;
#[path = "../support/pg.rs"]
mod pg;
#[path = "../support/pit.rs"]
mod pit;
#[path = "../support/player.rs"]
mod player;
#[path = "../common/proc.rs"]
mod proc;
#[path = "../support/prom.rs"]
mod prom;
#[path = "../support/promtool.rs"]
mod promtool;
#[path = "../support/public_check.rs"]
mod public_check;
#[path = "../support/raw.rs"]
mod raw;
#[path = "../support/roles.rs"]
mod roles;
#[path = "../support/running.rs"]
mod running;
#[path = "../support/seals.rs"]
mod seals;
#[path = "../support/skip.rs"]
mod skip;
#[path = "../support/studio_check.rs"]
mod studio_check;
#[path = "../support/studio_table.rs"]
mod studio_table;
#[path = "../support/wallet_bots.rs"]
mod wallet_bots;
#[path = "../support/wallet_server.rs"]
mod wallet_server;

// The tests, one module per former target.

mod adding_a_game;
mod api;
mod auth;
mod backup;
mod book_links;
mod browser;
mod browser_dispute;
mod browser_floor;
mod browser_layout;
mod browser_morph;
mod browser_play;
mod browser_play_a11y;
mod browser_play_crowded;
mod browser_play_layout;
mod browser_play_reached;
mod browser_play_states;
mod browser_play_words;
mod browser_relay;
mod browser_remote_panel;
mod browser_trust;
mod cli;
mod crash;
mod debian_package;
mod deploy;
mod devices;
mod disclosure;
mod dispute_api;
mod dispute_crash;
mod disputes;
mod edge;
mod engine_flow;
mod engine_props;
mod floor;
mod funds_parity;
mod funds_props;
mod hardening;
mod http_wallet;
mod layering;
mod memory;
mod metrics_lint;
mod monitoring;
mod nemesis;
mod ops;
mod outage;
mod paytables_cli;
mod public_lag;
mod public_view;
mod public_ws;
mod recall;
mod recovery;
mod remote_play;
mod replay_cli;
mod schemathesis;
mod second_history;
mod service;
mod shoe_integrity;
mod shoe_integrity_table;
mod signals;
mod sim_shoe;
mod studio;
mod studio_cluster;
mod studio_demo;
mod studio_security;
mod sync_calls;
mod trust;
mod watchdog;
mod watchdog_roles;
