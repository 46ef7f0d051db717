// The dispute screen: raise a dispute, and (supervisors) resolve it — pick the operation,
// the card and the reason, preview the corrected round the engine replays, then confirm or
// withdraw. Everything is decided by the server; this only shows and posts. The server also
// says which resolutions the round takes (`offers`): the others are shown off, with why.
//
// Every screen here is one sheet that fits 800x480 without scrolling: a head (what
// happened), a body (the picture on the left, the choices on the right; the on-screen
// keyboard in its place while typing) and a foot holding the action buttons, always on
// screen.
(function () {
"use strict";
const { el, renderDealer, renderSeats } = window.Table;
const T = (id, args) => window.I18n.t(id, args);

// A card as people write it ("TH" is the shoe's code; "10♥" is what a dealer reads), a
// code still being picked with "?" for its missing part.
const SUIT_SIGNS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
function shown(code) {
  if (!code) return "??";
  const suit = SUIT_SIGNS[code.slice(-1)] ? code.slice(-1) : "";
  const rank = suit ? code.slice(0, -1) : code;
  return (rank === "T" ? "10" : rank || "?") + (suit ? SUIT_SIGNS[suit] : "?");
}

// What the supervisor is composing (kept across re-renders of the live view). Everything
// is entered by taps: seats, hands and cards on the table's picture (cards from the list
// too, held ones only there), what a misread card really is from the card picker,
// reasons from presets or the on-screen keyboard (a hardware keyboard works too).
const form = { op: "reject", index: null, to: "", seat: "", hand: "1", reason: "", raiseSeat: "", raiseReason: "",
  clearReason: "", raising: false, keyboard: null, pickTarget: false };

// Reasons people give most, one tap each: catalogue ids (the text shown is what is sent).
const PRESETS = {
  raiseReason: ["preset-card-exposed", "preset-misread-card", "preset-out-of-order", "preset-wrong-decision", "preset-player-disputes"],
  reason: ["preset-exposed-on-camera", "preset-misread-by-shoe", "preset-dealt-out-of-order", "preset-decision-by-mistake", "preset-misdeal", "preset-checked"],
  clearReason: ["preset-checked", "preset-fault-fixed", "preset-card-aside"],
};

// The presets for `key` and a button that shows the on-screen keyboard in the body.
function presets(key, rerender) {
  return el("div", { class: "presets", id: "presets-" + key },
    PRESETS[key].map((id) => {
      const p = T(id);
      return el("button", { class: "btn small" + (form[key] === p ? " picked" : ""), "data-preset": p,
        "aria-pressed": form[key] === p ? "true" : "false", onclick: () => { form[key] = p; rerender(); } }, p);
    }),
    el("button", { class: "btn small", id: "keyboard-" + key, "aria-pressed": form.keyboard === key ? "true" : "false",
      onclick: () => { form.keyboard = form.keyboard === key ? null : key; rerender(); } }, T("keyboard")));
}

// The reason as typed so far, shown (and kept in an input for a hardware keyboard).
function reasonField(key, id, placeholder) {
  return el("label", { class: "row reason-row" }, el("span", {}, T("reason")),
    el("input", { id, value: form[key], placeholder, inputmode: "none", autocomplete: "off",
      oninput: (e) => { form[key] = e.target.value; } }));
}

function keyboard(key, rerender) {
  const press = (k) => {
    form[key] = k === "back" ? form[key].slice(0, -1) : (form[key] + k).slice(0, 200);
    rerender();
  };
  const rows = ["1234567890", "qwertyuiop", "asdfghjkl-", "zxcvbnm,.:"];
  return el("div", { class: "kbd", id: "kbd-" + key },
    rows.flatMap((r) => [...r].map((c) => el("button", { class: "btn", "data-kbd": c, onclick: () => press(c) }, c))),
    el("button", { class: "btn wide", "data-kbd": "space", onclick: () => press(" ") }, T("key-space")),
    el("button", { class: "btn wide", "data-kbd": "back", "aria-label": T("key-delete"), onclick: () => press("back") }, "\u232b"),
    el("button", { class: "btn wide", "data-kbd": "clear", onclick: () => { form[key] = ""; rerender(); } }, T("key-clear")),
    el("button", { class: "btn wide done", "data-kbd": "done", onclick: () => { form.keyboard = null; rerender(); } }, "OK"));
}

// A sheet: head, body, foot (null parts left out). While the keyboard for one of `keys`
// is up, it takes the body's place, with the text typed so far above it.
function sheet(attrs, head, body, foot, keys) {
  const typing = keys && keys.includes(form.keyboard) ? form.keyboard : null;
  return el("div", Object.assign({ role: "dialog", "aria-modal": "true" }, attrs, { class: attrs.class + " sheet" }),
    el("div", { class: "sheet-head" }, head),
    typing ? el("div", { class: "sheet-body typing" },
      el("div", { class: "typed", id: "typed-" + typing }, form[typing] || "\u00a0"), keyboard(typing, body.rerender))
      : el("div", { class: "sheet-body" }, body.parts),
    foot ? el("div", { class: "sheet-foot" }, foot) : null);
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
  return el("div", { class: "picker", id: "card-picker" },
    el("span", {}, T("really-is")),
    el("div", { class: "presets ranks" }, ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"].map((r) =>
      el("button", { class: "btn small" + (rank === r ? " picked" : ""), "data-rank": r, onclick: () => set(r, suit) }, r === "T" ? "10" : r))),
    el("div", { class: "presets" }, [["S", "\u2660", "spades"], ["H", "\u2665", "hearts"], ["D", "\u2666", "diamonds"], ["C", "\u2663", "clubs"]].map(([k, sym, name]) =>
      el("button", { class: "btn small suit-" + k + (suit === k ? " picked" : ""), "data-suit": k, "aria-label": name, onclick: () => set(rank, k) }, sym))),
    el("strong", { id: "correct-to" }, form.to ? shown(form.to) : "?"));
}

const OPS = ["reject", "void", "correct", "move", "undo_decision", "cancel"];
const CARD_OPS = ["void", "correct", "move"];

// The server's word on `op` for this round (absent from an older server: offered).
function offer(d, op) {
  return (d.offers || []).find((o) => o.op === op) || { op, possible: true };
}

// Whether the card at `index` may be named for the chosen operation.
function cardAllowed(d, index) {
  const o = offer(d, form.op);
  return !o.cards || o.cards.includes(index);
}

function resolution(d) {
  const card = d.cards.find((c) => c.index === form.index);
  const code = card && card.card;
  switch (form.op) {
    case "void": return { op: "void", index: form.index, card: code };
    case "correct": return { op: "correct", index: form.index, card: code, to: form.to.trim().toUpperCase() };
    case "move": return { op: "move", index: form.index, card: code,
      to: form.seat === "dealer" ? "dealer" : { hand: { seat: Number(form.seat), hand: Number(form.hand) - 1 } } };
    default: return { op: form.op };
  }
}

// Whether the resolution being composed names everything it needs (a card the server
// allows; what it really is; where it went) and the server offers it: Preview stays off
// until then.
function complete(d) {
  if (!offer(d, form.op).possible) return false;
  const card = CARD_OPS.includes(form.op);
  if (card && (form.index === null || !cardAllowed(d, form.index))) return false;
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

function frozenTable(d) {
  return { round: d.frozen, last_result: null, betting: { open: false, bets: [] } };
}

// The round as it stood when play halted. For a card operation a tap picks the card; for
// a move, once the card is picked, a tap says where it went (the toggle above switches).
function picture(d, rerender, interactive) {
  const t = frozenTable(d);
  const target = form.op === "move" && form.pickTarget;
  const activeSeat = target && form.seat && form.seat !== "dealer" ? { seat: Number(form.seat), hand: Number(form.hand) - 1 } : null;
  const pic = el("div", { class: "preview picture" + (target ? " targeting" : ""), id: "card-picture", onclick: (e) => {
    if (!interactive) return;
    if (target) {
      pickOnPicture(e, (seat, hand) => { form.seat = String(seat); form.hand = String((hand || 0) + 1); rerender(); },
        () => { form.seat = "dealer"; rerender(); });
      return;
    }
    if (!CARD_OPS.includes(form.op)) return;
    const c = cardOnPicture(e, d);
    if (c && cardAllowed(d, c.index)) {
      form.index = c.index;
      if (form.op === "move") form.pickTarget = true;
      rerender();
    }
  } }, renderDealer(t), renderSeats(t, 7, activeSeat, null));
  for (const shown of pic.querySelectorAll("[data-card]")) {
    const c = cardOnPicture({ target: shown }, d);
    if (c && c.index === form.index && CARD_OPS.includes(form.op)) shown.classList.add("picked");
  }
  if (target && form.seat === "dealer") pic.querySelector(".dealer").classList.add("target");
  return pic;
}

function cardList(d, rerender, interactive) {
  const needsCard = interactive && CARD_OPS.includes(form.op);
  const opName = T("op-short-" + form.op);
  return el("div", { class: "dispute-cards", id: "dispute-cards" }, d.cards.map((c) => {
    const allowed = cardAllowed(d, c.index);
    // The code alone for a card on the picture (where it went shows there, and in the
    // button's name); held and burned cards, which the picture lacks, say so.
    return el("button", { class: "btn small" + (form.index === c.index && needsCard ? " picked" : ""), "data-card-index": c.index,
      disabled: !needsCard || c.card === null || !allowed,
      title: needsCard && !allowed ? T("offer-card-off", { op: opName }) : null,
      "aria-label": shown(c.card) + " \u2192 " + (c.held ? T("card-held") : c.place || "?"),
      onclick: () => { form.index = c.index; if (form.op === "move") form.pickTarget = true; rerender(); } },
      shown(c.card) + (c.held ? " " + T("card-held") : /burn/.test(c.place || "") ? " " + T("card-burned") : ""));
  }));
}

function pickedLine(d) {
  const picked = d.cards.find((c) => c.index === form.index);
  return el("div", { class: "picked-line", id: "picked-card" },
    picked ? T("picked-card", { card: shown(picked.card) + " (" + (picked.held ? T("card-held") : picked.place || "?") + ")" }) : T("picked-card-none"));
}

// Where a moved card went, and the toggle between picking the card and its place.
function moveTarget(rerender) {
  const to = form.seat === "dealer" ? T("went-to-dealer") : form.seat ? T("place-seat-hand", { seat: form.seat, hand: form.hand }) : "?";
  return el("div", { class: "row", id: "move-to" },
    el("button", { class: "btn small" + (form.pickTarget ? "" : " picked"), id: "pick-card", "aria-pressed": form.pickTarget ? "false" : "true",
      onclick: () => { form.pickTarget = false; rerender(); } }, T("pick-the-card")),
    el("button", { class: "btn small" + (form.pickTarget ? " picked" : ""), id: "pick-to", "aria-pressed": form.pickTarget ? "true" : "false",
      onclick: () => { form.pickTarget = true; rerender(); } }, T("went-to", { to })));
}

function preview(p) {
  const t = { round: p.round, last_result: p.result, betting: { open: false, bets: [] } };
  const by = window.I18n.person(p.proposed_by);
  return el("div", { class: "preview picture", id: "dispute-preview" },
    el("h2", {}, T("preview-title", { op: T("op-short-" + p.resolution.op), name: by })),
    el("p", {}, T("preview-reason", { reason: p.reason }) + (p.second_person ? " \u00b7 " + T("preview-second") : "")),
    renderDealer(t), renderSeats(t, Math.max(1, ...p.round.hands.map((h) => h.seat)), null, null),
    el("p", { id: "preview-expecting" }, p.result ? (p.result.cancelled ? T("preview-cancelled") : T("preview-settled")) : T("preview-then", { next: window.I18n.expecting(p.expecting) })),
    p.voided.length ? el("p", {}, T("preview-voided", { cards: p.voided.map(shown).join(" ") })) : null);
}

// The operations as buttons, each the server does not offer off with why.
function opButtons(d, rerender) {
  return el("div", { class: "ops", id: "resolution-op" }, OPS.map((op) => {
    const o = offer(d, op);
    const why = o.possible ? null : (window.I18n.has("offer-" + o.why) ? T("offer-" + o.why) : T("error-unknown", { code: o.why }));
    return el("button", { class: "btn small op" + (form.op === op ? " picked" : ""), "data-op": op, "aria-pressed": form.op === op ? "true" : "false",
      disabled: !o.possible, title: why, "data-why": o.why || null,
      onclick: () => { form.op = op; form.pickTarget = false; if (form.index !== null && !cardAllowed(d, form.index)) form.index = null; rerender(); } },
      el("span", {}, T("op-" + op)), why ? el("span", { class: "why" }, why) : null);
  }));
}

// The head of a dispute or alarm sheet: what happened and, for an alarm, what to do.
function head(v, d) {
  const alarm = d.origin === "alarm";
  const said = alarm && v.alarm ? window.I18n.alarm(v.alarm) : null;
  return [
    el("h1", { id: alarm ? "alarm-title" : "dispute-title" }, alarm ? T("alarm-title") : T("dispute-title", { round: String(d.round) })),
    el("p", { class: "reason", id: alarm ? "alarm-reason" : "dispute-reason", "data-kind": said ? said.kind : null },
      (said ? said.title : d.reason) + (d.seat ? " " + T("dispute-seat-suffix", { seat: d.seat }) : "")
      + (alarm ? "" : " \u00b7 " + T("dispute-raised-by", { name: window.I18n.person(d.by) }))),
    said ? el("p", { class: "todo", id: "alarm-todo" }, T("alarm-todo", { todo: said.todo })) : null,
    d.held.length ? el("p", { id: "dispute-held", class: "held" }, T("dispute-held", { cards: d.held.map(shown).join(" ") })) : null];
}

// The head with the operations under it, across the sheet's width.
function headWithOps(v, d, rerender) {
  return head(v, d).concat([opButtons(d, rerender)]);
}

// The full-screen dispute panel; `post(path, body)` sends, `me` is who is logged in:
// only a supervisor (or admin) gets the resolution controls — the server checks it too.
function overlay(v, post, rerender, me, logout) {
  // Whoever is logged in can hand the panel over from the sheet (the header is under it).
  const out = el("button", { class: "btn small", id: "sheet-logout", onclick: logout }, T("log-out"));
  const supervisor = !!me && (me.role === "supervisor" || me.role === "admin");
  const d = v.dispute;
  if (!d) return form.raising ? raiseScreen(v, post, rerender) : null;
  // An alarm keeps its own look (red, "table locked"); a dispute is purple.
  const alarm = d.origin === "alarm";
  const attrs = { id: alarm ? "alarm" : "dispute", class: alarm ? "alarm dispute-alarm" : "alarm dispute",
    "aria-labelledby": alarm ? "alarm-title" : "dispute-title" };
  if (!supervisor) {
    return sheet(attrs, head(v, d), { parts: [
      el("div", { class: "sheet-main" }, picture(d, rerender, false), cardList(d, rerender, false)),
      el("div", { class: "sheet-side" }, el("p", { class: "todo", id: "dispute-waiting" }, d.proposal
        ? T("dispute-confirming", { op: T("op-short-" + d.proposal.resolution.op) }) : T("dispute-waiting")))] }, [out]);
  }
  if (d.proposal) {
    // Both buttons name the proposal this screen shows (its hash): if another supervisor
    // replaced it meanwhile, the server refuses (proposal_changed) and the new one shows.
    const named = { proposal: d.proposal.proposal };
    return sheet(attrs, head(v, d), { parts: [el("div", { class: "sheet-main wide" }, preview(d.proposal))] }, [
      el("button", { class: "btn", id: "confirm-resolution", onclick: () => post("/api/disputes/" + d.id + "/confirm", named) }, T("confirm")),
      el("button", { class: "btn", id: "withdraw-resolution", onclick: () => post("/api/disputes/" + d.id + "/withdraw", named) }, T("withdraw")), out]);
  }
  // An operation the server no longer offers (the round moved on) is not kept chosen.
  if (!offer(d, form.op).possible) form.op = (d.offers || []).some((o) => o.op === "reject" && o.possible) ? "reject" : form.op;
  const card = CARD_OPS.includes(form.op);
  const main = [picture(d, rerender, true)];
  // Once a misread card is picked, what it really is takes the list's place (the picture
  // still picks another card; the list comes back with any other operation).
  if (form.op === "correct" && form.index !== null) main.push(cardPicker(rerender));
  else main.push(cardList(d, rerender, true));
  const side = [form.op === "move" ? moveTarget(rerender) : null,
    reasonField("reason", "resolution-reason", T("reason-placeholder")), presets("reason", rerender)];
  const foot = [
    card ? pickedLine(d) : null,
    el("button", { class: "btn", id: "propose-resolution", disabled: !complete(d),
      onclick: () => post("/api/disputes/" + d.id + "/propose", { resolution: resolution(d), reason: form.reason }) }, T("preview")),
    v.alarm ? clearButton(post, "reason") : null, out];
  return sheet(attrs, headWithOps(v, d, rerender), { parts: [el("div", { class: "sheet-main" }, main), el("div", { class: "sheet-side" }, side)], rerender },
    foot, ["reason"]);
}

// Clearing an alarm: a reason by taps (presets, the keyboard) and the button, for the
// alarm screen without a dispute.
function clearPad(rerender) {
  if (form.keyboard === "clearReason") {
    return [el("div", { class: "typed", id: "typed-clearReason" }, form.clearReason || "\u00a0"), keyboard("clearReason", rerender)];
  }
  return [el("p", { class: "hint" }, T("clear-reason")), reasonField("clearReason", "clear-reason", T("reason-placeholder")), presets("clearReason", rerender)];
}

function clearButton(post, key) {
  const k = key || "clearReason";
  return el("button", { class: "btn", id: "clear-alarm", title: T("clear-alarm-who"),
    onclick: () => post("/api/alarm/clear", { reason: form[k] || T("preset-checked") }) }, T("clear-alarm"));
}

// The dealer's "Dispute" control, for the round in play or a provisional one: it opens
// the raise screen (the table's picture to tap the seat on, reasons by taps).
function raiseControls(v, post, rerender) {
  const r = v.table.round;
  const open = r.number > 0 && (!r.settled || v.provisional === r.number);
  if (!open || v.dispute) { form.raising = false; return null; }
  return el("div", { class: "raise", id: "raise-dispute" },
    el("button", { class: "btn wide", id: "open-dispute", onclick: () => { form.raising = true; rerender(); } }, T("open-dispute")));
}

function raiseScreen(v, post, rerender) {
  const t = v.table;
  return sheet({ id: "raise", class: "alarm dispute", "aria-labelledby": "raise-title" }, [
    el("h1", { id: "raise-title" }, T("dispute-raise-title", { round: String(t.round.number) })),
    el("p", { class: "row", id: "dispute-seat" }, form.raiseSeat ? T("dispute-seat", { seat: form.raiseSeat }) : T("dispute-whole-table"),
      " \u2014 " + T("dispute-tap-seat"))], { parts: [
    el("div", { class: "sheet-main" }, el("div", { class: "preview picture", id: "raise-picture", onclick: (e) => pickOnPicture(e,
      (seat) => { form.raiseSeat = String(seat); rerender(); }, () => { form.raiseSeat = ""; rerender(); }) },
    renderDealer(t), renderSeats(t, v.limits.seats, form.raiseSeat ? { seat: Number(form.raiseSeat), hand: -1 } : null, null))),
    el("div", { class: "sheet-side" },
      el("label", { class: "row reason-row" }, el("span", {}, T("dispute-what")),
        el("input", { id: "dispute-text", value: form.raiseReason, placeholder: T("dispute-tap-reason"), inputmode: "none", autocomplete: "off",
          oninput: (e) => { form.raiseReason = e.target.value; } })),
      presets("raiseReason", rerender))], rerender }, [
    el("button", { class: "btn", id: "raise-dispute-btn", onclick: async () => {
      const seat = form.raiseSeat ? Number(form.raiseSeat) : null;
      if (await post("/api/disputes", { seat, reason: form.raiseReason })) { form.raising = false; form.raiseReason = ""; form.raiseSeat = ""; rerender(); }
    } }, T("raise-dispute")),
    el("button", { class: "btn", id: "raise-cancel", onclick: () => { form.raising = false; form.keyboard = null; rerender(); } }, T("cancel"))],
  ["raiseReason"]);
}

function provisionalBadge(v) {
  return v.provisional ? el("span", { class: "badge provisional", id: "provisional", title: T("provisional-why", { round: String(v.provisional) }) }, T("provisional")) : null;
}

window.Dispute = { overlay, raiseControls, provisionalBadge, clearPad, clearButton, form };
})();
