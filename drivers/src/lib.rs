//! croupier's hardware side: the card vocabulary, the shoe's wire protocols, the dealer's
//! button box, and the simulators that stand in for them in demos and tests.

pub mod card;
