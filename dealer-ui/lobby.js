// The relay's lobby: every table it serves, from `GET /api/tables`, asked again every two
// seconds, with each table's limits (in its currency, `money.js`) and the seats a remote
// player could take. A table that has been quiet longer than `QUIET_S` (the page's
// `?quiet=S`, default 60) is shown as quiet, never as open: a table deals and publishes
// every few seconds, so silence means it stopped or lost the broker. Its words are the
// players' pages' catalogue (`lobby-*` in play-LANG.ftl), in the device's language.
"use strict";
const QUIET_S = Number(new URLSearchParams(location.search).get("quiet")) || 60;
// Each state's badge class; its words are `lobby-state-STATE`.
const STATES = { open: "open", locked: "paused", disputed: "paused", broken: "broken" };
const $ = (id) => document.getElementById(id);
const t = (id, args) => window.I18n.t(id, args);

function ago(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 2) return t("lobby-ago-now");
  if (s < 120) return t("lobby-ago-s", { n: s });
  const m = Math.floor(s / 60);
  return m < 120 ? t("lobby-ago-min", { n: m }) : t("lobby-ago-h", { n: Math.floor(m / 60) });
}

// The page's fixed words (its headings, marked `data-l10n`) in the catalogue's language.
function label() {
  for (const e of document.querySelectorAll("[data-l10n]")) e.textContent = t(e.dataset.l10n);
  document.title = t("lobby-title");
}

// The row of table `t`, updated in place (a row replaced under a finger loses the tap).
function row(body, table) {
  let tr = [...body.rows].find((r) => r.dataset.table === table.table);
  if (!tr) {
    tr = document.createElement("tr");
    tr.dataset.table = table.table;
    for (let k = 0; k < 7; k++) tr.appendChild(document.createElement("td"));
    tr.cells[2].className = "limits";
    tr.cells[3].className = "free";
    const a = document.createElement("a");
    a.href = "/public?table=" + encodeURIComponent(table.table);
    tr.cells[0].appendChild(a);
    const badge = document.createElement("span");
    tr.cells[4].appendChild(badge);
    body.appendChild(tr);
  }
  // Labels for the stacked layout of a narrow screen (the header row is hidden there).
  tr.cells[2].dataset.label = t("lobby-col-limits");
  tr.cells[3].dataset.label = t("lobby-col-seats");
  tr.cells[5].dataset.label = t("lobby-col-round");
  tr.cells[6].dataset.label = t("lobby-col-news");
  return tr;
}

// The range `min` to `max` in the table's currency.
function range(min, max, currency) {
  const m = (v) => window.I18n.money(v, currency);
  return m(min) + " \u2013 " + m(max);
}

// What a player may stake: the main bet's range, and the side bets' (from the smallest
// minimum to the largest maximum) when the game has any; "—" for a table that does not
// publish its limits yet.
function limits(table) {
  const o = table.offer;
  if (!o) return "\u2014";
  const side = o.side_bets || [];
  const main = range(o.min, o.max, table.currency);
  if (!side.length) return main;
  const lo = Math.min(...side.map((b) => b.min)), hi = Math.max(...side.map((b) => b.max));
  return t("lobby-side-bets", { main, side: range(lo, hi, table.currency) });
}

// The seats a remote player could take, of the table's seats; a common draw has none to
// take (every player plays every box).
function seats(table) {
  const o = table.offer;
  if (!o) return "\u2014";
  if (o.seats_free === null || o.seats_free === undefined) return t("lobby-seats-common");
  return t("lobby-seats-free", { free: o.seats_free, seats: o.seats });
}

function set(el, text) { if (el.textContent !== text) el.textContent = text; }

async function refresh() {
  try {
    const r = await fetch("/api/tables", { cache: "no-store" });
    if (!r.ok) throw new Error("HTTP " + r.status);
    const tables = await r.json();
    const body = $("tables").tBodies[0];
    const listed = new Set();
    for (const table of tables) {
      listed.add(table.table);
      const tr = row(body, table);
      // A game the catalogue names by its id; a variant file of the operator's own by
      // the name its file gives (`game`).
      const game = window.I18n.has(window.I18n.nameId("game", table.variant)) ? window.I18n.game(table.variant) : table.game;
      set(tr.cells[0].firstChild, table.name ? table.name + " (" + table.table + ")" : table.table);
      set(tr.cells[1], game);
      set(tr.cells[2], limits(table));
      set(tr.cells[3], seats(table));
      const quiet = table.quiet_ms > QUIET_S * 1000;
      const state = quiet ? "quiet" : table.state;
      const badge = tr.cells[4].firstChild;
      badge.className = "state " + (quiet ? "quiet" : STATES[table.state] || "paused");
      set(badge, window.I18n.has("lobby-state-" + state) ? t("lobby-state-" + state) : state);
      set(tr.cells[5], table.round ? String(table.round) : "\u2014");
      tr.cells[6].className = "fresh";
      set(tr.cells[6], ago(table.quiet_ms));
    }
    for (const tr of [...body.rows]) if (!listed.has(tr.dataset.table)) tr.remove();
    $("none").hidden = tables.length > 0;
    set($("error"), "");
  } catch (e) {
    set($("error"), t("lobby-error", { error: e.message }));
  }
}

// The catalogue first: the rows are written in its words.
window.I18n.ready.then(() => {
  label();
  refresh();
  setInterval(refresh, 2000);
});
