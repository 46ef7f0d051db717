// The remote player's page (/play#t=TOKEN, the launch link): join a free seat (or the table
// without one: bets behind seated players, a common draw's boxes), bet within the betting
// countdown (main, the game's side bets by its own names, behind a seat with its follows,
// boxes), decide within the decision timer (every turn the table asks: the seat, insurance
// behind a seat, each box); the balance and the results.
// Polls /api/play/state (the countdowns are the server's: remaining_ms); follows
// /ws/public only for trust.js's checks of the seals and signatures.
"use strict";
const { el, morph, renderDealer, renderSeats, money, useCurrency } = window.Table;

// The launch token stays in this tab (the fragment never reaches a server log).
const fromHash = new URLSearchParams(location.hash.slice(1)).get("t");
if (fromHash) { sessionStorage.setItem("croupier.play", fromHash); history.replaceState(null, "", location.pathname); }
const token = sessionStorage.getItem("croupier.play") || "";

let state = null, stake = 0, message = "", busy = false, fetchedAt = 0;
window.playState = () => state;
// The browser's own checks (trust.js): the public feed carries the hole card's seal and
// every result's signature; this page follows it only to check them.
const trust = new window.Trust.Checker(() => render());
window.playTrust = trust;
window.Table.liveSocket("/ws/public", (m) => trust.message(m), () => {});

async function api(method, path, body) {
  const r = await fetch(path, {
    method, headers: Object.assign({ Authorization: "Bearer " + token }, body ? { "Content-Type": "application/json" } : {}),
    body: body ? JSON.stringify(body) : undefined,
  });
  const j = await r.json().catch(() => ({}));
  if (!r.ok) {
    const e = j.error || { code: "http_" + r.status, message: r.statusText };
    const closed = e.closed ? " (closed at log #" + e.closed.seq + ", " + new Date(e.closed.at_ms).toLocaleTimeString() + ")" : "";
    throw Object.assign(new Error(e.message + closed), { code: e.code });
  }
  return j;
}

async function act(path, body) {
  if (busy) return;
  busy = true;
  try { await api("POST", path, body); message = ""; }
  catch (e) { message = e.code + ": " + e.message; }
  busy = false;
  await refresh();
}

function left(ms) {
  const since = Date.now() - fetchedAt;
  return Math.max(0, Math.ceil((ms - since) / 1000));
}

function button(label, onClick, attrs) {
  return el("button", Object.assign({ type: "button", onclick: onClick, disabled: busy ? "" : null }, attrs || {}), label);
}

// What the player is about to bet, by line: the seat's main bet and side bets, a bet
// behind one seat (with its follows), a common draw's boxes. Chips add to the line picked
// (`target`).
let plan = { main: 0, side: {}, behind: null, bside: {}, follow_double: false, follow_split: false, boxes: {}, special: null };
let target = "main";

function resetPlan() {
  plan = { main: 0, side: {}, behind: null, bside: {}, follow_double: false, follow_split: false, boxes: {}, special: plan.special, rebet: plan.rebet };
  stake = 0;
  target = "main";
}

function sum(o) { return Object.values(o).reduce((a, v) => a + (v.main !== undefined ? v.main + sum(v.side) : v), 0); }

function addChip(c) {
  const [kind, a, b] = target.split(":");
  if (kind === "main") plan.main += c;
  else if (kind === "side") plan.side[a] = (plan.side[a] || 0) + c;
  else if (kind === "behind") { plan.behind = Number(a); stake += c; }
  else if (kind === "bside") plan.bside[a] = (plan.bside[a] || 0) + c;
  else if (kind === "box") {
    const x = plan.boxes[a] || (plan.boxes[a] = { main: 0, side: {} });
    // A chip on a box riding "Let it play" starts an ordinary main bet instead.
    if (!b && x.let_it_play) { x.let_it_play = false; x.main = 0; }
    if (b) x.side[b] = (x.side[b] || 0) + c; else x.main += c;
  }
  render();
}

function targetButton(label, name) {
  return button(label, () => { target = name; render(); }, { class: "target" + (target === name ? " on" : ""), "data-target": name, "aria-pressed": target === name ? "true" : "false" });
}

function chipsRow(s, max) {
  const min = Math.min(s.limits.min, ...(s.game.side_bets || []).map(b => b.min));
  // The usual chip values (1, 5, 25, 100, 500 in the currency) the limits allow.
  const unit = Math.pow(10, (s.view.currency && s.view.currency.exponent) || 0);
  let chips = [1, 5, 25, 100, 500].map(c => c * unit).filter(c => c >= min && c <= max);
  if (!chips.length) chips = [min].filter(c => c <= max);
  return el("div", { class: "row", id: "chips" }, chips.map(c => button(money(c), () => addChip(c), { class: "chip", "data-chip": c })),
    button("Clear", () => { resetPlan(); render(); }, { id: "clear" }));
}

