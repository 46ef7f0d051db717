//! Game math: what each bet returns. `paytable` computes the exact return of every side bet
//! (and insurance) by enumerating the shoe's composition, through the engine's own side-bet
//! evaluators; nothing here re-states a pay rule.

pub mod paytable;

pub use paytable::{
    insurance_table, side_bet_table, variant_tables, warnings, BetTable, Line, MathError,
    VariantTables,
};
