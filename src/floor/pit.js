"use strict";
const $ = (id) => document.getElementById(id);
const time = (ms) => (ms ? new Date(ms).toLocaleTimeString() : "—");
const EURO = { code: "EUR", symbol: "\u20ac", exponent: 2 };
// Amounts are whole minor units; written here in the table's currency (as `table.js` and
// the server's `currency::format` write them).
function money(v, c) {
  c = c || EURO;
  const abs = Math.abs(v);
  const scale = Math.pow(10, c.exponent);
  const whole = String(Math.floor(abs / scale)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const frac = c.exponent ? "." + String(abs % scale).padStart(c.exponent, "0") : "";
  const sym = /^[A-Za-z]+$/.test(c.symbol) ? c.symbol + " " : c.symbol;
  return (v < 0 ? "-" : "") + sym + whole + frac;
}
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) e[k] = v; else if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v);
  }
  for (const k of kids.flat()) if (k !== null && k !== undefined) e.append(k);
  return e;
}
// A cell; `label` names it where a narrow screen stacks the row (the header is hidden).
function cell(tr, text, cls, label) {
  const td = document.createElement("td");
  td.textContent = text == null ? "—" : String(text);
  if (cls) td.className = cls;
  if (label) td.dataset.label = label;
  tr.appendChild(td);
}
async function api(path, opts) {
  const r = await fetch(path, Object.assign({ credentials: "same-origin" }, opts || {}));
  const body = await r.json();
  if (r.status === 401) show(false);
  if (!r.ok) throw Object.assign(new Error(body.message || r.statusText), { status: r.status });
  return body;
}
// The supervisor by name and badge ({badge, name}: the login's answer, /floor/api/me).
function greet(me) { $("who").textContent = me.name ? me.name + " (" + me.badge + ")" : me.badge; }
function show(on) {
  $("pit").hidden = !on;
  $("login").hidden = on;
  $("logout").hidden = !on;
  if (!on) {
    $("who").textContent = "";
    shownQuery = null;
  }
}

// A table whose last row is older than this (the page's `?quiet=S`, default 60 s) has
// stopped dealing or lost the broker: it is shown as quiet, never as open.
const QUIET_MS = (Number(new URLSearchParams(location.search).get("quiet")) || 60) * 1000;
const STATES = {
  open: ["s-open", "Open"], locked: ["s-paused", "Paused: a card is being fixed"],
  disputed: ["s-paused", "Dispute open"], broken: ["s-broken", "Out of service"],
};
// How long ago, in words: seconds under two minutes, then minutes.
function since(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? s + " s" : Math.round(s / 60) + " min";
}
function stateOf(t) {
  const quiet = Date.now() - t.last_row_ms;
  const known = STATES[t.state];
  if (t.state && quiet > QUIET_MS) {
    // A paused table deals nothing until a person acts (a dispute resolved, a card fixed):
    // its silence is the pause, so it stays amber with its reason, the silence beside it.
    if (known && known[0] === "s-paused") return [known[0], known[1] + " · no news for " + since(quiet)];
    return ["s-quiet", "No news for " + since(quiet)];
  }
  return known || ["s-quiet", t.state ? String(t.state) : "No view published"];
}
const tables = new Map(); // id → the last /floor/api/tables entry
const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
function card(code) {
  const rank = code.slice(0, -1) === "T" ? "10" : code.slice(0, -1);
  const suit = code.slice(-1);
  return el("span", { class: "pc" + (suit === "H" || suit === "D" ? " red" : ""), "data-card": code,
    role: "img", "aria-label": rank + " of " + (SUIT_NAMES[suit] || suit) }, rank + (SUITS[suit] || suit));
}

