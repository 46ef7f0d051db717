// The dealer panel: a login screen until /api/me answers, then renders /ws/dealer and posts
// actions to the API. Every request carries the HttpOnly session cookie; a 401 anywhere
// (logout elsewhere, expiry, idle timeout, account disabled) brings the login back. Every
// text comes from the catalogue (i18n.js, messages-*.ftl): no engine code reaches the screen.
"use strict";
const { el, morph, renderDealer, renderSeats, renderShoe, liveSocket } = window.Table;
const T = (id, args) => window.I18n.t(id, args);

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
    el("strong", {}, T("publish-stopped")),
    el("span", { class: "why" }, publishStopped));
}
window.pollClock = pollClock;

function clockBadge() {
  if (!clock || clock.synchronised) return null;
  return el("span", { id: "clock", class: "clock unsync", title: T("clock-unsync-why") }, T("clock-unsync"));
}

// Posts an action; answers whether it was taken. A refusal shows on top of whatever
// screen is up (the dispute screen included), so its reason is never hidden behind it.
async function post(path, body) {
  try {
    const res = await fetch(path, { method: "POST", headers: { "content-type": "application/json" },
      body: body === undefined ? "" : JSON.stringify(body) });
    if (res.status === 401) { showLogin(T("login-ended")); return false; }
    if (!res.ok) {
      const j = await res.json().catch(() => ({}));
      showToast(window.I18n.error(j.error ? j.error.code : "unavailable", j.error && j.error.message));
      return false;
    }
    return true;
  } catch (e) { showToast(T("error-network")); return false; }
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
  // Between a settlement and the next round no decision is due: the round's summary
  // takes the decision buttons' place.
  const summary = !d && !v.insurance.length ? roundSummary(v.table) : null;
  if (summary) { box.append(summary); return box; }
  if (v.insurance.length) {
    // Only the answers the engine takes from this seat are enabled (even money: a natural).
    const seat = v.insurance[0];
    const legal = v.insurance_allowed || [];
    const answer = (action) => el("button", { class: "btn", "data-action": action, disabled: !legal.includes(action),
      onclick: () => post("/api/decision", { seat, action }) }, T("action-" + action));
    box.append(el("div", { class: "prompt", id: "insurance" }, T("insurance-question", { seat })),
      answer("insurance"), answer("no_insurance"), answer("even_money"));
    return box;
  }
  const allowed = d ? d[2] : [];
  const seat = d ? d[0] : null;
  // A remote player decides from their own page: the panel's decision buttons are off
  // (the table would take them, but the decision is the player's), each saying why.
  const remote = !!(d && v.remote && v.remote.seats.includes(d[0]));
  box.append(el("div", { class: "prompt" }, d ? T("decision-for", { seat: d[0], hand: d[1] + 1 }) : T("decision-none")));
  if (remote) {
    box.append(el("div", { class: "hint remote-why", id: "remote-decides" }, T("remote-decides")),
      el("div", { class: "hint", id: "actions-why" }, T("deal-when-asked")));
  }
  const why = remote ? T("remote-disabled", { seat }) : null;
  if (v.simulated) {
    box.append(el("button", { class: "btn hit", "data-action": "hit", disabled: !d || !!remoteWaits(v),
      title: remoteWaits(v) ? why : null, onclick: () => post("/api/sim/deal", { n: 1 }) }, T("action-hit")));
  } else if (!remote) {
    box.append(el("div", { class: "hint" }, T("hit-hint")));
  }
  for (const a of ACTIONS) {
    box.append(el("button", { class: "btn", "data-action": a, disabled: remote || !allowed.includes(a),
      title: remote ? why : null, "aria-describedby": remote ? "remote-decides" : null,
      onclick: () => post("/api/decision", { seat, action: a }) }, T("action-" + a)));
  }
  return box;
}

// The touch twin of the button box's call-supervisor press: the same alarm, the same path.
function callSupervisor() {
  return el("button", { class: "btn wide call", id: "call-supervisor", onclick: async () => {
    if (await post("/api/call-supervisor", {})) showToast(T("call-supervisor-sent"));
  } }, T("call-supervisor"));
}

