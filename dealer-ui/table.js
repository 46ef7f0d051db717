// Shared rendering of the (redacted) table, for the dealer panel and the public page.
// The server never sends the face-down card: it arrives as null and is drawn as a back.
(function () {
"use strict";

const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };

// A text from the catalogue (i18n.js) when the page loads it; the public page does not
// yet, and reads `en`, the catalogue's English, instead.
function tr(id, args, en) {
  return window.I18n ? window.I18n.t(id, args) : en;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) on(e, k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(typeof c === "string" || typeof c === "number" ? String(c) : c);
  }
  return e;
}

// Handlers live on the element (`handlers`), behind one listener that reads them at the
// event: `morph` can keep a node and give it the newest render's handlers.
function dispatch(ev) {
  const h = this.handlers && this.handlers[ev.type];
  return h ? h.call(this, ev) : undefined;
}

function on(e, type, handler) {
  (e.handlers || (e.handlers = {}))[type] = handler;
  e.addEventListener(type, dispatch);
}

// Elements whose state lives in properties a user changes (value, checkedness, the pick).
const FIELDS = new Set(["INPUT", "SELECT", "TEXTAREA", "OPTION"]);

// Puts `children` in `container`, keeping every node the new render did not change. These
// pages re-render every second and on every update; a tap is a press and a release on the
// same node, and a node replaced between the two swallows the tap (seen on a loaded
// machine, as it would be on a busy phone). A kept element (same tag and attributes) takes
// the new render's handlers, whose closures may hold what its markup does not show, and
// its children are put the same way. An element of the same tag whose attributes changed
// is kept too and takes the new ones (a form field excepted: it is replaced); anything
// else is replaced.
function morph(container, children) {
  const next = children.flat().filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (typeof c === "string" || typeof c === "number") ? document.createTextNode(String(c)) : c);
  const old = Array.from(container.childNodes);
  const shell = (e) => e.cloneNode(false).outerHTML;
  const keep = (o, n) => {
    o.handlers = n.handlers;
    for (const type of Object.keys(n.handlers || {})) o.addEventListener(type, dispatch);
    morph(o, Array.from(n.childNodes));
    return o;
  };
  if (old.length !== next.length) {
    // A list that grew or shrank (a seat taken by another player, a line of the dock
    // coming or going): each new element takes the old one of the same tag and
    // attributes, in order, so a button under a finger stays the same node. And the nodes
    // kept are never taken out of the document, not even to be put straight back: the
    // browser would give the click to their parent, and the tap would be lost. Only the
    // nodes gone are removed, and only what is new (or out of order) is inserted.
    const pool = old.filter((o) => o.nodeType === 1);
    const want = next.map((n) => {
      if (n.nodeType !== 1) return n;
      const i = pool.findIndex((o) => shell(o) === shell(n));
      return i < 0 ? n : keep(pool.splice(i, 1)[0], n);
    });
    const wanted = new Set(want);
    for (const o of old) if (!wanted.has(o)) o.remove();
    let at = container.firstChild;
    for (const n of want) {
      if (n === at) at = at.nextSibling;
      else container.insertBefore(n, at);
    }
    return;
  }
  next.forEach((n, i) => {
    const o = old[i];
    if (o.nodeType !== n.nodeType) { o.replaceWith(n); return; }
    if (n.nodeType !== 1) { if (o.textContent !== n.textContent) o.replaceWith(n); return; }
    if (shell(o) !== shell(n)) {
      // A container whose attributes changed (the page's phase, a busy flag, a class) is
      // kept and takes the new ones: replacing it would take a pressed button inside it
      // out of the document (the tap lost) and drop the focus. A form field is replaced:
      // its live value and checkedness follow the render only on a new node.
      if (o.tagName !== n.tagName || FIELDS.has(n.tagName)) { o.replaceWith(n); return; }
      for (const a of Array.from(o.attributes)) if (!n.hasAttribute(a.name)) o.removeAttribute(a.name);
      for (const a of Array.from(n.attributes)) if (o.getAttribute(a.name) !== a.value) o.setAttribute(a.name, a.value);
    }
    keep(o, n);
  });
}

// A text from the catalogue where the page's catalogue has it, else `en` (the English of
// the player's catalogue): the dealer panel's catalogue and the public page have no card
// words, and must not read a message's id aloud.
function trOr(id, args, en) {
  return window.I18n && window.I18n.has(id) ? window.I18n.t(id, args) : en;
}

const RANK_KEYS = { A: "ace", K: "king", Q: "queen", J: "jack" };
const SUIT_KEYS = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };

// A card in words a screen reader speaks well ("ace of spades", "Pik-Ass"), from the
// catalogue's `card-name` (selectors on the rank and the suit); a face-down card as such.
function cardWords(code) {
  if (code === null || code === undefined) return trOr("card-face-down", {}, "face-down card");
  const r = code.slice(0, -1), suit = SUIT_KEYS[code.slice(-1)] || code.slice(-1);
  const number = r === "T" ? "10" : r;
  const rank = RANK_KEYS[r] || "number";
  return trOr("card-name", { rank, number, suit }, (RANK_KEYS[r] || number) + " of " + suit);
}

