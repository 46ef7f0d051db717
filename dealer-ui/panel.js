// The dealer panel: renders /ws/dealer, posts actions to the API.
"use strict";
const { el, renderDealer, renderSeats, renderShoe, liveSocket } = window.Table;

let view = null;
let conn = "connecting";
let toast = null;
// The system clock's sync state from /readyz (null until known). The Pi has no RTC: the
// table orders by sequence, but the dealer should know when the timestamps are off.
let clock = null;
const CLOCK_POLL_MS = 30000;

async function pollClock() {
  try {
    const res = await fetch("/readyz", { cache: "no-store" });
    const next = (await res.json()).clock || null;
    const changed = JSON.stringify(next) !== JSON.stringify(clock);
    clock = next;
    window.clockStatus = clock;
    if (changed) render();
  } catch (e) { /* keep the last known state; the socket shows the connection */ }
}
window.pollClock = pollClock;

function clockBadge() {
  if (!clock || clock.synchronised) return null;
  return el("span", { id: "clock", class: "clock unsync",
    title: "timestamps may be off; play is ordered by sequence and is not affected" }, "clock not synchronised");
}

async function post(path, body) {
  try {
    const res = await fetch(path, { method: "POST", headers: { "content-type": "application/json" },
      body: body === undefined ? "" : JSON.stringify(body) });
    if (!res.ok) {
      const j = await res.json().catch(() => ({}));
      showToast((j.error && (j.error.code + ": " + j.error.message)) || ("HTTP " + res.status));
    }
  } catch (e) { showToast("network: " + e.message); }
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
    const seat = v.insurance[0];
    box.append(el("div", { class: "prompt", id: "insurance" }, "Insurance? seat " + seat),
      el("button", { class: "btn", "data-action": "insurance", onclick: () => post("/api/decision", { seat, action: "insurance" }) }, "Insure"),
      el("button", { class: "btn", "data-action": "no_insurance", onclick: () => post("/api/decision", { seat, action: "no_insurance" }) }, "No insurance"),
      el("button", { class: "btn", "data-action": "even_money", onclick: () => post("/api/decision", { seat, action: "even_money" }) }, "Even money"));
    return box;
  }
  const allowed = d ? d[2] : [];
  const seat = d ? d[0] : null;
  box.append(el("div", { class: "prompt" }, d ? "Seat " + d[0] + ", hand " + (d[1] + 1) : "No decision due"));
  if (v.simulated) {
    box.append(el("button", { class: "btn hit", "data-action": "hit", disabled: !d,
      onclick: () => post("/api/sim/deal", { n: 1 }) }, "Hit (deal)"));
  } else {
    box.append(el("div", { class: "hint" }, "Hit = deal the next card"));
  }
  for (const a of ACTIONS) {
    box.append(el("button", { class: "btn", "data-action": a, disabled: !allowed.includes(a),
      onclick: () => post("/api/decision", { seat, action: a }) }, a[0].toUpperCase() + a.slice(1)));
  }
  if (allowed.includes("even_money")) {
    box.append(el("button", { class: "btn", "data-action": "even_money", onclick: () => post("/api/decision", { seat, action: "even_money" }) }, "Even money"));
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
  return bar;
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
      const reason = prompt("Why is it safe to go on?", "checked at the table");
      if (reason) fetch("/api/alarm/clear", { method: "POST", body: JSON.stringify({ reason }) });
    } }, "Clear alarm") : null);
}

function render() {
  const root = document.getElementById("app");
  if (!view) { root.replaceChildren(el("div", { class: "waiting" }, "connecting…")); return; }
  const v = view, t = v.table;
  const active = v.decision ? { seat: v.decision[0], hand: v.decision[1] }
    : (v.next.seat ? { seat: v.next.seat, hand: v.next.hand } : null);
  const next = v.next.to ? "next card \u2192 " + v.next.to : v.expecting;
  const seatExtra = (s, bet) => t.betting.open
    ? el("button", { class: "btn small", "data-bet-seat": s, onclick: () => post("/api/bets", { seat: s, main: (bet ? bet.main : 0) + v.limits.min * 10 }) }, "+" + window.Table.money(v.limits.min * 10))
    : null;
  root.replaceChildren(...[
    el("header", {},
      el("span", { class: "name" }, t.name + " · " + t.variant + " · round " + t.round.number),
      renderShoe(t),
      clockBadge(),
      el("span", { id: "conn", class: "conn " + conn }, conn === "live" ? "live" : conn + "…")),
    el("main", {},
      el("section", { class: "play" },
        renderDealer(t),
        el("div", { id: "next", class: "next" + (v.next.to ? "" : " quiet") }, next),
        el("div", { id: "expecting", class: "expecting" }, v.expecting + (t.betting.open ? " · betting open" : "")),
        renderSeats(t, v.limits.seats, active, seatExtra)),
      el("aside", {}, actionsPanel(v), tableControls(v))),
    toast ? el("div", { class: "toast", id: "toast" }, toast) : null,
    alarmOverlay(v)].filter(Boolean));
}

function start() {
  render();
  pollClock();
  setInterval(pollClock, CLOCK_POLL_MS);
  window.panelSocket = liveSocket("/ws/dealer", (m) => { view = m; window.lastSeq = m.seq; render(); }, (s) => { conn = s; render(); });
}
start();