function tableControls(v) {
  const t = v.table;
  const bar = el("div", { class: "controls" });
  const bets = v.expectation === "bets";
  if (bets && !t.betting.open) bar.append(el("button", { class: "btn wide", id: "open-betting", onclick: () => post("/api/betting/open") }, T("open-betting")));
  if (t.betting.open) bar.append(el("button", { class: "btn wide", id: "close-betting", onclick: () => post("/api/betting/close") }, T("close-betting")));
  if (v.expectation === "shuffle") bar.append(el("button", { class: "btn wide", id: "new-shoe", onclick: () => post("/api/shuffle") }, T("new-shoe")));
  if (v.simulated && v.next.to && !v.decision) bar.append(el("button", { class: "btn wide", id: "deal", onclick: () => post("/api/sim/deal", { n: 1 }) }, T("deal-card")));
  const raise = window.Dispute.raiseControls(v, post, render);
  if (raise) bar.append(raise);
  bar.append(callSupervisor());
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
  const parts = r.seats.map((s) => T(r.bet.includes(s) ? "remote-seat-bet" : "remote-seat-waiting", { seat: s }));
  if (r.unseated) parts.push(T("remote-behind-bet", { bet: r.unseated_bet, all: r.unseated }));
  return parts.length ? T("remote-bets", { list: parts.join(" \u00b7 ") }) : "";
}

function remoteStrip(v) {
  const r = v.remote;
  if (!r) return null;
  const items = [];
  if (r.hit) {
    items.push(el("div", { id: "remote-hit", class: "remote-hit", role: "alert", "data-seat": r.hit },
      T("remote-hit", { seat: r.hit })));
  }
  if (r.countdown && v.table.betting.open) items.push(timerBox("countdown", r.countdown, T("bets-close-in"), remoteBets(r)));
  if (r.decision) {
    const d = r.decision;
    const label = d.seat ? T("seat-remote-decides", { seat: d.seat })
      : JSON.stringify(v.expectation).includes("insurance") ? T("remote-insurance") : T("remote-players-decide");
    items.push(timerBox("decision-timer", d, label, T("then-table-plays")));
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
  f.append(el("span", { class: "remote-badge", "data-remote-seat": s }, T("remote-badge")));
  if (r.hit === s) f.append(el("span", { class: "remote-badge asks", "data-asks": s }, T("remote-asks")));
  return f;
}

// The alarm without a dispute (an out-of-service table; an alarm's own dispute shows on the
// dispute screen): the reason and what to do in plain words, and a supervisor's clearing
// by taps (a reason preset or the on-screen keyboard), its button always on screen.
function alarmOverlay(v) {
  if (!v.alarm && !v.broken) return null;
  const a = v.alarm;
  const said = a ? window.I18n.alarm(a) : null;
  const supervisor = !!me && (me.role === "supervisor" || me.role === "admin");
  return el("div", { id: "alarm", class: "alarm sheet", role: "alertdialog", "aria-labelledby": "alarm-title" },
    el("div", { class: "sheet-head" },
      el("h1", { id: "alarm-title" }, v.broken ? T("alarm-out-of-service") : T("alarm-title")),
      el("p", { class: "reason", id: "alarm-reason", "data-kind": said ? said.kind : "broken" }, v.broken || said.title),
      el("p", { class: "todo", id: "alarm-todo" }, T("alarm-todo", { todo: a ? said.todo : T("out-of-service-todo") })),
      a && a.held.length ? el("p", { id: "alarm-held" }, T("alarm-held", { cards: a.held.join(" ") })) : null),
    a && supervisor ? el("div", { class: "sheet-body" }, window.Dispute.clearPad(render)) : el("div", { class: "sheet-body" },
      el("p", { class: "todo" }, a ? T("alarm-waiting") : "")),
    el("div", { class: "sheet-foot" }, a && supervisor ? window.Dispute.clearButton(post) : null,
      el("button", { class: "btn small", id: "sheet-logout", onclick: logout }, T("log-out"))));
}

// --- login ---------------------------------------------------------------------------

function showLogin(error) {
  if (socket) { socket.close(); socket = null; }
  // A notice was for the person who is gone; it must not lie over the next one's screen.
  me = null; view = null; toast = null;
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
  if (!login.badge || !login.secret) { login.error = T("login-missing"); render(); return; }
  login.busy = true; render();
  try {
    const res = await fetch("/api/login", { method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ badge: login.badge, secret: login.secret }) });
    const j = await res.json().catch(() => ({}));
    if (res.ok) { me = j; login = null; window.I18n.loadStaff(); startSocket(); return; }
    const code = j.error && j.error.code;
    login.secret = "";
    // One sentence, the lock's end as the panel's local time (not the server's UTC text).
    login.error = code === "invalid_credentials" ? T("login-refused") : window.I18n.error(code || "unavailable", j.error && j.error.message);
  } catch (e) { login.error = T("error-network"); }
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
      el("h1", {}, T("login-title")),
      field("badge", T("login-badge")),
      field("secret", T("login-secret")),
      el("div", { id: "login-error", class: "login-error", role: "alert" }, l.error),
      el("div", { class: "hint" }, T("login-hint"))),
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
    if (res.status === 401) { showLogin(me ? T("login-ended") : ""); return false; }
    if (res.ok) { me = await res.json(); window.I18n.loadStaff(); return true; }
  } catch (e) { /* the network: the socket keeps retrying */ }
  return null;
}

