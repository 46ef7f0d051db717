//! A minimal Chrome DevTools Protocol client for the browser tests: starts Debian's
//! `chromium` headless on a free debugging port, opens a page, evaluates JavaScript, taps
//! at an element's centre with real pointer events, takes screenshots. Every wait is
//! bounded.

// The skip helper, declared once at the tests' root (tests/it/main.rs).
use crate::skip;

use base64::Engine as _;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// Where Debian installs it.
pub const CHROMIUM: &str = "/usr/bin/chromium";

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

/// A running headless Chromium.
pub struct Browser {
    child: Child,
    conn: Conn,
    /// Its profile, and its temporary files (`TMPDIR`): removed on drop, after chromium
    /// is killed, trying again while its helpers (which end with it) still write there.
    /// Chromium stays in the test's process group, so a test stopped by a timeout takes
    /// it along.
    profile: Option<tempfile::TempDir>,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        // Until it has exited: a live browser would write its profile again after the
        // removal. Bounded: a drop must not hang a test.
        for _ in 0..100 {
            if !matches!(self.child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let Some(profile) = self.profile.take() else {
            return;
        };
        let path = profile.keep();
        // Killed processes may still be closing files there for a moment.
        for _ in 0..20 {
            if std::fs::remove_dir_all(&path).is_ok() || !path.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// One page (tab), attached with a flat session.
pub struct Page {
    conn: Conn,
    session: String,
}

/// The DevTools connection, shared by the browser and its pages: commands go out, replies
/// come back to the command's id.
#[derive(Clone)]
struct Conn {
    out: mpsc::UnboundedSender<String>,
    pending: Pending,
    next: Arc<AtomicU64>,
}

impl Conn {
    /// Sends one command (in `session`, if any) and returns its result; panics on an error.
    async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.request(session, method, params)
            .await
            .unwrap_or_else(|err| panic!("{method}: {err}"))
    }

    /// Sends one command and returns its result, or the browser's error object.
    async fn request(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, Value> {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().expect("lock").insert(id, tx);
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.out
            .send(msg.to_string())
            .expect("browser connection open");
        let reply = tokio::time::timeout(Duration::from_secs(20), rx)
            .await
            .unwrap_or_else(|_| panic!("{method}: no answer from the browser in 20 s"))
            .expect("browser connection open");
        match reply.get("error") {
            Some(err) => Err(err.clone()),
            None => Ok(reply["result"].clone()),
        }
    }
}

/// Loads of one page tried before its failure is the test's ([`Page::goto`]).
const LOADS: u32 = 4;

/// How long one load may take: the tests' own steps' 30 s (a reload's wait was theirs
/// before [`Page::reload`] waited for the load itself).
const LOAD_WITHIN: Duration = Duration::from_secs(30);

/// Notes, in a page, the first of its files (a script, a style sheet, an image) that did
/// not load: an element's load error reaches the window in the capture phase only.
const LOAD_WATCH: &str = "window.addEventListener('error', e => { const t = e.target; \
    if (t && t !== window && !window.__cdpLoadFailed) window.__cdpLoadFailed = t.src || t.href || t.tagName; }, true);";

/// Whether a command failed only because the page was navigating (a reload under way):
/// the document it was sent to is gone, and the next one answers.
fn navigating(err: &Value) -> bool {
    let message = err["message"].as_str().unwrap_or_default();
    message.contains("navigated or closed")
        || message.contains("Execution context was destroyed")
        || message.contains("Cannot find context")
}

impl Browser {
    /// Starts chromium.
    pub async fn launch() -> Browser {
        let profile = tempfile::tempdir().expect("profile dir");
        let mut child = Command::new(CHROMIUM)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
                "--window-size=1280,800",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            // Its own singleton and scratch files go with the profile, not in /tmp.
            .env("TMPDIR", profile.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start chromium");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let url = tokio::time::timeout(Duration::from_secs(30), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(at) = line.find("ws://") {
                    return line[at..].trim().to_string();
                }
            }
            panic!("chromium exited without a DevTools address")
        })
        .await
        .expect("chromium prints its DevTools address within 30 s");
        // Keep draining stderr so chromium never blocks on it.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (ws, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("connect to DevTools");
        let (mut sink, mut stream) = ws.split();
        let (out, mut rx) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(text) = rx.recv().await {
                if sink.send(Message::Text(text.into())).await.is_err() {
                    return;
                }
            }
        });
        let pending: Pending = Arc::default();
        let p = Arc::clone(&pending);
        tokio::spawn(async move {
            while let Some(Ok(msg)) = stream.next().await {
                let Message::Text(text) = msg else { continue };
                let Ok(v) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                if let Some(id) = v.get("id").and_then(Value::as_u64) {
                    if let Some(tx) = p.lock().expect("lock").remove(&id) {
                        let _ = tx.send(v);
                    }
                }
            }
        });
        Browser {
            child,
            conn: Conn {
                out,
                pending,
                next: Arc::new(AtomicU64::new(1)),
            },
            profile: Some(profile),
        }
    }

    /// Opens `url` in a new page of `width`×`height` CSS pixels.
    pub async fn page(&self, url: &str, width: u32, height: u32) -> Page {
        let target = self
            .conn
            .call(None, "Target.createTarget", json!({"url": "about:blank"}))
            .await;
        let attached = self
            .conn
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target["targetId"], "flatten": true}),
            )
            .await;
        let page = Page {
            conn: self.conn.clone(),
            session: attached["sessionId"].as_str().expect("session").to_string(),
        };
        page.resize(width, height).await;
        page.call("Page.enable", json!({})).await;
        page.call(
            "Emulation.setFocusEmulationEnabled",
            json!({"enabled": true}),
        )
        .await;
        page.call(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": LOAD_WATCH}),
        )
        .await;
        page.goto(url).await;
        page
    }

    /// Stops chromium.
    pub async fn close(mut self) {
        let _ = self.child.kill().await;
    }
}