// A hand's total in words: "blackjack", "22, bust", "soft 17", "16".
function totalWords(total, soft, natural) {
  if (!total) return "";
  const kind = total > 21 ? "bust" : natural ? "blackjack" : soft ? "soft" : "hard";
  const en = { bust: total + ", bust", blackjack: "blackjack", soft: "soft " + total, hard: String(total) }[kind];
  return trOr("say-total", { kind, total }, en);
}

// One hand as a screen reader hears it: "Seat 4: ace of spades, queen of hearts,
// blackjack"; the dealer's while a card lies face down without a total.
function handWords(who, cards, total, soft, natural) {
  const words = cards.map(cardWords);
  if (!cards.includes(null)) { const w = totalWords(total, soft, natural); if (w) words.push(w); }
  const list = words.join(", ");
  return trOr("say-hand", { who, cards: list }, who + ": " + list);
}

// The hands of the round in `view` whose cards changed since `heard` (an object the caller
// keeps: it is updated, and starts afresh with each round), in words: each new card is
// said once, with its hand, however often the page polls.
function newHandWords(view, heard) {
  const r = view.round;
  if (!r.number || view.betting.open) return [];
  if (heard.round !== r.number) { heard.round = r.number; heard.hands = {}; }
  const out = [];
  const say = (key, who, cards, total, soft, natural) => {
    const now = cards.map((c) => c || "?").join(" ");
    if (!cards.length || heard.hands[key] === now) return;
    heard.hands[key] = now;
    out.push(handWords(who, cards, total, soft, natural));
  };
  for (const h of r.hands) {
    const split = r.hands.filter((x) => x.seat === h.seat).length > 1;
    const who = split ? trOr("say-seat-hand", { seat: h.seat, hand: h.hand + 1 }, "Seat " + h.seat + ", hand " + (h.hand + 1))
      : trOr("seat-label", { seat: h.seat }, "Seat " + h.seat);
    say(h.seat + ":" + h.hand, who, h.cards, h.total, h.soft, !split && h.cards.length === 2 && h.total === 21);
  }
  say("dealer", trOr("dealer-label", {}, "Dealer"), r.dealer, r.dealer_total, r.dealer_soft, r.dealer.length === 2 && r.dealer_total === 21);
  return out;
}

// A card: its index (rank over suit) in the corner that stays visible in a fan, so a
// dealer can read every card of a hand even where the next one covers the rest.
function cardEl(code) {
  if (code === null || code === undefined) {
    return el("div", { class: "card back", "data-card": "back", title: "face down", role: "img", "aria-label": cardWords(null) });
  }
  const rank = code.slice(0, -1) === "T" ? "10" : code.slice(0, -1);
  const suit = code.slice(-1);
  const red = suit === "H" || suit === "D";
  return el("div", { class: "card" + (red ? " red" : ""), "data-card": code, role: "img", "aria-label": cardWords(code) },
    el("span", { class: "index", "aria-hidden": "true" },
      el("span", { class: "rank" }, rank), el("span", { class: "suit" }, SUITS[suit] || suit)),
    el("span", { class: "pip", "aria-hidden": "true" }, SUITS[suit] || suit));
}

// The table's currency (from the view: ISO code, symbol, minor-unit exponent). Amounts
// arrive as whole minor units and are only written here, as the page's language writes
// them (money.js; the panel reads English).
let currency = { code: "EUR", symbol: "\u20ac", exponent: 2 };
function useCurrency(c) { if (c && typeof c.exponent === "number") currency = c; }

function money(v, opts) {
  const lang = window.I18n ? window.I18n.current() : document.documentElement.lang;
  return window.Money.format(v, currency, lang || "en", opts);
}

// A hand's net (returned − staked, minor units) as the player's page's badges and the
// public page's results write it: +€10.00 won, −€10.00 lost, €0.00 even.
function signed(v) {
  if (v > 0) return trOr("net-plus", { amount: money(v) }, "+" + money(v));
  if (v < 0) return trOr("net-minus", { amount: money(-v) }, "\u2212" + money(-v));
  return trOr("net-zero", { amount: money(0) }, money(0));
}

// A side bet (the engine's name for it) in the page's words.
function sideName(id) { return window.I18n ? window.I18n.side(id) : id; }

function totalText(total, soft) {
  if (!total) return "";
  return soft ? tr("hand-soft", { total }, "soft " + total) : String(total);
}

