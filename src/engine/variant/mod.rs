//! A game variant's rules as data, read from `config/variants/*.toml`.
//!
//! Every rule of the rule sheets is a named setting here; the engine has no per-game
//! code paths. Each section of the file maps to one struct below, and the doc comment of
//! each field says which rule it is. Where a sheet is ambiguous the choice is a setting,
//! and `config/variants/README.md` records what the shipped files chose and why.

mod load;
mod settings;

pub use load::{VariantError, BUILT_IN};
pub use settings::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_variant_loads() {
        for (stem, _) in BUILT_IN {
            let v = Variant::built_in(stem).expect("listed");
            assert!(v.is_ok(), "{stem}: {v:?}");
        }
    }

    fn deluxe_text() -> &'static str {
        BUILT_IN
            .iter()
            .find(|(n, _)| *n == "deluxe")
            .expect("shipped")
            .1
    }

    #[test]
    fn unknown_key_is_refused_with_its_name() {
        let text = deluxe_text().replace("[dealer]", "[dealer]\nhits_on = 16");
        let err = Variant::from_toml("x.toml", &text).expect_err("unknown key");
        let msg = err.to_string();
        assert!(msg.starts_with("x.toml: "), "{msg}");
        assert!(msg.contains("hits_on"), "{msg}");
    }

    #[test]
    fn inconsistent_settings_name_file_and_key() {
        let text = deluxe_text().replace("decks = 8", "decks = 0");
        let err = Variant::from_toml("d.toml", &text).expect_err("zero decks");
        assert_eq!(
            err,
            VariantError::Invalid {
                file: "d.toml".into(),
                key: "shoe.decks".into(),
                reason: "must be between 1 and 16".into()
            }
        );
    }

    #[test]
    fn play_behind_with_resplits_is_refused() {
        // A follower short at a split drops its follow for the split hands: one split only.
        let text = deluxe_text().replace("max_hands = 2", "max_hands = 3");
        let err = Variant::from_toml("d.toml", &text).expect_err("re-splits behind");
        assert!(
            err.to_string().starts_with("d.toml: split.max_hands: "),
            "{err}"
        );
        let text = text.replace("play_behind = true", "play_behind = false");
        assert!(
            Variant::from_toml("d.toml", &text).is_ok(),
            "without play behind"
        );
    }

    #[test]
    fn funds_settings_default_to_refusing_and_need_a_bet_unit() {
        let infor6 = Variant::built_in("infor6")
            .expect("shipped")
            .expect("valid");
        assert_eq!(infor6.funds, FundsRules::default());
        assert_eq!(infor6.funds.bet_unit, 1);
        let text = deluxe_text().replace("bet_unit = 1 ", "bet_unit = 0 ");
        let err = Variant::from_toml("d.toml", &text).expect_err("unit 0");
        assert!(err.to_string().contains("funds.bet_unit"), "{err}");
    }

    #[test]
    fn side_bet_dependencies_ranks_and_aliases_are_checked() {
        let base = deluxe_text();
        let extra = |block: &str| format!("{base}\n{block}");
        let top = "[[side_bets]]\nname = \"top\"\nkind = \"twenty_one_plus_three\"\nlimits = { min = 1, max = 10 }\nrequires_bet = \"21+3\"\npays = { straight_flush = \"180:1\" }\n";
        let err = Variant::from_toml("v.toml", &extra(top)).expect_err("21+3 missing");
        assert!(
            err.to_string().contains("side_bets[1].requires_bet"),
            "{err}"
        );
        let kk = "[[side_bets]]\nname = \"kk\"\nkind = \"rank_twenty\"\nlimits = { min = 1, max = 10 }\npays = { any_20 = \"4:1\" }\n";
        let err = Variant::from_toml("v.toml", &extra(kk)).expect_err("no rank");
        assert!(err.to_string().contains("side_bets[1].rank"), "{err}");
        let kk_rank = kk.replace("pays", "rank = \"K\"\npays");
        let v = Variant::from_toml("v.toml", &extra(&kk_rank)).expect("valid with a rank");
        assert_eq!(v.side_bets[1].rank_value(), Some(crate::cards::Rank::King));
        let sevens = "[[side_bets]]\nname = \"sevens\"\naliases = [\"7s\", \"pair\"]\nkind = \"sevens\"\nlimits = { min = 1, max = 10 }\npays = { \"777\" = \"100:1\" }\n";
        let err = Variant::from_toml("v.toml", &extra(sevens)).expect_err("alias clash");
        assert!(err.to_string().contains("\"pair\" is used twice"), "{err}");
        let ok =
            Variant::from_toml("v.toml", &extra(&sevens.replace(", \"pair\"", ""))).expect("valid");
        assert_eq!(ok.side_bet_index("7s"), Some(1));
    }

    #[test]
    fn declared_rtp_is_a_percentage() {
        for bad in ["0.0", "-5.0", "1000.0", "nan"] {
            let text =
                deluxe_text().replace("kind = \"pair\"", &format!("kind = \"pair\"\nrtp = {bad}"));
            let err = Variant::from_toml("d.toml", &text).expect_err(bad);
            assert!(err.to_string().contains("side_bets[0].rtp"), "{bad}: {err}");
        }
        let text = deluxe_text().replace("kind = \"pair\"", "kind = \"pair\"\nrtp = 97.12");
        let v = Variant::from_toml("d.toml", &text).expect("valid");
        assert_eq!(v.side_bets[0].rtp, Some(97.12));
    }

    #[test]
    fn settings_change_by_dotted_key_and_are_validated() {
        let c21 = Variant::built_in("caribbean21")
            .expect("shipped")
            .expect("valid");
        assert_eq!(c21.insurance.won_returns, InsuranceWin::PaysOnly);
        assert_eq!(c21.insurance.won(50), 450);
        let other = c21
            .with_settings(
                "s.json",
                &[("insurance.won_returns".into(), "stake_and_pays".into())],
            )
            .expect("valid");
        assert_eq!(other.insurance.won(50), 500);
        assert_eq!(
            Variant {
                insurance: c21.insurance.clone(),
                ..other.clone()
            },
            c21
        );
        let typo = c21.with_settings("s.json", &[("insurance.won".into(), "x".into())]);
        assert!(typo.expect_err("unknown key").to_string().contains("won"));
        let bad = c21.with_settings("s.json", &[("shoe.decks".into(), 0.into())]);
        assert!(bad
            .expect_err("zero decks")
            .to_string()
            .contains("shoe.decks"));
        let nowhere = c21.with_settings("s.json", &[("nosuch.key".into(), 1.into())]);
        assert!(nowhere
            .expect_err("no section")
            .to_string()
            .contains("nosuch.key"));
    }

    #[test]
    fn pay_table_must_name_exactly_the_family_combinations() {
        let text = deluxe_text().replace("mixed_pair", "mixd_pair");
        let err = Variant::from_toml("d.toml", &text).expect_err("typo");
        assert!(
            err.to_string().contains("side_bets[0].pays.mixd_pair"),
            "{err}"
        );
    }
}
