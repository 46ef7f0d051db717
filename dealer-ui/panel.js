// The dealer panel: a login screen until /api/me answers, then renders /ws/dealer and posts
// actions to the API. Every request carries the HttpOnly session cookie; a 401 anywhere
// (logout elsewhere, expiry, idle timeout, account disabled) brings the login back.
"use strict";
const { el, morph, renderDealer, renderSeats, renderShoe, liveSocket } = window.Table;

let view = null;
let conn = "connecting";
// Whether the view is fresh: false from a lost connection until the first state after the
// reconnect arrives. While stale, an overlay covers the panel and every control is off.
let fresh = false;
let toast = null;
let me = null;      // {badge, name, role} once logged in
let login = null;   // {badge, secret, field, error, busy} while the login screen shows
let socket = null;

// The system clock's sync state from /readyz (null until known). The Pi has no RTC: the
// table orders by sequence, but the dealer should know when the timestamps are off.
let clock = null;
const CLOCK_POLL_MS = 30000;

// Why the broker publisher stopped (readyz `publish.stopped`), null while it runs: the
// table plays on, but remote players and the floor see nothing until the operator acts.
let publishStopped = null;

async function pollClock() {
  try {
    const res = await fetch("/readyz", { cache: "no-store" });
    const ready = await res.json();
    const next = ready.clock || null;
    const stopped = (ready.publish && ready.publish.stopped) || null;
    const changed = JSON.stringify(next) !== JSON.stringify(clock) || stopped !== publishStopped;
    clock = next;
    publishStopped = stopped;
    window.clockStatus = clock;
    if (changed) render();
  } catch (e) { /* keep the last known state; the socket shows the connection */ }
}

function publishBanner() {
  if (!publishStopped) return null;
  return el("div", { id: "publish-stopped", class: "publish-stopped", role: "alert" },
    el("strong", {}, "Not published: "),
    "remote players and the floor see nothing of this table. The table plays on. Call the operator. ",
    el("span", { class: "why" }, publishStopped));
}
window.pollClock = pollClock;

function clockBadge() {
  if (!clock || clock.synchronised) return null;
  return el("span", { id: "clock", class: "clock unsync",
    title: "timestamps may be off; play is ordered by sequence and is not affected" }, "clock not synchronised");
}

// Posts an action; answers whether it was taken. A refusal shows on top of whatever
// screen is up (the dispute screen included), so its reason is never hidden behind it.
async function post(path, body) {
  try {
    const res = await fetch(path, { method: "POST", headers: { "content-type": "application/json" },
      body: body === undefined ? "" : JSON.stringify(body) });
    if (res.status === 401) { showLogin("Session ended: log in again"); return false; }
    if (!res.ok) {
      const j = await res.json().catch(() => ({}));
      showToast((j.error && (j.error.code + ": " + j.error.message)) || ("HTTP " + res.status));
      return false;
    }
    return true;
  } catch (e) { showToast("network: " + e.message); return false; }
}

function showToast(text) {
  toast = text;
  render();
  setTimeout(() => { if (toast === text) { toast = null; render(); } }, 4000);
}

const ACTIONS = ["stand", "double", "split", "surrender"];

function actionsPanel(v) {
  const d = v.decision;
  const box = el("div", { id: "actions", class: "actions" });
  if (v.insurance.length) {
    // Only the answers the engine takes from this seat are enabled (even money: a natural).
    const seat = v.insurance[0];
    const legal = v.insurance_allowed || [];
    const answer = (action, label) => el("button", { class: "btn", "data-action": action, disabled: !legal.includes(action),
      onclick: () => post("/api/decision", { seat, action }) }, label);
    box.append(el("div", { class: "prompt", id: "insurance" }, "Insurance? seat " + seat),
      answer("insurance", "Insure"), answer("no_insurance", "No insurance"), answer("even_money", "Even money"));
    return box;
  }
  const allowed = d ? d[2] : [];
  const seat = d ? d[0] : null;
  const remote = d && v.remote && v.remote.seats.includes(d[0]);
  box.append(el("div", { class: "prompt" }, d ? "Seat " + d[0] + ", hand " + (d[1] + 1) : "No decision due"));
  // A remote player decides from their page; a card they ask for shows as a banner.
  if (remote) box.append(el("div", { class: "hint", id: "remote-decides" }, "REMOTE: the player decides; deal only when asked"));
  if (v.simulated) {
    box.append(el("button", { class: "btn hit", "data-action": "hit", disabled: !d || !!remoteWaits(v),
      onclick: () => post("/api/sim/deal", { n: 1 }) }, "Hit (deal)"));
  } else if (!remote) {
    box.append(el("div", { class: "hint" }, "Hit = deal the next card"));
  }
  for (const a of ACTIONS) {
    box.append(el("button", { class: "btn", "data-action": a, disabled: !allowed.includes(a),
      onclick: () => post("/api/decision", { seat, action: a }) }, a[0].toUpperCase() + a.slice(1)));
  }
  return box;
}