// What a hand's cards say at a glance: BUST over 21, BJ for a two-card 21 not from a split
// (`natural`), or nothing; the settled outcome's badge has the last word.
function handLabel(total, natural) {
  if (total > 21) return el("span", { class: "hand-label bust", "data-label": "bust" }, tr("hand-bust", {}, "BUST"));
  if (natural) return el("span", { class: "hand-label bj", "data-label": "blackjack" }, tr("hand-blackjack", {}, "BJ"));
  return null;
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
    el("div", { class: "label" }, tr("dealer-label", {}, "Dealer")),
    el("div", { class: "cards fan across" }, r.dealer.map(cardEl)),
    el("div", { class: "total", id: "dealer-total" },
      r.dealer.length ? totalText(r.dealer_total, r.dealer_soft) + (r.dealer.includes(null) ? " + ?" : "") : "",
      r.dealer.includes(null) ? null : handLabel(r.dealer_total, r.dealer.length === 2 && r.dealer_total === 21)));
  if (r.peeked === false) box.append(el("div", { class: "peek", id: "peek" }, tr("dealer-blackjack-no", {}, "dealer blackjack: no")));
  if (r.peeked === true) box.append(el("div", { class: "peek yes", id: "peek" }, tr("dealer-blackjack-yes", {}, "dealer blackjack")));
  return box;
}

// The seats in play: every seat while betting is open (so any can take a bet), otherwise
// only the seats with a bet or a hand this round — empty seats take no room.
function seatsInPlay(view, seats) {
  const r = view.round;
  if (view.betting.open) return Array.from({ length: seats }, (_, i) => i + 1);
  const inRound = r.number > 0;
  const set = new Set();
  if (inRound) {
    for (const b of r.bets) set.add(b.seat);
    for (const h of r.hands) set.add(h.seat);
  }
  return [...set].sort((a, b) => a - b);
}

// A seat's bets, one line each (so a narrow seat stays narrow): "bet €25.00", "pair €5.00".
function betLines(bet) {
  if (!bet) return [el("span", {}, tr("no-bet", {}, "no bet"))];
  return [el("span", {}, el("span", { class: "word" }, tr("seat-bet", {}, "bet") + " "), money(bet.main))].concat(bet.side.map(([n, a]) => el("span", { class: "side" }, sideName(n) + " " + money(a))));
}

// seats: number of seats; active: {seat, hand} or null; extra(seat) adds controls.
// The hands of a seat (split hands) stand side by side; each hand's cards cascade
// downwards, every card's index showing, so ten cards fit a seat's column.
function renderSeats(view, seats, active, extra) {
  const r = view.round;
  const done = outcomes(view);
  const shown = seatsInPlay(view, seats);
  const row = el("div", { id: "seats", class: "seats" + (shown.length > 4 && !view.betting.open ? " many" : "") });
  const inRound = r.number > 0;
  if (!shown.length) row.append(el("div", { class: "empty", id: "no-seats" }, inRound ? tr("no-bets-round", {}, "no bets this round") : tr("no-round", {}, "no round yet")));
  for (const s of shown) {
    const bet = (view.betting.open ? view.betting.bets : (inRound ? r.bets : [])).find(b => b.seat === s);
    const hands = inRound && !view.betting.open ? r.hands.filter(h => h.seat === s) : [];
    const seat = el("div", { class: "seat" + (bet ? " betting" : "") + (active && active.seat === s ? " active" : ""), "data-seat": s },
      el("div", { class: "label" }, tr("seat-label", { seat: s }, "Seat " + s)),
      el("div", { class: "bet" }, betLines(bet)));
    const handRow = el("div", { class: "hands" });
    for (const h of hands) {
      const o = done[h.seat + ":" + h.hand];
      const isActive = active && active.seat === s && active.hand === h.hand;
      handRow.append(el("div", { class: "hand" + (isActive ? " active" : ""), "data-hand": h.hand },
        el("div", { class: "cards fan down", style: "--n:" + h.cards.length }, h.cards.map(cardEl)),
        el("div", { class: "total" }, totalText(h.total, h.soft),
          handLabel(h.total, hands.length === 1 && h.cards.length === 2 && h.total === 21)),
        o ? el("div", { class: "badge " + o.outcome, "data-outcome": o.outcome },
          el("span", {}, tr("outcome-" + o.outcome, {}, o.outcome.replace("_", " "))), " ", el("span", {}, money(o.returned))) : null));
    }
    if (hands.length) seat.append(handRow);
    if (extra) { const x = extra(s, bet); if (x) seat.append(x); }
    row.append(seat);
  }
  return row;
}

function renderShoe(view) {
  const s = view.shoe;
  return el("div", { id: "shoe", class: "shoe" },
    el("span", {}, tr("shoe-number", { shoe: s.number }, "shoe " + s.number)),
    el("span", { id: "shoe-out" }, tr("shoe-out", { n: s.dealt }, "out " + s.dealt)),
    el("span", { id: "shoe-left" }, tr("shoe-left", { n: s.remaining }, "left " + s.remaining)),
    el("span", { class: "burned" }, tr("shoe-burned", { n: s.burned }, "burned " + s.burned)),
    s.cut_seen ? el("span", { class: "cut", id: "cut" }, tr("shoe-cut", {}, "cut card: last round")) : null);
}

// A WebSocket that reconnects by itself (backoff up to 5 s) and reports its state:
// "connecting", "live" (open), "reconnecting" (lost; retrying).
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

window.Table = { el, morph, cardEl, cardWords, handWords, newHandWords, money, signed, sideName, useCurrency, renderDealer, renderSeats, seatsInPlay, renderShoe, liveSocket, totalText, handLabel };
})();
