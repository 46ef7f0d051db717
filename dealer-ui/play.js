// The remote player's page (/play#t=TOKEN, the launch link), laid out like a live-casino
// client: the table (the dealer's hand and the seats in play, or the bet spots while bets
// are open) and the player's dock (balance and total bet, the timer, a chip tray or the
// decision buttons in thumb reach). Upright phones stack them; landscape phones and
// desktops put the dock beside the table, so nothing that matters needs scrolling.
// Every word comes from the Fluent catalogue (play-LANG.ftl through i18n.js) with amounts
// written in the table's currency; no API code or minor-unit amount reaches the player.
// Polls /api/play/state (the countdowns are the server's: remaining_ms); follows
// /ws/public only for trust.js's checks of the seals and signatures.
"use strict";
const { el, morph, renderDealer, renderSeats, money, signed, sideName, useCurrency } = window.Table;
const t = (id, args) => window.I18n.t(id, args);

// The launch token stays in this tab (the fragment never reaches a server log).
const fromHash = new URLSearchParams(location.hash.slice(1)).get("t");
if (fromHash) { sessionStorage.setItem("croupier.play", fromHash); history.replaceState(null, "", location.pathname); }
const token = sessionStorage.getItem("croupier.play") || "";

// What the page knows: the last state, when it came (countdowns count from it), and the
// connection: "connecting", "live", "lost" (retrying), "expired" (the session ended),
// "closed" (no remote play at this table).
let state = null, fetchedAt = 0, conn = "connecting", attempt = 0, busy = false;
let message = "";          // the last refusal, in plain words
let notice = null;         // {kind, text}: what the timeout rule did, bets closed, a correction
let dialog = null;         // "help" | "history" | "reality" | null
let help = null, historyData = null;
window.playState = () => state;
window.playConn = () => conn;

const trust = new window.Trust.Checker(() => render());
// The checks' words from the page's catalogue (`trust-CODE`).
const trustWords = (code, args) => t("trust-" + code, args);
window.playTrust = trust;
window.Table.liveSocket("/ws/public", (m) => trust.message(m), () => {});

// A refusal with its code, and the HTTP status when the server answered.
class Refusal extends Error {
  constructor(code, status, detail) { super(code); this.code = code; this.status = status; this.detail = detail || {}; }
}

async function api(method, path, body) {
  let r;
  // A server that stopped answering (not refusing) is a lost connection too.
  const limit = new AbortController();
  const cut = setTimeout(() => limit.abort(), 8000);
  try {
    r = await fetch(path, {
      method, headers: Object.assign({ Authorization: "Bearer " + token }, body ? { "Content-Type": "application/json" } : {}),
      body: body ? JSON.stringify(body) : undefined, signal: limit.signal,
    });
  } catch (e) { throw new Refusal("network", 0); }
  finally { clearTimeout(cut); }
  const j = await r.json().catch(() => ({}));
  if (!r.ok) {
    const e = j.error || {};
    // The edge's own refusals (busy, timeouts) and a server that is restarting read as a
    // connection problem: the page retries by itself.
    const code = e.code || ([408, 429, 502, 503, 504].includes(r.status) ? "busy" : "unknown");
    throw new Refusal(code, r.status, e);
  }
  return j;
}

// A refusal in the player's words. The server's text is for logs: it may name codes and
// minor units, so only the code is read, and amounts come from the state.
function say(e) {
  const s = state || {};
  const id = "error-" + e.code;
  if (e.code === "insufficient_funds") return t(id, { balance: money(s.balance || 0) });
  if (e.code === "invalid_bet") {
    const l = s.limits || { min: 0, max: 0 };
    return t(id, { min: money(l.min), max: money(l.max), side: (s.game && s.game.side_bets || []).length ? "yes" : "no" });
  }
  return window.I18n.has(id) ? t(id) : t("error-unknown");
}

async function act(path, body) {
  if (busy || conn !== "live") return false;
  busy = true; render();
  let ok = true;
  try { await api("POST", path, body); message = ""; }
  catch (e) { message = say(e); ok = false; if (e.code === "unauthenticated") conn = "expired"; }
  busy = false;
  await refresh();
  return ok;
}

// ---- time

function leftMs(ms) { return Math.max(0, ms - (Date.now() - fetchedAt)); }
function secs(ms) { return Math.ceil(leftMs(ms) / 1000); }

// The server's time now (the session clock counts on it, not on the phone's clock).
function serverNow() {
  const s = state && state.session;
  return s ? s.now_ms + (Date.now() - fetchedAt) : Date.now();
}

function hms(ms) {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600), m = Math.floor(total / 60) % 60, sec = total % 60;
  return (h ? h + ":" + String(m).padStart(2, "0") : String(m)) + ":" + String(sec).padStart(2, "0");
}

// Screen readers hear what changes, each thing once however often the page polls: the
// cards as they come (with their hand and its total), the countdowns at 10 and 5
// seconds, a turn opening, bets closing and the round's result through the polite live
// region (#announce); a halt of the table through the assertive one (#alert). The timers
// themselves are role="timer", silent by default. `key` names what is said (with its
// round), so it is said once; what a render finds new is said together, in order.
const spoken = new Set();
const pending = { polite: [], assertive: [] };
const liveText = { polite: "", assertive: "" };
function announce(key, text, urgent) {
  if (spoken.has(key)) return;
  spoken.add(key);
  pending[urgent ? "assertive" : "polite"].push(text);
}

