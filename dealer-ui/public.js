// The remote players' page: the public feed over /ws/public, resumed from the last id.
// Its words are the player's page's catalogue (play-LANG.ftl, `public-*` and the table
// drawing's), in the device's language.
"use strict";
const { el, renderDealer, renderSeats, renderShoe, liveSocket, money, signed, useCurrency, newHandWords } = window.Table;
const t = (id, args) => window.I18n.t(id, args);
const trustWords = (code, args) => t("trust-" + code, args);

let view = null, conn = "connecting", lastId = null;
// Whether the catalogue is loaded: before it, the page would show message ids.
let words = false;
const results = [];
// Round -> "provisional" | "final": a result may be disputed until its window closes.
const status = {};
// The browser's own checks of the sealed hole card and the signed results (trust.js).
const trust = new window.Trust.Checker(() => render());
window.publicTrust = trust;

const sealBadge = (round) => window.Trust.sealBadge(trust, round, trustWords);
const sigBadge = (n) => window.Trust.sigBadge(trust, n, trustWords);

// What a hand came out with: its net, won or lost, as the player's page's badges say it
// (+€10.00, −€10.00); a cancelled hand's stake came back, and that is what it says.
function handNet(h) { return h.outcome === "cancelled" ? money(h.returned) : signed(h.returned - h.staked); }
function handWords(h) {
  return t("public-hand", { seat: h.seat, hand: h.hand ? h.hand + 1 : 0 }) + " " + t("outcome-" + h.outcome) + " " + handNet(h);
}

function resultRow(r) {
  return el("div", { class: "result", "data-round": r.round, "data-status": status[r.round] || "final" },
    el("strong", {}, t("result-title", { round: r.round })), r.cancelled ? " " + t("public-cancelled") : "",
    ": " + t("public-dealer-total", { total: r.dealer_total }),
    status[r.round] === "provisional" ? el("span", { class: "badge provisional" }, " " + t("public-provisional")) : null,
    sigBadge(r.round),
    el("div", {}, r.hands.flatMap((h, i) => [i ? " \u00b7 " : "",
      el("span", { class: "net", "data-seat": h.seat, "data-hand": h.hand }, handWords(h))])));
}

// What a screen reader hears (the polite live region #announce, outside the app, which is
// redrawn whole): each new card with its hand and total, each round's result once.
const heard = { round: 0, hands: {} };
const saidResults = new Set();
// In the page's language, with the results list's own words.
function resultWords(r) {
  return t("say-result", { round: r.round, result: (r.cancelled ? t("public-cancelled") + " " : "") +
    t("public-dealer-total", { total: r.dealer_total }) + ". " + r.hands.map(handWords).join(". ") });
}
function announce() {
  // Before the catalogue, nothing is said (it would be message ids); said once it loads.
  if (!words) return;
  const said = view ? newHandWords(view, heard) : [];
  for (const r of results) {
    const key = r.round + (r.cancelled ? "c" : "") + JSON.stringify(r.hands.map(h => h.returned));
    if (!saidResults.has(key)) { saidResults.add(key); said.push(resultWords(r)); }
  }
  const live = document.getElementById("announce");
  if (live && said.length) live.textContent = said.join(" ");
}

function render() {
  // The table's currency before anything is said or drawn in it.
  if (view) useCurrency(view.currency);
  const root = document.getElementById("app");
  // Nothing is said or drawn before the catalogue: it would be message ids.
  if (!words) return;
  announce();
  if (!view) { root.replaceChildren(el("div", { class: "waiting" }, t("public-connecting"))); return; }
  const seats = Math.max(7, ...view.round.hands.map(h => h.seat));
  const state = (view.betting.open ? t("public-betting-open") : "") +
    (view.state === "disputed" ? t("public-under-review") : view.state !== "open" ? t("public-paused") : "");
  root.replaceChildren(
    el("header", {},
      el("h1", { class: "name" }, t("page-title", { table: view.name, game: window.I18n.game(view.variant) })),
      el("span", { class: "round", id: "round" }, t("public-round", { round: view.round.number })),
      state ? el("span", { class: "state", id: "state" }, state) : null,
      el("span", { id: "conn", class: "conn " + conn }, t("public-conn-" + conn)),
      renderShoe(view)),
    el("main", {},
      el("section", { class: "play" }, dealerWithSeal(view), renderSeats(view, seats, null, null)),
      el("aside", { id: "results" }, el("h2", {}, t("public-results")),
        results.length ? results.slice(-8).reverse().map(resultRow) : el("div", { class: "result" }, t("public-no-results")))),
    ...[window.Trust.alarmBanner(trust, trustWords)].filter(Boolean));
}

function dealerWithSeal(view) {
  const box = renderDealer(view);
  const seal = sealBadge(view.round);
  if (seal) box.append(seal);
  return box;
}

// Every message as received (the last 500), for inspection.
window.publicLog = [];
// On a relay (`croupier relay`) the page is /public?table=ID and so is its socket.
const table = new URLSearchParams(location.search).get("table");
const query = () => [table ? "table=" + encodeURIComponent(table) : "", lastId ? "after=" + lastId : ""].filter(Boolean).join("&");
// The key to check results with, from the host that serves the page: a relay answers from
// the keys its operator pinned, a table with its own (it ignores `?table=`).
fetch("/api/table-key" + (table ? "?table=" + encodeURIComponent(table) : ""))
  .then((r) => (r.ok ? r.json() : null))
  .then((k) => { if (k && k.key) { trust.pin(k.key); render(); } })
  .catch(() => {});
// Every message goes through here (tests feed altered copies to see the alarm).
window.publicOnMessage = (m) => {
  trust.message(m);
  window.publicLog.push(m);
  if (window.publicLog.length > 500) window.publicLog.shift();
  lastId = m.id;
  if (m.type === "view") {
    // Only resync views carry the last result; the others rely on the result messages.
    view = Object.assign({}, m.view, { last_result: m.view.last_result || results[results.length - 1] || null });
    if (m.resync && view.last_result && !results.some(r => r.round === view.last_result.round)) results.push(view.last_result);
  } else if (m.type === "result") {
    // A corrected or cancelled round replaces its earlier result.
    const at = results.findIndex(r => r.round === m.result.round);
    if (at >= 0) results[at] = m.result; else results.push(m.result);
    status[m.result.round] = m.status || "final";
    if (view) view = Object.assign({}, view, { last_result: m.result });
  } else if (m.type === "final") {
    status[m.round] = "final";
  }
  render();
};
// The catalogue loads while the socket connects; the page says its words once it has it.
window.I18n.ready.then(() => { words = true; render(); });
window.publicSocket = liveSocket(() => "/ws/public" + (query() ? "?" + query() : ""), window.publicOnMessage,
  (s) => { conn = s; render(); });
render();