// The tiles are updated in place, never replaced: a tap that straddles a refresh (its
// press on one element, its release on its replacement) would otherwise be lost (seen
// under load). Each tile keeps its element while its table is listed.
function tile(t) {
  let div = [...$("tables").children].find((d) => d.dataset.table === t.table);
  if (div) return div;
  const name = el("span", { class: "tname" });
  const sub = el("span", { class: "tid" });
  const badge = el("span", { class: "badge" });
  const resolve = el("button", { type: "button", class: "resolve", hidden: "" });
  resolve.onclick = (ev) => { ev.stopPropagation(); openResolve(t.table); };
  const open = el("button", { type: "button", class: "open-rounds" }, name, sub);
  const facts = el("div", { class: "facts" });
  const fig = (kind, label) => el("figure", { class: "trend", "data-kind": kind, role: "img", "aria-label": label },
    el("figcaption", {}, label), el("div", { class: "chart" }));
  const trends = el("div", { class: "trends" },
    fig("hold", "Hold over the shift"), fig("handle", "Handle per slice"), fig("rate", "Rounds per hour"));
  div = el("div", { class: "tile", "data-table": t.table }, el("div", { class: "head" }, open, badge), facts, resolve, trends);
  div.onclick = () => {
    $("s-table").value = t.table;
    $("s-round").value = ""; $("s-card").value = ""; $("s-player").value = "";
    search();
  };
  return div;
}
function set(e, text) { if (e.textContent !== text) e.textContent = text; }
async function refresh() {
  try {
    const list = await api("/floor/api/tables");
    const box = $("tables");
    const listed = new Set();
    list.forEach((t, i) => {
      tables.set(t.table, t);
      listed.add(t.table);
      const div = tile(t);
      const [cls, label] = stateOf(t);
      div.className = "tile " + cls;
      div.dataset.state = cls.slice(2);
      set(div.querySelector(".tname"), t.name || t.table);
      set(div.querySelector(".tid"), t.table + " · " + (t.game_name || t.game || "no game yet"));
      const badge = div.querySelector(".badge");
      badge.className = "badge " + cls;
      set(badge, label);
      const facts = [["Round", t.round], ["Alarms", t.alarms], ["Open disputes", t.open_disputes],
        ["Last card", time(t.last_card_ms)], ["Rows", t.rows], ["Lag", t.lag_rows]];
      const f = div.querySelector(".facts");
      if (f.children.length !== facts.length) {
        f.replaceChildren(...facts.map(([k]) => el("span", { "data-fact": k }, el("b", {}, k), el("span"))));
      }
      facts.forEach(([k, v], j) => {
        const span = f.children[j];
        set(span.lastChild, v == null ? "—" : String(v));
        span.className = (k === "Alarms" || k === "Open disputes") ? (v ? "alarm" : "ok") : "";
      });
      const resolve = div.querySelector(".resolve");
      resolve.hidden = !t.open_disputes;
      set(resolve, "Resolve dispute" + (t.open_disputes > 1 ? "s (" + t.open_disputes + ")" : ""));
      if (box.children[i] !== div) box.insertBefore(div, box.children[i] || null);
    });
    for (const d of [...box.children]) if (!listed.has(d.dataset.table)) { d.remove(); delete window.pitCharts.tiles[d.dataset.table]; }
    const alarms = await api("/floor/api/alarms");
    const ab = $("alarms").tBodies[0];
    ab.replaceChildren();
    for (const a of alarms) {
      const tr = document.createElement("tr");
      cell(tr, a.table, null, "Table"); cell(tr, a.seq, null, "Row"); cell(tr, a.kind, "alarm", "Kind");
      cell(tr, a.detail, null, "Detail");
      ab.appendChild(tr);
    }
    if (resolving && !resolving.proposal) loadDisputes();
    $("error").textContent = "";
  } catch (e) { $("error").textContent = e.message; }
}

// Halves away from zero, as the server's figures (Rust's f64::round) and the report's
// table are rounded: Math.round takes -4437.5 to -4437, so a losing shift's hold on the
// chart would read a hundredth above the table's.
function roundHalfAway(x) {
  return Math.sign(x) * Math.round(Math.abs(x));
}