// The text of a live region for this render: what is new, or what it said before (an
// unchanged text is not read again).
function liveNow(kind) {
  if (pending[kind].length) { liveText[kind] = pending[kind].join(" "); pending[kind] = []; }
  return liveText[kind];
}

// The cards dealt since the last render, hand by hand (table.js says them in words).
const heard = { round: 0, hands: {} };
function sayCards(s) {
  for (const text of window.Table.newHandWords(s.view, heard)) pending.polite.push(text);
}

// The halt the page said last: a new one is said at once, its end once.
let saidHalt = null;
function sayHalt(halt) {
  const kind = halt ? halt.kind : null;
  if (kind === saidHalt) return;
  if (halt) pending.assertive.push(t("say-halt", { title: halt.title, text: halt.text }));
  else if (saidHalt) pending.assertive.push(t("say-resumed"));
  saidHalt = kind;
}

// A bar timer: the seconds in words, a bar that empties, amber under half, red for the
// last 5 s.
function timer(id, remaining, total, label, key) {
  const left = leftMs(remaining);
  const s = Math.ceil(left / 1000);
  const share = total > 0 ? Math.max(0, Math.min(1, left / total)) : 0;
  const level = s <= 5 ? "end" : share < 0.5 ? "warn" : "ok";
  // Said once as each mark (10 s, 5 s) is passed, with the seconds actually left: the page
  // redraws once a second, and a busy phone's late redraw can skip the mark's second. Not
  // with a second or less left, too late to help (and the catalogues' words are plural).
  const mark = s < 2 ? 0 : s <= 5 ? 5 : s <= 10 ? 10 : 0;
  if (mark) announce(id + key + ":" + mark, t("timer-left", { seconds: s }));
  if (s <= 5 && s > 0) window.Cues.tick(id + key + ":" + s);
  return el("div", { class: "pp-timer " + level, id, role: "timer", "aria-label": label },
    el("div", { class: "pp-timer-text" }, el("span", {}, label)),
    el("div", { class: "pp-bar", "aria-hidden": "true" }, el("div", { class: "pp-fill", style: "width:" + (share * 100).toFixed(1) + "%" })));
}

// ---- deciding

const ACTIONS = ["hit", "stand", "double", "split", "surrender", "insurance", "no_insurance", "even_money"];
const toldTimeouts = new Set();   // the table's timeouts already said (round:seq:seat:hand)

// The turns the table asks of the player now. One turn: its words, its timer and big
// buttons two by two. Several (a common draw's boxes, insurance behind seats): the step's
// one timer, then a row per turn — its words and its buttons side by side — so every box
// stays on screen.
function turnDock(s, out) {
  const many = s.turns.length > 1;
  s.turns.forEach((turn, i) => {
    const where = s.game.common_draw ? t("your-box", { box: turn.seat, hand: turn.hand ? turn.hand + 1 : 0 })
      : turn.kind === "insurance" ? (turn.behind ? t("insurance-behind", { seat: turn.seat }) : t("insurance-question"))
      : (myHandsCount(s, turn.seat) > 1 ? t("your-turn-hand", { seat: turn.seat, hand: turn.hand + 1 }) : t("your-turn", { seat: turn.seat }));
    if (i === 0) {
      const key = "turn" + s.view.round.number + ":" + turn.seat + ":" + turn.hand + turn.kind;
      if (!spoken.has(key)) window.Cues.turn();
      announce(key, where);
    }
    const timed = s.turns.find((x) => x.remaining_ms !== null);
    if (!many) out.push(el("div", { class: "pp-turn", id: "turn", "data-seat": turn.seat }, el("strong", {}, where)));
    if ((!many || i === 0) && timed) {
      // A new decision (after a hit, on the next hand) has its own countdown.
      const key = [s.view.round.number, timed.seat, timed.hand, timed.kind, myCards(s, timed)].join(":");
      out.push(timer("turn-left", timed.remaining_ms, s.timing ? s.timing.decision_ms : 0, t("decide-in", { seconds: secs(timed.remaining_ms) }), key));
    }
    const body = (a) => Object.assign({ action: a }, s.game.common_draw ? { box: turn.seat } : { seat: turn.seat });
    const allowed = ACTIONS.filter((a) => turn.allowed.includes(a));
    const buttons = el("div", { class: "pp-actions n" + allowed.length + (many ? " inline" : ""), id: i ? null : "actions", "data-seat": turn.seat, "data-behind": turn.behind ? "true" : null },
      allowed.map((a) => button(t("action-" + a), () => act("/api/play/decision", body(a)), { "data-action": a, class: "pp-act " + a })));
    out.push(many ? el("div", { class: "pp-turn-row", id: i ? null : "turn", "data-seat": turn.seat }, el("strong", {}, where), buttons) : buttons);
  });
}

function myHandsCount(s, seat) { return (s.view.round.hands || []).filter((h) => h.seat === seat).length; }

// How many cards the hand a turn is for holds (a hit makes a new decision).
function myCards(s, turn) {
  const h = (s.view.round.hands || []).find((x) => x.seat === turn.seat && x.hand === turn.hand);
  return h ? h.cards.length : 0;
}