function sideMap(o) { const out = {}; for (const [k, v] of Object.entries(o)) if (v > 0) out[k] = v; return out; }

function bettingControls(s, out) {
  const sides = s.game.side_bets || [];
  out.push(el("div", { class: "row countdown", id: "betting" }, "Bets close in ", el("strong", { id: "bet-left" }, left(s.betting.remaining_ms) + " s")));
  if (s.game.common_draw) {
    // Any box (or all three), each with the game's specials: one picked from the game's
    // list (all of them, by its names) is offered on every box.
    const special = sides.some(b => b.name === plan.special) ? plan.special : (sides[0] || {}).name;
    if (sides.length) {
      out.push(el("div", { class: "row" }, el("label", { for: "special" }, "Special bet: "),
        el("select", { id: "special", onchange: (e) => { plan.special = e.target.value; render(); } },
          sides.map(b => el("option", { value: b.name, selected: b.name === special }, b.name)))));
    }
    const boxes = [];
    for (let n = 1; n <= s.game.boxes; n++) {
      const x = plan.boxes[n] || { main: 0, side: {} };
      const others = Object.entries(x.side).filter(([k, v]) => k !== special && v > 0).map(([k, v]) => k + " " + money(v));
      boxes.push(el("div", { class: "row box", "data-box": n },
        targetButton("Box " + n + (x.main ? " " + money(x.main) : ""), "box:" + n),
        special ? targetButton(special + (x.side[special] ? " " + money(x.side[special]) : ""), "box:" + n + ":" + special) : null,
        others.length ? el("span", { class: "others" }, others.join(", ")) : null,
        // "Let it play": the box won last round; its whole return rides as the main bet.
        ...(s.betting.let_it_play || []).filter(l => l.box === n).map(l => button((x.let_it_play ? "✓ " : "") + "Let it play " + money(l.main), () => {
          plan.boxes[n] = x.let_it_play ? { main: 0, side: x.side } : { main: l.main, side: x.side, let_it_play: true }; render();
        }, { class: "target" + (x.let_it_play ? " on" : ""), "data-let-it-play": n }))));
    }
    out.push(el("div", { class: "boxes", id: "boxes" }, boxes));
    out.push(chipsRow(s, s.balance));
    const total = sum(plan.boxes);
    const list = Object.entries(plan.boxes).filter(([, x]) => x.main > 0).map(([n, x]) => x.let_it_play ? { box: Number(n), let_it_play: true, side: sideMap(x.side) } : { box: Number(n), main: x.main, side: sideMap(x.side) });
    out.push(el("div", { class: "row" },
      button("Bet " + money(total), () => act("/api/play/boxes", { boxes: list }), { id: "place-boxes", disabled: busy || !list.length ? "" : null }),
      s.betting.my_boxes ? button("Withdraw", () => act("/api/play/boxes", { boxes: [] }), { id: "withdraw" }) : null));
    out.push(el("div", { class: "row", id: "my-bet" }, s.betting.my_boxes ? "Your boxes: " + s.betting.my_boxes.map(b => "#" + b.seat + " " + money(b.main)).join(", ") : "No bet yet"));
    return;
  }
  // The automatic re-bet (Ultimate): the seat's lines show it, as if the player had laid
  // the chips, once per window (Clear still clears them).
  if (s.betting.my_rebet && plan.rebet !== s.betting.round) {
    plan.rebet = s.betting.round;
    plan.main = s.betting.my_bet || 0;
    plan.side = Object.fromEntries(s.betting.my_side || []);
  }
  if (s.seat) {
    out.push(el("div", { class: "row", id: "lines" }, targetButton("Seat " + money(plan.main), "main"),
      sides.map(b => targetButton(b.name + " " + money(plan.side[b.name] || 0), "side:" + b.name))));
  }
  // Play behind: any seated player's seat with a bet in this window.
  const seats = s.game.play_behind ? (s.betting.behind_seats || []) : [];
  if (seats.length) {
    out.push(el("div", { class: "row", id: "behind" }, "Behind:", seats.map(x =>
      button("Seat " + x.seat + (plan.behind === x.seat ? " " + money(stake) : ""), () => { target = "behind:" + x.seat; plan.behind = x.seat; render(); },
        { class: "target" + (target === "behind:" + x.seat ? " on" : ""), "data-behind": x.seat }))));
    if (plan.behind) {
      const remote = (seats.find(x => x.seat === plan.behind) || {}).remote;
      out.push(el("div", { class: "row", id: "behind-lines" },
        sides.map(b => targetButton(b.name + " " + money(plan.bside[b.name] || 0), "bside:" + b.name)),
        remote ? el("label", {}, el("input", { type: "checkbox", id: "follow-double", checked: plan.follow_double, onchange: (e) => { plan.follow_double = e.target.checked; } }), " follow double") : null,
        remote ? el("label", {}, el("input", { type: "checkbox", id: "follow-split", checked: plan.follow_split, onchange: (e) => { plan.follow_split = e.target.checked; } }), " follow split") : null));
    }
  }
  out.push(chipsRow(s, s.balance + (s.betting.my_bet || 0)));
  const row = [];
  if (s.seat) {
    // On two seats (Deluxe) the bet goes on the lowest; the table mirrors it on the other
    // (or splits it evenly when the balance is short) and both seats show it below.
    row.push(button("Bet " + money(plan.main + sum(plan.side)), () => act("/api/play/bet", { seat: s.seat, main: plan.main, side: sideMap(plan.side) }), { id: "place", disabled: busy || plan.main < s.limits.min ? "" : null }));
    if (s.betting.my_bet) row.push(button("Withdraw", () => act("/api/play/bet", { main: 0 }), { id: "withdraw" }));
    // A manual re-bet of the round just played where the game has no automatic one.
    const last = s.betting.last_bet;
    if (!s.game.auto_rebet && !s.betting.my_bet && last) {
      const side = Object.fromEntries(last.side);
      row.push(button("Rebet " + money(last.main + sum(side)), () => act("/api/play/bet", { main: last.main, side: side }), { id: "rebet" }));
    }
  }
  if (plan.behind) {
    row.push(button("Bet behind " + plan.behind + " " + money(stake + sum(plan.bside)), () => act("/api/play/behind",
      { seat: plan.behind, main: stake, side: sideMap(plan.bside), follow_double: plan.follow_double, follow_split: plan.follow_split }),
      { id: "place-behind", disabled: busy || stake < s.limits.min ? "" : null }));
  }
  out.push(el("div", { class: "row" }, row));
  const mine = [];
  if (s.betting.my_bet) mine.push("Your bet: " + money(s.betting.my_bet) + (s.betting.my_side || []).map(([n, a]) => " + " + n + " " + money(a)).join("")
    + (s.betting.my_rebet ? (s.betting.my_rebet.clipped ? " (re-bet, clipped to your balance)" : " (re-bet)") : ""));
  if ((s.betting.my_seats || []).length > 1) mine.push(s.betting.my_seats.map(x => "Seat " + x.seat + ": " + (x.main ? money(x.main) : "no bet")).join(" · "));
  for (const b of s.betting.my_behind || []) mine.push("Behind seat " + b.seat + ": " + money(b.bet.main) + (b.bet.follow_double ? " (follows doubles)" : ""));
  out.push(el("div", { class: "row", id: "my-bet" }, mine.length ? mine.join(" · ") : "No bet yet"));
}

