"use strict";
const $ = (id) => document.getElementById(id);
const money = (m) => (m / 100).toFixed(2);
const time = (ms) => (ms ? new Date(ms).toLocaleTimeString() : "—");
function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text == null ? "—" : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
}
async function api(path, opts) {
  const r = await fetch(path, Object.assign({ credentials: "same-origin" }, opts || {}));
  const body = await r.json();
  if (r.status === 401) show(false);
  if (!r.ok) throw new Error(body.message || r.statusText);
  return body;
}
function show(on) {
  $("pit").hidden = !on;
  $("login").hidden = on;
  $("logout").hidden = !on;
  if (!on) {
    $("who").textContent = "";
    shownQuery = null;
  }
}
async function refresh() {
  try {
    const tables = await api("/floor/api/tables");
    // Rows are updated in place, never replaced: a tap that straddles a refresh (its
    // press on one row element, its release on its replacement) would otherwise be lost
    // (seen under load). Each row keeps its element while its table is listed.
    const body = $("tables").tBodies[0];
    const rows = new Map([...body.rows].map((tr) => [tr.dataset.table, tr]));
    tables.forEach((t, i) => {
      let tr = rows.get(t.table);
      if (!tr) {
        tr = document.createElement("tr");
        tr.className = "table-row";
        tr.dataset.table = t.table;
        for (let k = 0; k < 9; k++) tr.appendChild(document.createElement("td"));
      }
      rows.delete(t.table);
      const cells = [
        [t.name ? t.table + " — " + t.name : t.table], [t.game], [t.state], [t.round],
        [t.alarms, t.alarms ? "alarm" : "ok"], [t.open_disputes, t.open_disputes ? "alarm" : "ok"],
        [time(t.last_card_ms)], [t.rows], [t.lag_rows],
      ];
      cells.forEach(([text, cls], k) => {
        const td = tr.cells[k];
        const shown = text == null ? "—" : String(text);
        if (td.textContent !== shown) td.textContent = shown;
        td.className = cls || "";
      });
      tr.onclick = () => {
        $("s-table").value = t.table;
        if (t.dispute) { $("d-table").value = t.table; $("d-id").value = t.dispute; }
        search();
      };
      if (body.rows[i] !== tr) body.insertBefore(tr, body.rows[i] || null);
    });
    for (const gone of rows.values()) gone.remove();
    const alarms = await api("/floor/api/alarms");
    const ab = $("alarms").tBodies[0];
    ab.replaceChildren();
    for (const a of alarms) {
      const tr = document.createElement("tr");
      cell(tr, a.table); cell(tr, a.seq); cell(tr, a.kind, "alarm"); cell(tr, a.detail);
      ab.appendChild(tr);
    }
    $("error").textContent = "";
  } catch (e) { $("error").textContent = e.message; }
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
      const div = document.createElement("div");
      div.className = "round";
      const h = document.createElement("h3");
      h.textContent = r.table + " round " + r.round + (r.result ? "" : " (open)");
      div.appendChild(h);
      const ol = document.createElement("ol");
      for (const l of r.lines) {
        const li = document.createElement("li");
        li.textContent = "#" + l.seq + " " + time(l.at_ms) + " " + l.text;
        ol.appendChild(li);
      }
      div.appendChild(ol);
      if (r.result) {
        const p = document.createElement("p");
        p.textContent = "Settled: " + r.result.bets.map((b) =>
          "seat " + b.seat + (b.player ? " " + b.player : "") + " " + b.kind + " staked " +
          money(b.staked) + " returned " + money(b.returned)).join("; ");
        div.appendChild(p);
      }
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
async function report(ev) {
  if (ev) ev.preventDefault();
  try {
    const q = reportQuery();
    const rows = await api("/floor/api/report?" + q);
    const body = $("reports").tBodies[0];
    body.replaceChildren();
    for (const r of rows) {
      const tr = document.createElement("tr");
      cell(tr, r.table); cell(tr, r.rounds); cell(tr, money(r.handle));
      cell(tr, money(r.house_result)); cell(tr, r.hold_percent.toFixed(2));
      cell(tr, money(r.side_handle)); cell(tr, money(r.side_result));
      // A step back of the table's clock: rounds may sit in the wrong shift.
      cell(tr, r.clock_steps.length === 0 ? "none" : r.clock_steps.map((s) =>
        `row ${s.seq}: ${new Date(s.previous_ms).toISOString()} → ${new Date(s.at_ms).toISOString()}`
      ).join("; "));
      if (r.clock_steps.length > 0) tr.classList.add("alarm");
      body.appendChild(tr);
    }
    q.set("format", "csv");
    $("csv").href = "/floor/api/report?" + q;
    $("error").textContent = "";
  } catch (e) { $("error").textContent = e.message; }
}
$("login").onsubmit = async (ev) => {
  ev.preventDefault();
  try {
    const r = await api("/floor/api/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ badge: $("badge").value, secret: $("secret").value }),
    });
    $("secret").value = "";
    $("who").textContent = r.badge;
    show(true);
    refresh();
  } catch (e) { $("error").textContent = e.message; }
};
$("logout").onclick = async () => {
  await api("/floor/api/logout", { method: "POST", headers: { "Content-Type": "application/json" } }).catch(() => {});
  show(false);
};
let proposal = null;
function disputeBody(extra) {
  return JSON.stringify(Object.assign({
    table: $("d-table").value.trim(), dispute: Number($("d-id").value),
  }, extra));
}
$("dispute").onsubmit = async (ev) => {
  ev.preventDefault();
  proposal = null;
  $("d-confirm").disabled = true;
  try {
    const op = $("d-op").value === "json" ? JSON.parse($("d-json").value) : JSON.parse($("d-op").value);
    const r = await api("/floor/api/disputes", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: disputeBody({ action: "propose", resolution: op, reason: $("d-reason").value }),
    });
    proposal = r.preview.proposal;
    $("d-preview").textContent = JSON.stringify(r.preview, null, 1);
    $("d-confirm").disabled = false;
    $("error").textContent = "";
  } catch (e) { $("error").textContent = e.message; }
};
$("d-confirm").onclick = async () => {
  try {
    const r = await api("/floor/api/disputes", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: disputeBody({ action: "confirm", proposal }),
    });
    $("d-preview").textContent = "Applied at the table (row " + r.seq + ").";
    $("d-confirm").disabled = true;
    refresh();
  } catch (e) { $("error").textContent = e.message; }
};
$("search").onsubmit = search;
$("report").onsubmit = report;
const now = new Date();
const shift = new Date(now.getTime() - 8 * 3600e3);
const local = (d) => new Date(d.getTime() - d.getTimezoneOffset() * 60e3).toISOString().slice(0, 16);
$("r-from").value = local(shift);
$("r-to").value = local(new Date(now.getTime() + 60e3));
api("/floor/api/tables").then(() => { show(true); refresh(); }).catch(() => show(false));
setInterval(() => {
  if ($("pit").hidden) return;
  refresh();
  // Every other tick: a table's rounds are folded from its whole log on the floor.
  if (shownQuery !== null && ++followTick % 2 === 0) showRounds(shownQuery);
}, 2000);