// What the timeout rule did, in the table's own words (`timeouts` in the state: the rule's
// decision, the cards the hand took after it, the total it ended on), said once the table
// is done with the hand — an auto-play's hits come from the dealer after the timer, so the
// hand as the page saw it when the turn left is not what the table did.
function timeoutNotice(s) {
  for (const x of s.timeouts || []) {
    const key = [x.round, x.seq, x.seat, x.hand].join(":");
    if (!x.done || toldTimeouts.has(key)) continue;
    toldTimeouts.add(key);
    const total = String(x.total);
    const text = x.action === "no_insurance" ? t("timeout-insurance")
      : x.hits ? t("timeout-auto", { actions: Array(x.hits).fill(t("timeout-hit")).join(", "), total })
      : t("timeout-stood", { total });
    notice = { kind: "timeout", round: x.round, text };
  }
}

// ---- results

// The player's lines of a round's result: the seats' own bets, then their bets behind a
// seat or on a common draw's boxes.
function myLines(s, r) {
  const mySeats = s.seats || [];
  const lines = [];
  for (const b of r.bets || []) {
    const mine = b.player ? b.player === s.public_name : mySeats.includes(b.seat);
    if (!mine) continue;
    const kind = typeof b.kind === "string" ? (b.kind === "main" ? t("line-main") : t("line-insurance")) : sideName(String(b.kind.side));
    const where = s.game.common_draw ? t("line-box", { box: b.seat }) + " · "
      : b.player ? t("line-behind", { seat: b.seat }) + " · " : mySeats.length > 1 ? t("line-seat", { seat: b.seat }) + " · " : "";
    lines.push({ label: where + kind, net: b.returned - b.staked, staked: b.staked, returned: b.returned });
  }
  return lines;
}

const seenNet = {};   // round -> the player's net as first shown (a later change is a correction)

function resultBlock(s, compact) {
  const r = s.view.last_result;
  if (!r) return null;
  const lines = myLines(s, r);
  if (!lines.length) return null;
  const net = lines.reduce((a, l) => a + l.net, 0);
  const back = lines.reduce((a, l) => a + l.returned, 0);
  if (seenNet[r.round] === undefined) seenNet[r.round] = net;
  else if (seenNet[r.round] !== net && !r.cancelled) {
    notice = { kind: "corrected", round: r.round, text: t("result-corrected", { round: r.round, before: signed(seenNet[r.round]), after: signed(net), delta: signed(net - seenNet[r.round]) }) };
    seenNet[r.round] = net;
    historyData = null;
  }
  const head = r.cancelled ? t("result-cancelled", { round: r.round, amount: money(back) })
    : net > 0 ? t("result-win", { amount: money(net) }) : net < 0 ? t("result-lose", { amount: money(-net) }) : t("result-even");
  const tone = r.cancelled ? "even" : net > 0 ? "up" : net < 0 ? "down" : "even";
  announce("result" + r.round + ":" + net + ":" + (r.cancelled ? "c" : ""), r.cancelled ? head : t("say-result", { round: r.round, result: head }));
  return el("div", { class: "pp-result " + tone + (compact ? " compact" : ""), id: "result", "data-round": r.round, "data-net": net, role: "status" },
    el("div", { class: "pp-result-head" }, r.cancelled ? null : el("span", {}, t("result-title", { round: r.round }) + " · "), el("strong", {}, head), window.Trust.sigBadge(trust, r.round, trustWords)),
    // While bets are open the dealer's hand is gone from the table; its seal stays here.
    compact && s.view.round.number === r.round ? window.Trust.sealBadge(trust, s.view.round, trustWords) : null,
    // Returns are paid when the result is final, after the table's time for disputes: till
    // then the balance has not moved, and the page says why rather than leave a win unpaid.
    s.view.provisional === r.round && back > 0 ? el("div", { class: "pp-pending", id: "result-pending" }, t("result-pending", { amount: money(back) })) : null,
    // Compact while bets are open: the lines stay in the page, folded away.
    r.cancelled ? null : el("ul", { class: "pp-lines", hidden: compact }, lines.map((l) =>
      el("li", { class: l.net > 0 ? "up" : l.net < 0 ? "down" : "even" }, el("span", {}, l.label), el("strong", {}, signed(l.net))))));
}

// The seats' badges say each hand's net (won or lost), not what came back.
function netBadges(root, s) {
  const r = s.view.last_result;
  if (!r || !s.view.round.settled || r.round !== s.view.round.number) return;
  for (const seat of root.querySelectorAll("#seats .seat")) {
    for (const hand of seat.querySelectorAll(".hand")) {
      const h = r.hands.find((x) => String(x.seat) === seat.dataset.seat && String(x.hand) === hand.dataset.hand);
      const amount = hand.querySelector(".badge > span:last-child");
      // A cancelled hand's badge says what came back (its stake), as its word does.
      if (h && amount && h.outcome !== "cancelled") amount.textContent = signed(h.returned - h.staked);
    }
  }
}

// ---- the page

function halted(s) {
  const st = s.view.state;
  if (st === "locked") return { kind: "paused", title: t("state-paused-title"), text: t("state-paused") };
  if (st === "disputed") return { kind: "disputed", title: t("state-disputed-title"), text: t("state-disputed") };
  if (st === "broken") return { kind: "broken", title: t("state-broken-title"), text: t("state-broken") };
  return null;
}

