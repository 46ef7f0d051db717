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
  for (const card of document.querySelectorAll("#app .card[data-card]:not(.back)")) {
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
