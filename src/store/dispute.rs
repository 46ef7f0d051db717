//! The dispute vocabulary the event log records: who raised a dispute ([`Origin`]) and
//! what a supervisor decided ([`Resolution`]). The table (`table::dispute`) applies them;
//! they live here, below it, because the log's rows (`Record::Dispute`, `Record::Resolve`)
//! hold them.

use crate::cards::Card;
use crate::engine::Place;
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::ObjectBuilder;

/// Who raised a dispute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The dealer, on behalf of a seated player (or on their own account).
    Dealer,
    /// A player, with the dispute token of their seat and round.
    Player,
    /// A supervisor.
    Supervisor,
    /// An alarm (a refused card, a device fault): every alarm opens a dispute.
    Alarm,
}

impl Origin {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Dealer => "dealer",
            Origin::Player => "player",
            Origin::Supervisor => "supervisor",
            Origin::Alarm => "alarm",
        }
    }
}

/// What a supervisor decides about a dispute. Cards are named by their position among the
/// round's cards (0-based, in the order they came out of the shoe, the cards held during
/// the halt last) *and* their code, so a decision taken on a stale screen is refused rather
/// than applied to the wrong card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Resolution {
    /// The dispute is unfounded: play continues (held cards are then played in order).
    Reject,
    /// A misread or exposed card is taken out of play: it becomes a burn card and the next
    /// card takes its place.
    Void {
        /// Its position among the round's cards.
        #[schema(maximum = 1000)]
        index: usize,
        /// Its code, as the screen showed it.
        #[schema(value_type = String, example = "7H", pattern = "^(10|[2-9TJQKA])[CDHS]$")]
        card: Card,
    },
    /// A misread card's identity is corrected.
    Correct {
        /// Its position among the round's cards.
        #[schema(maximum = 1000)]
        index: usize,
        /// The code that was read.
        #[schema(value_type = String, example = "7H", pattern = "^(10|[2-9TJQKA])[CDHS]$")]
        card: Card,
        /// The card it really is.
        #[schema(value_type = String, example = "TS", pattern = "^(10|[2-9TJQKA])[CDHS]$")]
        to: Card,
    },
    /// A card dealt out of order goes to the hand it physically went to: it is re-dealt at
    /// the point of the round nearest its original one where the rules send it there.
    Move {
        /// Its position among the round's cards.
        #[schema(maximum = 1000)]
        index: usize,
        /// Its code.
        #[schema(value_type = String, example = "7H", pattern = "^(10|[2-9TJQKA])[CDHS]$")]
        card: Card,
        /// Where it really went.
        #[schema(schema_with = place_schema)]
        to: Place,
    },
    /// The last decision of the round is taken back (the dealer pressed the wrong button).
    UndoDecision,
    /// The round is cancelled: every bet comes back, once.
    Cancel,
}

impl Resolution {
    /// The wire name of the operation.
    pub fn name(&self) -> &'static str {
        match self {
            Resolution::Reject => "reject",
            Resolution::Void { .. } => "void",
            Resolution::Correct { .. } => "correct",
            Resolution::Move { .. } => "move",
            Resolution::UndoDecision => "undo_decision",
            Resolution::Cancel => "cancel",
        }
    }

    /// Whether the two-person rule (when configured) applies: a cancellation or a card
    /// correction must be confirmed by another supervisor than the one who proposed it.
    pub fn needs_second_person(&self) -> bool {
        matches!(self, Resolution::Cancel | Resolution::Correct { .. })
    }
}

/// The schema of an `engine::Place`: `"dealer"`, `"burn"` or `{"hand": {"seat", "hand"}}`.
pub fn place_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{
        AdditionalProperties, KnownFormat, OneOfBuilder, SchemaFormat, Type,
    };
    let small = |what: &str| {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int32)))
            .minimum(Some(0))
            .maximum(Some(255))
            .description(Some(what))
    };
    let hand = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("seat", small("The seat"))
        .required("seat")
        .property("hand", small("The hand (0 unless split)"))
        .required("hand")
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(["dealer", "burn"])),
        )
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .property("hand", hand)
                .required("hand")
                .additional_properties(Some(AdditionalProperties::FreeForm(false))),
        )
        .description(Some(
            r#""dealer", "burn", or {"hand": {"seat": N, "hand": N}} (hand 0 unless split)"#,
        ))
        .build()
        .into()
}
