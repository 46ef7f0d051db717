//! The three wire dialects, each as a `tokio_util` codec.
//!
//! Decoders never fail on bad input: a garbled or unknown frame is yielded as a
//! [`Fault`](crate::event::Fault) carrying the bytes, and decoding resumes at the next
//! delimiter. The only decoder errors are I/O errors from below.

pub mod ascii;
pub mod barcode;
pub mod line;
mod split;
pub mod v1;

#[cfg(test)]
mod tests;
