// The remote player's page, betting: what the player is about to bet (the plan), the chip
// tray, the bet spots and the dock around them while bets are open. Loaded before play.js,
// which owns the page (its state, `t`, `el`, `api` and the render): these functions use
// them when called, and nothing here runs at load but reading the player's last chip and
// bet from this tab's storage. Split from play.js by concern (issue #63 item 1).

// ---- betting: the plan is what the player is about to bet, line by line (`lines`:
// "main", "side:NAME", "behind:SEAT", "bside:NAME", "box:N", "box:N:NAME"); `steps` is the
// chip history Undo walks back.

let plan = { lines: {}, steps: [], behind: null, follow_double: false, follow_split: false, lip: {}, special: null, rebet: null };
let chip = Number(localStorage.getItem("croupier.chip")) || 0;
let lastPlaced = JSON.parse(sessionStorage.getItem("croupier.lastbet") || "null");

function resetPlan() {
  plan = { lines: {}, steps: [], behind: null, follow_double: false, follow_split: false, lip: {}, special: plan.special, rebet: plan.rebet };
}

// What the plan would place: the chips laid, and each box ridden on Let it play (its last
// win, which the wallet stakes like chips).
function planTotal() { return linesTotal() + Object.values(plan.lip).reduce((a, v) => a + v, 0); }

function linesTotal() { return Object.values(plan.lines).reduce((a, v) => a + v, 0); }

function sideLimits(s, name) {
  const b = (s.game.side_bets || []).find((x) => x.name === name);
  return b ? { min: b.min, max: b.max } : { min: s.limits.min, max: s.limits.max };
}

function lineLimits(s, key) {
  const parts = key.split(":");
  if (parts[0] === "side" || parts[0] === "bside") return sideLimits(s, parts[1]);
  if (parts[0] === "box" && parts[2]) return sideLimits(s, parts[2]);
  return { min: s.limits.min, max: s.limits.max };
}

function lineName(s, key) {
  const p = key.split(":");
  if (p[0] === "main") return t("spot-main");
  if (p[0] === "side" || p[0] === "bside") return sideName(p[1]);
  if (p[0] === "behind") return t("spot-behind", { seat: p[1] });
  if (p[0] === "box") return p[2] ? t("spot-box", { box: p[1] }) + " · " + sideName(p[2]) : t("spot-box", { box: p[1] });
  return key;
}

// The sum of a bet's side bets (`[[name, amount], …]`).
function pairs(side) { return (side || []).reduce((a, [, v]) => a + v, 0); }

// What is already on the table for the player this window (a new bet replaces it, so it
// counts towards what may be bet again).
function placed(s) {
  const b = s.betting;
  let sum = (b.my_bet || 0) + (b.my_side || []).reduce((a, [, v]) => a + v, 0);
  for (const x of b.my_behind || []) sum += x.bet.main + pairs(x.bet.side);
  for (const x of b.my_boxes || []) sum += x.main + pairs(x.side);
  return sum;
}

function available(s) { return s.balance + placed(s); }

// What the table already holds on one line this window: chips laid on a line add to it.
function placedLine(s, key) {
  const b = s.betting;
  const p = key.split(":");
  if (p[0] === "main") return b.my_bet || 0;
  if (p[0] === "side") return ((b.my_side || []).find(([n]) => n === p[1]) || [0, 0])[1];
  const behind = (b.my_behind || []).find((x) => x.seat === plan.behind) || null;
  if (p[0] === "behind") return behind && String(behind.seat) === p[1] ? behind.bet.main : 0;
  if (p[0] === "bside") return behind ? ((behind.bet.side || []).find(([n]) => n === p[1]) || [0, 0])[1] : 0;
  if (p[0] === "box") {
    const x = (b.my_boxes || []).find((y) => String(y.seat) === p[1]);
    if (!x) return 0;
    return p[2] ? ((x.side || []).find(([n]) => n === p[2]) || [0, 0])[1] : x.main;
  }
  return 0;
}

// A line as it will be sent: what the table holds plus the chips laid since.
function lineTotal(s, key) {
  const p = key.split(":");
  const ridden = p[0] === "box" && !p[2] ? plan.lip[p[1]] || 0 : 0;
  return placedLine(s, key) + (plan.lines[key] || 0) + ridden;
}

