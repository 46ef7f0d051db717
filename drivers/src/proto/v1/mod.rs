//! `croupier-v1`, the project's open shoe protocol; the normative text is
//! `drivers/PROTOCOL.md`.
//!
//! [`frame`] is the frame layout, [`codec`] the byte-stuffed framing on the wire,
//! [`host`] the host's half of the link rules (ACK/NAK, duplicates) and [`shoe`] the
//! shoe's half (sequencing, retransmit), which the simulator runs.

pub mod codec;
pub mod frame;
pub mod host;
pub mod shoe;

pub use codec::V1Codec;
pub use frame::{Body, Frame, LampState};
