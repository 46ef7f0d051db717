//! Game math: what each bet returns. `paytable` computes the exact return of every side bet
//! (and insurance) by enumerating the shoe's composition, through the engine's own side-bet
//! evaluators; nothing here re-states a pay rule. `simulate` plays rounds through the engine
//! with the basic strategy `strategy` derives for the variant's rules; a common draw
//! (Multi-hand) is played by `common_draw`, which `simulate` dispatches to.

pub mod common_draw;
pub mod paytable;
pub mod simulate;
pub mod strategy;

pub use paytable::{
    insurance_table, side_bet_table, variant_tables, warnings, BetTable, Line, MathError,
    VariantTables,
};
