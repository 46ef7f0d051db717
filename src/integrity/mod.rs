//! What a player or a supervisor can check about the table beyond the rules: whether each
//! shoe was shuffled (`shoe`: pure statistics; `riffle`: the shuffle model they are
//! measured with).

pub mod riffle;
pub mod shoe;
