// The relay's lobby: every table it serves, from `GET /api/tables`, asked again every two
// seconds, with each table's limits (in its currency, `money.js`) and the seats a remote
// player could take. A table that has been quiet longer than `QUIET_S` (the page's `?quiet=S`,
// default 60) is shown as quiet, never as open: a table deals and publishes every few
// seconds, so silence means it stopped or lost the broker.
"use strict";
const QUIET_S = Number(new URLSearchParams(location.search).get("quiet")) || 60;
const STATES = {
  open: ["open", "Open"], locked: ["paused", "Paused (the dealer is fixing a card)"],
  disputed: ["paused", "Paused (a result is being checked)"], broken: ["broken", "Out of service"],
};
const $ = (id) => document.getElementById(id);

function ago(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 2) return "just now";
  if (s < 120) return s + " s ago";
  const m = Math.floor(s / 60);
  return m < 120 ? m + " min ago" : Math.floor(m / 60) + " h ago";
}

// The row of table `t`, updated in place (a row replaced under a finger loses the tap).
function row(body, t) {
  let tr = [...body.rows].find((r) => r.dataset.table === t.table);
  if (!tr) {
    tr = document.createElement("tr");
    tr.dataset.table = t.table;
    for (let k = 0; k < 7; k++) tr.appendChild(document.createElement("td"));
    tr.cells[2].className = "limits";
    tr.cells[3].className = "seats";
    // Labels for the stacked layout of a narrow screen (the header row is hidden there).
    tr.cells[2].dataset.label = "Bets";
    tr.cells[3].dataset.label = "Free seats";
    tr.cells[5].dataset.label = "Round";
    tr.cells[6].dataset.label = "Last news";
    const a = document.createElement("a");
    a.href = "/public?table=" + encodeURIComponent(t.table);
    tr.cells[0].appendChild(a);
    const badge = document.createElement("span");
    tr.cells[4].appendChild(badge);
    body.appendChild(tr);
  }
  return tr;
}

// The range `min` to `max` in the table's currency.
function range(min, max, currency) {
  const m = (v) => window.Money.format(v, currency, document.documentElement.lang);
  return m(min) + " \u2013 " + m(max);
}

// What a player may stake: the main bet's range, and the side bets' (from the smallest
// minimum to the largest maximum) when the game has any; "—" for a table that does not
// publish its limits yet.
function limits(t) {
  const o = t.offer;
  if (!o) return "—";
  const side = o.side_bets || [];
  const main = range(o.min, o.max, t.currency);
  if (!side.length) return main;
  const lo = Math.min(...side.map((b) => b.min)), hi = Math.max(...side.map((b) => b.max));
  return main + " · side bets " + range(lo, hi, t.currency);
}

// The seats a remote player could take, of the table's seats; a common draw has none to
// take (every player plays every box).
function seats(t) {
  const o = t.offer;
  if (!o) return "—";
  if (o.seats_free === null || o.seats_free === undefined) return "no seat needed";
  return o.seats_free + " of " + o.seats;
}

function set(el, text) { if (el.textContent !== text) el.textContent = text; }

async function refresh() {
  try {
    const r = await fetch("/api/tables", { cache: "no-store" });
    if (!r.ok) throw new Error("the relay answered " + r.status);
    const tables = await r.json();
    const body = $("tables").tBodies[0];
    const listed = new Set();
    for (const t of tables) {
      listed.add(t.table);
      const tr = row(body, t);
      set(tr.cells[0].firstChild, t.name ? t.name + " (" + t.table + ")" : t.table);
      set(tr.cells[1], t.game);
      set(tr.cells[2], limits(t));
      set(tr.cells[3], seats(t));
      const quiet = t.quiet_ms > QUIET_S * 1000;
      const [cls, label] = quiet
        ? ["quiet", "No news — not live"]
        : STATES[t.state] || ["paused", t.state];
      const badge = tr.cells[4].firstChild;
      badge.className = "state " + cls;
      set(badge, label);
      set(tr.cells[5], t.round ? String(t.round) : "—");
      tr.cells[6].className = "fresh";
      set(tr.cells[6], ago(t.quiet_ms));
    }
    for (const tr of [...body.rows]) if (!listed.has(tr.dataset.table)) tr.remove();
    $("none").hidden = tables.length > 0;
    set($("error"), "");
  } catch (e) {
    set($("error"), "The relay did not answer (" + e.message + "); trying again.");
  }
}
refresh();
setInterval(refresh, 2000);
