#![allow(dead_code)] // each accessibility test uses its part
//! What a keyboard and a screen reader see of a page, for the accessibility tests: keys
//! pressed through the browser's input pipeline (`Input.dispatchKeyEvent`: Tab, Shift+Tab,
//! Enter, Space, arrows — never a tap, never a click from script), the accessibility tree
//! as Chromium gives it to screen readers (`Accessibility.*`: the focused node's role and
//! name, a live region's politeness and text), and a recorder of every text the page's
//! live regions took, in order (what a screen reader would have said).

use super::cdp::Page;
use serde_json::json;
use std::time::Duration;

/// A key as CDP's `Input.dispatchKeyEvent` takes it: `key`, `code`, Windows virtual key
/// code and the text it types (none for Tab and the arrows).
fn key_spec(name: &str) -> (&'static str, &'static str, u32, &'static str) {
    match name {
        "Tab" => ("Tab", "Tab", 9, ""),
        "Enter" => ("Enter", "Enter", 13, "\r"),
        "Space" => (" ", "Space", 32, " "),
        "ArrowDown" => ("ArrowDown", "ArrowDown", 40, ""),
        "ArrowUp" => ("ArrowUp", "ArrowUp", 38, ""),
        "ArrowLeft" => ("ArrowLeft", "ArrowLeft", 37, ""),
        "ArrowRight" => ("ArrowRight", "ArrowRight", 39, ""),
        other => panic!("no such key in the tests: {other}"),
    }
}