function tableControls(v) {
  const t = v.table;
  const bar = el("div", { class: "controls" });
  const bets = v.expectation === "bets";
  if (bets && !t.betting.open) bar.append(el("button", { class: "btn wide", id: "open-betting", onclick: () => post("/api/betting/open") }, "Open betting"));
  if (t.betting.open) bar.append(el("button", { class: "btn wide", id: "close-betting", onclick: () => post("/api/betting/close") }, "Close betting · deal"));
  if (v.expectation === "shuffle") bar.append(el("button", { class: "btn wide", id: "new-shoe", onclick: () => post("/api/shuffle") }, "New shoe"));
  if (v.simulated && v.next.to && !v.decision) bar.append(el("button", { class: "btn wide", id: "deal", onclick: () => post("/api/sim/deal", { n: 1 }) }, "Deal a card"));
  const raise = window.Dispute.raiseControls(v, post, render);
  if (raise) bar.append(raise);
  return bar;
}

// --- remote play: the betting countdown, the decision timer, a card a remote player asked
// for (the table deals it from the shoe: only the dealer can). The times left are the
// server's (remaining_ms as the view was built); the panel counts down from the view's
// arrival, so the Pi's clock and this screen's never need to agree.
let receivedAt = Date.now();
const LOW_MS = 5000;

function leftMs(t) { return Math.max(0, t.remaining_ms - (Date.now() - receivedAt)); }
function leftText(t) { return Math.ceil(leftMs(t) / 1000) + " s"; }
function fillWidth(t) { return (t.length_ms ? Math.min(100, 100 * leftMs(t) / t.length_ms) : 0).toFixed(1) + "%"; }

function timerBox(id, t, label, who) {
  return el("div", { id, class: "timer" + (leftMs(t) <= LOW_MS ? " low" : ""), "data-seat": t.seat },
    el("span", { class: "what" }, label),
    el("strong", { id: id + "-left", class: "left" }, leftText(t)),
    el("span", { class: "who", id: id + "-who" }, who || ""),
    el("div", { class: "timer-bar" }, el("div", { class: "fill", id: id + "-fill", style: "width:" + fillWidth(t) })));
}

// "seat 4 ✓ · seat 6 …" and the players without a seat: who has bet so far.
function remoteBets(r) {
  const parts = r.seats.map((s) => "seat " + s + (r.bet.includes(s) ? " \u2713" : " \u2026"));
  if (r.unseated) parts.push(r.unseated_bet + "/" + r.unseated + " behind bet");
  return parts.length ? "remote: " + parts.join(" \u00b7 ") : "";
}

function remoteStrip(v) {
  const r = v.remote;
  if (!r) return null;
  const items = [];
  if (r.hit) {
    items.push(el("div", { id: "remote-hit", class: "remote-hit", role: "alert", "data-seat": r.hit },
      "DEAL A CARD TO SEAT " + r.hit + " (remote hit)"));
  }
  if (r.countdown && v.table.betting.open) items.push(timerBox("countdown", r.countdown, "Bets close in", remoteBets(r)));
  if (r.decision) {
    const d = r.decision;
    const label = d.seat ? "Seat " + d.seat + " (remote) decides"
      : JSON.stringify(v.expectation).includes("insurance") ? "Insurance (remote)" : "Remote players decide";
    items.push(timerBox("decision-timer", d, label, "then the table plays it"));
  }
  return items.length ? el("div", { id: "remote", class: "remote-strip" }, items) : null;
}

// The timers count down between views without a render (which would rebuild the panel).
function tickTimers() {
  const r = view && view.remote;
  if (!r) return;
  for (const [id, t] of [["countdown", r.countdown], ["decision-timer", r.decision]]) {
    const box = t && document.getElementById(id);
    if (!box) continue;
    document.getElementById(id + "-left").textContent = leftText(t);
    document.getElementById(id + "-fill").style.width = fillWidth(t);
    box.classList.toggle("low", leftMs(t) <= LOW_MS);
  }
}
setInterval(tickTimers, 250);

// The remote seat whose decision the table waits on while its player has not asked for a
// card (no card goes there now), or null.
function remoteWaits(v) {
  const d = v.decision, r = v.remote;
  return d && r && r.seats.includes(d[0]) && r.hit !== d[0] ? d[0] : null;
}