impl Page {
    /// Loads `url` in this page and waits until it has loaded, loading it again (up to
    /// four times) when the load or one of the page's own files failed: a load the host's
    /// interfaces change under (another test's network made or removed:
    /// tests/support/netns.rs) fails with `ERR_NETWORK_CHANGED`, and a script that fails
    /// so leaves the page blank, where a person would load it again.
    pub async fn goto(&self, url: &str) {
        self.load("Page.navigate", json!({"url": url}), url).await;
    }

    /// Reloads the page, as [`Page::goto`] loads one.
    pub async fn reload(&self) {
        self.load("Page.reload", json!({}), "the reload").await;
    }

    async fn load(&self, method: &str, params: Value, what: &str) {
        for attempt in 1..=LOADS {
            // Marks the document being left, so the wait below is for the new one.
            let _ = self
                .conn
                .request(
                    Some(&self.session),
                    "Runtime.evaluate",
                    json!({"expression": "window.__cdpLeft = true", "returnByValue": true}),
                )
                .await;
            let went = self.call(method, params.clone()).await;
            let failed = went["errorText"].as_str().unwrap_or_default().to_string();
            if failed.is_empty() {
                self.wait_for(
                    "!window.__cdpLeft && document.readyState === 'complete'",
                    LOAD_WITHIN,
                )
                .await;
                let lost = self.eval("window.__cdpLoadFailed || ''").await;
                let lost = lost.as_str().unwrap_or_default();
                if lost.is_empty() {
                    return;
                }
                assert!(
                    attempt < LOADS,
                    "{what}: its file {lost} did not load, {LOADS} times"
                );
                eprintln!("{what}: its file {lost} did not load; loading it again");
            } else {
                assert!(attempt < LOADS, "{what}: {failed}, {LOADS} times");
                eprintln!("{what}: {failed}; loading it again");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Sends one command in this page's session.
    pub async fn call(&self, method: &str, params: Value) -> Value {
        self.conn.call(Some(&self.session), method, params).await
    }

    /// Sets the viewport, and waits until the page has laid out at it.
    pub async fn resize(&self, width: u32, height: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await;
        // Returns once the page has laid out at the new size and its resize handlers have
        // run (the player's page fits its seats then): two frames. Measured sooner, a page
        // can still be at the last size's layout (seen under load in CI).
        self.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            .await;
    }

    /// Evaluates `expr` and returns its value (JSON).
    pub async fn eval(&self, expr: &str) -> Value {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
            )
            .await;
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expr}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Waits until `expr` is truthy; panics with `expr` and the page's text after `limit`.
    /// A page that is navigating (just reloaded) is waited out, not taken for an error.
    pub async fn wait_for(&self, expr: &str, limit: Duration) {
        let start = std::time::Instant::now();
        loop {
            let reply = self
                .conn
                .request(
                    Some(&self.session),
                    "Runtime.evaluate",
                    json!({"expression": format!("!!({expr})"), "returnByValue": true}),
                )
                .await;
            match reply {
                Ok(r) if r.get("exceptionDetails").is_some() => panic!("{expr}: {r}"),
                Ok(r) if r["result"]["value"] == json!(true) => return,
                Ok(_) => {}
                Err(err) if navigating(&err) => {}
                Err(err) => panic!("Runtime.evaluate: {err}"),
            }
            if start.elapsed() > limit {
                let text = self
                    .eval("document.body ? document.body.innerText : ''")
                    .await;
                panic!("waited {limit:?} for `{expr}`; the page shows:\n{text}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The trimmed text of the first element matching `selector` (empty if none).
    pub async fn text(&self, selector: &str) -> String {
        let s = serde_json::to_string(selector).expect("json");
        self.eval(&format!(
            "(document.querySelector({s}) || {{innerText: ''}}).innerText.trim()"
        ))
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
    }

    /// Taps the element: a pointer press and release at its centre, through the browser's
    /// input pipeline (an overlay on top would take the tap, as on the touch screen).
    pub async fn tap(&self, selector: &str) {
        self.tap_held(selector, std::time::Duration::ZERO).await;
    }

    /// Taps `selector` with the finger held down for `hold` between press and release, as
    /// a slow hand (or a loaded machine) does: the page may redraw meanwhile.
    ///
    /// A press is checked to land on what was looked at: when the page moved in the moment
    /// between the look and the press (a line appearing above, under load), the press is
    /// let go away from everything (so nothing is clicked) and the tap is tried again, at
    /// most three times, each miss printed — a page that keeps moving still fails. A
    /// release that brings no click to the target is printed too.
    #[allow(dead_code)]
    pub async fn tap_held(&self, selector: &str, hold: std::time::Duration) {
        let s = serde_json::to_string(selector).expect("json");
        for attempt in 1..=4 {
            let rect = self
                .eval(&format!(
                    "(() => {{ const e = document.querySelector({s}); if (!e) return null; \
                     e.scrollIntoView({{block: 'center', inline: 'center'}}); \
                     if (!window.__taps) {{ window.__taps = {{}}; \
                       for (const k of ['mousedown', 'mouseup', 'click']) addEventListener(k, (ev) => {{ window.__taps[k] = ev.target; }}, true); }} \
                     window.__taps.mousedown = null; window.__taps.mouseup = null; window.__taps.click = null; window.__tapWant = e; \
                     const r = e.getBoundingClientRect(); \
                     return {{x: r.x + r.width / 2, y: r.y + r.height / 2, disabled: !!e.disabled}}; }})()"
                ))
                .await;
            assert!(!rect.is_null(), "nothing to tap at {selector}");
            assert_eq!(rect["disabled"], json!(false), "{selector} is disabled");
            let at = |kind: &str, x: &Value, y: &Value| json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1});
            self.call(
                "Input.dispatchMouseEvent",
                at("mousePressed", &rect["x"], &rect["y"]),
            )
            .await;
            let pressed = self
                .eval(&format!(
                    "(() => {{ const d = window.__taps.mousedown, w = window.__tapWant, now = document.querySelector({s}); \
                     if (d && (w.contains(d) || (now && now.contains(d)))) return 'ok'; \
                     const say = (n) => n ? n.tagName.toLowerCase() + (n.id ? '#' + n.id : '') + (n.className ? '.' + String(n.className).split(' ').join('.') : '') + ' \"' + (n.innerText || '').slice(0, 30) + '\"' : 'nothing'; \
                     const r = now && now.getBoundingClientRect(); \
                     return 'the press landed on ' + say(d) + '; ' + {s} + ' is now ' + (r ? [r.left, r.top, r.right, r.bottom].map(Math.round).join(',') : 'gone'); }})()"
                ))
                .await;
            if pressed != json!("ok") {
                // Let go at the page's corner: the click, if any, goes to what both share
                // (the document), which acts on nothing.
                self.call(
                    "Input.dispatchMouseEvent",
                    at("mouseReleased", &json!(0), &json!(0)),
                )
                .await;
                eprintln!("tap {selector}, attempt {attempt}: {pressed}");
                assert!(attempt < 4, "tap {selector}: {pressed}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            if !hold.is_zero() {
                tokio::time::sleep(hold).await;
            }
            self.call(
                "Input.dispatchMouseEvent",
                at("mouseReleased", &rect["x"], &rect["y"]),
            )
            .await;
            let clicked = self
                .eval(&format!(
                    "(() => {{ const c = window.__taps.click, u = window.__taps.mouseup, w = window.__tapWant, now = document.querySelector({s}); \
                     if (c && (w.contains(c) || (!!now && now.contains(c)))) return 'ok'; \
                     const say = (n) => n ? n.tagName.toLowerCase() + (n.id ? '#' + n.id : '') + (n.className ? '.' + String(n.className).split(' ').join('.') : '') + (n.isConnected ? '' : ' (out of the document)') : 'nothing'; \
                     const r = w.getBoundingClientRect(); \
                     return 'released on ' + say(u) + ', clicked ' + say(c) + '; the pressed node ' + say(w) + (now === w ? '' : ' (no longer the one matched)') + ' at ' + [r.left, r.top, r.right, r.bottom].map(Math.round).join(',') + (w.disabled ? ', disabled' : ''); }})()"
                ))
                .await;
            if clicked != json!("ok") {
                eprintln!(
                    "tap {selector}: pressed at {},{}, but no click reached it: {clicked}",
                    rect["x"], rect["y"]
                );
            }
            return;
        }
    }

    /// Taps `selector` as it stands, without scrolling it into view: it must be wholly
    /// on screen and its centre must hit-test to it (nothing covering it), as a finger
    /// needs — the dealer's touch screen cannot scroll what it does not show.
    #[allow(dead_code)]
    pub async fn tap_in_view(&self, selector: &str) {
        let s = serde_json::to_string(selector).expect("json");
        let seen = self
            .eval(&format!(
                "(() => {{ const e = document.querySelector({s}); if (!e) return 'missing'; \
                 const r = e.getBoundingClientRect(); \
                 if (r.left < 0 || r.top < 0 || r.right > innerWidth || r.bottom > innerHeight) \
                   return 'off screen: ' + [r.left, r.top, r.right, r.bottom].map(Math.round).join(','); \
                 const h = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); \
                 return h && (h === e || e.contains(h)) ? 'ok' : 'covered'; }})()"
            ))
            .await;
        if seen != json!("ok") {
            let text = self
                .eval("document.body ? document.body.innerText : ''")
                .await;
            panic!("{selector} cannot be tapped where it is ({seen}); the page shows:\n{text}");
        }
        self.tap(selector).await;
    }

    /// axe-core's violations of impact moderate or higher on the page as it stands, each
    /// as `id (impact): help at targets`; axe-core (vendored, `support/axe/`) is injected
    /// first when the page lacks it.
    #[allow(dead_code)]
    pub async fn axe_violations(&self) -> Value {
        if self.eval("typeof window.axe").await != "object" {
            self.eval(include_str!("axe/axe.min.js")).await;
        }
        self.eval(
            "axe.run(document, {resultTypes: ['violations']}).then(r => r.violations \
             .filter(v => ['moderate', 'serious', 'critical'].includes(v.impact)) \
             .map(v => v.id + ' (' + v.impact + '): ' + v.help + ' at ' + \
               v.nodes.map(n => n.target.join(' ')).join(', ')))",
        )
        .await
    }

    /// `support/layout.js` `controlProblems(root)` after the next frame: controls inside
    /// `root` off-screen, clipped or overlapping, boxes overflowing (empty when right);
    /// the script is injected first when the page lacks it.
    #[allow(dead_code)]
    pub async fn control_problems(&self, root: &str) -> Value {
        if self.eval("typeof window.controlProblems").await != "function" {
            self.eval(include_str!("layout.js")).await;
        }
        let root = serde_json::to_string(root).expect("json");
        self.eval(&format!(
            "new Promise(r => requestAnimationFrame(() => r(controlProblems({root}))))"
        ))
        .await
    }

    /// Saves a PNG of the whole page to `path`, beyond the viewport (a page that scrolls:
    /// the pit page, for the guide).
    #[allow(dead_code)]
    pub async fn screenshot_full(&self, path: &Path) {
        self.call("Page.bringToFront", json!({})).await;
        let metrics = self.call("Page.getLayoutMetrics", json!({})).await;
        let size = &metrics["cssContentSize"];
        let r = self
            .call(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": true, "clip": {
                    "x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}}),
            )
            .await;
        let data = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("png data"))
            .expect("base64");
        std::fs::write(path, data).expect("write screenshot");
    }

    /// Saves a PNG screenshot of the viewport to `path`.
    pub async fn screenshot(&self, path: &Path) {
        // A page in the background renders no frames to capture.
        self.call("Page.bringToFront", json!({})).await;
        let r = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .await;
        let data = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("png data"))
            .expect("base64");
        std::fs::write(path, data).expect("write screenshot");
    }
}

/// Whether Debian's chromium is here: without it a browser test is skipped locally, and
/// fails under CI (`CI` set), where `.ci/run` installs it.
pub fn chromium_present() -> bool {
    if Path::new(CHROMIUM).exists() {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("CI: {CHROMIUM} is missing (.ci/run installs Debian's chromium)");
    }
    skip::skipped(format_args!(
        "{CHROMIUM} is not installed (apt-get install chromium)"
    ));
    false
}

/// Where screenshots go: `$CROUPIER_ARTIFACTS`, or `target/browser-artifacts/`.
pub fn artifacts() -> std::path::PathBuf {
    let dir = std::env::var_os("CROUPIER_ARTIFACTS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/browser-artifacts")
        });
    std::fs::create_dir_all(&dir).expect("artifacts dir");
    dir
}