// Leaving is offered between rounds, with nothing at stake (the server refuses otherwise).
function mayLeave(s) {
  return (s.seat || s.unseated) && !s.betting.open && !(s.turns || []).length && (s.view.round.settled || !s.view.round.number) && !inPlay(s);
}

function header(s) {
  const view = s.view;
  const clock = s.protections && s.protections.session_clock && s.session
    ? el("span", { class: "pp-clock", id: "session-clock" }, t("session-clock", { time: hms(serverNow() - s.session.started_ms) })) : null;
  const langs = window.I18n.languages;
  return el("header", { class: "pp-head" },
    el("h1", { class: "pp-title" }, t("page-title", { table: view.name, game: window.I18n.game(view.variant) })),
    el("span", { class: "pp-round", id: "round" }, view.round.number ? t("round-number", { round: view.round.number }) : ""),
    clock,
    el("nav", { class: "pp-menu", "aria-label": t("menu-language") + " · " + t("menu-help") },
      button(t("menu-help"), () => openDialog("help"), { id: "open-help", class: "pp-link" }),
      button(t("menu-history"), () => openDialog("history"), { id: "open-history", class: "pp-link" }),
      // A note for a sign (the header's room is short on a small phone), named in words.
      button("\u266A", () => { window.Cues.setMuted(!window.Cues.muted()); render(); },
        { id: "mute", class: "pp-link pp-mute", "aria-pressed": window.Cues.muted() ? "true" : "false", "aria-label": t("mute"), title: t("mute-label") }),
      mayLeave(s) ? button(t("leave"), async () => { if (await act("/api/play/leave")) { message = t("left-table"); render(); } }, { id: "leave", class: "pp-link" }) : null,
      langs.length > 1 ? el("select", { id: "language", "aria-label": t("menu-language"), onchange: (e) => setLanguage(e.target.value) },
        langs.map((l) => el("option", { value: l, selected: l === window.I18n.current() }, t("language-" + l)))) : null));
}

function wallet(s) {
  const live = conn === "live";
  return el("div", { class: "pp-wallet" },
    el("div", { class: "pp-money" }, el("span", { class: "pp-k" }, t("balance")), el("strong", { id: "balance" }, live ? money(s.balance) : "—")),
    el("div", { class: "pp-money" }, el("span", { class: "pp-k" }, t("total-bet")), el("strong", { id: "total-bet" }, live ? money(s.betting.open ? placed(s) + planTotal() : inPlay(s)) : "—")),
    el("div", { class: "pp-who", id: "player-name" }, s.name || s.player));
}

function tableArea(s) {
  const view = s.view;
  // A failed check of the table's word (trust.js) heads the table, in the flow: it covers
  // nothing a player needs.
  const kids = [window.Trust.alarmBanner(trust, trustWords)].filter(Boolean);
  if (s.betting.open && (s.seat || s.unseated)) {
    // While bets are open the last round's cards are gone: the bet spots take the table.
    kids.push(el("h2", { class: "pp-h2 pp-status-text" }, t("bets-open")));
    kids.push(...betSpots(s));
    // The last round's result, folded, where the cards were; a correction of it says more,
    // and takes its place.
    const last = resultBlock(s, true);
    if (notice && notice.kind === "corrected") kids.push(noticeEl());
    else if (last) kids.push(last);
  } else {
    const box = renderDealer(view);
    // The peek's answer matters while the second card lies face down; once every card
    // shows it says nothing more, and a long hand needs the row (640 px on its side).
    if (!view.round.dealer.includes(null)) box.querySelector("#peek")?.remove();
    const seal = window.Trust.sealBadge(trust, view.round, trustWords);
    if (seal) box.append(seal);
    box.classList.add("pp-dealer", ...DEALER_FIT.slice(0, dealerFit));
    // Its name for screen readers, as the seats have theirs, whether the word shows or not.
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", t("dealer-label"));
    kids.push(box);
    const active = s.turn && !s.turn.behind && !s.game.common_draw ? { seat: s.turn.seat, hand: s.turn.hand } : null;
    const seats = renderSeats(view, s.game.common_draw ? s.game.boxes : Math.max(s.limits.seats, 7), active, null);
    for (const n of seats.querySelectorAll(".seat")) {
      if ((s.seats || []).includes(Number(n.dataset.seat))) n.classList.add("mine");
      // A common draw's places are boxes, played by everyone who bet on them. Where the
      // seats are too narrow for "Seat 1" on one line, the number alone stands for it
      // (fit-5); the seat keeps the words as its name for screen readers.
      const label = n.querySelector(".label");
      if (label) {
        const words = s.game.common_draw ? t("spot-box", { box: n.dataset.seat }) : label.textContent;
        label.replaceChildren(el("span", { class: "long" }, words), el("span", { class: "short", "aria-hidden": "true" }, n.dataset.seat));
        n.setAttribute("role", "group");
        n.setAttribute("aria-label", words);
      }
    }
    netBadges(seats, s);
    // The fit found for the last render, so the row keeps its shell (and its nodes).
    seats.classList.add(...SEAT_FIT.slice(0, seatFit));
    kids.push(seats);
  }
  return el("section", { class: "pp-table", "aria-label": t("dealer-label") }, kids);
}

