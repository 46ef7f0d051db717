// The remote player's page (/play#t=TOKEN, the launch link): join a free seat, bet within
// the betting countdown, decide within the decision timer; the balance and the results.
// Polls /api/play/state (the countdowns are the server's: remaining_ms); follows
// /ws/public only for trust.js's checks of the seals and signatures.
"use strict";
const { el, renderDealer, renderSeats, money, useCurrency } = window.Table;

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

function controls() {
  const s = state;
  const out = [];
  out.push(el("div", { class: "who" },
    el("strong", { id: "player-name" }, s.name || s.player), " · balance ",
    el("strong", { id: "balance" }, money(s.balance)),
    s.seat ? " · seat " + s.seat : ""));
  if (!s.seat) {
    out.push(el("div", { class: "row" }, s.free_seats.length ? "Take a seat:" : "No free seat now."));
    out.push(el("div", { class: "row", id: "join" }, s.free_seats.map(n => button("Seat " + n, () => act("/api/play/join", { seat: n }), { "data-seat": n }))));
  } else if (s.betting.open) {
    const min = s.limits.min, max = Math.min(s.limits.max, s.balance + (s.betting.my_bet || 0));
    // The usual chip values (1, 5, 25, 100, 500 in the currency) the limits allow.
    const unit = Math.pow(10, (s.view.currency && s.view.currency.exponent) || 0);
    let chips = [1, 5, 25, 100, 500].map(c => c * unit).filter(c => c >= min && c <= max);
    if (!chips.length) chips = [min].filter(c => c <= max);
    out.push(el("div", { class: "row countdown", id: "betting" }, "Bets close in ", el("strong", { id: "bet-left" }, left(s.betting.remaining_ms) + " s")));
    out.push(el("div", { class: "row", id: "chips" }, chips.map(c => button(money(c), () => { stake = Math.min(max, stake + c); render(); }, { class: "chip", "data-chip": c })),
      button("Clear", () => { stake = 0; render(); }, { id: "clear" })));
    out.push(el("div", { class: "row" },
      button("Bet " + money(stake), () => act("/api/play/bet", { main: stake }), { id: "place", disabled: busy || stake < min ? "" : null }),
      s.betting.my_bet ? button("Withdraw", () => act("/api/play/bet", { main: 0 }), { id: "withdraw" }) : null));
    out.push(el("div", { class: "row", id: "my-bet" }, s.betting.my_bet ? "Your bet: " + money(s.betting.my_bet) : "No bet yet"));
  } else if (s.turn) {
    const names = { hit: "Hit", stand: "Stand", double: "Double", split: "Split", surrender: "Surrender", insurance: "Insurance", no_insurance: "No insurance", even_money: "Even money" };
    out.push(el("div", { class: "row countdown", id: "turn" }, (s.turn.kind === "insurance" ? "Insurance? " : "Your hand: ") , el("strong", { id: "turn-left" }, left(s.turn.remaining_ms) + " s")));
    out.push(el("div", { class: "row", id: "actions" }, s.turn.allowed.filter(a => names[a]).map(a => button(names[a], () => act("/api/play/decision", { action: a }), { "data-action": a }))));
  } else {
    out.push(el("div", { class: "row", id: "waiting" }, s.view.round.settled || !s.view.round.number ? "Waiting for the next round…" : "Round in play…"));
  }
  const r = s.view.last_result;
  if (r && s.seat) {
    const mine = (r.hands || []).filter(h => h.seat === s.seat);
    if (mine.length) out.push(el("div", { class: "row", id: "result", "data-round": r.round }, "Round " + r.round + ": " + mine.map(h => h.outcome.replace("_", " ") + " " + money(h.returned)).join(", "),
      window.Trust.sigBadge(trust, r.round)));
  }
  if (message) out.push(el("div", { class: "row error", id: "message", role: "alert" }, message));
  return out;
}

function render() {
  const root = document.getElementById("app"), panel = document.getElementById("controls");
  if (!token) { root.replaceChildren(el("div", { class: "waiting" }, "Open your launch link to play.")); return; }
  if (!state) { root.replaceChildren(el("div", { class: "waiting" }, message || "connecting…")); return; }
  const view = state.view;
  useCurrency(view.currency);
  const exp = view.expecting || "";
  root.replaceChildren(
    el("header", {}, el("span", { class: "name" }, view.name + " · " + view.variant), el("span", { class: "round", id: "round" }, "round " + view.round.number)),
    el("main", {}, el("section", { class: "play" }, dealerWithSeal(view), renderSeats(view, Math.max(state.limits.seats, 7), state.turn ? { seat: state.seat, hand: state.turn.hand } : null, null))),
    ...[window.Trust.alarmBanner(trust)].filter(Boolean));
  panel.replaceChildren(...controls());
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
