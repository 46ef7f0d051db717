// The dispute screen: raise a dispute, and (supervisors) resolve it — pick the operation,
// the card and the reason, preview the corrected round the engine replays, then confirm or
// withdraw. Everything is decided by the server; this only shows and posts.
(function () {
"use strict";
const { el, renderDealer, renderSeats } = window.Table;

// What the supervisor is composing (kept across re-renders of the live view).
const form = { op: "reject", index: null, to: "", seat: "", hand: "1", reason: "", raiseSeat: "", raiseReason: "" };

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
  if (!d) return null;
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
  const select = el("select", { id: "resolution-op", onchange: (e) => { form.op = e.target.value; rerender(); } },
    OPS.map(([op, label]) => el("option", { value: op, selected: form.op === op }, label)));
  box.append(el("div", { class: "row" }, select), cardList(d, rerender));
  if (form.op === "correct") box.append(el("div", { class: "row" }, "It really is ", input({ id: "correct-to", size: 3, placeholder: "7H" }, "to")));
  if (form.op === "move") box.append(el("div", { class: "row" }, "It went to seat ", input({ id: "move-seat", size: 6, placeholder: "2 or dealer" }, "seat"), " hand ", input({ id: "move-hand", size: 2 }, "hand")));
  box.append(el("div", { class: "row" }, "Reason ", input({ id: "resolution-reason", size: 30, placeholder: "what was seen" }, "reason")),
    el("div", { class: "row" },
      el("button", { class: "btn", id: "propose-resolution", onclick: () => post("/api/disputes/" + d.id + "/propose", { resolution: resolution(d), reason: form.reason }) }, "Preview"),
      v.alarm ? el("button", { class: "btn", id: "clear-alarm", onclick: () => post("/api/alarm/clear", { reason: form.reason || "checked at the table" }) }, "Clear alarm") : null));
  return box;
}

// The dealer's "Dispute" control: a seat and a reason, for the round in play or a
// provisional one.
function raiseControls(v, post) {
  const r = v.table.round;
  const open = r.number > 0 && (!r.settled || v.provisional === r.number);
  if (!open || v.dispute) return null;
  return el("div", { class: "raise", id: "raise-dispute" },
    input({ id: "dispute-seat", size: 2, placeholder: "seat" }, "raiseSeat"),
    input({ id: "dispute-text", size: 14, placeholder: "what is wrong" }, "raiseReason"),
    el("button", { class: "btn small", id: "raise-dispute-btn", onclick: () => {
      const seat = form.raiseSeat.trim() ? Number(form.raiseSeat) : null;
      post("/api/disputes", { seat, reason: form.raiseReason });
    } }, "Dispute"));
}

function provisionalBadge(v) {
  return v.provisional ? el("span", { class: "badge provisional", id: "provisional" }, "round " + v.provisional + " provisional") : null;
}

window.Dispute = { overlay, raiseControls, provisionalBadge, form };
})();
