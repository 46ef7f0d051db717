//! The configuration shown in drivers/README.md parses, and is the defaults it claims.

use croupier_drivers::buttons::ButtonsConfig;
use croupier_drivers::shoe::config::ShoeConfig;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    shoe: ShoeConfig,
    buttons: ButtonsConfig,
}

#[test]
fn readme_config_example_is_valid_and_is_the_defaults() {
    let readme = include_str!("../README.md");
    let start = readme.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let end = start + readme[start..].find("```").expect("closed block");
    let table: Table = toml::from_str(&readme[start..end]).expect("README config parses");
    table.shoe.validate().expect("valid shoe config");
    table.buttons.validate().expect("valid buttons config");
    assert_eq!(table.shoe, ShoeConfig::default());
    assert_eq!(table.buttons, ButtonsConfig::default());
}
