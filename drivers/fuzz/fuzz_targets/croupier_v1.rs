#![no_main]
//! Fuzzes the `croupier-v1` decoder: see common.rs for the invariants.

use croupier_drivers::proto::v1::V1Codec;
use croupier_drivers::proto::ShoeCodec;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| common::check(ShoeCodec::V1(V1Codec::new()), data));
