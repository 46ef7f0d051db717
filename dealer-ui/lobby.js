// The relay's lobby: every table it serves, from `GET /api/tables`, asked again every two
// seconds. A table that has been quiet longer than `QUIET_S` (the page's `?quiet=S`,
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
    for (let k = 0; k < 5; k++) tr.appendChild(document.createElement("td"));
    // Labels for the stacked layout of a narrow screen (the header row is hidden there).
    tr.cells[3].dataset.label = "Round";
    tr.cells[4].dataset.label = "Last news";
    const a = document.createElement("a");
    a.href = "/public?table=" + encodeURIComponent(t.table);
    tr.cells[0].appendChild(a);
    const badge = document.createElement("span");
    tr.cells[2].appendChild(badge);
    body.appendChild(tr);
  }
  return tr;
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
      const quiet = t.quiet_ms > QUIET_S * 1000;
      const [cls, label] = quiet
        ? ["quiet", "No news — not live"]
        : STATES[t.state] || ["paused", t.state];
      const badge = tr.cells[2].firstChild;
      badge.className = "state " + cls;
      set(badge, label);
      set(tr.cells[3], t.round ? String(t.round) : "—");
      tr.cells[4].className = "fresh";
      set(tr.cells[4], ago(t.quiet_ms));
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
