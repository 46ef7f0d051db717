// Layout checks run inside the page by tests/browser_layout.rs. `layoutProblems(minFont)`
// returns a list of strings, empty when the page is right:
// - no element lies outside the viewport horizontally (nor vertically on the panel, which
//   never scrolls), and none has content overflowing its own box (an ellipsis on purpose
//   excepted);
// - every card's index (rank and suit) is fully visible: each corner of it hit-tests to the
//   card itself, so no other card, box edge or overlay covers or clips it;
// - every piece of text is at least `minFont` px (0: no check).
(function () {
"use strict";
function name(e) {
  let s = e.tagName.toLowerCase();
  if (e.id) s += "#" + e.id;
  if (e.className && typeof e.className === "string") s += "." + e.className.trim().split(/\s+/).join(".");
  const seat = e.closest("[data-seat]");
  if (seat) s += " (seat " + seat.dataset.seat + ")";
  return s;
}
function visible(e) {
  const cs = getComputedStyle(e);
  if (cs.display === "none" || cs.visibility === "hidden") return false;
  const r = e.getBoundingClientRect();
  return r.width > 0 || r.height > 0;
}
window.layoutProblems = function (minFont) {
  const out = [];
  const vw = document.documentElement.clientWidth, vh = innerHeight;
  const scrolls = document.body.classList.contains("public");
  for (const e of document.querySelectorAll("#app *")) {
    if (!visible(e)) continue;
    const r = e.getBoundingClientRect();
    const cs = getComputedStyle(e);
    if (r.left < -0.5 || r.right > vw + 0.5) out.push(name(e) + " outside the viewport horizontally: " + Math.round(r.left) + ".." + Math.round(r.right) + " of " + vw);
    if (!scrolls && (r.top < -0.5 || r.bottom > vh + 0.5)) out.push(name(e) + " outside the viewport vertically: " + Math.round(r.top) + ".." + Math.round(r.bottom) + " of " + vh);
    if (cs.display !== "inline" && cs.textOverflow !== "ellipsis" && e.clientWidth > 0) {
      if (e.scrollWidth > e.clientWidth + 1) out.push(name(e) + " overflows its box across: " + e.scrollWidth + " > " + e.clientWidth);
      const scrollsY = cs.overflowY === "auto" || cs.overflowY === "scroll";
      if (!scrollsY && e.scrollHeight > e.clientHeight + 1 && e.clientHeight > 0) out.push(name(e) + " overflows its box downwards: " + e.scrollHeight + " > " + e.clientHeight);
    }
    if (minFont) {
      const text = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
      if (text && parseFloat(cs.fontSize) < minFont) out.push(name(e) + " text at " + cs.fontSize + ": \"" + e.textContent.trim().slice(0, 30) + "\"");
    }
  }
  // The trust checks' badges are read, never decoration: an ellipsis may not cut them
  // ("✓ …" said nothing of what was checked).
  for (const e of document.querySelectorAll("#app .seal, #app .sig")) {
    if (visible(e) && e.scrollWidth > e.clientWidth + 1) out.push(name(e) + " cuts its words: \"" + e.textContent.trim() + "\"");
  }
  // With a sheet open (the alarm, dispute and raise screens cover the panel), the cards to
  // read are the sheet's: the panel's lie under it on purpose.
  const sheets = document.querySelectorAll("#app .sheet");
  const top = sheets.length ? sheets[sheets.length - 1] : document.getElementById("app");
  for (const card of top.querySelectorAll(".card[data-card]:not(.back)")) {
    if (!visible(card)) continue;
    for (const part of card.querySelectorAll(".rank, .suit")) {
      const r = part.getBoundingClientRect();
      const points = [[r.left + 1, r.top + 1], [r.right - 1, r.top + 1], [r.left + 1, r.bottom - 1], [r.right - 1, r.bottom - 1]];
      for (const [x, y] of points) {
        const hit = document.elementFromPoint(x, y);
        if (!hit || hit.closest(".card") !== card) {
          out.push("card " + card.dataset.card + " " + part.className + " not readable at (" + Math.round(x) + "," + Math.round(y) + "): " + (hit ? name(hit) : "off screen"));
          break;
        }
      }
    }
  }
  return out;
};
})();