const NAMES = { hit: "Hit", stand: "Stand", double: "Double", split: "Split", surrender: "Surrender", insurance: "Insurance", no_insurance: "No insurance", even_money: "Even money" };

function turnControls(s, out) {
  s.turns.forEach((t, i) => {
    const where = s.game.common_draw ? "Box " + t.seat + (t.hand ? " hand " + (t.hand + 1) : "") + (t.kind === "insurance" ? ": insurance? " : ": ")
      : t.behind ? "Behind seat " + t.seat + ": insurance? "
      : (t.kind === "insurance" ? "Seat " + t.seat + ": insurance? " : "Your hand, seat " + t.seat + ": ");
    const timer = t.remaining_ms === null ? "" : left(t.remaining_ms) + " s";
    out.push(el("div", { class: "row countdown", id: i ? null : "turn", "data-seat": t.seat }, where, el("strong", { id: i ? null : "turn-left" }, timer)));
    // The decision names its seat: a player on two seats answers for the one the turn is on.
    const body = (a) => Object.assign({ action: a }, s.game.common_draw ? { box: t.seat } : { seat: t.seat });
    out.push(el("div", { class: "row actions", id: i ? null : "actions", "data-seat": t.seat, "data-behind": t.behind ? "true" : null },
      t.allowed.filter(a => NAMES[a]).map(a => button(NAMES[a], () => act("/api/play/decision", body(a)), { "data-action": a }))));
  });
}