// A seat's marks: REMOTE on a remote player's seat, CARD on the one that asked for a card.
function remoteMarks(v, s) {
  const r = v.remote;
  if (!r || !r.seats.includes(s)) return null;
  const f = document.createDocumentFragment();
  f.append(el("span", { class: "remote-badge", "data-remote-seat": s }, "REMOTE"));
  if (r.hit === s) f.append(el("span", { class: "remote-badge asks", "data-asks": s }, "CARD!"));
  return f;
}

function alarmOverlay(v) {
  if (!v.alarm && !v.broken) return null;
  const a = v.alarm;
  return el("div", { id: "alarm", class: "alarm" },
    el("h1", {}, v.broken ? "OUT OF SERVICE" : "ALARM — table locked"),
    el("p", { class: "reason", id: "alarm-reason" }, v.broken || a.reason),
    a ? el("p", { class: "todo" }, "What to do: " + a.expected) : el("p", { class: "todo" }, "Repair or move the database and restart."),
    a && a.held.length ? el("p", {}, "Held: " + a.held.join(" ")) : null,
    a ? el("button", { class: "btn wide", id: "clear-alarm", onclick: () => {
      const reason = prompt("Why is it safe to go on? (a supervisor clears alarms)", "checked at the table");
      if (reason) post("/api/alarm/clear", { reason });
    } }, "Clear alarm") : null);
}

// --- login ---------------------------------------------------------------------------

function showLogin(error) {
  if (socket) { socket.close(); socket = null; }
  me = null; view = null;
  login = { badge: "", secret: "", field: "badge", error: error || "", busy: false };
  render();
}

function typeKey(key) {
  if (!login || login.busy) return;
  const f = login.field;
  if (key === "back") login[f] = login[f].slice(0, -1);
  else if (key === "ok") {
    if (f === "badge" && login.badge) login.field = "secret"; else submitLogin();
  } else if (login[f].length < 128) login[f] += key;
  login.error = login.error && key === "ok" ? login.error : "";
  render();
}

async function submitLogin() {
  if (!login.badge || !login.secret) { login.error = "Enter your badge and PIN"; render(); return; }
  login.busy = true; render();
  try {
    const res = await fetch("/api/login", { method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ badge: login.badge, secret: login.secret }) });
    const j = await res.json().catch(() => ({}));
    if (res.ok) { me = j; login = null; startSocket(); return; }
    const code = j.error && j.error.code;
    login.secret = "";
    login.error = code === "invalid_credentials" ? "Badge or PIN not accepted"
      : code === "account_locked" ? "Too many attempts: " + j.error.message
      : (j.error && j.error.message) || ("HTTP " + res.status);
  } catch (e) { login.error = "network: " + e.message; }
  login.busy = false; render();
}

function loginScreen() {
  const l = login;
  const field = (key, label) => el("div", { class: "field" + (l.field === key ? " focus" : ""),
    id: "login-" + key, "data-field": key, onclick: () => { l.field = key; render(); } },
    el("span", { class: "label" }, label),
    el("span", { class: "value" }, key === "secret" ? "\u2022".repeat(l.secret.length) : l.badge));
  const keys = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "back", "0", "ok"];
  return el("div", { id: "login", class: "login" },
    el("div", { class: "login-form" },
      el("h1", {}, "Dealer panel"),
      field("badge", "Badge"),
      field("secret", "PIN or password"),
      el("div", { id: "login-error", class: "login-error" }, l.error),
      el("div", { class: "hint" }, "Tap a field, then the keypad (or type)")),
    el("div", { class: "keypad" }, keys.map((k) => el("button", { class: "btn key" + (k === "ok" ? " ok" : ""),
      "data-key": k, id: k === "ok" ? "login-ok" : null, disabled: l.busy,
      onclick: () => typeKey(k) }, k === "back" ? "\u232b" : k === "ok" ? "OK" : k))));
}

document.addEventListener("keydown", (e) => {
  if (!login) return;
  if (e.key === "Enter") typeKey("ok");
  else if (e.key === "Backspace") typeKey("back");
  else if (e.key === "Tab") { e.preventDefault(); login.field = login.field === "badge" ? "secret" : "badge"; render(); }
  else if (e.key.length === 1) typeKey(e.key);
});

async function logout() {
  // The socket first: the server closes it (4401) the moment the session ends, and a socket
  // still running would reconnect into whoever logs in next on this panel.
  if (socket) { socket.close(); socket = null; }
  await fetch("/api/logout", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }).catch(() => {});
  showLogin("");
}

// Whether the session still holds (a socket that drops may have lost it).
async function checkSession() {
  try {
    const res = await fetch("/api/me");
    if (res.status === 401) { showLogin(me ? "Session ended: log in again" : ""); return false; }
    if (res.ok) { me = await res.json(); return true; }
  } catch (e) { /* the network: the socket keeps retrying */ }
  return null;
}

