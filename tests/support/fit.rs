#![allow(dead_code)] // each browser test uses its part
//! Whether a page fits its screen, measured in the browser (`support/layout.js`) and by
//! axe-core (`support/axe/axe.min.js`): the checks the panel's, the alarm's and the dispute
//! screens' tests share. Each call injects what the page lacks, lets the layout settle,
//! saves a screenshot and returns the problems found, each prefixed with the shot's name.

use super::cdp::{artifacts, Page};
use serde_json::json;

const LAYOUT_JS: &str = include_str!("layout.js");

/// The panel's header at width `w`: the table's name gives way first on the 7" kiosk;
/// from 1280 px on it shows whole.
pub async fn panel_header(page: &Page, shot: &str, w: u32) -> Vec<String> {
    if w < 1280 {
        return Vec::new();
    }
    let cut = page
        .eval("(() => { const n = document.querySelector('header .name'); return n && n.scrollWidth > n.clientWidth + 1 ? n.innerText : null; })()")
        .await;
    cut.as_str()
        .map(|name| {
            vec![format!(
                "{shot}: the header cuts the table's name ({name:?})"
            )]
        })
        .unwrap_or_default()
}

/// The dealer panel's sizes: the 7" kiosk and a larger touch screen.
pub const PANEL: [(u32, u32); 2] = [(800, 480), (1280, 800)];

/// Injects the layout checks once per page load (axe-core comes with
/// `Page::axe_violations`).
pub async fn inject(page: &Page) {
    let have = page
        .eval("typeof window.panelControls === 'function'")
        .await;
    if have != json!(true) {
        page.eval(LAYOUT_JS).await;
    }
}

/// The page at its current size: the screenshot `shot`.png in the artifacts, then every
/// element inside the viewport and its box, cards readable, text at least `min_font` px
/// (0: unchecked), with `controls` every control on screen, uncovered and overlapping none,
/// and no axe-core violation of the `impacts` given.
pub async fn check(
    page: &Page,
    shot: &str,
    min_font: u32,
    controls: bool,
    impacts: &[&str],
) -> Vec<String> {
    inject(page).await;
    // Let a resize settle (layout and a frame).
    page.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        .await;
    page.screenshot(&artifacts().join(format!("{shot}.png")))
        .await;
    let mut problems: Vec<String> = serde_json::from_value(
        page.eval(&format!("window.layoutProblems({min_font})"))
            .await,
    )
    .expect("a list");
    if controls {
        let c = page.eval("window.panelControls()").await;
        println!(
            "{shot}: {} controls, the lowest ends at {} px",
            c["controls"], c["lowest"]
        );
        problems
            .extend(serde_json::from_value::<Vec<String>>(c["problems"].clone()).expect("a list"));
    }
    // Moderate and worse from axe-core, narrowed to `impacts` (each reads `id (impact): …`).
    let axe: Vec<String> = serde_json::from_value(page.axe_violations().await).expect("a list");
    problems.extend(
        axe.into_iter()
            .filter(|v| impacts.iter().any(|i| v.contains(&format!(" ({i}): "))))
            .map(|v| format!("axe: {v}")),
    );
    problems
        .into_iter()
        .map(|p| format!("{shot}: {p}"))
        .collect()
}

/// Moderate and worse: what the staff's screens must be free of.
pub const MODERATE: [&str; 3] = ["moderate", "serious", "critical"];

/// The panel (or a screen on it) at both its sizes, named `name`; the page is left at
/// 800×480.
pub async fn panel_at_both_sizes(page: &Page, name: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (w, h) in PANEL {
        page.resize(w, h).await;
        problems.extend(check(page, &format!("{name}-{w}x{h}"), 14, true, &MODERATE).await);
        problems.extend(panel_header(page, &format!("{name}-{w}x{h}"), w).await);
    }
    page.resize(800, 480).await;
    problems
}
