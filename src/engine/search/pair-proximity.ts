// Proximity between two units for many documents at once, straight from the posting
// lists: a merge join (or, when one side is much smaller, a probe into the other) over
// docids, then the closest pair of occurrences inside each common document. Used when
// the proximity rule faces thousands of documents, where reading every document's
// record one by one would cost far more.

import { entryRanges, seekDoc, type Posting } from '../fulltext/postings.js';
import type { Unit } from './derivations.js';

export const MAX_PAIR_COST = 3;

/**
 * Smallest pair cost between occurrences of one document: `a` in [a0,a1) followed (after
 * `span` more positions, for a phrase) by `b` in [b0,b1). Occurrences are `field << 16 |
 * position`, sorted ascending; with `weights`, fields not searched are skipped.
 */
export function closestPair(
  A: ArrayLike<number>, a0: number, a1: number, span: number,
  B: ArrayLike<number>, b0: number, b1: number,
  byAttribute: boolean, weights: Int32Array | null = null,
): number {
  let best = MAX_PAIR_COST;
  for (let i = a0; i < a1; i++) {
    const a = A[i]!;
    const fa = a >>> 16;
    if (weights && (fa >= weights.length || weights[fa]! < 0)) continue;
    const pa = (a & 0xffff) + span;
    for (let j = b0; j < b1; j++) {
      const b = B[j]!;
      const fb = b >>> 16;
      if (fb < fa) continue;
      if (fb > fa) break;
      if (byAttribute) return 0;
      const pb = b & 0xffff;
      const dist = pb > pa ? pb - pa : pa - pb + 1;
      const c = (dist > MAX_PAIR_COST + 1 ? MAX_PAIR_COST + 1 : dist) - 1;
      if (c < best) {
        best = c;
        if (best === 0) return 0;
      }
    }
  }
  return best;
}

function runEnd(p: Posting, i: number): number {
  const d = p.docs[i]!;
  let j = i + 1;
  while (j < p.docs.length && p.docs[j] === d) j++;
  return j;
}

/**
 * Pair costs of `left` followed by `right` for the documents flagged in `inBucket`,
 * written into `out` (by docid; documents without both units keep MAX_PAIR_COST). With
 * `bucket` (those documents, ascending) much smaller than the lists, only their entries
 * are read, found by galloping. With `typoAt`, only the occurrences of each document's
 * least-typo derivations count (its typo count per unit), as in its occurrence lists.
 */
export function bulkPairCosts(
  left: Unit, right: Unit, inBucket: Uint8Array, out: Uint8Array,
  weights: Int32Array, byAttribute: boolean, bucket: Uint32Array | null = null,
  typoAt: ((d: number, unit: number) => number) | null = null,
): void {
  const span = left.isPhrase ? left.qposEnd - left.qpos : 0;
  // Entry runs of the bucket's documents in each list, found once per list.
  const rightRanges = bucket === null ? null : right.sources.map((sb) => entryRanges(sb.posting.docs, bucket));
  for (const sa of left.sources) {
    const A = sa.posting;
    const ra = bucket === null ? null : entryRanges(A.docs, bucket);
    const ta = sa.typo + left.baseTypo;
    right.sources.forEach((sb, k) => {
      const B = sb.posting;
      if (A.docs.length === 0 || B.docs.length === 0) return;
      const tb = sb.typo + right.baseTypo;
      const visit = (d: number, a0: number, a1: number, b0: number, b1: number) => {
        if (inBucket[d] !== 1 || out[d] === 0) return;
        if (typoAt !== null && (typoAt(d, left.id) !== ta || typoAt(d, right.id) !== tb)) return;
        const c = closestPair(A.fps, a0, a1, span, B.fps, b0, b1, byAttribute, weights);
        if (c < out[d]!) out[d] = c;
      };
      if (ra !== null && rightRanges !== null) {
        pairRanges(A, ra, B, rightRanges[k]!, visit);
        return;
      }
      if (A.docs.length > 8 * B.docs.length) {
        let a = 0;
        for (let j = 0; j < B.docs.length; ) {
          const d = B.docs[j]!;
          const je = runEnd(B, j);
          a = seekDoc(A, d, a);
          if (a < A.docs.length && A.docs[a] === d) visit(d, a, runEnd(A, a), j, je);
          j = je;
        }
      } else if (B.docs.length > 8 * A.docs.length) {
        let b = 0;
        for (let i = 0; i < A.docs.length; ) {
          const d = A.docs[i]!;
          const ie = runEnd(A, i);
          b = seekDoc(B, d, b);
          if (b < B.docs.length && B.docs[b] === d) visit(d, i, ie, b, runEnd(B, b));
          i = ie;
        }
      } else {
        let i = 0;
        let j = 0;
        while (i < A.docs.length && j < B.docs.length) {
          const da = A.docs[i]!;
          const db = B.docs[j]!;
          if (da < db) i = runEnd(A, i);
          else if (db < da) j = runEnd(B, j);
          else {
            const ie = runEnd(A, i);
            const je = runEnd(B, j);
            visit(da, i, ie, j, je);
            i = ie;
            j = je;
          }
        }
      }
    });
  }
}

/** First run index (even, at or after `from`) of `runs` whose document is ≥ d. */
function seekRun(p: Posting, runs: number[], d: number, from: number): number {
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
  A: Posting, x: number[], B: Posting, y: number[],
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
