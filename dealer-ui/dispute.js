// The dispute screen: raise a dispute, and (supervisors) resolve it — pick the operation,
// the card and the reason, preview the corrected round the engine replays, then confirm or
// withdraw. Everything is decided by the server; this only shows and posts.
(function () {
"use strict";
const { el, renderDealer, renderSeats } = window.Table;

// What the supervisor is composing (kept across re-renders of the live view). Everything
// is entered by taps: seats, hands and cards on the table's picture (cards from the list
// too, held ones only there), what a misread card really is from the card picker,
// reasons from presets or the on-screen keyboard (a hardware keyboard works too).
const form = { op: "reject", index: null, to: "", seat: "", hand: "1", reason: "", raiseSeat: "", raiseReason: "",
  raising: false, keyboard: null };

// Reasons people give most, one tap each.
const PRESETS = {
  raiseReason: ["card exposed", "misread card", "card dealt out of order", "wrong decision taken", "player disputes the result"],
  reason: ["exposed on camera", "misread by the shoe", "dealt out of order", "decision taken by mistake", "misdeal: refund all", "checked at the table"],
};

// The presets for `key`, a button that shows the on-screen keyboard, and the keyboard.
function textPad(key, rerender) {
  const pad = el("div", { class: "presets", id: "presets-" + key },
    PRESETS[key].map((p) => el("button", { class: "btn small" + (form[key] === p ? " picked" : ""), "data-preset": p,
      onclick: () => { form[key] = p; rerender(); } }, p)),
    el("button", { class: "btn small", id: "keyboard-" + key, "aria-pressed": form.keyboard === key ? "true" : "false",
      onclick: () => { form.keyboard = form.keyboard === key ? null : key; rerender(); } }, "\u2328 keyboard"));
  return form.keyboard === key ? [pad, keyboard(key, rerender)] : [pad];
}

function keyboard(key, rerender) {
  const press = (k) => {
    form[key] = k === "back" ? form[key].slice(0, -1) : (form[key] + k).slice(0, 200);
    rerender();
  };
  const rows = ["1234567890", "qwertyuiop", "asdfghjkl-", "zxcvbnm,.:"];
  return el("div", { class: "kbd", id: "kbd-" + key },
    rows.flatMap((r) => [...r].map((c) => el("button", { class: "btn", "data-kbd": c, onclick: () => press(c) }, c))),
    el("button", { class: "btn wide", "data-kbd": "space", onclick: () => press(" ") }, "space"),
    el("button", { class: "btn wide", "data-kbd": "back", "aria-label": "delete", onclick: () => press("back") }, "\u232b"),
    el("button", { class: "btn wide", "data-kbd": "clear", onclick: () => { form[key] = ""; rerender(); } }, "clear"));
}

// Taps on a table picture: a seat or one of its hands, or the dealer.
function pickOnPicture(e, onSeat, onDealer) {
  const hand = e.target.closest("[data-hand]");
  const seat = e.target.closest("[data-seat]");
  if (seat) onSeat(Number(seat.dataset.seat), hand ? Number(hand.dataset.hand) : null);
  else if (e.target.closest("#dealer, .dealer") && onDealer) onDealer();
}

// The card a misread card really is: rank, then suit.
function cardPicker(rerender) {
  const rank = form.to.slice(0, -1) || form.to, suit = form.to.length === 2 ? form.to.slice(1) : "";
  const set = (r, s) => { form.to = r + s; rerender(); };
  return el("div", { class: "row", id: "card-picker" }, "It really is",
    el("div", { class: "presets" }, ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"].map((r) =>
      el("button", { class: "btn small" + (rank === r ? " picked" : ""), "data-rank": r, onclick: () => set(r, suit) }, r === "T" ? "10" : r))),
    el("div", { class: "presets" }, [["S", "\u2660"], ["H", "\u2665"], ["D", "\u2666"], ["C", "\u2663"]].map(([k, sym]) =>
      el("button", { class: "btn small" + (suit === k ? " picked" : ""), "data-suit": k, "aria-label": k, onclick: () => set(rank, k) }, sym))),
    el("span", { id: "correct-to" }, form.to || "?"));
}

const OPS = [
  ["reject", "Reject — play on"],
  ["void", "Void a card (burn it)"],
  ["correct", "Correct a card"],
  ["move", "Move a card"],
  ["undo_decision", "Undo last decision"],
  ["cancel", "Cancel the round (refund all)"],
];

function input(attrs, key) {
  return el("input", Object.assign({ value: form[key], oninput: (e) => { form[key] = e.target.value; } }, attrs));
}

function resolution(d) {
  const card = d.cards.find((c) => c.index === form.index);
  const code = card && card.card;
  switch (form.op) {
    case "void": return { op: "void", index: form.index, card: code };
    case "correct": return { op: "correct", index: form.index, card: code, to: form.to.trim().toUpperCase() };
    case "move": return { op: "move", index: form.index, card: code,
      to: form.seat.trim().toLowerCase() === "dealer" ? "dealer" : { hand: { seat: Number(form.seat), hand: Number(form.hand) - 1 } } };
    default: return { op: form.op };
  }
}

// Whether the resolution being composed names everything it needs (a card; what it
// really is; where it went): Preview stays off until then.
function complete() {
  const card = ["void", "correct", "move"].includes(form.op);
  if (card && form.index === null) return false;
  if (form.op === "correct" && !/^(A|[2-9]|T|J|Q|K)[SHDC]$/.test(form.to)) return false;
  if (form.op === "move" && !form.seat) return false;
  return true;
}

// The entry of `d.cards` a tap on the round's picture names. The k-th card shown in a
// place is the k-th card dealt there, except in split hands (a split hand's first card
// was dealt to the hand it came from), where the seat's card with the same code decides.
// The face-down hole card cannot be named: the panel does not know what it is.
function cardOnPicture(e, d) {
  const tapped = e.target.closest("[data-card]");
  if (!tapped || tapped.dataset.card === "back") return null;
  const code = tapped.dataset.card;
  const seat = tapped.closest("[data-seat]"), hand = tapped.closest("[data-hand]");
  const place = seat ? "seat " + seat.dataset.seat + ", hand " + (Number(hand ? hand.dataset.hand : 0) + 1) : "the dealer";
  const k = [...tapped.parentElement.querySelectorAll("[data-card]")].indexOf(tapped);
  const here = d.cards.filter((c) => !c.held && c.place === place);
  if (here[k] && here[k].card === code) return here[k];
  const inSeat = (c) => seat ? (c.place || "").startsWith("seat " + seat.dataset.seat + ",") : c.place === place;
  return d.cards.find((c) => !c.held && c.card === code && inSeat(c)) || null;
}

// The round as it stood when play halted, to tap the disputed card on.
function cardPicture(d, rerender) {
  const t = { round: d.frozen, last_result: null, betting: { open: false, bets: [] } };
  const picked = d.cards.find((c) => c.index === form.index);
  const picture = el("div", { class: "preview", id: "card-picture", onclick: (e) => {
    const c = cardOnPicture(e, d);
    if (c) { form.index = c.index; rerender(); }
  } }, renderDealer(t), renderSeats(t, 7, null, null));
  for (const shown of picture.querySelectorAll("[data-card]")) {
    const c = cardOnPicture({ target: shown }, d);
    if (c && c.index === form.index) shown.classList.add("picked");
  }
  return [el("div", { class: "row", id: "picked-card" }, "The card: ",
    picked ? picked.card + " (" + (picked.held ? "held" : picked.place || "?") + ")" : "? (tap it on the table or in the list)"),
  picture];
}

function cardList(d, rerender) {
  const needsCard = ["void", "correct", "move"].includes(form.op);
  return el("div", { class: "dispute-cards", id: "dispute-cards" }, d.cards.map((c) =>
    el("button", { class: "btn small" + (form.index === c.index ? " picked" : ""), "data-card-index": c.index,
      disabled: !needsCard || c.card === null,
      onclick: () => { form.index = c.index; rerender(); } },
      (c.card || "??") + " \u2192 " + (c.held ? "held" : c.place || "?"))));
}

function preview(p) {
  const t = { round: p.round, last_result: p.result, betting: { open: false, bets: [] } };
  return el("div", { class: "preview", id: "dispute-preview" },
    el("h2", {}, "Preview: " + p.resolution.op.replace("_", " ") + " — proposed by " + p.proposed_by),
    el("p", {}, "Reason: " + p.reason + (p.second_person ? " · needs a second supervisor" : "")),
    renderDealer(t), renderSeats(t, Math.max(1, ...p.round.hands.map((h) => h.seat)), null, null),
    el("p", { id: "preview-expecting" }, p.result ? (p.result.cancelled ? "Round cancelled: every bet refunded" : "Round settled") : "Then: " + p.expecting),
    p.voided.length ? el("p", {}, "Taken out of play: " + p.voided.join(" ")) : null);
}

// The full-screen dispute panel; `post(path, body)` sends, `me` is who is logged in:
// only a supervisor (or admin) gets the resolution controls — the server checks it too.
function overlay(v, post, rerender, me) {
  const supervisor = !!me && (me.role === "supervisor" || me.role === "admin");
  const d = v.dispute;
  if (!d) return form.raising ? raiseScreen(v, post, rerender) : null;
  // An alarm keeps its own look (red, "table locked"); a dispute is purple.
  const alarm = d.origin === "alarm";
  const box = el("div", { id: alarm ? "alarm" : "dispute", class: alarm ? "alarm dispute-alarm" : "alarm dispute" },
    el("h1", {}, alarm ? "ALARM — table locked" : "DISPUTE — round " + d.round + " halted"),
    el("p", { class: "reason", id: alarm ? "alarm-reason" : "dispute-reason" },
      d.reason + (d.seat ? " (seat " + d.seat + ")" : "") + (alarm ? "" : " · raised by " + d.by)),
    v.alarm ? el("p", { class: "todo" }, "What to do: " + v.alarm.expected) : null,
    d.held.length ? el("p", { id: "dispute-held" }, "Held, not in play: " + d.held.join(" ")) : null);
  if (!supervisor) {
    box.append(el("p", { class: "todo", id: "dispute-waiting" }, d.proposal
      ? "A supervisor is confirming a resolution: " + d.proposal.resolution.op.replace("_", " ")
      : "Play is halted: a supervisor resolves this."), cardList(d, rerender));
    return box;
  }
  if (d.proposal) {
    // Both buttons name the proposal this screen shows (its hash): if another supervisor
    // replaced it meanwhile, the server refuses (proposal_changed) and the new one shows.
    const named = { proposal: d.proposal.proposal };
    box.append(preview(d.proposal),
      el("div", { class: "row" },
        el("button", { class: "btn", id: "confirm-resolution", onclick: () => post("/api/disputes/" + d.id + "/confirm", named) }, "Confirm"),
        el("button", { class: "btn", id: "withdraw-resolution", onclick: () => post("/api/disputes/" + d.id + "/withdraw", named) }, "Withdraw")));
    return box;
  }
  const ops = el("div", { class: "presets", id: "resolution-op" }, OPS.map(([op, label]) =>
    el("button", { class: "btn small" + (form.op === op ? " picked" : ""), "data-op": op, "aria-pressed": form.op === op ? "true" : "false",
      onclick: () => { form.op = op; rerender(); } }, label)));
  box.append(ops);
  if (["void", "correct", "move"].includes(form.op)) box.append(...cardPicture(d, rerender));
  box.append(cardList(d, rerender));
  if (form.op === "correct") box.append(cardPicker(rerender));
  if (form.op === "move") {
    const t = { round: d.frozen, last_result: null, betting: { open: false, bets: [] } };
    const to = form.seat === "dealer" ? "the dealer" : form.seat ? "seat " + form.seat + ", hand " + form.hand : "?";
    box.append(el("div", { class: "row", id: "move-to" }, "It went to: " + to + " (tap the hand or the dealer)"),
      el("div", { class: "preview", id: "move-picture", onclick: (e) => pickOnPicture(e,
        (seat, hand) => { form.seat = String(seat); form.hand = String((hand || 0) + 1); rerender(); },
        () => { form.seat = "dealer"; rerender(); }) },
      renderDealer(t), renderSeats(t, 7, form.seat && form.seat !== "dealer" ? { seat: Number(form.seat), hand: Number(form.hand) - 1 } : null, null)));
  }
  box.append(el("div", { class: "row" }, "Reason ", input({ id: "resolution-reason", size: 30, placeholder: "what was seen", inputmode: "none" }, "reason")),
    ...textPad("reason", rerender),
    el("div", { class: "row" },
      el("button", { class: "btn", id: "propose-resolution", disabled: !complete(), onclick: () => post("/api/disputes/" + d.id + "/propose", { resolution: resolution(d), reason: form.reason }) }, "Preview"),
      v.alarm ? el("button", { class: "btn", id: "clear-alarm", onclick: () => post("/api/alarm/clear", { reason: form.reason || "checked at the table" }) }, "Clear alarm") : null));
  return box;
}

// The dealer's "Dispute" control, for the round in play or a provisional one: it opens
// the raise screen (the table's picture to tap the seat on, reasons by taps).
function raiseControls(v, post, rerender) {
  const r = v.table.round;
  const open = r.number > 0 && (!r.settled || v.provisional === r.number);
  if (!open || v.dispute) { form.raising = false; return null; }
  return el("div", { class: "raise", id: "raise-dispute" },
    el("button", { class: "btn wide", id: "open-dispute", onclick: () => { form.raising = true; rerender(); } }, "Dispute\u2026"));
}

function raiseScreen(v, post, rerender) {
  const t = v.table;
  return el("div", { id: "raise", class: "alarm dispute" },
    el("h1", {}, "Dispute round " + t.round.number),
    el("div", { class: "row", id: "dispute-seat" }, form.raiseSeat ? "Seat " + form.raiseSeat : "The whole table",
      " \u2014 tap a seat, or the dealer for the whole table"),
    el("div", { class: "preview", id: "raise-picture", onclick: (e) => pickOnPicture(e,
      (seat) => { form.raiseSeat = String(seat); rerender(); }, () => { form.raiseSeat = ""; rerender(); }) },
      renderDealer(t), renderSeats(t, v.limits.seats, form.raiseSeat ? { seat: Number(form.raiseSeat), hand: -1 } : null, null)),
    el("div", { class: "row" }, "What is wrong ", input({ id: "dispute-text", size: 24, placeholder: "tap a reason", inputmode: "none" }, "raiseReason")),
    ...textPad("raiseReason", rerender),
    el("div", { class: "row" },
      el("button", { class: "btn", id: "raise-dispute-btn", onclick: async () => {
        const seat = form.raiseSeat ? Number(form.raiseSeat) : null;
        if (await post("/api/disputes", { seat, reason: form.raiseReason })) { form.raising = false; form.raiseReason = ""; form.raiseSeat = ""; rerender(); }
      } }, "Raise dispute"),
      el("button", { class: "btn", id: "raise-cancel", onclick: () => { form.raising = false; rerender(); } }, "Cancel")));
}

function provisionalBadge(v) {
  return v.provisional ? el("span", { class: "badge provisional", id: "provisional", title: "round " + v.provisional + " is open to disputes" }, "provisional") : null;
}

window.Dispute = { overlay, raiseControls, provisionalBadge, form };
})();
