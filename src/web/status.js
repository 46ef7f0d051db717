// The plain status page (`/status`): polls `/api/status` and renders it. Loaded from
// `/ui/status.js` because the pages' Content-Security-Policy allows no inline script.
const suit = { S: "♠", H: "♥", D: "♦", C: "♣" };
function card(c) {
  const s = c.slice(-1), r = c.slice(0, -1).replace("T", "10");
  const red = s === "H" || s === "D";
  return `<span class="${red ? "red" : ""}">${r}${suit[s] || s}</span>`;
}
function cards(list) { return (list || []).map(card).join(" "); }
// Amounts are whole minor units of the table's currency (`s.currency`).
function money(v, c) {
  c = c || { symbol: "\u20ac", exponent: 2 };
  const scale = Math.pow(10, c.exponent), abs = Math.abs(v);
  const whole = String(Math.floor(abs / scale)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const sym = /^[A-Za-z]+$/.test(c.symbol) ? c.symbol + " " : c.symbol;
  return (v < 0 ? "-" : "") + sym + whole + (c.exponent ? "." + String(abs % scale).padStart(c.exponent, "0") : "");
}
function esc(t) { return String(t).replace(/[&<>]/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;"}[c])); }
function render(s) {
  document.getElementById("title").textContent = `${s.name || s.table} — ${s.variant}`;
  document.getElementById("sub").innerHTML =
    `<span class="state ${s.state}">${s.state.toUpperCase()}</span> · seq ${s.seq} · ` +
    `shoe ${s.shoe.number} (${s.shoe.dealt} dealt, ${s.shoe.remaining} left${s.shoe.cut_seen ? ", cut card out" : ""}) · ` +
    `link ${esc(s.shoe.link)} · ${s.rounds_settled} rounds settled`;
  let alarm = "";
  if (s.alarm) alarm = `<div class="alarm"><b>ALARM:</b> ${esc(s.alarm.reason)}<br>` +
      `<b>To do:</b> ${esc(s.alarm.expected)}<br>` +
      (s.alarm.held.length ? `Held: ${cards(s.alarm.held)}<br>` : "") +
      `Clear with <code>croupier alarm clear --reason "..."</code></div>`;
  if (s.broken) alarm = `<div class="alarm"><b>OUT OF SERVICE:</b> ${esc(s.broken)}</div>`;
  document.getElementById("alarm").innerHTML = alarm;
  document.getElementById("expect").textContent = s.state === "open" ? s.expecting : "—";
  const r = s.round;
  document.getElementById("round").textContent = r.number + (r.settled ? " (settled)" : "");
  let rows = `<tr><th>Dealer</th><td class="cards">${cards(r.dealer)}</td><td>${r.dealer.length ? r.dealer_total : ""}</td></tr>`;
  for (const h of r.hands)
    rows += `<tr><th>Seat ${h.seat}${h.hand ? "." + (h.hand + 1) : ""}</th><td class="cards">${cards(h.cards)}</td><td>${h.total}</td></tr>`;
  document.getElementById("hands").innerHTML = rows;
  let st = "";
  if (s.last_result) {
    const res = s.last_result;
    st = `<tr><th>Round ${res.round}</th><td class="cards">dealer ${cards(res.dealer_cards)}</td><td>${res.dealer_total}</td><td></td></tr>`;
    for (const h of res.hands)
      st += `<tr><th>Seat ${h.seat}${h.hand ? "." + (h.hand + 1) : ""}</th><td class="cards">${cards(h.cards)}</td><td>${h.outcome}</td><td>staked ${money(h.staked, s.currency)}, returned ${money(h.returned, s.currency)}</td></tr>`;
  }
  document.getElementById("settled").innerHTML = st;
}
let seq = -1;
async function poll() {
  try {
    const url = seq < 0 ? "/api/status" : `/api/status?after=${seq}&wait_ms=10000`;
    const res = await fetch(url);
    if (res.status === 401) {
      document.body.insertAdjacentHTML("afterbegin",
        '<p style="background:#a00;padding:8px">The status needs a dealer login: log in on <a href="/" style="color:#fff">the panel</a>, then reload.</p>');
      return;
    }
    const s = await res.json();
    seq = s.seq; render(s);
  } catch (e) { await new Promise(r => setTimeout(r, 1000)); }
  setTimeout(poll, 50);
}
poll();
