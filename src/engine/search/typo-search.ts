// Typo derivations of a query word over the whole dictionary.
//
// The sorted word list is walked as an implicit trie: consecutive words share their
// common prefix, so the Damerau (optimal string alignment) rows computed for that prefix
// are reused, and as soon as no cell of a row is within the budget every word sharing
// the prefix is skipped with one binary search. This plays the role of the reference's
// Levenshtein automaton intersected with its FST, with the same rules: the first
// letter must match (changing it is only allowed with a 2-typo budget, within distance
// 1, and then counts as 2 typos), prefix mode measures the best prefix of each word, and
// at most 150 one-typo and 50 two-typo derivations are kept, in dictionary order.
//
// Distances are computed on UTF-16 code units; outside the Basic Multilingual Plane a
// character counts as two, which only matters for words of astral characters.

import { firstChar, type SortedWords } from '../fulltext/word-table.js';

export const MAX_ONE_TYPO = 150;
export const MAX_TWO_TYPOS = 50;

export interface TypoDerivations {
  /** Sorted-list indexes of one-typo derivations, in dictionary order. */
  one: number[];
  /** Sorted-list indexes of two-typo derivations, in dictionary order. */
  two: number[];
}

class Rows {
  rows: Int32Array[] = [];
  best: Int32Array = new Int32Array(0);

  constructor(private readonly m: number) {}

  get(depth: number): Int32Array {
    let r = this.rows[depth];
    if (!r) {
      r = new Int32Array(this.m + 1);
      this.rows[depth] = r;
      if (this.best.length <= depth) {
        const b = new Int32Array(Math.max(16, depth * 2));
        b.set(this.best);
        this.best = b;
      }
    }
    return r;
  }
}

/**
 * Walks the sorted words [lo, hi) and reports each word within `k` of `q` (distance ≥ 1) through
 * `emit(index, distance)`; `emit` returns false to stop. In prefix mode words whose
 * prefix equals `q` are skipped (they are the zero-typo prefix derivations).
 */
function walk(
  lo: number,
  hi: number,
  q: string,
  k: number,
  prefix: boolean,
  sorted: SortedWords,
  emit: (index: number, dist: number) => boolean,
): void {
  const m = q.length;
  const INF = k + 1;
  const rows = new Rows(m);
  const r0 = rows.get(0);
  for (let j = 0; j <= m; j++) r0[j] = j < INF ? j : INF;
  rows.best[0] = r0[m]!;
  const codes = new Int32Array(m + 1);
  for (let j = 0; j < m; j++) codes[j] = q.charCodeAt(j);
  // Each word's common prefix with the one before it, from the dictionary's table: the rows
  // of that prefix are still valid (when computed that deep) and are reused.
  const shared = sorted.prefixLengths();
  const { units, starts } = sorted.codes();
  let valid = 0;
  let i = lo;
  while (i < hi) {
    const at = starts[i]!;
    const len = starts[i + 1]! - at;
    const l = i === lo ? 0 : Math.min(valid, shared[i]!, len);
    let skipTo = -1;
    let depth = l + 1;
    for (; depth <= len; depth++) {
      const c = units[at + depth - 1]!;
      const up = rows.get(depth - 1);
      const cur = rows.get(depth);
      const up2 = depth >= 2 ? rows.rows[depth - 2]! : null;
      const pc = depth >= 2 ? units[at + depth - 2]! : -1;
      // Only cells within k of the diagonal can stay within budget (Ukkonen's band).
      const jlo = depth - k > 1 ? depth - k : 1;
      const jhi = depth + k < m ? depth + k : m;
      let v0 = jlo === 1 ? (depth < INF ? depth : INF) : INF;
      if (jlo - 1 <= m) cur[jlo - 1] = v0;
      let min = v0;
      for (let j = jlo; j <= jhi; j++) {
        const qc = codes[j - 1]!;
        let v = up[j - 1]! + (qc === c ? 0 : 1);
        const del = up[j]! + 1;
        if (del < v) v = del;
        const ins = v0 + 1;
        if (ins < v) v = ins;
        if (up2 !== null && j > 1 && qc === pc && codes[j - 2] === c) {
          const tr = up2[j - 2]! + 1;
          if (tr < v) v = tr;
        }
        if (v > INF) v = INF;
        cur[j] = v;
        v0 = v;
        if (v < min) min = v;
      }
      if (jhi < m) cur[jhi + 1] = INF;
      valid = depth;
      const last = m >= jlo && m <= jhi ? cur[m]! : INF;
      if (prefix) {
        const b = Math.min(rows.best[depth - 1]!, last);
        rows.best[depth] = b;
        if (b === 0) {
          skipTo = sorted.endOfPrefix(i, depth, hi);
          break;
        }
        if (b <= k && min >= b) {
          // Nothing below this prefix can get closer: the whole run matches at distance b.
          const end = sorted.endOfPrefix(i, depth, hi);
          for (let x = i; x < end; x++) if (!emit(x, b)) return;
          skipTo = end;
          break;
        }
        if (min > k && b > k) {
          skipTo = sorted.endOfPrefix(i, depth, hi);
          break;
        }
      } else if (min > k) {
        skipTo = sorted.endOfPrefix(i, depth, hi);
        break;
      }
    }
    if (skipTo >= 0) {
      i = skipTo;
      continue;
    }
    const end = len;
    const d = prefix ? rows.best[end]! : Math.abs(end - m) <= k ? rows.get(end)[m]! : INF;
    if (d >= 1 && d <= k && !emit(i, d)) return;
    i++;
  }
}

