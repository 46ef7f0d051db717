// The pages' words: one Fluent catalogue (messages-LANG.ftl, read by the vendored
// @fluent/bundle, fluent-bundle.js) shared by the dealer panel and the player's page. The
// browser's languages pick the catalogue; English is always loaded under it, so a message
// a translation lacks still reads as English, never as its id.
//
//   await I18n.ready;           // before the first render
//   I18n.t("round-number", { round: 12 })
//   I18n.error(code, message)   // an API error as plain language with what to do
//   I18n.alarm(alarm)           // an alarm's reason and what to do, from the table's text
//   I18n.person(actor)          // "user:601" -> "Ana Silva" (once /api/staff is known)
//   I18n.game("deluxe")         // a game by its name in the page's language
//   I18n.side("21+3")           // a side bet by its name
//   I18n.combo("suited_trips")  // a pay table's winning combination by its name
//   I18n.money(2500, currency)  // an amount as the page's language writes it (money.js)
(function () {
"use strict";
const { FluentBundle, FluentResource } = window.FluentBundle;
// The catalogue a page reads (`<html data-catalogue="play" data-languages="en de">`: the
// player's page reads play-LANG.ftl) and the languages it ships; the dealer panel's is
// messages-LANG.ftl, English only. A new language is one more file and one more name.
const root = document.documentElement;
const CATALOGUE = root.dataset.catalogue || "messages";
const SHIPPED = (root.dataset.languages || "en").split(/\s+/).filter(Boolean);
// A language the person picked on the page (`setLanguage`) comes before the browser's.
const CHOSEN = "croupier.lang";
const bundles = [];

async function add(lang, catalogue) {
  const file = (catalogue || CATALOGUE) + "-" + lang + ".ftl";
  const res = await fetch("/ui/" + file);
  if (!res.ok) throw new Error(file + ": HTTP " + res.status);
  // Isolation marks around placeables would end up in every text the tests and the
  // screen readers read; the catalogue's placeables are numbers, names and card codes.
  const bundle = new FluentBundle(lang, { useIsolating: false });
  bundle.addResource(new FluentResource(await res.text()));
  return bundle;
}

function chosen() {
  try { return localStorage.getItem(CHOSEN); } catch (e) { return null; }
}

async function load() {
  const wanted = [chosen()].concat(navigator.languages || [navigator.language || "en"])
    .filter(Boolean)
    .map((l) => l.toLowerCase().split("-")[0])
    .filter((l) => SHIPPED.includes(l));
  const order = [...new Set([...wanted, "en"])];
  const loaded = [];
  for (const lang of order) {
    try { loaded.push(await add(lang)); } catch (e) { console.error(e); }
  }
  // The games', side bets' and combinations' names have one home, the player's catalogue
  // (play-LANG.ftl); another page (the panel) reads them from there, under its own words.
  if (CATALOGUE !== "play") {
    try { loaded.push(await add(order[0], "play")); } catch (e) { console.error(e); }
  }
  bundles.splice(0, bundles.length, ...loaded);
  if (bundles.length) root.lang = bundles[0].locales[0];
}

// Switches to `lang` (one of `languages`) and remembers it on this device; resolves once
// its catalogue is loaded, for the page to render again.
async function setLanguage(lang) {
  if (!SHIPPED.includes(lang)) return;
  try { localStorage.setItem(CHOSEN, lang); } catch (e) { /* private mode: this page only */ }
  const again = load();
  api.ready = again;
  await again;
}

// The language the page reads now.
function current() { return bundles.length ? bundles[0].locales[0] : "en"; }

// The message `id` with `args`, from the first catalogue that has it; the id itself if
// none does (a missing message shows as what it is, rather than as nothing).
function t(id, args) {
  for (const b of bundles) {
    const m = b.getMessage(id);
    if (m && m.value) return b.formatPattern(m.value, args || {});
  }
  return id;
}

function has(id) { return bundles.some((b) => b.hasMessage(id)); }

// The catalogue id of an engine id's name: `game-deluxe`, `side-21-plus-3` (a Fluent id
// takes letters, digits, `_` and `-`; the side bets' ids also have `+`).
function nameId(prefix, id) { return prefix + "-" + String(id).replace(/\+/g, "-plus-"); }

// A game (the variant's id) or a side bet (its name in the variant) as people call it in
// the page's language. An id the catalogue does not name (a variant file of the
// operator's own, whose name the operator wrote) shows as it is.
function game(id) { return has(nameId("game", id)) ? t(nameId("game", id)) : id; }
function side(id) { return has(nameId("side", id)) ? t(nameId("side", id)) : id; }
// A pay table's winning combination (`suited_trips`; IN FOR 6's bonus classes
// `hard_six:exacta`, a Fluent id takes no `:`) by its name in the page's language.
function combo(id) {
  const key = "combo-" + String(id).replace(/:/g, "-");
  return has(key) ? t(key) : id;
}

// An amount (whole minor units of `currency`) as the page's language writes it.
function money(v, currency, opts) { return window.Money.format(v, currency, current(), opts); }

// An API error (`{code, message}`) in plain language. Codes without a message of their
// own say which code was refused (for the supervisor) and to call one.
function error(code, message) {
  if (code === "invalid_bet") return t("error-invalid_bet", { detail: message || "" });
  if (code === "account_locked") return t("login-locked", { time: localTime(message) });
  // The one malformed request a person can cause by taps: a dispute or a clearing without
  // a reason (the server's text names it; the code alone is any malformed request).
  if (code === "malformed" && /reason is required/.test(message || "")) return t("error-reason_required");
  return has("error-" + code) ? t("error-" + code) : t("error-unknown", { code: code || "?" });
}

// The RFC 3339 time inside `text` as the panel's local hour and minute ("07:42").
function localTime(text) {
  const m = /\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:?\d\d)?/.exec(text || "");
  if (!m) return text || "";
  const d = new Date(m[0]);
  return isNaN(d) ? m[0] : d.toLocaleTimeString(bundles.length ? bundles[0].locales[0] : "en", { hour: "2-digit", minute: "2-digit" });
}

// The engine's reason inside an alarm text ("card_not_expected: no round is in
// progress") as plain words.
function why(text) {
  const m = /([a-z_]+): (.*)$/.exec(text || "");
  if (!m) return text || "";
  if (m[1] === "card_not_expected" && /no round/.test(m[2])) return t("why-no_round");
  return has("why-" + m[1]) ? t("why-" + m[1]) : m[2];
}

// An alarm as {kind, title, todo}: the table's alarm rows carry text written for the log
// (`the shoe reports lid open`, `3H out of the shoe was refused: card_not_expected: …`);
// each kind's text is recognised here and said in the catalogue's words, with what to do.
// An alarm this does not know keeps the table's own words.
function alarm(a) {
  const r = a.reason || "";
  let m;
  if ((m = /^(\S+) out of the shoe was refused: (.*)$/.exec(r))) {
    return { kind: "card_refused", title: t("alarm-card_refused", { card: m[1], why: why(m[2]) }),
      todo: t("alarm-card_refused-todo", { card: m[1] }) };
  }
  const simple = [
    [/^the dealer called the supervisor/, "supervisor_called"],
    [/^the shoe reconnected/, "shoe_reconnected"],
    [/^the shoe is disconnected/, "shoe_disconnected"],
    [/^the shoe sent an invalid frame/, "shoe_fault"],
    [/^the button on GPIO/, "button_stuck"],
    [/^the store could not be written/, "recovered"],
  ];
  for (const [re, kind] of simple) {
    if (re.test(r)) return { kind, title: t("alarm-" + kind), todo: t("alarm-" + kind + "-todo") };
  }
  if ((m = /^the shoe reports (.*)$/.exec(r))) {
    return { kind: "shoe_status", title: t("alarm-shoe_status", { what: m[1] }), todo: t("alarm-shoe_status-todo") };
  }
  return { kind: "other", title: r, todo: a.expected || t("alarm-other-todo") };
}

// What the table would wait for, from the engine's display text (a preview carries only
// that): the same sentences the panel's callout says from the structured expectation.
function expecting(text) {
  const e = text || "";
  const forms = [
    [/^bets/, () => t("expect-bets")],
    [/^shuffle/, () => t("expect-shuffle")],
    [/^burn: reveal/, () => t("expect-reveal_card")],
    [/^burn: (\d+)/, (m) => t("expect-burn_cards", { n: Number(m[1]) })],
    [/^(?:card|decision) (?:for|from) seat (\d+), hand (\d+)/, (m) => t(e.startsWith("decision") ? "expect-decision" : "expect-hand_card", { seat: m[1], hand: m[2] })],
    [/^card for/, () => t("expect-deal_card")],
    [/^dealer card/, () => t("expect-dealer_card")],
    [/^insurance answers from seat\(s\) ([\d, ]+)/, (m) => t("expect-insurance_answers", { seat: m[1].trim() })],
    [/^bonus/, () => t("expect-bonus")],
  ];
  for (const [re, say] of forms) {
    const m = re.exec(e);
    if (m) return say(m);
  }
  return t("expect-unknown");
}

// Audit actors to people's names: filled from GET /api/staff by `loadStaff`.
const names = new Map();
async function loadStaff() {
  try {
    const res = await fetch("/api/staff");
    if (!res.ok) return false;
    const j = await res.json();
    for (const p of j.people || []) { names.set("user:" + p.badge, p.name); names.set("floor:" + p.badge, p.name); }
    return true;
  } catch (e) { return false; }
}

// "user:601" as the person's name when known; the local token and unknown actors as the
// badge without its namespace.
function person(actor) {
  if (!actor) return "";
  if (names.has(actor)) return names.get(actor);
  const i = actor.indexOf(":");
  return i >= 0 ? actor.slice(i + 1) : actor;
}

const api = { ready: load(), t, has, nameId, game, side, combo, money, error, alarm, why, expecting, person, loadStaff, localTime, setLanguage, current, languages: SHIPPED };
window.I18n = api;
})();
