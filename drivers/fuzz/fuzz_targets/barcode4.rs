#![no_main]
//! Fuzzes the `barcode4` decoder: see common.rs for the invariants.

use croupier_drivers::proto::barcode::Barcode4;
use croupier_drivers::proto::ShoeCodec;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| common::check(ShoeCodec::Barcode(Barcode4.codec()), data));
