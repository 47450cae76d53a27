// Typo tolerance helpers for the search core.
//
// The reference derives typo alternatives of a query word by running a
// Levenshtein automaton (transpositions cost 1, i.e. optimal-string-alignment
// Damerau distance, counted in Unicode code points) over the word dictionary.
// Here a query word is compiled once into a TypoMatcher which then checks
// dictionary words one by one with a banded dynamic program: only cells within
// `maxTypos` of the diagonal are computed and a word is abandoned as soon as
// two consecutive columns exceed the budget, so most non-matching words cost a
// handful of operations.

export interface TypoThresholds {
  /** Minimum word length (characters) for one typo. Default 5. */
  oneTypo: number;
  /** Minimum word length (characters) for two typos. Default 9. */
  twoTypos: number;
}

export const DEFAULT_TYPO_THRESHOLDS: Readonly<TypoThresholds> = Object.freeze({ oneTypo: 5, twoTypos: 9 });

/** Number of Unicode code points in `s`. */
export function charCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Typos a query word may have: `< oneTypo` chars → 0, `< twoTypos` → 1, else 2. */
export function typoBudget(word: string, thresholds: TypoThresholds = DEFAULT_TYPO_THRESHOLDS): 0 | 1 | 2 {
  const n = charCount(word);
  if (n < thresholds.oneTypo) return 0;
  return n < thresholds.twoTypos ? 1 : 2;
}

const NUMERIC_RE = /^\p{N}+$/u;

/** True when the word is made only of numeric characters (for `disableOnNumbers`). */
export function isNumeric(word: string): boolean {
  if (word.length === 0) return false;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return c >= 0x80 && NUMERIC_RE.test(word);
  }
  return true;
}

function codePoints(s: string): Int32Array {
  const out = new Int32Array(charCount(s));
  let k = 0;
  for (const ch of s) out[k++] = ch.codePointAt(0)!;
  return out;
}

/** Unbounded optimal-string-alignment distance between two strings (code points). */
export function damerauLevenshtein(a: string, b: string): number {
  const x = codePoints(a);
  const y = codePoints(b);
  const m = x.length;
  const n = y.length;
  let prev2 = new Int32Array(m + 1);
  let prev = new Int32Array(m + 1);
  let cur = new Int32Array(m + 1);
  for (let i = 0; i <= m; i++) prev[i] = i;
  for (let j = 1; j <= n; j++) {
    cur[0] = j;
    const cj = y[j - 1]!;
    for (let i = 1; i <= m; i++) {
      let v = prev[i - 1]! + (x[i - 1] === cj ? 0 : 1);
      if (prev[i]! + 1 < v) v = prev[i]! + 1;
      if (cur[i - 1]! + 1 < v) v = cur[i - 1]! + 1;
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === cj && prev2[i - 2]! + 1 < v) {
        v = prev2[i - 2]! + 1;
      }
      cur[i] = v;
    }
    const t = prev2;
    prev2 = prev;
    prev = cur;
    cur = t;
  }
  return prev[m]!;
}

export interface TypoMatcherOptions {
  /** Match the query against prefixes of dictionary words (last query term). */
  prefix?: boolean;
}

/**
 * A query word compiled for repeated matching against dictionary words.
 *
 * `match(word)` returns the number of typos the word counts for, or -1 when
 * it is not a derivation of the query. The first-letter rule applies: a word
 * whose first character differs from the query's is only accepted with a
 * 2-typo budget, must be within distance 1, and then counts as 2 typos.
 */
export class TypoMatcher {
  readonly query: string;
  readonly maxTypos: number;
  readonly prefix: boolean;
  private readonly q: Int32Array;
  private readonly rows: [Int32Array, Int32Array, Int32Array];

  constructor(query: string, maxTypos: number, options: TypoMatcherOptions = {}) {
    this.query = query;
    this.maxTypos = Math.max(0, Math.min(2, Math.floor(maxTypos)));
    this.prefix = options.prefix === true;
    this.q = codePoints(query);
    const m = this.q.length;
    this.rows = [new Int32Array(m + 1), new Int32Array(m + 1), new Int32Array(m + 1)];
  }

  match(word: string): number {
    const q = this.q;
    if (q.length === 0) return -1;
    if (this.maxTypos === 0) {
      if (this.prefix ? word.startsWith(this.query) : word === this.query) return 0;
      return -1;
    }
    const first = word.codePointAt(0);
    if (first === undefined) return -1;
    if (first === q[0]) return this.distance(word, this.maxTypos);
    if (this.maxTypos < 2) return -1;
    return this.distance(word, 1) === -1 ? -1 : 2;
  }

  /**
   * Bounded distance between the query and `word` (or, in prefix mode, the
   * best prefix of `word`); -1 when above `max`.
   */
  distance(word: string, max: number): number {
    const q = this.q;
    const m = q.length;
    const len = word.length;
    if (m === 0) {
      if (this.prefix) return 0;
      const n = charCount(word);
      return n <= max ? n : -1;
    }
    if (!this.prefix && (len < m - max || len > 2 * (m + max))) return -1;
    const INF = max + 1;
    let [prev2, prev, cur] = this.rows;
    for (let i = 0; i <= m; i++) {
      const v = i < INF ? i : INF;
      prev[i] = v;
      prev2[i] = INF;
      cur[i] = INF;
    }
    let best = this.prefix && m <= max ? m : INF;
    let prevMin = 0;
    let prevChar = -1;
    let j = 0;
    for (let k = 0; k < len; k++) {
      let c = word.charCodeAt(k);
      if (c >= 0xd800 && c <= 0xdbff && k + 1 < len) {
        const d = word.charCodeAt(k + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
          k++;
        }
      }
      j++;
      const lo = j - max > 1 ? j - max : 1;
      const hi = j + max < m ? j + max : m;
      if (lo > hi) {
        // The band left the query: nothing further can come back within `max`.
        if (!this.prefix) return -1;
        break;
      }
      cur[lo - 1] = lo === 1 ? (j < INF ? j : INF) : INF;
      let colMin = cur[lo - 1]!;
      for (let i = lo; i <= hi; i++) {
        let v = prev[i - 1]! + (q[i - 1] === c ? 0 : 1);
        const del = prev[i]! + 1;
        if (del < v) v = del;
        const ins = cur[i - 1]! + 1;
        if (ins < v) v = ins;
        if (i > 1 && q[i - 1] === prevChar && q[i - 2] === c) {
          const tr = prev2[i - 2]! + 1;
          if (tr < v) v = tr;
        }
        if (v > INF) v = INF;
        cur[i] = v;
        if (v < colMin) colMin = v;
      }
      if (hi < m) cur[hi + 1] = INF;
      if (this.prefix && hi === m && cur[m]! < best) {
        best = cur[m]!;
        if (best === 0) return 0;
      }
      if (colMin >= INF && prevMin >= INF) {
        return this.prefix && best < INF ? best : -1;
      }
      prevMin = colMin;
      prevChar = c;
      const t = prev2;
      prev2 = prev;
      prev = cur;
      cur = t;
    }
    if (this.prefix) return best < INF ? best : -1;
    // After the loop `prev` holds the last column.
    const d = j + max >= m && m - max <= j ? prev[m]! : INF;
    return d < INF ? d : -1;
  }
}

/** One-shot bounded distance (see {@link TypoMatcher.distance}); -1 when above `max`. */
export function boundedDamerau(query: string, word: string, max: number, prefix = false): number {
  return new TypoMatcher(query, 2, { prefix }).distance(word, max);
}