/// Presses and releases `name` (with Shift when `shift`), as a keyboard does.
pub async fn press(page: &Page, name: &str, shift: bool) {
    let (key, code, vk, text) = key_spec(name);
    let modifiers = if shift { 8 } else { 0 };
    let mut down = json!({"type": if text.is_empty() { "rawKeyDown" } else { "keyDown" },
        "key": key, "code": code, "windowsVirtualKeyCode": vk, "modifiers": modifiers});
    if !text.is_empty() {
        down["text"] = json!(text);
        down["unmodifiedText"] = json!(text);
    }
    page.call("Input.dispatchKeyEvent", down).await;
    page.call(
        "Input.dispatchKeyEvent",
        json!({"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk, "modifiers": modifiers}),
    )
    .await;
}

/// Presses Tab (Shift+Tab when `back`) until the focus is on `selector`; panics after 60
/// presses. Answers how many it took.
pub async fn tab_to(page: &Page, selector: &str, back: bool) -> usize {
    let s = serde_json::to_string(selector).expect("json");
    let on = format!("(() => {{ const e = document.querySelector({s}); return !!e && document.activeElement === e; }})()");
    for n in 0..60 {
        if page.eval(&on).await == json!(true) {
            return n;
        }
        press(page, "Tab", back).await;
    }
    let at = page.eval(FOCUS_DESCRIBED).await;
    panic!(
        "60 presses of {} did not reach {selector}; the focus is on {at}",
        if back { "Shift+Tab" } else { "Tab" }
    );
}

/// The focused element described (tag, id, data-action, text), for messages.
pub const FOCUS_DESCRIBED: &str = "(() => { const e = document.activeElement; if (!e) return 'nothing'; \
    return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.dataset && e.dataset.action ? '[data-action=' + e.dataset.action + ']' : '') \
      + ' \"' + (e.innerText || '').trim().slice(0, 40) + '\"'; })()";

/// The node the accessibility tree has focused: (role, name), as a screen reader announces
/// it.
pub async fn focused(page: &Page) -> (String, String) {
    let tree = page.call("Accessibility.getFullAXTree", json!({})).await;
    let nodes = tree["nodes"].as_array().cloned().unwrap_or_default();
    // The document is focused too: the focused node is the innermost, the last in the
    // tree's order.
    let node = nodes
        .iter()
        .rfind(|n| {
            n["properties"].as_array().is_some_and(|ps| {
                ps.iter()
                    .any(|p| p["name"] == "focused" && p["value"]["value"] == json!(true))
            })
        })
        .unwrap_or_else(|| panic!("no focused node in the accessibility tree"));
    (
        node["role"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        node["name"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

/// A live region as the accessibility tree has it: its politeness (`polite`,
/// `assertive`) and the text of its static text nodes.
pub async fn live_region(page: &Page, selector: &str) -> (String, String) {
    let s = serde_json::to_string(selector).expect("json");
    let found = page
        .call(
            "Runtime.evaluate",
            json!({"expression": format!("document.querySelector({s})")}),
        )
        .await;
    let object = found["result"]["objectId"]
        .as_str()
        .unwrap_or_else(|| panic!("no {selector} on the page"))
        .to_string();
    let own = page
        .call(
            "Accessibility.getPartialAXTree",
            json!({"objectId": object, "fetchRelatives": false}),
        )
        .await;
    let live = own["nodes"]
        .as_array()
        .and_then(|ns| ns.first())
        .and_then(|n| n["properties"].as_array())
        .and_then(|ps| ps.iter().find(|p| p["name"] == "live"))
        .and_then(|p| p["value"]["value"].as_str())
        .unwrap_or_default()
        .to_string();
    let texts = page
        .call(
            "Accessibility.queryAXTree",
            json!({"objectId": object, "role": "StaticText"}),
        )
        .await;
    let text = texts["nodes"]
        .as_array()
        .map(|ns| {
            ns.iter()
                .filter_map(|n| n["name"]["value"].as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    (live, text)
}

/// Starts recording, on `page` as it stands, every text its live regions (`[aria-live]`)
/// take: `window.__said`, `[politeness, text]` in order. A text that did not change is
/// not recorded (a screen reader does not hear it again).
pub async fn record_live(page: &Page) {
    page.eval(
        "(() => { window.__said = []; const last = new Map(); \
         const look = () => { for (const r of document.querySelectorAll('[aria-live]')) { \
           const text = r.textContent.trim(); \
           if (text && last.get(r.id) !== text) { last.set(r.id, text); window.__said.push([r.getAttribute('aria-live'), text]); } } }; \
         new MutationObserver(look).observe(document, {subtree: true, childList: true, characterData: true}); look(); })()",
    )
    .await;
}

/// Everything the live regions said since [`record_live`]: `(politeness, text)`.
pub async fn said(page: &Page) -> Vec<(String, String)> {
    serde_json::from_value::<Vec<(String, String)>>(page.eval("window.__said").await)
        .expect("the recorder's list")
}

/// Waits until a live region of `politeness` has said `text` (one announcement, or part
/// of one said together); panics with everything said after `limit`.
pub async fn wait_said(page: &Page, politeness: &str, text: &str, limit: Duration) {
    wait_said_one_of(page, politeness, &[text.to_string()], limit).await;
}

/// [`wait_said`] for any one of `texts` (what a page may say in one of several true ways).
pub async fn wait_said_one_of(page: &Page, politeness: &str, texts: &[String], limit: Duration) {
    let start = std::time::Instant::now();
    loop {
        let all = said(page).await;
        let heard = |t: &String| texts.iter().any(|text| t.contains(text.as_str()));
        if all.iter().any(|(p, t)| p == politeness && heard(t)) {
            return;
        }
        if start.elapsed() > limit {
            let shows = page.eval("document.body.innerText").await;
            let at = page.eval(FOCUS_DESCRIBED).await;
            panic!("waited {limit:?} for the {politeness} live region to say one of {texts:?}; it said:\n{all:#?}\nthe page shows (focus on {at}):\n{shows}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A simple message of the player's catalogue `play-LANG.ftl` (one line, its placeables
/// filled from `args`), read from the file the page reads, so a test compares with the
/// catalogue's words, not with a copy.
pub fn ftl(lang: &str, id: &str, args: &[(&str, &str)]) -> String {
    let path = format!("{}/dealer-ui/play-{lang}.ftl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the catalogue");
    let prefix = format!("{id} = ");
    let line = text
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{id} is not a one-line message of {path}"));
    let mut out = line[prefix.len()..].to_string();
    for (k, v) in args {
        out = out.replace(&format!("{{ ${k} }}"), v);
    }
    out
}