// Charts (uPlot, vendored: src/floor/assets/uplot/). Each keeps its data for the tests.
window.pitCharts = { tiles: {}, report: {} };
// The shift's slices as the charts plot them: x in seconds (uPlot's time scale), the hold
// over the shift so far (%, null before any stake), the handle and the rounds per hour.
// `slices` defaults to the report's; the tiles pass theirs from the shift's first round.
function series(r, slices) {
  const xs = [], hold = [], handle = [], rate = [];
  let staked = 0, result = 0;
  for (const s of slices || r.slices) {
    staked += s.handle; result += s.result;
    xs.push(s.from_ms / 1000);
    hold.push(staked ? roundHalfAway(result * 10000 / staked) / 100 : null);
    handle.push(s.handle);
    rate.push(Math.round(s.rounds * 3600e3 / r.slice_ms));
  }
  return { xs, hold, handle, rate };
}
// Rounds per hour from the shift's first round to now (or the shift's end): a shift
// still under way or a table opened late is not diluted by hours nobody dealt.
function rateSoFar(r) {
  const first = r.slices.find((s) => s.rounds > 0);
  if (!first) return 0;
  const end = Math.min(Date.now(), r.slices[r.slices.length - 1].from_ms + r.slice_ms);
  return Math.round(r.rounds * 3600e3 / Math.max(60e3, end - first.from_ms));
}
const COLOURS = { hold: "#ffe066", handle: "#7fc8ff", rate: "#8fdc9f" };
function spark(box, kind, xs, ys, old) {
  const data = [xs, ys];
  const width = Math.max(60, Math.floor(box.clientWidth));
  if (old && old.width === width) { old.setData(data); return old; }
  if (old) old.destroy();
  // Lines show their points too: a shift's first slice is one point, which a line alone
  // never draws.
  const bars = kind === "handle" ? { paths: uPlot.paths.bars({ size: [0.8, 40] }) } : { points: { show: true, size: 5 } };
  return new uPlot({
    width, height: 54, pxAlign: false, cursor: { show: false }, select: { show: false },
    legend: { show: false }, scales: { x: { time: true } },
    axes: [{ show: false }, { show: false }],
    series: [{}, Object.assign({ stroke: COLOURS[kind], width: 2, fill: COLOURS[kind] + "33", spanGaps: true }, bars)],
  }, data, box);
}
let lastTrends = [];
// A tile's slices from the shift's first round on (at least two): early in a shift the
// whole shift's slices would squeeze its rounds into one bar at the right edge.
function fromFirstRound(r) {
  const first = r.slices.findIndex((s) => s.rounds > 0);
  if (first < 0) return r.slices;
  return r.slices.slice(Math.max(0, Math.min(first, r.slices.length - 2)));
}
function drawTrends(reports) {
  lastTrends = reports;
  for (const r of reports) {
    const div = [...$("tables").children].find((d) => d.dataset.table === r.table);
    if (!div) continue;
    const s = series(r, fromFirstRound(r));
    const cur = r.currency;
    const charts = window.pitCharts.tiles[r.table] || {};
    const last = (a) => a.filter((v) => v !== null).slice(-1)[0];
    const captions = {
      hold: "Hold " + (last(s.hold) == null ? "—" : last(s.hold).toFixed(1) + " %") + " · " + r.rounds + " rounds",
      handle: "Handle " + money(r.handle + r.side_handle, cur),
      rate: "Rounds/h " + rateSoFar(r),
    };
    for (const kind of ["hold", "handle", "rate"]) {
      const fig = div.querySelector('figure[data-kind="' + kind + '"]');
      set(fig.querySelector("figcaption"), captions[kind]);
      fig.setAttribute("aria-label", captions[kind] + " (a chart over the shift)");
      charts[kind] = spark(fig.querySelector(".chart"), kind, s.xs, s[kind], charts[kind]);
    }
    window.pitCharts.tiles[r.table] = charts;
  }
}
// The tiles' trends follow the report form's shift, asked again every ten seconds: each
// is folded from the table's whole log on the floor.
// Early in a shift its slices are wide (an eight-hour shift in 20-minute slices) and the
// rounds so far fall in the last one or two: the trends are then asked again over the part
// dealt so far — from the first slice with a round to now — in slices of its own.
async function trends() {
  try {
    const q = reportQuery();
    q.delete("table");
    let reports = await api("/floor/api/report?" + q);
    const starts = reports.map((r) => (r.slices.find((s) => s.rounds > 0) || {}).from_ms).filter((v) => v !== undefined);
    const from = Number(q.get("from_ms")), to = Math.min(Number(q.get("to_ms")), Date.now() + 60e3);
    const dealtFrom = starts.length ? Math.min(...starts) : from;
    const slice = reports.length ? reports[0].slice_ms : 0;
    // The server's own default: the span in 24 slices of whole minutes.
    const finer = Math.max(1, Math.ceil((to - dealtFrom) / 24 / 60e3)) * 60e3;
    if (dealtFrom < to && finer < slice) {
      q.set("from_ms", String(dealtFrom));
      q.set("to_ms", String(to));
      reports = await api("/floor/api/report?" + q);
    }
    drawTrends(reports);
  } catch (e) { $("error").textContent = e.message; }
}