// Why the player's place was given up while they were gone (their session ended, or the
// page was not heard from), until they join again.
function releasedNote(s) {
  const r = s.released;
  if (!r) return null;
  const why = t("released-" + r.reason, { rounds: r.rounds });
  const where = t("released-seat", { count: r.seats.length, seats: r.seats.join(", "), round: r.round });
  return el("div", { class: "pp-notice released", id: "released", role: "status", "data-reason": r.reason }, why + " " + where);
}

function joinDock(s, out) {
  out.push(releasedNote(s));
  out.push(el("h2", { class: "pp-h2" }, t("join-title")));
  if (!s.game.common_draw) {
    if (!s.free_seats.length) out.push(el("p", { class: "pp-note" }, t("join-none")));
    // Every seat a remote player may take, the taken ones off in their place: a seat
    // taken by someone else never moves the one under a finger.
    out.push(el("div", { class: "pp-row pp-seats", id: "join" }, s.offered_seats.map((n) => s.free_seats.includes(n)
      ? button(t("join-seat", { seat: n }), () => act("/api/play/join", { seat: n }), { "data-seat": n })
      : el("button", { type: "button", class: "pp-taken", "data-seat": n, disabled: "" }, t("join-taken", { seat: n })))));
  }
  if (s.game.common_draw || s.game.play_behind) {
    out.push(el("div", { class: "pp-row" }, button(s.game.common_draw ? t("join-table") : t("join-behind"), () => act("/api/play/join", {}), { id: "join-unseated" })));
  }
}

// The notice (what the timeout rule did, bets closed, a correction) as the page shows it.
function noticeEl() {
  const id = { timeout: "timeout", corrected: "corrected", closed: "bets-closed" }[notice.kind];
  return el("div", { class: "pp-notice " + notice.kind, id, role: "status" }, notice.text);
}

let wasBetting = false;

function dock(s) {
  const out = [wallet(s)];
  const atTable = s.seat || s.unseated;
  timeoutNotice(s);
  if (wasBetting && !s.betting.open && atTable) {
    // In the round if the wallet took a stake for it (a seat, a common draw's box, a bet
    // behind: a common draw's round has no seats to look in), or one of its seats is theirs.
    const betThisRound = placed(s) || (s.staked || 0) > 0 || (s.view.round.bets || []).some((b) => (s.seats || []).includes(b.seat) || b.player === s.public_name);
    notice = { kind: "closed", round: s.view.round.number, text: betThisRound ? t("bets-closed") : t("bets-closed-none") };
    announce("closed" + s.view.round.number, notice.text);
  }
  wasBetting = !!(s.betting.open && atTable);
  if (s.betting.open) { if (notice && notice.kind !== "corrected") notice = null; }
  // While a round is in play the dock shows only that round's result (once settled): the
  // round before's would take a decision's room (640x360 on its side), and it is in the
  // history. It is still built, so a correction of it is noticed.
  const built = s.betting.open ? null : resultBlock(s, false);
  const inRound = s.view.round.number && !s.view.round.settled;
  const result = built && inRound && built.dataset.round !== String(s.view.round.number) ? null : built;
  // A halted table takes no bet and no decision: the dock says why instead, the table
  // stays in view.
  const halt = halted(s);
  // What bets closing or a timer did belongs to the round as it was playing: a halt or a
  // cancellation says what holds now, and the older notice would contradict it.
  const last = s.view.last_result;
  const cancelled = !!(notice && last && last.cancelled && notice.round <= last.round);
  if (notice && notice.kind !== "corrected" && (halt || cancelled)) notice = null;
  // Said through the assertive live region (sayHalt), once.
  sayHalt(halt);
  if (halt) out.push(el("div", { class: "pp-halt " + halt.kind, id: "halt", "data-state": halt.kind }, el("strong", {}, halt.title), el("span", {}, halt.text)));
  else if (!atTable) joinDock(s, out);
  else if (s.betting.open) bettingDock(s, out);
  else if (s.turns && s.turns.length) {
    if (notice && notice.kind === "closed") notice = null;
    turnDock(s, out);
  }
  else {
    if (Object.keys(plan.lines).length) resetPlan();
    const settled = s.view.round.settled || !s.view.round.number;
    out.push(el("div", { class: "pp-note", id: "waiting" }, settled ? t("next-round") : t("round-in-play")));
  }
  if (notice && !s.betting.open) out.push(noticeEl());
  if (result) out.push(result);
  if (message) out.push(el("div", { class: "pp-error", id: "message", role: "alert" }, message));
  // The fit found for the last render (see fitTurns), so the rows keep their shape.
  // Focusable from script only: where the keyboard's focus goes when the control it was on
  // leaves (see keepFocus).
  return el("section", { class: ["pp-dock", ...TURN_FIT.slice(0, turnFit)].join(" "), id: "dock", tabindex: "-1", "aria-label": t("dock-label") }, out);
}

// ---- dialogs: help, history, the reality check

async function openDialog(kind) {
  dialog = kind;
  render();
  try {
    if (kind === "help" && !help) help = await api("GET", "/api/play/help");
    if (kind === "history" || kind === "reality") historyData = await api("GET", "/api/play/history");
  } catch (e) { message = say(e); }
  render();
  const first = document.querySelector(".pp-dialog button");
  if (first) first.focus();
}

function closeDialog() { dialog = null; render(); }