/** Words within distance 1 of `q` whose first character differs (they count as 2 typos). */
function firstLetterVariants(sorted: SortedWords, q: string, prefix: boolean): number[] {
  const first = firstChar(q);
  const rest = q.slice(first.length);
  const out: number[] = [];
  // Each pattern is looked up among the words of its own first character only; the same
  // word found twice is kept once below.
  const look = (p: string, c: string): void => {
    const [lo, hi] = sorted.charRange(c);
    if (lo === hi) return;
    if (prefix) {
      const [a, b] = sorted.prefixRange(p, lo, hi);
      for (let x = a; x < b; x++) out.push(x);
    } else {
      const a = sorted.indexIn(p, lo, hi);
      if (a >= 0) out.push(a);
    }
  };
  const second = rest.length > 0 ? firstChar(rest) : '';
  // The first character deleted, or swapped with the second.
  if (rest.length > 0 && !rest.startsWith(first)) look(rest, second);
  if (second && second !== first) look(second + first + rest.slice(second.length), second);
  // The first character replaced, or another inserted before it.
  for (const c of sorted.firstChars) {
    if (c === first) continue;
    look(c + rest, c);
    look(c + q, c);
  }
  return [...new Set(out)].sort((x, y) => x - y);
}

/**
 * One- and two-typo derivations of `q` with budget `maxTypos`. `live(i)` tells whether
 * the word at sorted index i still occurs in some document.
 */
export function typoDerivations(
  sorted: SortedWords,
  q: string,
  maxTypos: number,
  prefix: boolean,
  live: (index: number) => boolean,
): TypoDerivations {
  const out: TypoDerivations = { one: [], two: [] };
  if (maxTypos <= 0 || q.length === 0) return out;
  const [lo, hi] = sorted.prefixRange(firstChar(q));
  const k = maxTypos >= 2 ? 2 : 1;
  walk(lo, hi, q, k, prefix, sorted, (i, d) => {
    if (!live(i)) return true;
    if (d === 1 && out.one.length < MAX_ONE_TYPO) out.one.push(i);
    else if (d === 2 && out.two.length < MAX_TWO_TYPOS) out.two.push(i);
    return out.one.length < MAX_ONE_TYPO || (k === 2 && out.two.length < MAX_TWO_TYPOS);
  });
  if (k === 2) {
    const variants = firstLetterVariants(sorted, q, prefix).filter(live);
    if (variants.length > 0) out.two = [...out.two, ...variants].sort((a, b) => a - b).slice(0, MAX_TWO_TYPOS);
  }
  return out;
}

/**
 * Whether `x` may be one of `q`'s derivations within `k` typos: its optimal string alignment
 * distance to `q` (its best prefix's, in prefix mode) is at most `k`, on UTF-16 code units as
 * in `walk`. Of the rules that narrow the derivations only the first letter's is applied (a
 * different one needs a budget of two), so every derivation passes: what a derivation kept
 * from before a batch checks the batch's new words against.
 */
export function mayDerive(q: string, x: string, k: number, prefix: boolean): boolean {
  const m = q.length;
  const n = x.length;
  if (prefix ? n < m - k : Math.abs(n - m) > k) return false;
  if (k < 2 && q.charCodeAt(0) !== x.charCodeAt(0)) return false;
  let prev2 = new Int32Array(m + 1);
  let prev = new Int32Array(m + 1);
  let cur = new Int32Array(m + 1);
  for (let j = 0; j <= m; j++) prev[j] = j;
  let best = prev[m]!;
  for (let i = 1; i <= n; i++) {
    const c = x.charCodeAt(i - 1);
    const pc = i > 1 ? x.charCodeAt(i - 2) : -1;
    cur[0] = i;
    for (let j = 1; j <= m; j++) {
      const qc = q.charCodeAt(j - 1);
      let v = prev[j - 1]! + (qc === c ? 0 : 1);
      if (prev[j]! + 1 < v) v = prev[j]! + 1;
      if (cur[j - 1]! + 1 < v) v = cur[j - 1]! + 1;
      if (j > 1 && qc === pc && q.charCodeAt(j - 2) === c && prev2[j - 2]! + 1 < v) v = prev2[j - 2]! + 1;
      cur[j] = v;
    }
    if (cur[m]! < best) best = cur[m]!;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prefix ? best <= k : prev[m]! <= k;
}
