// Proximity between two units for many documents at once, straight from the posting
// lists: the entries of those documents in each list (found by galloping), joined by
// docid, then the closest pair of occurrences inside each common document. Used when
// the proximity rule faces many documents, where reading every document's record one by
// one would cost far more.

import { entryRanges, type Posting } from '../fulltext/postings.js';
import type { Unit } from './derivations.js';

export const MAX_PAIR_COST = 3;

/**
 * Smallest pair cost between occurrences of one document: `a` in [a0,a1) followed (after
 * `span` more positions, for a phrase) by `b` in [b0,b1). Occurrences are `field << 16 |
 * position`, sorted ascending; with `weights`, fields not searched are skipped. The cost
 * grows with the distance on either side, so only the nearest `b` at or before `a` and the
 * nearest after it count: one merge of both lists rather than every pair.
 */
export function closestPair(
  A: ArrayLike<number>, a0: number, a1: number, span: number,
  B: ArrayLike<number>, b0: number, b1: number,
  byAttribute: boolean, weights: Int32Array | null = null,
): number {
  let best = MAX_PAIR_COST;
  let j = b0;
  for (let i = a0; i < a1; i++) {
    const a = A[i]!;
    const fa = a >>> 16;
    if (weights && (fa >= weights.length || weights[fa]! < 0)) continue;
    const pa = (a & 0xffff) + span;
    // The last `b` at or before `a` (after the span) within its field, then the first after.
    const key = fa * 0x10000 + (pa > 0xffff ? 0xffff : pa);
    while (j < b1 && B[j]! <= key) j++;
    if (j > b0) {
      const b = B[j - 1]!;
      if (b >>> 16 === fa) {
        if (byAttribute) return 0;
        const dist = pa - (b & 0xffff) + 1;
        const c = (dist > MAX_PAIR_COST + 1 ? MAX_PAIR_COST + 1 : dist) - 1;
        if (c < best) {
          best = c;
          if (best === 0) return 0;
        }
      }
    }
    if (j < b1) {
      const b = B[j]!;
      if (b >>> 16 === fa) {
        if (byAttribute) return 0;
        const dist = (b & 0xffff) - pa;
        const c = (dist > MAX_PAIR_COST + 1 ? MAX_PAIR_COST + 1 : dist) - 1;
        if (c < best) {
          best = c;
          if (best === 0) return 0;
        }
      }
    }
  }
  return best;
}

/** Entry runs by list, per bucket: kept as long as the bucket's array lives. */
const bucketRanges = new WeakMap<Uint32Array, Map<Uint32Array, Uint32Array>>();

/**
 * Pair costs of `left` followed by `right` for the documents of `bucket` (ascending),
 * written into `out` by docid (documents without both units keep MAX_PAIR_COST); only
 * their entries of each list are read. With `typoAt`, only the occurrences of each
 * document's least-typo derivations count (its typo count per unit), as in its occurrence
 * lists.
 */
export function bulkPairCosts(
  left: Unit, right: Unit, bucket: Uint32Array, out: Uint8Array,
  weights: Int32Array, byAttribute: boolean,
  typoAt: ((d: number, unit: number) => number) | null = null,
): void {
  const span = left.isPhrase ? left.qposEnd - left.qpos : 0;
  // Entry runs of the bucket's documents in each list, found once per list and bucket (a
  // middle word is the right of one pair and the left of the next).
  let memo = bucketRanges.get(bucket);
  if (memo === undefined) bucketRanges.set(bucket, (memo = new Map()));
  const known = memo;
  const rangesOf = (list: Uint32Array): Uint32Array => {
    let r = known.get(list);
    if (r === undefined) known.set(list, (r = entryRanges(list, bucket)));
    return r;
  };
  const rightRanges = right.sources.map((sb) => rangesOf(sb.posting.docs));
  for (const sa of left.sources) {
    const A = sa.posting;
    const ra = rangesOf(A.docs);
    const ta = sa.typo + left.baseTypo;
    right.sources.forEach((sb, k) => {
      const B = sb.posting;
      const tb = sb.typo + right.baseTypo;
      pairRanges(A, ra, B, rightRanges[k]!, (d, a0, a1, b0, b1) => {
        if (out[d] === 0) return;
        if (typoAt !== null && (typoAt(d, left.id) !== ta || typoAt(d, right.id) !== tb)) return;
        const c = closestPair(A.fps, a0, a1, span, B.fps, b0, b1, byAttribute, weights);
        if (c < out[d]!) out[d] = c;
      });
    });
  }
}

/** First run index (even, at or after `from`) of `runs` whose document is ≥ d. */
function seekRun(p: Posting, runs: Uint32Array, d: number, from: number): number {
  let lo = from >> 1;
  let hi = runs.length >> 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (p.docs[runs[mid * 2]!]! < d) lo = mid + 1;
    else hi = mid;
  }
  return lo * 2;
}

/** Visits the documents both lists' entry runs hold, walking the shorter and seeking in the longer. */
function pairRanges(
  A: Posting, x: Uint32Array, B: Posting, y: Uint32Array,
  visit: (d: number, a0: number, a1: number, b0: number, b1: number) => void,
): void {
  if (x.length === 0 || y.length === 0) return;
  if (x.length > 8 * y.length || y.length > 8 * x.length) {
    const xShort = x.length <= y.length;
    const [S, s, L, l] = xShort ? [A, x, B, y] : [B, y, A, x];
    let at = 0;
    for (let i = 0; i < s.length && at < l.length; i += 2) {
      const d = S.docs[s[i]!]!;
      at = seekRun(L, l, d, at);
      if (at < l.length && L.docs[l[at]!] === d) {
        if (xShort) visit(d, s[i]!, s[i + 1]!, l[at]!, l[at + 1]!);
        else visit(d, l[at]!, l[at + 1]!, s[i]!, s[i + 1]!);
      }
    }
    return;
  }
  let i = 0;
  let j = 0;
  while (i < x.length && j < y.length) {
    const da = A.docs[x[i]!]!;
    const db = B.docs[y[j]!]!;
    if (da < db) i += 2;
    else if (db < da) j += 2;
    else {
      visit(da, x[i]!, x[i + 1]!, y[j]!, y[j + 1]!);
      i += 2;
      j += 2;
    }
  }
}