// What the player has on the round in play: what the wallet took for it (the bets, and
// splits, doubles, insurance as the hands go).
function inPlay(s) {
  const r = s.view.round;
  if (s.betting.open || !r.number || r.settled) return 0;
  let sum = 0;
  if (s.game.common_draw) {
    // Each box's hands carry their stakes (doubles included); the specials ride beside,
    // staked still once settled.
    sum = (s.hands || []).reduce((a, h) => a + h.stake, 0);
    return sum + (s.specials || []).reduce((a, x) => a + x.amount, 0);
  }
  // What the wallet took for the round (splits, doubles, insurance included), when the
  // server says; else the bets the round opened with.
  if (typeof s.staked === "number" && s.staked > 0) return s.staked;
  for (const b of r.bets || []) {
    const mine = b.player ? b.player === s.public_name : (s.seats || []).includes(b.seat);
    if (mine) sum += b.main + pairs(b.side);
    for (const x of b.behind || []) if (x.player === s.public_name) sum += x.main + pairs(x.side);
  }
  return sum;
}

// A chip on a line: refused on the page when it would pass the balance or the line's
// maximum (the server's refusal stays the authority).
function addChip(s, key, value) {
  if (!value) return;
  const now = plan.lines[key] || 0;
  const lim = lineLimits(s, key);
  if (planTotal() + value > s.balance) { message = t("bet-over-balance", { balance: money(s.balance) }); render(); return; }
  if (placedLine(s, key) + now + value > lim.max) { message = t("bet-over-max", { line: lineName(s, key), max: money(lim.max) }); render(); return; }
  plan.lines[key] = now + value;
  plan.steps.push([key, value]);
  if (key.startsWith("box:") && !key.split(":")[2]) delete plan.lip[key.split(":")[1]];
  message = "";
  render();
}

// Let it play on box `n` (its last win, `amount`), or off again: the chips laid on the box
// give way to it.
function ride(n, amount) {
  if (plan.lip[n]) {
    delete plan.lip[n];
  } else {
    const key = "box:" + n;
    plan.lip[n] = amount;
    delete plan.lines[key];
    plan.steps = plan.steps.filter(([k]) => k !== key);
  }
  message = "";
  render();
}

function undo() {
  const step = plan.steps.pop();
  if (step) {
    plan.lines[step[0]] -= step[1];
    if (plan.lines[step[0]] <= 0) delete plan.lines[step[0]];
  }
  message = "";
  render();
}

function doubleBets(s) {
  const total = linesTotal();
  if (!total) return;
  if (total + planTotal() > s.balance) { message = t("bet-over-balance", { balance: money(s.balance) }); render(); return; }
  for (const [k, v] of Object.entries(plan.lines)) {
    if (v * 2 > lineLimits(s, k).max) { message = t("bet-over-max", { line: lineName(s, k), max: money(lineLimits(s, k).max) }); render(); return; }
  }
  for (const [k, v] of Object.entries(plan.lines)) { plan.lines[k] = v * 2; plan.steps.push([k, v]); }
  message = "";
  render();
}

// The last bet placed (this tab's, else the table's record of the last round's seat bet).
function repeatable(s) {
  if (lastPlaced && Object.keys(lastPlaced.lines || {}).length) return lastPlaced;
  const last = s.betting.last_bet;
  if (!last) return null;
  const lines = { main: last.main };
  for (const [n, a] of last.side || []) lines["side:" + n] = a;
  return { lines, behind: null };
}

function repeat(s) {
  const r = repeatable(s);
  if (!r) return;
  const total = Object.values(r.lines).reduce((a, v) => a + v, 0);
  if (total > available(s)) { message = t("bet-over-balance", { balance: money(available(s)) }); render(); return; }
  plan.lines = Object.assign({}, r.lines);
  plan.steps = Object.entries(r.lines);
  plan.behind = r.behind || null;
  message = "";
  render();
}

// The side bets of the lines under `prefix` ("side:", "bside:", "box:N:"), placed and laid.
function sideOf(s, prefix) {
  const out = {};
  const keys = new Set(Object.keys(plan.lines).filter((k) => k.startsWith(prefix)));
  const b = s.betting;
  if (prefix === "side:") for (const [n] of b.my_side || []) keys.add(prefix + n);
  for (const k of keys) { const v = lineTotal(s, k); if (v > 0) out[k.slice(prefix.length)] = v; }
  return out;
}