// A share (0.9512) as the page's language writes a percentage ("95.12%", "95,12 %").
function pct(x) {
  return new Intl.NumberFormat(window.I18n.current(), { style: "percent", minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(x);
}

// A pay as the service writes it ("2:1"; insurance that keeps its stake, "9:1 (stake
// kept)", the words `math::paytable` writes) in the page's language.
function payText(pay) {
  const kept = / \(stake kept\)$/.exec(pay);
  return kept ? t("help-paytable-pays-kept", { pay: pay.slice(0, kept.index) }) : t("help-paytable-pays", { pay });
}

function helpBody(s) {
  if (!help) return [el("p", {}, t("help-loading"))];
  const v = help.variant;
  const out = [el("p", {}, t("help-basics"))];
  const rules = [];
  rules.push(t("help-decks", { decks: v.shoe.decks, fresh: v.shoe.new_shoe_every_round ? "yes" : "no" }));
  rules.push(v.dealer.soft_17 === "hit" ? t("help-dealer-h17") : t("help-dealer-s17"));
  rules.push(t("help-blackjack", { pays: String(v.hand.natural_pays) }));
  if (v.double.on !== "never") rules.push(t("help-double", { on: t("help-double-" + v.double.on), after_split: v.double.after_split ? "yes" : "no" }));
  if (v.split.max_hands > 1) rules.push(t("help-split", { hands: v.split.max_hands }));
  rules.push(t("help-surrender", { when: t("help-surrender-" + v.surrender.when) }));
  // The cost is a share of the bet ("1:2": half), said as a percentage.
  const share = /^(\d+):(\d+)$/.exec(String(v.insurance.cost));
  const cost = share ? new Intl.NumberFormat(window.I18n.current(), { style: "percent", maximumFractionDigits: 0 })
    .format(Number(share[1]) / Number(share[2])) : String(v.insurance.cost);
  rules.push(v.insurance.offered ? t("help-insurance", { cost, pays: String(v.insurance.pays), even: v.insurance.even_money ? "yes" : "no" }) : t("help-insurance-none"));
  rules.push(t("help-ties", { ties: t("help-ties-" + v.settlement.ties) }));
  rules.push(t("help-limits", { min: money(v.limits.min), max: money(v.limits.max) }));
  if (s.timing) rules.push(t("help-timer", { seconds: Math.round(s.timing.decision_ms / 1000) }));
  rules.push(v.timeouts && v.timeouts.decision === "stand" ? t("help-timeout-stand") : t("help-timeout-auto"));
  out.push(el("ul", { class: "pp-rules", id: "help-rules" }, rules.map((r) => el("li", {}, r))));
  const tables = help.tables ? help.tables.bets : [];
  for (const b of tables) {
    const side = (v.side_bets || []).find((x) => x.name === b.bet);
    out.push(el("h3", { class: "pp-h3", "data-bet": b.bet }, b.kind === "insurance" ? t("help-rtp-insurance", { rtp: pct(b.rtp) }) : t("help-side-title", { name: sideName(b.bet), rtp: pct(b.rtp) })));
    if (side) out.push(el("p", {}, t("help-side-limits", { min: money(side.limits.min), max: money(side.limits.max) })));
    out.push(el("table", { class: "pp-pays" }, el("tbody", {}, b.lines.filter((l) => l.ways !== 0).map((l) =>
      el("tr", {}, el("th", { scope: "row" }, window.I18n.combo(l.combination)), el("td", {}, payText(l.pay)))))));
  }
  if (!help.tables) out.push(el("p", {}, t("help-unpriced")));
  return out;
}

function historyBody() {
  if (!historyData) return [el("p", {}, t("help-loading"))];
  if (!historyData.rounds.length) return [el("p", { id: "history-empty" }, t("history-empty"))];
  return [el("table", { class: "pp-history", id: "history" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, t("history-round", { round: "" }).trim()), el("th", { scope: "col" }, t("history-stake")), el("th", { scope: "col" }, t("history-return")), el("th", { scope: "col" }, t("history-net")))),
    el("tbody", {}, historyData.rounds.flatMap((r) => [
      el("tr", { class: "pp-hround", "data-round": r.round, "data-net": r.net },
        el("th", { scope: "row" }, t("history-round", { round: r.round }), r.cancelled ? el("span", { class: "pp-tag" }, " " + t("history-cancelled")) : !r.settled ? el("span", { class: "pp-tag" }, " " + t("history-open"))
          // Signatures are checked on the results this page received live: a round from
          // before it was loaded has none to check, so no badge (not "…" for ever).
          : trust.sigs[r.round] ? window.Trust.sigBadge(trust, r.round, trustWords) : null),
        // A round in play has its stake (what the wallet took) and no return or net yet.
        el("td", {}, money(r.staked)), el("td", {}, r.settled ? money(r.lines.reduce((a, l) => a + l.returned, 0)) : "\u2014"),
        el("td", { class: r.net > 0 ? "up" : r.net < 0 ? "down" : "" }, r.settled ? signed(r.net) : "\u2014")),
      ...r.lines.map((l) => el("tr", { class: "pp-hline", "data-round": r.round, "data-kind": l.kind },
        el("td", {}, (l.behind ? t("line-behind", { seat: l.seat }) + " · " : "") + (l.kind === "main" ? t("line-main") : l.kind === "insurance" ? t("line-insurance") : sideName(l.kind))),
        el("td", {}, money(l.staked)), el("td", {}, money(l.returned)), el("td", {}, signed(l.net)))),
    ])))];
}

