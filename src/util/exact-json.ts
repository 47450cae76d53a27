// JSON that keeps big integers exactly.
//
// The reference engine reads documents with serde_json, which keeps every integer of the u64
// and i64 ranges exactly: `{"id": 18446744073709551615}` is stored, returned and matched with
// those digits. JSON.parse reads every number as a double, and past 2^53 a double is not the
// number sent (two ids one apart can read the same). Node 20 gives a reviver no access to the
// source text, so the integers a double cannot hold are found in the text before parsing and
// become bigints; `stringifyJson` writes them back as the same digits, as numbers.
//
// Both stay on the native parser and serializer: a text without a run of 16 digits, or a value
// without a bigint, costs one regular-expression test or nothing at all.

import { randomBytes } from 'node:crypto';

const I64_MIN = -(2n ** 63n);
const U64_MAX = 2n ** 64n - 1n;

/**
 * The value of an integer's decimal text as serde_json reads it: a number while a double holds
 * it exactly, a bigint in the u64/i64 range past that, a (rounded) double beyond both.
 */
export function integerValue(text: string): number | bigint {
  const n = Number(text);
  if (Number.isSafeInteger(n)) return n;
  const b = BigInt(text);
  return b >= I64_MIN && b <= U64_MAX ? b : n;
}

// A safe integer has at most 16 digits; any integer a double cannot hold has 16 or more.
const LONG_DIGITS = /\d{16,}/g;
const INTEGER = /^-?(?:0|[1-9]\d*)$/;

// Marks a big integer inside a text while the native parser or serializer runs. Random per
// process so no text or value sent to the server can spell it: what `parseJson` and
// `stringifyJson` return does not depend on it.
const MARK = `bigint:${randomBytes(12).toString('hex')}:`;
const MARKED = new RegExp(`"${MARK}(-?\\d+)"`, 'g');

/** Start and end offsets of the integer literals outside strings that `integerValue` reads as bigints. */
function bigLiterals(text: string): number[] {
  const found: number[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // To the closing quote: one not escaped by an odd run of backslashes.
      let q = text.indexOf('"', i + 1);
      for (;;) {
        if (q < 0) return found; // unterminated: the parser reports it
        let b = q - 1;
        while (text.charCodeAt(b) === 0x5c /* \ */) b--;
        if ((q - 1 - b) % 2 === 0) break;
        q = text.indexOf('"', q + 1);
      }
      i = q + 1;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i++;
      for (; i < n; i++) {
        const d = text.charCodeAt(i);
        if (!((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d)) break;
      }
      if (i - start >= 16) {
        const literal = text.slice(start, i);
        if (INTEGER.test(literal) && typeof integerValue(literal) === 'bigint') found.push(start, i);
      }
    } else {
      i++;
    }
  }
  return found;
}

/** Replaces, in place, every marked string below `v` by its bigint; returns what `v` becomes. */
function unmark(v: unknown, left: { n: number }): unknown {
  if (typeof v === 'string') {
    if (!v.startsWith(MARK)) return v;
    left.n--;
    return BigInt(v.slice(MARK.length));
  }
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length && left.n > 0; i++) {
      const x = unmark(v[i], left);
      if (x !== v[i]) v[i] = x;
    }
  } else {
    const o = v as Record<string, unknown>;
    for (const k in o) {
      if (left.n === 0) break;
      // Only a marked string changes: objects are changed in place, never reassigned.
      const x = unmark(o[k], left);
      if (x !== o[k]) o[k] = x;
    }
  }
  return v;
}

/** Whether the character before a number can stand there outside a string: `:`, `,`, `[` or whitespace. */
function mayPrecedeNumber(c: number): boolean {
  return c === 0x3a || c === 0x2c || c === 0x5b || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * False when `text` surely holds no integer `parseJson` would read as a bigint: no run of 16
 * digits, or only runs that cannot start a number (inside words or decimals, as long codes and
 * digits of pi in strings are). The common case, found at about a gigabyte a second.
 */
export function mayHoldBigIntegers(text: string): boolean {
  LONG_DIGITS.lastIndex = 0;
  for (let m = LONG_DIGITS.exec(text); m !== null; m = LONG_DIGITS.exec(text)) {
    let before = m.index - 1;
    if (text.charCodeAt(before) === 0x2d /* - */) before--;
    if (before < 0 || mayPrecedeNumber(text.charCodeAt(before))) return true;
  }
  return false;
}

/**
 * JSON.parse, except that integers beyond a double's exact range (up to the u64 maximum, down
 * to the i64 minimum) come out as bigints. A malformed text throws JSON.parse's own error.
 */
export function parseJson(text: string): unknown {
  if (!mayHoldBigIntegers(text)) return JSON.parse(text);
  const at = bigLiterals(text);
  if (at.length === 0) return JSON.parse(text);
  const parts: string[] = [];
  let from = 0;
  for (let k = 0; k < at.length; k += 2) {
    parts.push(text.slice(from, at[k]), `"${MARK}${text.slice(at[k], at[k + 1])}"`);
    from = at[k + 1]!;
  }
  parts.push(text.slice(from));
  let value: unknown;
  try {
    value = JSON.parse(parts.join(''));
  } catch {
    // The error, and its position, as the text sent reads.
    return JSON.parse(text);
  }
  return unmark(value, { n: at.length / 2 });
}

const markBigInt = (_key: string, v: unknown): unknown => (typeof v === 'bigint' ? MARK + v.toString() : v);

/** JSON.stringify, except that a bigint is written as its digits, a JSON number. */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (e) {
    // JSON.stringify refuses a bigint with a TypeError (as it does a cycle, which fails again below).
    if (!(e instanceof TypeError)) throw e;
  }
  return withBigInts(value);
}

/** `stringifyJson`, and whether the value held a bigint. */
export function stringifyJsonNoting(value: unknown): { text: string; bigIntegers: boolean } {
  try {
    return { text: JSON.stringify(value), bigIntegers: false };
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
  }
  return { text: withBigInts(value), bigIntegers: true };
}

function withBigInts(value: unknown): string {
  return JSON.stringify(value, markBigInt).replace(MARKED, '$1');
}