// `panelControls()` (the dealer panel and its alarm and dispute screens, which never
// scroll): every visible
// control — button, input — in the topmost layer (an open sheet, else the panel) lies
// wholly inside the viewport, its centre hit-tests to itself (nothing covers it), and no
// two of them overlap. Returns {problems, controls, lowest}: lowest is the largest bottom
// edge measured, in px, to report how much room was left.
(function () {
"use strict";
function name(e) {
  let s = e.tagName.toLowerCase();
  if (e.id) s += "#" + e.id;
  for (const k of ["op", "preset", "cardIndex", "kbd", "action", "key"]) if (e.dataset[k] !== undefined) s += "[" + k + "=" + e.dataset[k] + "]";
  return s;
}
window.panelControls = function () {
  const out = [];
  const vw = document.documentElement.clientWidth, vh = innerHeight;
  const sheets = [...document.querySelectorAll("#app .sheet")];
  const layer = sheets.length ? sheets[sheets.length - 1] : document.getElementById("app");
  const controls = [...layer.querySelectorAll("button, input, select")].filter((e) => {
    const cs = getComputedStyle(e);
    const r = e.getBoundingClientRect();
    return cs.display !== "none" && cs.visibility !== "hidden" && r.width > 0 && r.height > 0;
  });
  let lowest = 0;
  const rects = controls.map((e) => e.getBoundingClientRect());
  controls.forEach((e, i) => {
    const r = rects[i];
    lowest = Math.max(lowest, r.bottom);
    if (r.left < -0.5 || r.top < -0.5 || r.right > vw + 0.5 || r.bottom > vh + 0.5) {
      out.push(name(e) + " off screen: " + [r.left, r.top, r.right, r.bottom].map(Math.round).join(",") + " of " + vw + "x" + vh);
      return;
    }
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (!hit || (hit !== e && !e.contains(hit))) out.push(name(e) + " covered by " + (hit ? hit.tagName.toLowerCase() + (hit.id ? "#" + hit.id : "") + "." + hit.className : "nothing"));
    for (let j = i + 1; j < controls.length; j++) {
      const q = rects[j];
      const w = Math.min(r.right, q.right) - Math.max(r.left, q.left);
      const h = Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top);
      if (w > 0.5 && h > 0.5) out.push(name(e) + " overlaps " + name(controls[j]));
    }
  });
  return { problems: out, controls: controls.length, lowest: Math.round(lowest) };
};
})();
// `controlProblems(root)` (tests/browser_floor.rs: the pit page and the relay's lobby,
// pages that scroll): a list of strings, empty when right —
// - no visible control (button, link, input, select, [role=button]) or chart inside `root`
//   lies outside the viewport horizontally, or is clipped by an ancestor that hides its
//   overflow;
// - no two visible controls overlap (one inside the other excepted), so every tap lands on
//   the control it aims at;
// - no element overflows its own box across (a wide table, a long name).
(function () {
"use strict";
function label(e) {
  let s = e.tagName.toLowerCase();
  if (e.id) s += "#" + e.id;
  if (e.className && typeof e.className === "string" && e.className.trim()) s += "." + e.className.trim().split(/\s+/).join(".");
  const t = (e.textContent || "").trim().slice(0, 24);
  return t ? s + " \"" + t + "\"" : s;
}
function shown(e) {
  const cs = getComputedStyle(e);
  if (cs.display === "none" || cs.visibility === "hidden") return false;
  const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0;
}
window.controlProblems = function (root) {
  const out = [];
  const vw = document.documentElement.clientWidth;
  const scope = document.querySelector(root || "body");
  if (!scope) return ["no " + root];
  if (document.documentElement.scrollWidth > vw + 0.5) out.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " > " + vw);
  const controls = [...scope.querySelectorAll("button, a[href], input, select, [role=button], canvas")].filter(shown);
  for (const c of controls) {
    const r = c.getBoundingClientRect();
    if (r.left < -0.5 || r.right > vw + 0.5) out.push(label(c) + " outside the viewport: " + Math.round(r.left) + ".." + Math.round(r.right) + " of " + vw);
    for (let p = c.parentElement; p && p !== document.body; p = p.parentElement) {
      const cs = getComputedStyle(p);
      if (cs.overflowX === "visible" && cs.overflowY === "visible") continue;
      const b = p.getBoundingClientRect();
      if (r.left < b.left - 0.5 || r.right > b.right + 0.5) { out.push(label(c) + " clipped by " + label(p)); break; }
    }
  }
  for (let i = 0; i < controls.length; i++) {
    for (let j = i + 1; j < controls.length; j++) {
      const a = controls[i], b = controls[j];
      if (a.contains(b) || b.contains(a)) continue;
      const ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect();
      const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
      const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
      if (w > 0.5 && h > 0.5) out.push(label(a) + " overlaps " + label(b));
    }
  }
  for (const e of scope.querySelectorAll("*")) {
    if (!shown(e)) continue;
    const cs = getComputedStyle(e);
    if (cs.display !== "inline" && cs.textOverflow !== "ellipsis" && cs.overflowX !== "hidden" && e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0) {
      out.push(label(e) + " overflows its box across: " + e.scrollWidth + " > " + e.clientWidth);
    }
  }
  return out;
};
})();