function realityBody(s) {
  const started = s.session ? s.session.started_ms : serverNow();
  const net = historyData ? historyData.session.net : null;
  return [el("p", { id: "reality-text" }, t("reality-body", { minutes: Math.floor((serverNow() - started) / 60000), net: net === null ? "…" : signed(net) })),
    el("div", { class: "pp-row" },
      button(t("reality-continue"), () => { closeDialog(); }, { id: "reality-continue", class: "pp-go" }),
      button(t("reality-leave"), async () => { closeDialog(); if (await act("/api/play/leave")) message = t("left-table"); render(); }, { id: "reality-leave" }))];
}

function dialogEl(s) {
  if (!dialog) return null;
  const title = dialog === "help" ? t("help-title", { game: window.I18n.game(s.view.variant) }) : dialog === "history" ? t("history-title") : t("reality-title");
  const body = dialog === "help" ? helpBody(s) : dialog === "history" ? historyBody() : realityBody(s);
  return el("div", { class: "pp-dialog sheet " + dialog, id: dialog + "-dialog", role: dialog === "reality" ? "alertdialog" : "dialog", "aria-modal": "true", "aria-labelledby": "dialog-title" },
    el("div", { class: "pp-dialog-head" }, el("h2", { id: "dialog-title" }, title),
      dialog === "reality" ? null : button(t("menu-close"), closeDialog, { id: "close-dialog", class: "pp-link" })),
    // Focusable, so a keyboard can scroll a long pay table.
    el("div", { class: "pp-dialog-body", tabindex: "0" }, body));
}

// The reality check opens at every full interval of the session's time, once each.
function realityDue(s) {
  const p = s.protections;
  if (!p || !p.reality_check_minutes || !s.session || dialog) return;
  const every = p.reality_check_minutes * 60000;
  const n = Math.floor((serverNow() - s.session.started_ms) / every);
  const key = "croupier.reality." + s.session.started_ms;
  const done = Number(sessionStorage.getItem(key) || 0);
  if (n > done) { sessionStorage.setItem(key, String(n)); openDialog("reality"); }
}

// The whole-screen states: no way to play until they end.
function blocking() {
  if (!token) return { kind: "no-token", title: t("state-no-token"), text: "" };
  if (conn === "expired") return { kind: "expired", title: t("state-expired-title"), text: t("state-expired") };
  if (conn === "closed") return { kind: "closed", title: t("state-closed-title"), text: t("state-closed") };
  if (conn === "lost") return { kind: "lost", title: t("state-lost-title"), text: t("state-lost", { attempt }) + " " + t("state-lost-balance") };
  if (!state) return { kind: "connecting", title: t("state-connecting"), text: "" };
  return null;
}

let shownMessage = "", messagePhase = "";

// Whether the last press of a pointer was on a list (a <select>, opened to pick from);
// picking or a key ends it.
let picking = false;
document.addEventListener("pointerdown", (e) => { picking = e.target instanceof Element && !!e.target.closest("select"); }, true);
document.addEventListener("change", () => { picking = false; }, true);
document.addEventListener("keydown", () => { picking = false; }, true);

// The live regions (play.html's, beside the app: present from the page's load, never
// redrawn) take what the render found new; a text that did not change is left alone.
function speak() {
  for (const [id, kind] of [["announce", "polite"], ["alert", "assertive"]]) {
    const region = document.getElementById(id);
    const text = liveNow(kind);
    if (region && region.textContent !== text) region.textContent = text;
  }
}

// The keyboard's place across renders: a control the render took away (a decision made,
// bets closed) or disabled (a bet placed) would leave the focus on the page's body, and a
// screen reader at its top. The same control again if the render has it (by its id or its
// data-action, -target, -chip or -seat), else the dock, whose next Tab is its first control.
let lastFocused = null;
document.addEventListener("focusin", (e) => { lastFocused = e.target; });
const FOCUS_KEYS = ["data-action", "data-target", "data-chip", "data-seat"];
function focusKey(n) {
  if (n.id) return "#" + CSS.escape(n.id);
  const a = FOCUS_KEYS.find((k) => n.hasAttribute(k));
  return a ? n.tagName.toLowerCase() + "[" + a + "=\"" + CSS.escape(n.getAttribute(a)) + "\"]" : null;
}
function keepFocus(root) {
  const now = document.activeElement;
  if (now && now !== document.body && !now.disabled) return;
  const was = lastFocused;
  // Focus the player moved off the page's controls themselves stays where they put it.
  if (!was || (was.isConnected && (!root.contains(was) || !was.disabled))) return;
  const key = focusKey(was);
  const again = key ? root.querySelector(key) : null;
  const next = again && !again.disabled ? again : root.querySelector("#dock");
  if (next) next.focus({ preventScroll: true });
}

// Seats that do not fit (a phone on its side, many seats, split hands; upright, a second
// row of seats too tall) are made narrower step by step, measured after each render and
// each resize: first the other players' amounts go (their cards and outcomes stay), then
// the room around their hands, then their split hands stack, then their cards close up to
// the index strips, then their labels shrink to the number. The player's own seat keeps
// everything.
const SEAT_FIT = ["fit-1", "fit-2", "fit-3", "fit-4", "fit-5"];
let seatFit = 0;
function fitSeats() {
  const row = document.getElementById("seats");
  if (row) seatFit = fitSteps(row, SEAT_FIT, () => row.scrollWidth > row.clientWidth + 1 || row.scrollHeight > row.clientHeight + 1);
}
window.addEventListener("resize", fitSeats);

