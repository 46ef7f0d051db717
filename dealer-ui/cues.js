// Sounds and vibration on the player's page: a short tone each of a timer's last five
// seconds (a betting window, a decision) and a two-note call when it becomes the player's
// turn, with a buzz where the phone vibrates (`navigator.vibrate`). Tones are made by an
// OscillatorNode (no audio files). Browsers let a page sound only after a person's tap or
// key, so nothing plays before the first one: it creates (or resumes) the AudioContext.
// Muting is remembered on this device (localStorage `croupier.mute`).
(function () {
"use strict";
const MUTE = "croupier.mute";
let ctx = null, gestured = false;
const played = new Set();   // the ticks already sounded (a timer's key and second)

function muted() {
  try { return localStorage.getItem(MUTE) === "1"; } catch (e) { return false; }
}

function setMuted(on) {
  try { localStorage.setItem(MUTE, on ? "1" : "0"); } catch (e) { /* private mode: this page only */ }
}

// The first tap or key: the browser now allows sound.
function wake() {
  gestured = true;
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!Ctx) return;
  try {
    if (!ctx) ctx = new Ctx();
    if (ctx.state === "suspended") ctx.resume();
  } catch (e) { ctx = null; }
}
for (const type of ["pointerdown", "keydown"]) window.addEventListener(type, wake, { capture: true });

// Whether a cue may play now: after a gesture, not muted.
function allowed() { return gestured && !muted(); }

// One tone of `hz` for `ms`, `after` ms from now, soft at both ends (no click).
function tone(hz, ms, after) {
  if (!ctx) return;
  const at = ctx.currentTime + (after || 0) / 1000, end = at + ms / 1000;
  const osc = ctx.createOscillator(), gain = ctx.createGain();
  osc.frequency.value = hz;
  gain.gain.setValueAtTime(0.0001, at);
  gain.gain.exponentialRampToValueAtTime(0.2, at + 0.01);
  gain.gain.exponentialRampToValueAtTime(0.0001, end);
  osc.connect(gain).connect(ctx.destination);
  osc.start(at);
  osc.stop(end + 0.02);
}

function buzz(pattern) {
  if (typeof navigator.vibrate === "function") navigator.vibrate(pattern);
}

// One of a timer's last seconds (`key` names the timer and the second: each sounds once).
function tick(key) {
  if (played.has(key) || !allowed()) return;
  played.add(key);
  tone(880, 90);
  buzz(60);
}

// The player's turn has come.
function turn() {
  if (!allowed()) return;
  tone(660, 120);
  tone(990, 160, 140);
  buzz([120, 60, 120]);
}

window.Cues = { tick, turn, muted, setMuted };
})();
