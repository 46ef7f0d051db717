// Amounts as a person of the page's language writes them, in the table's currency: the
// browser's Intl.NumberFormat ("€10,000.00" in English, "10.000,00 €" in German) with the
// table's own symbol. Amounts arrive as whole minor units (the API never sends a
// fraction); `currency` is the table's `{code, symbol, exponent}`.
//
//   Money.format(1000000, { code: "EUR", symbol: "€", exponent: 2 }, "de")  // "10.000,00 €"
//   Money.format(2500, eur, "en", { whole: true })                         // "€25" (a chip)
(function () {
"use strict";

// One formatter per language and currency: building one is the expensive part.
const formatters = new Map();

function formatter(locale, c, digits) {
  const key = locale + "|" + c.code + "|" + digits;
  if (!formatters.has(key)) {
    formatters.set(key, new Intl.NumberFormat(locale, {
      style: "currency", currency: c.code,
      minimumFractionDigits: digits, maximumFractionDigits: digits,
    }));
  }
  return formatters.get(key);
}

// `minor` whole minor units of `currency` in `locale`'s way; `opts.whole`: a whole amount
// without its zero fraction (a chip's face). The number is split into its whole and
// fractional parts as integers first, so no amount is rounded by a float.
function format(minor, currency, locale, opts) {
  const c = currency && typeof currency.exponent === "number" ? currency : { code: "EUR", symbol: "\u20ac", exponent: 2 };
  const scale = Math.pow(10, c.exponent);
  const whole = Math.trunc(minor / scale);
  const frac = Math.abs(minor % scale);
  const digits = opts && opts.whole && frac === 0 ? 0 : c.exponent;
  // The whole part is formatted as an integer and the fraction put in its place: the
  // language decides the separators, the table the digits.
  const n = minor < 0 && whole === 0 ? -0 : whole;
  let parts;
  try {
    parts = formatter(locale || "en", c, digits).formatToParts(n);
  } catch (e) {
    // A code the browser does not know: the digits in the language's way, then the code.
    parts = new Intl.NumberFormat(locale || "en", { minimumFractionDigits: digits, maximumFractionDigits: digits })
      .formatToParts(n).concat([{ type: "literal", value: "\u00a0" }, { type: "currency", value: c.symbol || c.code }]);
  }
  return parts.map((p) => {
    if (p.type === "currency") return c.symbol || p.value;
    if (p.type === "fraction") return String(frac).padStart(c.exponent, "0");
    return p.value;
  }).join("");
}

window.Money = { format };
})();