// The dealer's row, where a long hand (five cards, a bust, the seal's badge: 640x360 on
// its side) does not fit across: first the word "Dealer" goes (the row keeps it as its
// name for screen readers; to the eye the row is the dealer's by its place), then the
// seal's badge takes a line of its own.
const DEALER_FIT = ["dealer-unlabelled", "dealer-wrapped"];
let dealerFit = 0;
function fitDealer() {
  const row = document.getElementById("dealer");
  if (row) dealerFit = fitSteps(row, DEALER_FIT, () => row.scrollWidth > row.clientWidth + 1);
}
window.addEventListener("resize", fitDealer);

// Several turns at once (a common draw's boxes, insurance behind seats) are rows of words
// then buttons. Where a row's buttons do not fit beside its words (a narrow dock, a pair that
// may also double and split, a language with longer words), measured after each render and
// each resize, every row puts its words above its buttons; where the buttons still do not
// fit the dock's width, they wrap onto a second line.
const TURN_FIT = ["turns-stacked", "turns-wrapped"];
let turnFit = 0;
function fitTurns() {
  const dock = document.querySelector(".pp-dock");
  if (!dock) return;
  const rows = [...dock.querySelectorAll(".pp-turn-row")];
  turnFit = fitSteps(dock, TURN_FIT, () => rows.some((r) => r.scrollWidth > r.clientWidth + 1));
}
window.addEventListener("resize", fitTurns);

// The fitting they all use: `el` loses every step's class, then takes them in order while
// `over()` still holds; returns how many it took (the next render starts from them).
function fitSteps(el, steps, over) {
  el.classList.remove(...steps);
  let level = 0;
  while (level < steps.length && over()) el.classList.add(steps[level++]);
  return level;
}

function render() {
  const root = document.getElementById("app");
  // Not at the table (yet, or again: a seat given up while away) is a phase of its own: the
  // dock keeps the size of the seats to take, the table gives way (see play.css).
  const atTable = state && (state.seat || state.unseated);
  const phase = state ? (!atTable ? "joining" : state.betting.open ? "betting" : (state.turns || []).length ? "deciding" : "watching") : "";
  // A refusal belongs to the phase it was first shown in (a late bet's "too late" shows
  // once the round has begun); the phase after that starts without it.
  if (message !== shownMessage) { shownMessage = message; messagePhase = phase; }
  else if (message && phase !== messagePhase) { message = shownMessage = ""; }
  const block = blocking();
  const s = state;
  if (s) useCurrency(s.view.currency);
  const over = block ? el("div", { class: "pp-overlay sheet " + block.kind, id: "overlay", "data-state": block.kind, role: "alertdialog", "aria-modal": "true", "aria-labelledby": "overlay-title" },
    el("h2", { id: "overlay-title" }, block.title), block.text ? el("p", {}, block.text) : null,
    block.kind === "lost" ? el("div", { class: "pp-spinner", "aria-hidden": "true" }) : null) : null;
  if (!s) {
    morph(root, [el("main", { class: "pp-main" }, el("h1", { class: "pp-title solo" }, "croupier"), over)]);
    speak();
    return;
  }
  // A list opened by a pointer stays open: the render waits until it is left. One reached
  // by keyboard (and changed with the arrows) does not stop the page, or its live regions.
  if (picking && document.activeElement && document.activeElement.tagName === "SELECT" && root.contains(document.activeElement)) return;
  sayCards(s);
  morph(root, [header(s),
    el("main", { class: "pp-main" + (busy ? " busy" : ""), "data-phase": phase },
      tableArea(s), dock(s), dialogEl(s), over)]);
  speak();
  keepFocus(root);
  fitSeats();
  fitDealer();
  fitTurns();
  if (!block) realityDue(s);
}

async function setLanguage(lang) {
  await window.I18n.setLanguage(lang);
  // What the live regions hold was said in the language before: a screen reader's review
  // of them would read it under the new one. They are emptied; what comes next is said in
  // the new language.
  liveText.polite = "";
  liveText.assertive = "";
  render();
}

let timerHandle = null;
function schedule(ms) { clearTimeout(timerHandle); timerHandle = setTimeout(refresh, ms); }

async function refresh() {
  if (!token) { render(); return; }
  if (conn === "expired") { render(); return; }
  try {
    const next = await api("GET", "/api/play/state");
    const resync = conn === "lost";
    state = next; fetchedAt = Date.now(); conn = "live"; attempt = 0;
    if (resync) { historyData = null; message = ""; if (dialog === "history") openDialog("history"); }
    schedule(500);
  } catch (e) {
    if (e.code === "unauthenticated") { conn = "expired"; state = state || null; }
    else if (e.code === "no_remote_play") { conn = "closed"; schedule(5000); }
    else if (e.code === "network" || e.code === "busy" || e.code === "stopped" || e.status >= 500) {
      // Retried with a growing pause; the balance is not shown meanwhile (it may be stale).
      conn = "lost"; attempt += 1; schedule(Math.min(5000, 500 * Math.pow(2, Math.min(attempt, 4))));
    } else { message = say(e); schedule(1000); }
  }
  render();
}

window.I18n.ready.then(() => { refresh(); setInterval(render, 1000); });
