// Shared rendering of the (redacted) table, for the dealer panel and the public page.
// The server never sends the face-down card: it arrives as null and is drawn as a back.
(function () {
"use strict";

const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(typeof c === "string" || typeof c === "number" ? String(c) : c);
  }
  return e;
}

function cardEl(code) {
  if (code === null || code === undefined) {
    return el("div", { class: "card back", "data-card": "back", title: "face down" });
  }
  const rank = code.slice(0, -1) === "T" ? "10" : code.slice(0, -1);
  const suit = code.slice(-1);
  const red = suit === "H" || suit === "D";
  return el("div", { class: "card" + (red ? " red" : ""), "data-card": code },
    el("span", { class: "rank" }, rank), el("span", { class: "suit" }, SUITS[suit] || suit));
}

function money(v) {
  return (v / 100).toFixed(v % 100 === 0 ? 0 : 2);
}

function totalText(total, soft) {
  if (!total) return "";
  return (soft ? "soft " : "") + total;
}

// Outcome per (seat, hand) of the settled round.
function outcomes(view) {
  const out = {};
  const r = view.last_result;
  if (view.round.settled && r && r.round === view.round.number) {
    for (const h of r.hands) out[h.seat + ":" + h.hand] = h;
  }
  return out;
}

function renderDealer(view) {
  const r = view.round;
  const box = el("div", { id: "dealer", class: "dealer" },
    el("div", { class: "label" }, "Dealer"),
    el("div", { class: "cards" }, r.dealer.map(cardEl)),
    el("div", { class: "total", id: "dealer-total" },
      r.dealer.length ? totalText(r.dealer_total, r.dealer_soft) + (r.dealer.includes(null) ? " + ?" : "") : ""));
  if (r.peeked === false) box.append(el("div", { class: "peek", id: "peek" }, "dealer blackjack: no"));
  if (r.peeked === true) box.append(el("div", { class: "peek yes", id: "peek" }, "dealer blackjack"));
  return box;
}

// seats: number of seats; active: {seat, hand} or null; extra(seat) adds controls.
function renderSeats(view, seats, active, extra) {
  const r = view.round;
  const done = outcomes(view);
  const row = el("div", { id: "seats", class: "seats" });
  const inRound = r.number > 0;
  for (let s = 1; s <= seats; s++) {
    const bet = (view.betting.open ? view.betting.bets : (inRound ? r.bets : [])).find(b => b.seat === s);
    const hands = inRound ? r.hands.filter(h => h.seat === s) : [];
    const seat = el("div", { class: "seat" + (bet ? " betting" : "") + (active && active.seat === s ? " active" : ""), "data-seat": s },
      el("div", { class: "label" }, "Seat " + s),
      el("div", { class: "bet" }, bet ? "bet " + money(bet.main) + bet.side.map(([n, a]) => " · " + n + " " + money(a)).join("") : "—"));
    for (const h of hands) {
      const o = done[h.seat + ":" + h.hand];
      const isActive = active && active.seat === s && active.hand === h.hand;
      seat.append(el("div", { class: "hand" + (isActive ? " active" : ""), "data-hand": h.hand },
        el("div", { class: "cards" }, h.cards.map(cardEl)),
        el("div", { class: "total" }, totalText(h.total, h.soft)),
        o ? el("div", { class: "badge " + o.outcome, "data-outcome": o.outcome }, o.outcome.replace("_", " ") + " " + money(o.returned)) : null));
    }
    if (extra) { const x = extra(s, bet); if (x) seat.append(x); }
    row.append(seat);
  }
  return row;
}

function renderShoe(view) {
  const s = view.shoe;
  return el("div", { id: "shoe", class: "shoe" },
    el("span", {}, "shoe " + s.number),
    el("span", { id: "shoe-out" }, "out " + s.dealt),
    el("span", { id: "shoe-left" }, "left " + s.remaining),
    el("span", {}, "burned " + s.burned),
    s.cut_seen ? el("span", { class: "cut", id: "cut" }, "cut card seen: last round") : null);
}

// A WebSocket that reconnects by itself (backoff up to 5 s) and reports its state.
function liveSocket(path, onMessage, onState) {
  let delay = 250, ws = null, stopped = false;
  const url = () => (location.protocol === "https:" ? "wss://" : "ws://") + location.host +
    (typeof path === "function" ? path() : path);
  function open() {
    onState("connecting");
    ws = new WebSocket(url());
    ws.onopen = () => { delay = 250; onState("live"); };
    ws.onmessage = (e) => { try { onMessage(JSON.parse(e.data)); } catch (err) { console.error(err); } };
    ws.onclose = () => {
      if (stopped) return;
      onState("reconnecting");
      // Closed meanwhile (a logout): no new connection.
      setTimeout(() => { if (!stopped) open(); }, delay);
      delay = Math.min(delay * 2, 5000);
    };
    ws.onerror = () => ws.close();
  }
  open();
  return { close() { stopped = true; if (ws) ws.close(); }, drop() { if (ws) ws.close(); } };
}

window.Table = { el, cardEl, money, renderDealer, renderSeats, renderShoe, liveSocket, totalText };
})();
