// Amounts as a person of the page's language writes them, in the table's currency: the
// browser's Intl.NumberFormat ("€10,000.00" in English, "10.000,00 €" in German) with the
// table's own symbol. Amounts arrive as whole minor units (the API never sends a
// fraction); `currency` is the table's `{code, symbol, exponent}`.
//
//   Money.format(1000000, { code: "EUR", symbol: "€", exponent: 2 }, "de")  // "10.000,00 €"
(function () {
"use strict";

// One formatter per language and currency: building one is the expensive part.
const formatters = new Map();

function formatter(locale, c) {
  const key = locale + "|" + c.code + "|" + c.exponent;
  if (!formatters.has(key)) {
    formatters.set(key, new Intl.NumberFormat(locale, {
      style: "currency", currency: c.code,
      minimumFractionDigits: c.exponent, maximumFractionDigits: c.exponent,
    }));
  }
  return formatters.get(key);
}

// `minor` whole minor units of `currency` in `locale`'s way. The number is split into its
// whole and fractional parts as integers first, so no amount is rounded by a float.
function format(minor, currency, locale) {
  const c = currency && typeof currency.exponent === "number" ? currency : { code: "EUR", symbol: "\u20ac", exponent: 2 };
  const scale = Math.pow(10, c.exponent);
  const whole = Math.trunc(minor / scale);
  const frac = Math.abs(minor % scale);
  let parts;
  try {
    // The whole part is formatted as an integer and the fraction put in its place: the
    // language decides the separators, the table the digits.
    parts = formatter(locale || "en", c).formatToParts(Number(minor < 0 && whole === 0 ? "-0" : whole));
  } catch (e) {
    // A code the browser does not know: the code's digits in the language's way.
    parts = new Intl.NumberFormat(locale || "en", { minimumFractionDigits: c.exponent, maximumFractionDigits: c.exponent })
      .formatToParts(whole).concat([{ type: "literal", value: " " }, { type: "currency", value: c.symbol || c.code }]);
  }
  return parts.map((p) => {
    if (p.type === "currency") return c.symbol || p.value;
    if (p.type === "fraction") return String(frac).padStart(c.exponent, "0");
    return p.value;
  }).join("");
}

window.Money = { format };
})();