// Round detail: the cards as cards, the bets in the table's currency.
function resultView(r, cur) {
  const out = [];
  if (r.cancelled) out.push(el("p", {}, "Cancelled: every stake back."));
  const hands = el("div", { class: "hands" },
    el("div", { class: "hand" }, el("div", { class: "who" }, "Dealer" + (r.dealer_total ? " — " + r.dealer_total : "")),
      el("div", { class: "cards" }, r.dealer_cards.map(card))),
    r.hands.map((h) => el("div", { class: "hand", "data-seat": h.seat },
      el("div", { class: "who" }, "Seat " + h.seat + (h.hand > 1 ? " hand " + h.hand : "") + (h.player ? " (" + h.player + ")" : "") +
        " — " + h.total + ", " + String(h.outcome).replace(/_/g, " ") + (h.doubled ? ", doubled" : "")),
      el("div", { class: "cards" }, h.cards.map(card)))));
  out.push(hands);
  if (r.burned && r.burned.length) out.push(el("div", { class: "who" }, "Burned: "), el("div", { class: "cards" }, r.burned.map(card)));
  out.push(el("ul", { class: "bets" }, r.bets.map((b) => el("li", {},
    "Seat " + b.seat + (b.player ? " " + b.player : "") + ", " + (typeof b.kind === "string" ? b.kind : Object.values(b.kind)[0]) +
    ": staked " + money(b.staked, cur) + ", returned " + money(b.returned, cur)))));
  return out;
}
// The rounds shown follow the table: the last search is asked again every few seconds and
// redrawn only when its answer changed (a round dealt or settled since), so a supervisor
// who opened a table sees its new rounds without tapping again.
let shownQuery = null, shownRounds = null, followTick = 0;
async function search(ev) {
  if (ev) ev.preventDefault();
  const q = new URLSearchParams({ table: $("s-table").value.trim() });
  for (const [k, id] of [["round", "s-round"], ["card", "s-card"], ["player", "s-player"]]) {
    if ($(id).value.trim()) q.set(k, $(id).value.trim());
  }
  await showRounds(q.toString());
}
async function showRounds(query) {
  try {
    const rounds = await api("/floor/api/rounds?" + query);
    const text = JSON.stringify(rounds);
    if (query === shownQuery && text === shownRounds) return;
    shownQuery = query;
    shownRounds = text;
    const out = $("rounds");
    out.replaceChildren();
    for (const r of rounds.reverse()) {
      const cur = (tables.get(r.table) || {}).currency;
      const div = el("div", { class: "round", "data-round": r.round },
        el("h3", {}, ((tables.get(r.table) || {}).name || r.table) + " — round " + r.round +
          (r.result ? ", settled " + time(r.settled_ms) : " (in play)")));
      if (r.result) div.append(...resultView(r.result, cur));
      div.append(el("details", {}, el("summary", {}, r.lines.length + " rows"),
        el("ol", {}, r.lines.map((l) => el("li", {}, "#" + l.seq + " " + time(l.at_ms) + " " + l.text)))));
      out.appendChild(div);
    }
    if (!rounds.length) out.textContent = "No round matches.";
    $("error").textContent = "";
  } catch (e) { $("error").textContent = e.message; }
}
function reportQuery() {
  const q = new URLSearchParams({
    from_ms: String(new Date($("r-from").value).getTime()),
    to_ms: String(new Date($("r-to").value).getTime()),
  });
  if ($("r-table").value.trim()) q.set("table", $("r-table").value.trim());
  return q;
}
// A hold over a few rounds says nothing about the game: beyond this many points of
// chance either way (95 %), the report says so beside it.
const MARGIN_NOTE = 5;
function holdText(r) {
  const hold = r.hold_percent.toFixed(2) + " % over " + r.rounds + " round" + (r.rounds === 1 ? "" : "s");
  if (r.hold_margin === null || r.hold_margin === undefined) return [hold, "Too few rounds to mean anything."];
  if (r.hold_margin > MARGIN_NOTE) {
    return [hold, "Too few rounds to mean anything: ±" + r.hold_margin.toFixed(1) + " points by chance alone."];
  }
  return [hold, "±" + r.hold_margin.toFixed(1) + " points by chance."];
}
function reportChart(r) {
  const s = series(r);
  const cur = r.currency;
  const width = Math.max(240, Math.min(900, $("report-charts").clientWidth - 8));
  const axis = { stroke: "#ddd", grid: { stroke: "#2c4a3b" }, ticks: { stroke: "#2c4a3b" } };
  const money_ = new uPlot({
    width, height: 180, cursor: { show: false }, select: { show: false }, legend: { show: false },
    scales: { x: { time: true }, h: {}, p: {} },
    axes: [Object.assign({}, axis), Object.assign({ scale: "h", size: 80, values: (u, v) => v.map((x) => money(x, cur)) }, axis),
      Object.assign({ scale: "p", side: 1, size: 60, values: (u, v) => v.map((x) => x + " %") }, axis)],
    series: [{}, { label: "Handle", scale: "h", stroke: COLOURS.handle, fill: COLOURS.handle + "55", paths: uPlot.paths.bars({ size: [0.8, 60] }) },
      { label: "Hold %", scale: "p", stroke: COLOURS.hold, width: 2, spanGaps: true }],
  }, [s.xs, s.handle, s.hold], null);
  const rate = new uPlot({
    width, height: 120, cursor: { show: false }, select: { show: false }, legend: { show: false },
    scales: { x: { time: true } },
    axes: [Object.assign({}, axis), Object.assign({ size: 60 }, axis)],
    series: [{}, { label: "Rounds per hour", stroke: COLOURS.rate, width: 2 }],
  }, [s.xs, s.rate], null);
  window.pitCharts.report[r.table] = { money: money_, rate, slice_ms: r.slice_ms };
  const [hold, note] = holdText(r);
  return el("figure", { class: "report-chart", "data-table": r.table },
    el("figcaption", {}, r.table + ": handle per " + Math.round(r.slice_ms / 60e3) + " min (bars) and the hold so far (line), " + hold),
    el("div", { role: "img", "aria-label": "Handle and hold of " + r.table + " over the shift. " + hold + ". " + note }, money_.root),
    el("figcaption", {}, "Rounds per hour"),
    el("div", { role: "img", "aria-label": "Rounds per hour at " + r.table + " over the shift" }, rate.root));
}
let lastReport = null;
async function report(ev) {
  if (ev) ev.preventDefault();
  try {
    const q = reportQuery();
    renderReport(await api("/floor/api/report?" + q));
    q.set("format", "csv");
    $("csv").href = "/floor/api/report?" + q;
    $("error").textContent = "";
    trends();
  } catch (e) { $("error").textContent = e.message; }
}
function renderReport(rows) {
    lastReport = rows;
    const body = $("reports").tBodies[0];
    body.replaceChildren();
    for (const c of Object.values(window.pitCharts.report)) { c.money.destroy(); c.rate.destroy(); }
    window.pitCharts.report = {};
    $("report-charts").replaceChildren();
    for (const r of rows) {
      const cur = r.currency;
      const tr = el("tr", { "data-table": r.table });
      // Handle, house result and hold over the same bets (every bet, side bets included),
      // so the one divided by the other is the hold shown; the side bets' share after.
      cell(tr, r.table, null, "Table"); cell(tr, r.rounds, null, "Rounds");
      cell(tr, money(r.total_handle, cur), "handle", "Handle");
      cell(tr, money(r.total_result, cur), "house", "House result");
      const [hold, note] = holdText(r);
      tr.append(el("td", { class: "hold", "data-label": "Hold" }, hold, el("div", { class: "note" }, note)));
      cell(tr, money(r.side_handle, cur), "side-handle", "Of which side bets: handle");
      cell(tr, money(r.side_result, cur), "side-result", "Of which side bets: house result");
      // A step back of the table's clock: rounds may sit in the wrong shift.
      cell(tr, r.clock_steps.length === 0 ? "none" : r.clock_steps.map((s) =>
        `row ${s.seq}: ${new Date(s.previous_ms).toISOString()} → ${new Date(s.at_ms).toISOString()}`
      ).join("; "), null, "Clock stepped back");
      if (r.clock_steps.length > 0) tr.classList.add("alarm");
      body.appendChild(tr);
      $("report-charts").appendChild(reportChart(r));
    }
}
// Charts are drawn at a width in pixels: drawn again when the screen turns or resizes.
let resized = null;
window.addEventListener("resize", () => {
  clearTimeout(resized);
  resized = setTimeout(() => {
    drawTrends(lastTrends);
    if (lastReport) renderReport(lastReport);
  }, 100);
});
$("login").onsubmit = async (ev) => {
  ev.preventDefault();
  try {
    const r = await api("/floor/api/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ badge: $("badge").value, secret: $("secret").value }),
    });
    $("secret").value = "";
    greet(r);
    show(true);
    await refresh();
    trends();
  } catch (e) { $("error").textContent = e.message; }
};
$("logout").onclick = async () => {
  await api("/floor/api/logout", { method: "POST", headers: { "Content-Type": "application/json" } }).catch(() => {});
  closeResolve();
  show(false);
};

