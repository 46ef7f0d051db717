#![warn(missing_docs)]
//! croupier: the controller for a live-dealer blackjack table.
//!
//! `engine` is the sans-IO rules engine; `replay` drives it from the scenario format;
//! `cards` and `money` are the shared vocabulary; `math` prices the bets (exact side-bet
//! returns). `table` is the service around the engine (the owner task), `store` its SQLite
//! event log, `web` its HTTP API, `systemd` its service-manager protocol; `metrics` and
//! `clock` serve its health endpoints; `integrity` holds the shoe-integrity statistics.
//! `app` is the composition root of `croupier run`, wiring all of them. `floor` is the
//! casino floor (`croupier floor`): every table's published log in PostgreSQL.

pub mod app;
pub mod auth;
pub mod broker;
pub mod cards;
pub mod clock;
pub mod currency;
pub mod engine;
#[cfg(feature = "studio")]
pub mod floor;
pub mod http_client;
pub mod integrity;
pub mod math;
pub mod metrics;
pub mod money;
pub mod play;
pub mod process;
pub mod publish;
pub mod redact;
#[cfg(feature = "studio")]
pub mod relay;
pub mod replay;
pub mod sim;
pub mod store;
#[cfg(feature = "studio")]
pub mod studio;
pub mod systemd;
pub mod table;
pub mod trust;
pub mod wallet;
pub mod web;