// A suspicious shoe is a notice for the supervisor, not a lock: play goes on.
function shoeAlert(v) {
  const a = v.shoe_alert;
  if (!a) return null;
  return el("div", { id: "shoe-alert", class: "shoe-alert" }, T("shoe-alert", { shoe: a.shoe, reasons: a.reasons.join("; ") }));
}

// What the table waits for, in plain words (never the engine's own text): the expectation's
// kind picks the message, its fields fill it.
function expectingText(v) {
  const e = v.expectation;
  const kind = typeof e === "string" ? e : Object.keys(e || {})[0];
  const body = typeof e === "object" && e ? e[kind] : null;
  if (kind === "bets" && v.table.betting.open) return T("expect-bets-open");
  const args = {};
  if (kind === "burn_cards") args.n = body;
  if (kind === "insurance_answers") args.seat = (body.seats || []).join(", ");
  if (kind === "hand_card" || kind === "decision") { args.seat = body.seat; args.hand = body.hand + 1; }
  if (kind === "draw_card") args.hands = body.hands;
  return window.I18n.has("expect-" + kind) ? T("expect-" + kind, args) : T("expect-unknown");
}

// Where the next card goes, as the big indicator says it.
function nextPlace(n) {
  if (n.seat) return T("place-seat-hand", { seat: n.seat, hand: n.hand + 1 });
  return n.to === "dealer" ? T("place-dealer") : n.to === "burn" ? T("place-burn") : n.to;
}

// After settlement: each seat's result and net (behind bets apart), and the house's, from
// the round's result (every bet staked and returned).
function roundSummary(t) {
  const r = t.last_result, round = t.round;
  if (!round.settled || !r || r.round !== round.number) return null;
  const money = window.Table.money;
  const rows = new Map();
  for (const b of r.bets) {
    const key = (b.player ? "behind:" : "seat:") + b.seat;
    const row = rows.get(key) || { seat: b.seat, behind: !!b.player, staked: 0, returned: 0 };
    row.staked += b.staked; row.returned += b.returned;
    rows.set(key, row);
  }
  const net = (n) => n > 0 ? T("summary-won", { amount: money(n) }) : n < 0 ? T("summary-lost", { amount: money(-n) }) : T("summary-even");
  const outcomes = (seat) => [...new Set(r.hands.filter((h) => h.seat === seat && !h.player).map((h) => T("outcome-" + h.outcome)))].join(" / ");
  const house = [...rows.values()].reduce((a, x) => a + x.staked - x.returned, 0);
  const dealer = r.cancelled ? null : r.dealer_natural ? T("summary-dealer-bj")
    : r.dealer_total > 21 ? T("summary-dealer-bust", { total: r.dealer_total }) : T("summary-dealer", { total: r.dealer_total });
  return el("div", { id: "round-summary", class: "summary", role: "status" },
    el("div", { class: "summary-title" }, r.cancelled ? T("summary-cancelled", { round: String(r.round) }) : T("summary-title", { round: String(r.round) })),
    el("div", { class: "summary-rows" },
      [...rows.values()].sort((a, b) => a.seat - b.seat || a.behind - b.behind).map((x) => {
        const n = x.returned - x.staked;
        return el("span", { class: "summary-seat " + (n > 0 ? "up" : n < 0 ? "down" : "even"), "data-summary-seat": x.seat, "data-net": n },
          el("strong", {}, T(x.behind ? "summary-behind" : "summary-seat", { seat: x.seat })), " ",
          x.behind ? "" : el("span", { class: "outcome" }, outcomes(x.seat)), " ", el("span", { class: "net" }, net(n)));
      })),
    el("div", { class: "summary-house", id: "summary-house", "data-net": house },
      dealer ? dealer + " \u00b7 " : "",
      el("strong", {}, house > 0 ? T("summary-house-won", { amount: money(house) })
        : house < 0 ? T("summary-house-lost", { amount: money(-house) }) : T("summary-house-even"))));
}