// A suspicious shoe is a notice for the supervisor, not a lock: play goes on.
function shoeAlert(v) {
  const a = v.shoe_alert;
  if (!a) return null;
  return el("div", { id: "shoe-alert", class: "shoe-alert" },
    "Shoe " + a.shoe + " may not have been shuffled: " + a.reasons.join("; ") + " — call a supervisor to check the shuffle.");
}

function render() {
  const root = document.getElementById("app");
  if (login) { morph(root, [loginScreen()]); return; }
  if (!view) { morph(root, [el("div", { class: "waiting" }, "connecting…")]); return; }
  const v = view, t = v.table;
  window.Table.useCurrency(t.currency);
  const active = v.decision ? { seat: v.decision[0], hand: v.decision[1] }
    : (v.next.seat ? { seat: v.next.seat, hand: v.next.hand } : null);
  // A remote seat's hand takes a card only when its player asks for one (the banner).
  const wait = remoteWaits(v);
  const next = wait ? "wait: seat " + wait + " (remote) decides"
    : v.next.to ? "next card \u2192 " + v.next.to : v.expecting;
  const seatExtra = (s, bet) => {
    const marks = remoteMarks(v, s);
    // A remote player's seat bets from the player's wallet, never from the panel.
    const add = t.betting.open && !marks
      ? el("button", { class: "btn small", "data-bet-seat": s, onclick: () => post("/api/bets", { seat: s, main: (bet ? bet.main : 0) + v.limits.min * 10 }) }, "+" + window.Table.money(v.limits.min * 10))
      : null;
    if (!marks) return add;
    if (add) marks.append(add);
    return marks;
  };
  morph(root, [
    el("header", {},
      el("span", { class: "name" }, t.name + " · " + t.variant),
      el("span", { class: "round", id: "round" }, "round " + t.round.number),
      renderShoe(t),
      window.Dispute.provisionalBadge(v),
      clockBadge(),
      el("span", { id: "conn", class: "conn " + conn }, conn === "live" ? "live" : conn + "…"),
      me ? el("span", { id: "user", class: "user" }, me.name + " \u00b7 " + me.role) : null,
      el("button", { class: "btn small", id: "logout", onclick: logout }, "Log out")),
    el("main", {},
      el("section", { class: "play" },
        el("div", { class: "top" },
          renderDealer(t),
          el("div", { class: "callout" },
            el("div", { id: "next", class: "next" + (v.next.to && !wait ? "" : " quiet") }, next),
            el("div", { id: "expecting", class: "expecting" }, v.expecting + (t.betting.open ? " · betting open" : "")))),
        remoteStrip(v),
        renderSeats(t, v.limits.seats, active, seatExtra)),
      el("aside", {}, actionsPanel(v), tableControls(v))),
    publishBanner(),
    shoeAlert(v),
    v.dispute || window.Dispute.form.raising ? window.Dispute.overlay(v, post, render, me) : alarmOverlay(v),
    toast ? el("div", { class: "toast", id: "toast", role: "alert" }, toast) : null,
    fresh ? null : offlineOverlay()].filter(Boolean));
  // A stale screen must not be acted on: every control is off until fresh state arrives.
  if (!fresh) for (const c of root.querySelectorAll("button, input, select")) c.disabled = true;
}

function offlineOverlay() {
  return el("div", { id: "offline", class: "offline", role: "alertdialog", "aria-label": "connection lost" },
    el("h1", {}, "CONNECTION LOST"),
    el("p", {}, "This screen is not up to date: every control is off."),
    el("p", {}, conn === "connecting" ? "Connecting\u2026" : "Reconnecting\u2026 the table goes on by itself; do not deal until this clears."));
}

function startSocket() {
  render();
  // Only the current session's socket may change the screen: one closed at a logout must
  // not bring the login back over the next person's session.
  let mine = null;
  const current = () => mine === null || socket === mine;
  mine = liveSocket("/ws/dealer", (m) => {
    if (!current()) return;
    view = m; receivedAt = Date.now(); fresh = true; window.lastSeq = m.seq; render();
    // For the card-to-pixels benchmark (benches/panel_latency.rs): the frame that paints it.
    if (window.markPaints) requestAnimationFrame(() => performance.mark("painted " + m.seq));
  }, (s) => {
    if (!current()) return;
    conn = s;
    if (s !== "live") fresh = false;
    render();
    // A dropped socket may mean a lost session (the server closes it then, and refuses the
    // upgrade with 401): ask, and show the login if so.
    if (s === "reconnecting") checkSession();
  });
  socket = mine;
  window.panelSocket = socket;
}

async function start() {
  render();
  pollClock();
  setInterval(pollClock, CLOCK_POLL_MS);
  const ok = await checkSession();
  if (ok === false) return;
  startSocket();
}
start();
