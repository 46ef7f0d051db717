//! The card shoe as the table service sees it: a stream of [`ShoeEvent`]s and a lamp.

pub mod config;