async function placeBets(s) {
  const remember = { lines: {}, behind: plan.behind };
  for (const k of Object.keys(plan.lines)) remember.lines[k] = lineTotal(s, k);
  let ok = true;
  if (s.game.common_draw) {
    const boxes = [];
    for (let n = 1; n <= s.game.boxes; n++) {
      const side = sideOf(s, "box:" + n + ":");
      const main = lineTotal(s, "box:" + n);
      if (plan.lip[n]) boxes.push({ box: n, let_it_play: true, side });
      else if (main) boxes.push({ box: n, main, side });
    }
    ok = await act("/api/play/boxes", { boxes });
  } else {
    if (s.seat && (plan.lines.main !== undefined || Object.keys(plan.lines).some((k) => k.startsWith("side:")))) {
      ok = await act("/api/play/bet", { seat: s.seat, main: lineTotal(s, "main"), side: sideOf(s, "side:") });
    }
    const stake = plan.behind ? lineTotal(s, "behind:" + plan.behind) : 0;
    if (ok && stake && Object.keys(plan.lines).some((k) => k.startsWith("behind:") || k.startsWith("bside:"))) {
      ok = await act("/api/play/behind", { seat: plan.behind, main: stake, side: sideOf(s, "bside:"), follow_double: plan.follow_double, follow_split: plan.follow_split });
    }
  }
  if (ok) {
    lastPlaced = remember;
    sessionStorage.setItem("croupier.lastbet", JSON.stringify(remember));
    const keep = plan.behind;
    resetPlan();
    plan.behind = keep;
    render();
  }
}

function chipValues(s) {
  const mins = [s.limits.min].concat((s.game.side_bets || []).map((b) => b.min));
  const min = Math.min(...mins);
  const unit = Math.pow(10, (s.view.currency && s.view.currency.exponent) || 0);
  let chips = [1, 5, 10, 25, 100, 500, 1000].map((c) => c * unit).filter((c) => c >= min && c <= s.limits.max).slice(0, 6);
  if (!chips.length) chips = [min];
  return chips;
}

// A button. While a request is under way it is only marked unavailable (aria-disabled)
// and ignores presses: a disabled button loses the keyboard's focus.
function button(label, onClick, attrs) {
  const a = Object.assign({ type: "button", onclick: (e) => (busy ? undefined : onClick(e)) }, attrs || {});
  if (conn !== "live") a.disabled = "";
  else if (busy && (a.disabled === undefined || a.disabled === null)) a["aria-disabled"] = "true";
  return el("button", a, label);
}

// A chip's face: whole amounts without their zero cents and without spaces ("€25",
// "25€"), as chips are printed: a chip is a thumb wide, and "100 €" would not fit it.
function chipLabel(c) {
  return money(c, { whole: true }).replace(/[\s\u00a0\u202f]/g, "");
}

function chipTray(s) {
  const chips = chipValues(s);
  if (!chips.includes(chip)) chip = chips[0];
  const room = available(s) - planTotal();
  return el("div", { class: "pp-chips", id: "chips", role: "group", "aria-label": t("chip-tray") },
    chips.map((c, i) => button(chipLabel(c), () => { chip = c; localStorage.setItem("croupier.chip", String(c)); render(); },
      { class: "chip c" + i + (c === chip ? " on" : ""), "data-chip": c, "aria-pressed": c === chip ? "true" : "false",
        "aria-label": t("chip-value", { amount: money(c) }), disabled: c > room && c !== chip ? "" : null })));
}

// A bet spot: tap to put the selected chip on it.
function spot(s, key, label, lim, extra) {
  const amount = lineTotal(s, key);
  return button([
    el("span", { class: "pp-spot-name" }, label),
    el("span", { class: "amount" }, amount ? money(amount) : t("spot-empty")),
    el("span", { class: "pp-spot-lim" }, t("spot-limits", { min: money(lim.min), max: money(lim.max) })),
  ], () => addChip(s, key, chip), Object.assign({ class: "pp-spot" + (amount ? " on" : ""), "data-target": key }, extra || {}));
}

