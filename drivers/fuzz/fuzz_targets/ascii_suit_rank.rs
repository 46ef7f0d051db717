#![no_main]
//! Fuzzes the `ascii-suit-rank` decoder: see common.rs for the invariants.

use croupier_drivers::proto::ascii::AsciiSuitRank;
use croupier_drivers::proto::ShoeCodec;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| common::check(ShoeCodec::Ascii(AsciiSuitRank::default().codec()), data));