// Disputes by taps: a table's open disputes, the resolutions that replay on its round
// (GET /floor/api/disputes), a preview from the table, confirm.
let resolving = null; // {table, dispute, proposal, shown}
async function openResolve(table) {
  resolving = { table, dispute: null, proposal: null, shown: null };
  $("resolve").hidden = false;
  set($("r-title"), "Dispute at " + ((tables.get(table) || {}).name || table));
  $("d-preview").replaceChildren();
  $("d-confirm").disabled = true;
  await loadDisputes();
  $("resolve").scrollIntoView({ block: "start" });
}
function closeResolve() {
  resolving = null;
  $("resolve").hidden = true;
}
function pressed(group, button) {
  for (const b of group.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b === button));
}
async function loadDisputes() {
  if (!resolving) return;
  const table = resolving.table;
  try {
    const d = await api("/floor/api/disputes?table=" + encodeURIComponent(table));
    if (!resolving || resolving.table !== table) return;
    // Redrawn only when the answer changed: buttons replaced under a finger lose the tap.
    const text = JSON.stringify(d);
    if (text === resolving.shown) return;
    resolving.shown = text;
    const cur = d.currency;
    const list = $("r-disputes");
    list.replaceChildren();
    if (!d.disputes.some((x) => x.dispute === resolving.dispute)) resolving.dispute = d.disputes.length ? d.disputes[0].dispute : null;
    for (const x of d.disputes) {
      const b = el("button", { type: "button", "data-dispute": x.dispute, "aria-pressed": String(x.dispute === resolving.dispute) },
        "Round " + x.round + (x.seat ? ", seat " + x.seat : ", the whole table") + ": \u201c" + x.reason + "\u201d \u2014 raised by " +
        who(x.by) + " at " + time(x.at_ms));
      b.onclick = () => { resolving.dispute = x.dispute; pressed(list, b); };
      list.appendChild(b);
    }
    const opts = $("r-options");
    opts.replaceChildren();
    $("card-pick").hidden = true;
    $("to-cards").hidden = true;
    if (!d.disputes.length) opts.append(el("p", {}, "No open dispute at this table."));
    // A card's resolutions are one button per kind, then the card, then (a correction)
    // the card it really is: a long round would otherwise fill a phone with buttons.
    const byCard = new Map();
    for (const o of d.options) {
      const op = o.resolution.op;
      if (o.card && byCard.has(op)) { byCard.get(op).push(o); continue; }
      const b = el("button", { type: "button", "data-op": op }, o.card ? CARD_OPS[op] || op : o.label);
      if (o.card) byCard.set(op, [o]);
      b.onclick = () => {
        pressed(opts, b);
        $("card-pick").hidden = true;
        $("to-cards").hidden = true;
        if (o.card) pickFrom(byCard.get(op), cur); else propose(o.resolution, cur);
      };
      opts.appendChild(b);
    }
  } catch (e) { $("error").textContent = e.message; }
}
const CARD_OPS = { void: "Void a card…", correct: "Correct a card…" };
// Who raised a dispute, in words: the table's staff by badge ("user:101"), the pit's
// supervisors likewise ("floor:301"), the table's own local token as such.
function who(actor) {
  const [space, badge] = String(actor || "").split(":");
  if (badge === undefined) return space === "local" ? "the table's own terminal" : space || "someone";
  return (space === "floor" ? "pit supervisor, badge " : "badge ") + badge;
}
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"];
const rankText = (r) => (r === "T" ? "10" : r);
// Which card: the round's cards that this resolution replays with, where each went.
function pickFrom(list, cur) {
  const box = $("card-pick");
  box.hidden = false;
  box.replaceChildren();
  for (const o of list) {
    const b = el("button", { type: "button", "data-card": o.card }, card(o.card), o.place || "held");
    b.onclick = () => {
      pressed(box, b);
      $("to-cards").hidden = true;
      if (o.to) pickCard(o, cur); else propose(o.resolution, cur);
    };
    box.appendChild(b);
  }
}
// A correction: the card it really is, from the cards that replay — its rank, then its
// suit (13 and 4 buttons, those that do not replay off), not one button per card.
function pickCard(o, cur) {
  const box = $("to-cards");
  box.hidden = false;
  const rank = code => code.slice(0, -1);
  const name = code => rankText(rank(code)) + " of " + SUIT_NAMES[code.slice(-1)];
  let chosen = null;
  const suits = el("div", { class: "to-suits", role: "group", "aria-label": "Its suit" });
  const ranks = el("div", { class: "to-ranks", role: "group", "aria-label": "Its rank" }, RANKS.map((r) => {
    const any = o.to.some((to) => rank(to) === r);
    const b = el("button", { type: "button", "data-rank": r, disabled: any ? null : "", "aria-pressed": "false",
      title: any ? null : "No " + rankText(r) + " replays here" }, rankText(r));
    b.onclick = () => { chosen = r; pressed(ranks, b); drawSuits(); };
    return b;
  }));
  function drawSuits() {
    suits.replaceChildren(...["S", "H", "D", "C"].map((suit) => {
      const to = chosen + suit;
      const ok = o.to.includes(to);
      const b = el("button", { type: "button", "data-suit": suit, "data-to": to, class: suit === "H" || suit === "D" ? "red" : null,
        disabled: ok ? null : "", "aria-pressed": "false", "aria-label": name(to) }, rankText(chosen) + SUITS[suit]);
      b.onclick = () => { pressed(suits, b); propose(Object.assign({}, o.resolution, { to }), cur); };
      return b;
    }));
  }
  box.replaceChildren(el("p", {}, "The " + name(o.card) + " is really:"), ranks, suits);
}
function disputeBody(extra) {
  return JSON.stringify(Object.assign({ table: resolving.table, dispute: resolving.dispute }, extra));
}
async function propose(resolution, cur) {
  if (!resolving || resolving.dispute === null) return;
  resolving.proposal = null;
  $("d-confirm").disabled = true;
  const out = $("d-preview");
  out.replaceChildren(el("p", {}, "Asking the table for a preview…"));
  try {
    const r = await api("/floor/api/disputes", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: disputeBody({ action: "propose", resolution, reason: $("d-reason").value || "Reviewed on the pit page" }),
    });
    const p = r.preview;
    resolving.proposal = p.proposal;
    out.replaceChildren(el("h3", {}, "Preview: " + p.resolution.op.replace(/_/g, " ") + " — round " + p.round.number));
    if (p.result) out.append(...resultView(p.result, cur));
    else out.append(el("p", {}, "Then the table expects: " + p.expecting));
    if (p.voided && p.voided.length) out.append(el("p", {}, "Taken out of play: " + p.voided.join(", ")));
    if (p.second_person) out.append(el("p", { class: "note" }, "Another supervisor must confirm this (two-person rule)."));
    $("d-confirm").disabled = false;
    $("error").textContent = "";
  } catch (e) {
    out.replaceChildren(el("p", { class: "alarm" }, "The table refused: " + e.message));
  }
}
$("d-confirm").onclick = async () => {
  if (!resolving || !resolving.proposal) return;
  try {
    const r = await api("/floor/api/disputes", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: disputeBody({ action: "confirm", proposal: resolving.proposal }),
    });
    $("d-preview").replaceChildren(el("p", { class: "ok" }, "Applied at the table (row " + r.seq + ")."));
    $("d-confirm").disabled = true;
    resolving.proposal = null;
    resolving.shown = null;
    refresh();
  } catch (e) { $("error").textContent = e.message; }
};
$("r-close").onclick = closeResolve;
$("search").onsubmit = search;
$("report").onsubmit = report;
const now = new Date();
const shift = new Date(now.getTime() - 8 * 3600e3);
const local = (d) => new Date(d.getTime() - d.getTimezoneOffset() * 60e3).toISOString().slice(0, 16);
$("r-from").value = local(shift);
$("r-to").value = local(new Date(now.getTime() + 60e3));
// The first look. Only a 401 asks for the badge (`api` shows the form then); a request
// that failed otherwise (the floor busy, the network changed under the browser: a loaded
// suite saw a supervisor's page left on the form for good) is said and tried again.
function boot() {
  api("/floor/api/me")
    .then(async (me) => { $("error").textContent = ""; show(true); greet(me); await refresh(); trends(); })
    .catch((e) => {
      if (e.status === 401) return;
      $("login").hidden = true;
      $("error").textContent = "The floor did not answer (" + e.message + "); trying again.";
      setTimeout(boot, 2000);
    });
}
boot();
// One of each at a time: a tick whose request before is still out leaves it be. A floor
// answering slower than every 2 s (a machine under load; a long log folded for the rounds)
// would otherwise be sent more and more at once, each slower for the others, and a page
// opened then waited on a queue (a loaded suite: a new page with no tile for 20 s).
const inFlight = new Set();
function once(name, run) {
  if (inFlight.has(name)) return;
  inFlight.add(name);
  run().finally(() => inFlight.delete(name));
}
let tick = 0;
setInterval(() => {
  if ($("pit").hidden) return;
  once("tables", refresh);
  tick++;
  // Every other tick: a table's rounds are folded from its whole log on the floor.
  if (shownQuery !== null && tick % 2 === 0) once("rounds", () => showRounds(shownQuery));
  if (tick % 5 === 0) once("trends", trends);
}, 2000);