function controls() {
  const s = state;
  const out = [];
  out.push(el("div", { class: "who" },
    el("strong", { id: "player-name" }, s.name || s.player), " · balance ",
    el("strong", { id: "balance" }, money(s.balance)),
    (s.seats || []).length > 1 ? " · seats " + s.seats.join(", ") : s.seat ? " · seat " + s.seat : ""));
  const atTable = s.seat || s.unseated;
  if (!atTable) {
    if (!s.game.common_draw) {
      out.push(el("div", { class: "row" }, s.free_seats.length ? "Take a seat:" : "No free seat now."));
      out.push(el("div", { class: "row", id: "join" }, s.free_seats.map(n => button("Seat " + n, () => act("/api/play/join", { seat: n }), { "data-seat": n }))));
    }
    if (s.game.common_draw || s.game.play_behind) {
      out.push(el("div", { class: "row" }, button(s.game.common_draw ? "Join the table" : "Bet behind players", () => act("/api/play/join", {}), { id: "join-unseated" })));
    }
  } else if (s.betting.open) {
    // A second seat, where the game lets a player hold two (Deluxe).
    if (s.seat && (s.seats || []).length < (s.game.seats_per_player || 1) && s.free_seats.length) {
      out.push(el("div", { class: "row", id: "join-second" }, "Second seat:", s.free_seats.map(n => button("Seat " + n, () => act("/api/play/join", { seat: n }), { "data-seat": n }))));
    }
    bettingControls(s, out);
  } else if (s.turns && s.turns.length) {
    turnControls(s, out);
  } else {
    if (!s.betting.open) resetPlan();
    out.push(el("div", { class: "row", id: "waiting" }, s.view.round.settled || !s.view.round.number ? "Waiting for the next round…" : "Round in play…"));
  }
  const r = s.view.last_result;
  if (r && atTable) {
    // The seat's hands, and every bet of the player's own (behind seats, boxes).
    const mySeats = s.seats || [];
    const parts = (r.hands || []).filter(h => mySeats.includes(h.seat) && !h.player)
      .map(h => (mySeats.length > 1 ? "seat " + h.seat + " " : "") + h.outcome.replace("_", " ") + " " + money(h.returned));
    for (const b of (r.bets || []).filter(b => b.player === s.public_name)) {
      // A side bet's kind is {"side": NAME}; main and insurance are plain names.
      const kind = typeof b.kind === "string" ? b.kind.replace("_", " ") : String(b.kind.side);
      parts.push((s.game.common_draw ? "box " : "behind ") + b.seat + " " + kind + " " + money(b.returned));
    }
    if (parts.length) out.push(el("div", { class: "row", id: "result", "data-round": r.round }, "Round " + r.round + ": " + parts.join(", "),
      window.Trust.sigBadge(trust, r.round)));
  }
  if (message) out.push(el("div", { class: "row error", id: "message", role: "alert" }, message));
  return out;
}

function render() {
  const root = document.getElementById("app"), panel = document.getElementById("controls");
  if (!token) { morph(root, [el("div", { class: "waiting" }, "Open your launch link to play.")]); return; }
  if (!state) { morph(root, [el("div", { class: "waiting" }, message || "connecting…")]); return; }
  const view = state.view;
  useCurrency(view.currency);
  const exp = view.expecting || "";
  morph(root, [
    el("header", {}, el("span", { class: "name" }, view.name + " · " + view.variant), el("span", { class: "round", id: "round" }, "round " + view.round.number)),
    el("main", {}, el("section", { class: "play" }, dealerWithSeal(view), renderSeats(view, state.game.common_draw ? state.game.boxes : Math.max(state.limits.seats, 7), state.turn && !state.turn.behind && !state.game.common_draw ? { seat: state.seat, hand: state.turn.hand } : null, null))),
    ...[window.Trust.alarmBanner(trust)].filter(Boolean)]);
  // A list being picked from stays open: the controls wait until it is left.
  if (document.activeElement && document.activeElement.tagName === "SELECT" && panel.contains(document.activeElement)) return;
  morph(panel, controls());
}

function dealerWithSeal(view) {
  const box = renderDealer(view);
  const seal = window.Trust.sealBadge(trust, view.round);
  if (seal) box.append(seal);
  return box;
}

async function refresh() {
  if (!token) { render(); return; }
  try { state = await api("GET", "/api/play/state"); fetchedAt = Date.now(); }
  catch (e) { if (e.code === "unauthenticated") state = null; message = e.code + ": " + e.message; }
  render();
}

setInterval(refresh, 500);
setInterval(render, 1000);
refresh();