function render() {
  const root = document.getElementById("app");
  if (login) { morph(root, [loginScreen()]); return; }
  if (!view) { morph(root, [el("div", { class: "waiting" }, T("connecting"))]); return; }
  const v = view, t = v.table;
  window.Table.useCurrency(t.currency);
  const active = v.decision ? { seat: v.decision[0], hand: v.decision[1] }
    : (v.next.seat ? { seat: v.next.seat, hand: v.next.hand } : null);
  // A remote seat's hand takes a card only when its player asks for one (the banner).
  const wait = remoteWaits(v);
  const next = wait ? T("next-wait-remote", { seat: wait })
    : v.next.to ? T("next-card-to", { to: nextPlace(v.next) }) : null;
  const seatExtra = (s, bet) => {
    const marks = remoteMarks(v, s);
    // A remote player's seat bets from the player's wallet, never from the panel.
    const add = t.betting.open && !marks
      ? el("button", { class: "btn small", "data-bet-seat": s, onclick: () => post("/api/bets", { seat: s, main: (bet ? bet.main : 0) + v.limits.min * 10 }) }, T("add-bet", { amount: window.Table.money(v.limits.min * 10) }))
      : null;
    if (!marks) return add;
    if (add) marks.append(add);
    return marks;
  };
  // A sheet on top (alarm, dispute, raise) makes the panel beneath inert: no tap, focus or
  // screen reader reaches what it covers.
  const sheet = v.dispute || window.Dispute.form.raising ? window.Dispute.overlay(v, post, render, me, logout) : alarmOverlay(v);
  const under = sheet ? true : null;
  morph(root, [
    el("header", { inert: under },
      // The table's name always whole; the game's name after it is cut short first on a
      // crowded header (style.css).
      el("h1", { class: "name" }, el("span", { class: "tname" }, t.name),
        el("span", { class: "game" }, T("panel-game", { game: window.I18n.game(t.variant) }))),
      el("span", { class: "round", id: "round" }, T("round-number", { round: String(t.round.number) })),
      renderShoe(t),
      window.Dispute.provisionalBadge(v),
      clockBadge(),
      el("span", { id: "conn", class: "conn " + conn }, T("conn-" + conn)),
      me ? el("span", { id: "user", class: "user" }, T("user-role", { name: me.name, role: me.role })) : null,
      el("button", { class: "btn small", id: "logout", onclick: logout }, T("log-out"))),
    el("main", { inert: under },
      el("section", { class: "play" },
        el("div", { class: "top" },
          renderDealer(t),
          el("div", { class: "callout" },
            next ? el("div", { id: "next", class: "next" + (v.next.to && !wait ? "" : " quiet") }, next) : null,
            el("div", { id: "expecting", class: "expecting" }, expectingText(v)))),
        remoteStrip(v),
        renderSeats(t, v.limits.seats, active, seatExtra)),
      el("aside", {}, actionsPanel(v), tableControls(v))),
    publishBanner(),
    shoeAlert(v),
    sheet,
    // A tap on the message puts it away (it goes by itself after 4 s).
    toast ? el("div", { class: "toast", id: "toast", role: "alert", onclick: () => { toast = null; render(); } }, toast) : null,
    fresh ? null : offlineOverlay()].filter(Boolean));
  // A stale screen must not be acted on: every control is off until fresh state arrives.
  if (!fresh) for (const c of root.querySelectorAll("button, input, select")) c.disabled = true;
}

function offlineOverlay() {
  return el("div", { id: "offline", class: "offline", role: "alertdialog", "aria-label": "connection lost" },
    el("h1", {}, T("offline-title")),
    el("p", {}, T("offline-stale")),
    el("p", {}, conn === "connecting" ? T("offline-connecting") : T("offline-reconnecting")));
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
  // The catalogue first: every text on the panel comes from it.
  await window.I18n.ready;
  render();
  pollClock();
  setInterval(pollClock, CLOCK_POLL_MS);
  const ok = await checkSession();
  if (ok === false) return;
  startSocket();
}
start();