function betSpots(s) {
  const sides = s.game.side_bets || [];
  const out = [];
  if (s.game.common_draw) {
    const special = sides.some((b) => b.name === plan.special) ? plan.special : (sides[0] || {}).name;
    plan.special = special;
    if (sides.length > 1) {
      out.push(el("label", { class: "pp-pick" }, t("special-pick") + " ",
        el("select", { id: "special", onchange: (e) => { plan.special = e.target.value; render(); } },
          sides.map((b) => el("option", { value: b.name, selected: b.name === special }, sideName(b.name))))));
    }
    const boxes = [];
    for (let n = 1; n <= s.game.boxes; n++) {
      const lip = (s.betting.let_it_play || []).find((l) => l.box === n);
      boxes.push(el("div", { class: "pp-box", "data-box": n },
        spot(s, "box:" + n, t("spot-box", { box: n }), s.limits),
        special ? spot(s, "box:" + n + ":" + special, sideName(special), sideLimits(s, special)) : null,
        lip ? button(t("let-it-play", { amount: money(lip.main) }), () => ride(n, lip.main),
          { class: "pp-lip" + (plan.lip[n] ? " on" : ""), "data-let-it-play": n, "aria-pressed": plan.lip[n] ? "true" : "false" }) : null));
    }
    out.push(el("div", { class: "pp-spots boxes", id: "boxes" }, boxes));
    return out;
  }
  if (s.seat) {
    out.push(el("div", { class: "pp-spots", id: "lines" },
      spot(s, "main", t("spot-main"), s.limits),
      sides.map((b) => spot(s, "side:" + b.name, sideName(b.name), b))));
  }
  // A second seat, where the game lets a player hold two (Deluxe).
  if (s.seat && (s.seats || []).length < (s.game.seats_per_player || 1) && s.free_seats.length) {
    out.push(el("div", { class: "pp-row pp-second", id: "join-second" }, el("span", {}, t("join-second")),
      s.free_seats.map((n) => button(String(n), () => act("/api/play/join", { seat: n }), { "data-seat": n, "aria-label": t("join-seat", { seat: n }) }))));
  }
  const seats = s.game.play_behind ? (s.betting.behind_seats || []) : [];
  if (seats.length) {
    out.push(el("div", { class: "pp-spots", id: "behind" }, seats.map((x) => {
      const key = "behind:" + x.seat;
      return button([el("span", { class: "pp-spot-name" }, t("spot-behind", { seat: x.seat })),
        el("span", { class: "amount" }, lineTotal(s, key) ? money(lineTotal(s, key)) : t("spot-empty"))],
      () => { if (plan.behind !== x.seat) { for (const k of Object.keys(plan.lines)) if (k.startsWith("behind:") || k.startsWith("bside:")) delete plan.lines[k]; plan.steps = plan.steps.filter(([k]) => !k.startsWith("behind:") && !k.startsWith("bside:")); plan.behind = x.seat; } addChip(s, key, chip); },
      { class: "pp-spot" + (plan.behind === x.seat ? " on" : ""), "data-behind": x.seat, "data-target": key });
    })));
    if (plan.behind) {
      const remote = (seats.find((x) => x.seat === plan.behind) || {}).remote;
      out.push(el("div", { class: "pp-spots", id: "behind-lines" },
        sides.map((b) => spot(s, "bside:" + b.name, sideName(b.name), b)),
        remote ? el("label", { class: "pp-check" }, el("input", { type: "checkbox", id: "follow-double", checked: plan.follow_double, onchange: (e) => { plan.follow_double = e.target.checked; } }), " " + t("follow-double")) : null,
        remote ? el("label", { class: "pp-check" }, el("input", { type: "checkbox", id: "follow-split", checked: plan.follow_split, onchange: (e) => { plan.follow_split = e.target.checked; } }), " " + t("follow-split")) : null));
    }
  }
  return out;
}

// What the table holds of the player's in this window, line by line.
function myBetText(s) {
  const b = s.betting;
  const parts = [];
  if (b.my_bet) parts.push(t("line-main") + " " + money(b.my_bet));
  for (const [n, a] of b.my_side || []) parts.push(sideName(n) + " " + money(a));
  for (const x of b.my_behind || []) {
    parts.push(t("spot-behind", { seat: x.seat }) + " " + money(x.bet.main) +
      (x.bet.side || []).map(([n, a]) => " · " + sideName(n) + " " + money(a)).join("") +
      (x.bet.follow_double ? " (" + t("follows-double") + ")" : ""));
  }
  for (const x of b.my_boxes || []) parts.push(t("spot-box", { box: x.seat }) + " " + money(x.main));
  if (!parts.length) return null;
  const id = b.my_rebet ? (b.my_rebet.clipped ? "bet-accepted-clipped" : "bet-accepted-rebet") : "bet-accepted";
  return t(id, { amount: parts.join(" · ") });
}

