// What a remote player's browser checks itself (issue #21; the guide's "What a player can
// verify", docs/src/verify.md): the sealed hole card (SHA-256) and the signed results (Ed25519), both with
// SubtleCrypto. The encodings are the ones in src/trust/seal.rs and src/trust/attest.rs.
"use strict";
(function () {
  const enc = new TextEncoder();
  const subtle = window.crypto && window.crypto.subtle;
  const hex = (buf) => Array.from(new Uint8Array(buf), b => b.toString(16).padStart(2, "0")).join("");
  const unhex = (s) => {
    if (typeof s !== "string" || s.length % 2 || /[^0-9a-f]/i.test(s)) return null;
    const out = new Uint8Array(s.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(i * 2, 2), 16);
    return out;
  };

  // commitment = SHA-256("croupier-seal/1\n" table "\n" round "\n" position "\n" card "\n" nonce)
  async function commitment(table, round, position, card, nonce) {
    const text = "croupier-seal/1\n" + table + "\n" + round + "\n" + position + "\n" + card + "\n" + nonce;
    return hex(await subtle.digest("SHA-256", enc.encode(text)));
  }

  // Ed25519 over "croupier-result/1\n" + payload; resolves to the statement, or null.
  const keys = {};
  async function verifySigned(keyHex, signed) {
    const raw = unhex(keyHex), sig = unhex(signed && signed.sig);
    if (!raw || raw.length !== 32 || !sig || sig.length !== 64 || typeof signed.payload !== "string") return null;
    keys[keyHex] = keys[keyHex] || subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
    const ok = await subtle.verify({ name: "Ed25519" }, await keys[keyHex], sig, enc.encode("croupier-result/1\n" + signed.payload));
    if (!ok) return null;
    try { return JSON.parse(signed.payload); } catch (e) { return null; }
  }

  // The checker the page feeds every public message to; `onChange` re-renders.
  function Checker(onChange) {
    this.key = null;            // the table key: pinned from the server, else the views'
    this.pinned = false;        // whether `key` came from /api/table-key
    this.commitments = {};      // round -> the commitment first published
    this.seals = {};            // round -> "sealed" | "verified" | "corrected" | "mismatch"
    this.corrections = {};      // round -> {from, to}: the hole card a supervisor replaced
    this.sigs = {};             // round -> "verified" | "invalid" | "unsigned"
    this.alarms = [];           // what cannot happen unless something is wrong: {code, args}
    this.lastRound = null;      // the last round a result settled, since a resync
    this.timeline = null;       // the table's timeline after its first: {id, epoch, from_seq}
    this.changes = [];          // each timeline change seen (a restore): told, not an alarm: {code, args}
    this.onChange = onChange;
    this.available = !!subtle;
    this.queue = Promise.resolve();
  }
  // The key the serving host vouches for (a table's own, or the one a relay's operator
  // pinned): views that name another key raise an alarm rather than replace it.
  Checker.prototype.pin = function (key) {
    if (!key) return;
    if (this.key && this.key !== key) this.alarm("key-changed");
    this.key = key;
    this.pinned = true;
  };
  // An alarm is a code and its arguments (strings), in words only where it is shown
  // (`english`, or the page's own catalogue).
  Checker.prototype.alarm = function (code, args) {
    const found = { code, args: args || {} };
    if (!this.alarms.some((a) => JSON.stringify(a) === JSON.stringify(found))) this.alarms.push(found);
  };
  // A seal that opened: the card as dealt, and — when a supervisor's resolution replaced
  // it — the card the round played instead (`corrected`), told on the badge, not an
  // alarm: the table never re-commits, so the seal still proves what lay face down.
  Checker.prototype.opened = function (round, seal) {
    if (this.seals[round] === "mismatch") return;
    // The latest message says the round as it stands (a second resolution may undo one).
    if (seal.corrected) {
      this.corrections[round] = { from: seal.card, to: seal.corrected };
      this.seals[round] = "corrected";
    } else {
      delete this.corrections[round];
      this.seals[round] = "verified";
    }
  };
  Checker.prototype.commit = function (round, c) {
    const seen = this.commitments[round];
    if (seen && seen !== c) { this.alarm("commitment-changed", { round: String(round) }); return false; }
    this.commitments[round] = c;
    return true;
  };
  // A view or a signed statement names the table's timeline (absent on its first). A
  // newer one is a restore or an operator's continue: said as such, and the round checks
  // start over (round numbers are played again); an older one cannot happen.
  Checker.prototype.onTimeline = function (t) {
    const id = t ? t.id : null, epoch = t ? t.epoch : 0;
    const current = this.timeline ? this.timeline.id : null, currentEpoch = this.timeline ? this.timeline.epoch : 0;
    if (id === current) return true;
    if (epoch <= currentEpoch) { this.alarm("timeline-back"); return false; }
    this.changes.push({ code: "restored", args: { row: String(t.from_seq) } });
    this.timeline = t;
    this.commitments = {}; this.seals = {}; this.sigs = {}; this.corrections = {}; this.lastRound = null;
    return true;
  };
  // Messages are checked one after another, in arrival order.
  Checker.prototype.message = function (m) {
    if (!this.available) return;
    this.queue = this.queue.then(() => this.check(m)).catch((e) => this.alarm("failed", { error: String(e) })).then(() => this.onChange());
    return this.queue;
  };
  Checker.prototype.check = async function (m) {
    if (m.type === "view" && m.view && !this.onTimeline(m.view.timeline || null)) return;
    // A resync: messages were skipped, so no result is claimed missing across it.
    if (m.type === "view" && m.resync) this.lastRound = null;
    if (m.type === "result" && m.result) {
      const r = m.result.round;
      if (this.lastRound !== null && r > this.lastRound + 1) {
        const from = this.lastRound + 1, to = r - 1;
        if (from === to) this.alarm("missing-result", { round: String(from) });
        else this.alarm("missing-results", { from: String(from), to: String(to) });
      }
      if (this.lastRound === null || r > this.lastRound) this.lastRound = r;
    }
    if (m.type === "view" && m.view) {
      const v = m.view;
      if (v.table_key) {
        if (this.key && this.key !== v.table_key) this.alarm("key-changed");
        this.key = this.key || v.table_key;
      }
      if (m.resync && m.signed) await this.resyncResult(v, m.signed);
      const s = v.round && v.round.seal;
      if (!s) return;
      const round = v.round.number;
      if (!this.commit(round, s.commitment)) { this.seals[round] = "mismatch"; return; }
      if (!s.card || !s.nonce) { if (!this.seals[round]) this.seals[round] = "sealed"; return; }
      const c = await commitment(v.table, round, s.position, s.card, s.nonce);
      const shown = v.round.dealer[1];
      if (c !== s.commitment || (shown && shown !== (s.corrected || s.card))) {
        this.seals[round] = "mismatch";
        this.alarm("revealed-mismatch", { round: String(round), card: s.card });
      } else {
        this.opened(round, s);
      }
    } else if (m.type === "result" && m.result) {
      const round = m.result.round;
      if (!m.signed) { this.sigs[round] = "unsigned"; this.alarm("unsigned", { round: String(round) }); return; }
      await this.signedResult(m.result, m.signed, true);
    }
  };
  // A resync view (a page opened, or back, after the round settled) carries the signed
  // statement of the result it shows: verified as a result message is, except that a
  // statement of another result (a correction crossing the view) is left unchecked rather
  // than called bad. A view without one says nothing of its result's signature.
  Checker.prototype.resyncResult = async function (v, signed) {
    const r = v.last_result;
    if (!r || !signed || this.sigs[r.round] === "verified") return;
    await this.signedResult(r, signed, false);
  };
  // `result` against the table's signed statement of it. `strict` (a result message): a
  // statement of another result is a bad signature.
  Checker.prototype.signedResult = async function (result, signed, strict) {
    const round = result.round;
    const st = this.key ? await verifySigned(this.key, signed) : null;
    // Not strict: a statement of another result, or of another timeline than the page
    // follows (a relay's from before a restore), is not this result's.
    if (st && !strict && (st.round !== round || JSON.stringify(st.result) !== JSON.stringify(result) ||
      JSON.stringify(st.timeline || null) !== JSON.stringify(this.timeline))) return;
    if (!st || st.round !== round || JSON.stringify(st.result) !== JSON.stringify(result)) {
      this.sigs[round] = "invalid";
      this.alarm("bad-signature", { round: String(round) });
      return;
    }
    if (!this.onTimeline(st.timeline || null)) { this.sigs[round] = "invalid"; return; }
    if (!st.seal && this.commitments[round]) {
      this.sigs[round] = "invalid";
      this.alarm("no-seal", { round: String(round) });
      return;
    }
    if (st.seal) {
      const c = await commitment(st.table, round, st.seal.position, st.seal.card, st.seal.nonce);
      if (c !== st.seal.commitment || !this.commit(round, c) || st.result.dealer_cards[1] !== (st.seal.corrected || st.seal.card)) {
        this.sigs[round] = "invalid";
        this.seals[round] = "mismatch";
        this.alarm("signed-mismatch", { round: String(round) });
        return;
      }
      this.opened(round, st.seal);
    }
    this.sigs[round] = "verified";
  };

  // The checks' words in English, by code (the public page's; the player's page passes
  // its own catalogue's, `trust-CODE` in play-*.ftl, with the same arguments).
  const ENGLISH = {
    "seal-sealed": (a) => "hole card sealed \u00b7 " + a.commitment,
    "seal-verified": () => "\u2713 hole card seal verified",
    "seal-corrected": (a) => "\u2713 hole card seal verified \u00b7 a supervisor corrected the card from " + a.from + " to " + a.to,
    "seal-mismatch": () => "\u26A0 SEAL MISMATCH",
    "seal-checking": () => "checking the seal\u2026",
    "seal-unchecked": () => "seal not checked (this page needs HTTPS)",
    "seal-title": (a) => "commitment " + a.commitment,
    "sig-verified": () => "\u2713 signed",
    "sig-invalid": () => "\u26A0 BAD SIGNATURE",
    "sig-unsigned": () => "\u26A0 unsigned",
    "alarm-title": () => "\u26A0 Verification failed:",
    "timeline-title": () => "Table history restored:",
    "key-changed": () => "the table key changed",
    "commitment-changed": (a) => "round " + a.round + ": the hole card's commitment changed",
    "timeline-back": () => "the table's timeline went back",
    "restored": (a) => "the table's history was restored or continued at its row " + a.row + ": rounds after it are played again, and checked anew",
    "failed": (a) => "verification failed: " + a.error,
    "missing-result": (a) => "round " + a.round + ": no result was published",
    "missing-results": (a) => "rounds " + a.from + "\u2013" + a.to + ": no result was published",
    "revealed-mismatch": (a) => "round " + a.round + ": the revealed hole card " + a.card + " does not match its seal",
    "unsigned": (a) => "round " + a.round + ": the result is not signed",
    "bad-signature": (a) => "round " + a.round + ": the result's signature does not verify",
    "no-seal": (a) => "round " + a.round + ": the hole card was committed, and the signed result opens no seal",
    "signed-mismatch": (a) => "round " + a.round + ": the signed hole card does not match its seal",
  };
  function english(code, args) {
    const say = ENGLISH[code];
    return say ? say(args || {}) : code;
  }

  // A card as its corner shows it: "9\u2665", "10\u2663".
  const SUIT_SIGNS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
  function cardShort(code) {
    if (typeof code !== "string" || code.length < 2) return "";
    const r = code.slice(0, -1);
    return (r === "T" ? "10" : r) + (SUIT_SIGNS[code.slice(-1)] || code.slice(-1));
  }

  // The seal of the round on the table (`round` is a public view's round): committed
  // while the card lies face down, verified once its reveal opens the commitment;
  // anything else is an alarm. Shared by the public page and the player's page; `words`
  // (code, args) says it, English unless given.
  function sealBadge(checker, round, words) {
    const say = words || english;
    const s = round.seal;
    if (!s) return null;
    const state = !checker.available ? "unchecked" : checker.seals[round.number] || "checking";
    const fixed = checker.corrections[round.number] || {};
    const text = say("seal-" + state, { commitment: s.commitment.slice(0, 8), from: cardShort(fixed.from), to: cardShort(fixed.to) });
    return window.Table.el("div", { id: "seal", class: "seal " + state, "data-state": state, title: say("seal-title", { commitment: s.commitment }) }, text);
  }

  // Whether round `n`'s result verified against the table's key.
  function sigBadge(checker, n, words) {
    if (!checker.available) return null;
    const state = checker.sigs[n] || "checking";
    const text = state === "checking" ? "\u2026" : (words || english)("sig-" + state, {});
    return window.Table.el("span", { class: "sig " + state, "data-sig": state }, " " + text);
  }

  // The banner shown while any check failed; else, after a timeline change, a notice.
  function alarmBanner(checker, words) {
    const say = words || english;
    const el = window.Table.el;
    if (checker.alarms.length) {
      return el("div", { id: "trust-alarm", class: "trust-alarm", role: "alert" },
        el("strong", {}, say("alarm-title", {})), " " + checker.alarms.map((a) => say(a.code, a.args)).join("; "));
    }
    const last = checker.changes[checker.changes.length - 1];
    return last ? el("div", { id: "trust-timeline", class: "trust-timeline", role: "status" },
      el("strong", {}, say("timeline-title", {})), " " + say(last.code, last.args)) : null;
  }

  window.Trust = { Checker, commitment, verifySigned, sealBadge, sigBadge, alarmBanner, english, codes: Object.keys(ENGLISH) };
})();