function bettingDock(s, out) {
  const total = s.timing ? s.timing.betting_ms : 0;
  out.push(timer("betting", s.betting.remaining_ms, total, t("bets-close-in", { seconds: secs(s.betting.remaining_ms) }), s.betting.round));
  // The automatic re-bet (Ultimate) shows on the spots as if the player had laid it.
  if (s.betting.my_rebet && plan.rebet !== s.betting.round) {
    plan.rebet = s.betting.round;
    resetPlan();
  }
  out.push(chipTray(s));
  const r = repeatable(s);
  const rTotal = r ? Object.values(r.lines).reduce((a, v) => a + v, 0) : 0;
  // The tools as the signs live tables print on them, named in words for screen readers:
  // they fit a narrow dock in any language.
  out.push(el("div", { class: "pp-tools" },
    button("\u21B6", undo, { id: "undo", "aria-label": t("undo"), title: t("undo"), disabled: plan.steps.length ? null : "" }),
    button("\u2715", () => { resetPlan(); message = ""; render(); }, { id: "clear", "aria-label": t("clear"), title: t("clear"), disabled: planTotal() ? null : "" }),
    button(r ? "\u21BB " + chipLabel(rTotal) : "\u21BB", () => repeat(s), { id: "rebet", "aria-label": t("repeat", { amount: r ? money(rTotal) : "" }).trim(), title: t("repeat", { amount: r ? money(rTotal) : "" }).trim(), disabled: r && !planTotal() && !placed(s) ? null : "" }),
    button("\u00D72", () => doubleBets(s), { id: "double-bets", "aria-label": t("double-bets") + " \u00D72", title: t("double-bets"), disabled: linesTotal() ? null : "" })));
  const total2 = placed(s) + planTotal();
  const laid = (prefix) => Object.keys(plan.lines).some((k) => k.startsWith(prefix));
  const canSeat = s.seat && (laid("main") || laid("side:")) && lineTotal(s, "main") >= s.limits.min;
  const canBehind = plan.behind && (laid("behind:") || laid("bside:")) && lineTotal(s, "behind:" + plan.behind) >= s.limits.min;
  const canBoxes = s.game.common_draw && (laid("box:") || Object.values(plan.lip).some(Boolean));
  const main = [];
  if (s.game.common_draw) main.push(button(t("place-boxes", { amount: money(total2) }), () => placeBets(s), { id: "place-boxes", class: "pp-go", disabled: canBoxes ? null : "" }));
  else if (plan.behind && !s.seat) main.push(button(t("place-behind", { seat: plan.behind, amount: money(total2) }), () => placeBets(s), { id: "place-behind", class: "pp-go", disabled: canBehind ? null : "" }));
  else if (s.seat) {
    main.push(button(t("place-bet", { amount: money(total2) }), () => placeBets(s), { id: "place", class: "pp-go", disabled: canSeat || canBehind ? null : "" }));
    if (plan.behind) main.push(button(t("place-behind", { seat: plan.behind, amount: money(lineTotal(s, "behind:" + plan.behind)) }), () => placeBets(s), { id: "place-behind", class: "pp-go", disabled: canBehind && !laid("main") && !laid("side:") ? null : "" }));
  }
  if (placed(s)) {
    const withdraw = s.game.common_draw ? () => act("/api/play/boxes", { boxes: [] })
      : s.betting.my_bet ? () => act("/api/play/bet", { main: 0 }) : null;
    if (withdraw) main.push(button(t("withdraw"), withdraw, { id: "withdraw" }));
  }
  out.push(el("div", { class: "pp-row pp-place" }, main));
  const mine = myBetText(s);
  // Chips laid on a spot are not a bet until the Bet button sends them: the note names it.
  const unplaced = !mine && planTotal() && main.length ? t("bet-unplaced", { button: main[0].textContent }) : null;
  out.push(el("div", { class: "pp-note" + (mine ? " ok" : ""), id: "my-bet", role: "status" }, mine || unplaced || t("bet-none")));
  if ((s.betting.my_seats || []).length > 1) {
    out.push(el("div", { class: "pp-note" }, s.betting.my_seats.map((x) => t("my-seats", { seat: x.seat, amount: x.main ? money(x.main) : "—" })).join(" · ")));
  }
}
