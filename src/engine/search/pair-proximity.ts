// Proximity between two units for many documents at once, straight from the posting
// lists: the entries of those documents in each list (found by galloping), joined by
// docid, then the closest pair of occurrences inside each common document. Used when
// the proximity rule faces many documents, where reading every document's record one by
// one would cost far more.

import { docEnd, entryRanges, gallop, type Posting } from '../fulltext/postings.js';
import { PendingTable, type PendingEntry } from './pending-entries.js';
import type { Source, Unit } from './derivations.js';

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

/** What identifies a source's list within a state: its word, or its indexed prefix; null for others (splits, phrases). */
function listKey(s: Source): string | null {
  if (s.wordId >= 0) return String(s.wordId);
  return s.prefixList && s.prefixId !== undefined ? `p${s.prefixId}` : null;
}

/** Word pairs whose costs a state keeps: both words in at least this many documents. */
const KEPT_PAIR_MIN_DOCS = 2048;
/** Documents of kept pair costs per state, over all pairs (5 bytes each). */
const KEPT_PAIR_BUDGET_DOCS = 4_000_000;
/** The state memo's entry holding the kept pair costs. */
export const KEPT_PAIR_COSTS = 'paircosts';
/** The state memo's entry counting, per pair not kept, the bucket documents it was joined for. */
const PAIR_JOINS = 'pairjoins';
/** Pairs counted at most (past them the counts start again). */
const MAX_PAIR_JOINS = 16_384;
/** A word pair's cost in every document holding both words closer than MAX_PAIR_COST, ascending docids. */
interface KeptPairCosts extends PendingEntry {
  docs: Uint32Array;
  costs: Uint8Array;
}

/**
 * The pair costs a state keeps, by the two lists and the query's weights. Carried to the
 * state after a batch, each entry notes the documents the batch changed and computes their
 * costs again on first use: the common pairs ("of the") are in nearly every document a write
 * touches, and joining their whole lists again took most of a first search after a write.
 */
export type KeptPairCostTable = PendingTable<KeptPairCosts>;

/** Kept costs with those of `e.pending` computed again from the lists as they are now. */
function patchKept(table: KeptPairCostTable, e: KeptPairCosts, A: Posting, B: Posting, weights: Int32Array, byAttribute: boolean): void {
  const pending = e.pending!;
  const fresh: number[] = [];
  const freshCosts: number[] = [];
  // The pending documents ascend: each list is searched from where the last one was found.
  let atA = 0;
  let atB = 0;
  for (const d of pending) {
    atA = gallop(A.docs, d, atA);
    if (atA >= A.docs.length) break;
    if (A.docs[atA] !== d) continue;
    atB = gallop(B.docs, d, atB);
    if (atB >= B.docs.length) break;
    if (B.docs[atB] !== d) continue;
    const c = closestPair(A.fps, atA, docEnd(A, atA), 0, B.fps, atB, docEnd(B, atB), byAttribute, weights);
    if (c < MAX_PAIR_COST) (fresh.push(d), freshCosts.push(c));
  }
  const docs = new Uint32Array(e.docs.length + fresh.length);
  const costs = new Uint8Array(docs.length);
  let i = 0;
  let j = 0;
  let p = 0;
  let k = 0;
  while (i < e.docs.length || j < fresh.length) {
    if (j >= fresh.length || (i < e.docs.length && e.docs[i]! < fresh[j]!)) {
      const d = e.docs[i]!;
      while (p < pending.length && pending[p]! < d) p++;
      if (p >= pending.length || pending[p] !== d) (docs[k] = d), (costs[k++] = e.costs[i]!);
      i++;
    } else {
      if (i < e.docs.length && e.docs[i] === fresh[j]) i++;
      (docs[k] = fresh[j]!), (costs[k++] = freshCosts[j++]!);
    }
  }
  table.docs += k - e.docs.length;
  e.docs = docs.slice(0, k);
  e.costs = costs.slice(0, k);
  e.pending = null;
  e.reads = A.ndocs + B.ndocs;
}

/**
 * The costs of word `a` then word `b` in every document, kept per state: the common words of
 * a query ("of the", "to a", and a short last word's indexed prefix list, "this is a…") are
 * paired by query after query, in buckets of tens of thousands
 * of documents that would each time be joined again from both lists. Computed from the whole
 * lists, and only when the bucket covers a good part of the smaller one (else the join of the
 * bucket's entries costs less than the whole); null when not kept.
 */
function keptPairCosts(
  memo: Map<string, unknown>, sa: Source, sb: Source, bucket: number, weights: Int32Array, byAttribute: boolean,
): KeptPairCosts | null {
  const A = sa.posting;
  const B = sb.posting;
  if (A.ndocs < KEPT_PAIR_MIN_DOCS || B.ndocs < KEPT_PAIR_MIN_DOCS) return null;
  const ka = listKey(sa);
  const kb = listKey(sb);
  if (ka === null || kb === null) return null;
  let table = memo.get(KEPT_PAIR_COSTS) as KeptPairCostTable | undefined;
  if (table === undefined) memo.set(KEPT_PAIR_COSTS, (table = new PendingTable<KeptPairCosts>(KEPT_PAIR_BUDGET_DOCS)));
  const key = `${ka}:${kb}:${byAttribute ? 1 : 0}:${weights.join(',')}`;
  const kept = table.entries.get(key);
  if (kept !== undefined) {
    if (kept.pending !== null) patchKept(table, kept, A, B, weights, byAttribute);
    kept.used = true;
    return kept;
  }
  const most = Math.min(A.ndocs, B.ndocs);
  // Joining the whole lists costs about as much as joining the entries of a bucket holding a
  // quarter of the smaller list's documents. A pair is joined bucket by bucket until the
  // buckets it was joined for add up to that, then whole: "of the" in query after query of
  // ten thousand documents each paid its join again, and at most twice the best cost is paid
  // whichever queries come.
  let joined = memo.get(PAIR_JOINS) as Map<string, number> | undefined;
  if (joined === undefined) memo.set(PAIR_JOINS, (joined = new Map()));
  const before = joined.get(key) ?? 0;
  if ((before + bucket) * 4 < most) {
    if (joined.size >= MAX_PAIR_JOINS) joined.clear();
    joined.set(key, before + bucket);
    return null;
  }
  joined.delete(key);
  if (table.docs + most > table.capacity) return null;
  const docs = new Uint32Array(most);
  const costs = new Uint8Array(most);
  let n = 0;
  // One merge of both lists, a document's run stepped over at once: finding either list's
  // runs of the smaller list's documents first, then joining those, took twice as long ("of
  // the" on the longdocs dictionary: 7.0 ms against 4.1).
  const ad = A.docs;
  const bd = B.docs;
  let i = 0;
  let j = 0;
  while (i < ad.length && j < bd.length) {
    const d = ad[i]!;
    const e = bd[j]!;
    if (d < e) i++;
    else if (e < d) j++;
    else {
      let ie = i + 1;
      while (ie < ad.length && ad[ie] === d) ie++;
      let je = j + 1;
      while (je < bd.length && bd[je] === d) je++;
      const c = closestPair(A.fps, i, ie, 0, B.fps, j, je, byAttribute, weights);
      if (c < MAX_PAIR_COST) (docs[n] = d), (costs[n++] = c);
      i = ie;
      j = je;
    }
  }
  const out = { docs: docs.slice(0, n), costs: costs.slice(0, n), pending: null, used: true, reads: A.ndocs + B.ndocs };
  table.docs += n;
  table.entries.set(key, out);
  return out;
}

/** Writes kept pair costs into `out` for the documents of `bucket` (and possibly others, harmlessly: see bulkPairCosts). */
function applyKept(kept: KeptPairCosts, bucket: Uint32Array, out: Uint8Array): void {
  const { docs, costs } = kept;
  if (docs.length <= 2 * bucket.length) {
    // Costs of documents outside the bucket are exact for this pair of sources: a later
    // call for them takes the minimum with the other sources', as for any other document.
    for (let i = 0; i < docs.length; i++) if (costs[i]! < out[docs[i]!]!) out[docs[i]!] = costs[i]!;
    return;
  }
  let at = 0;
  for (let i = 0; i < bucket.length && at < docs.length; i++) {
    const d = bucket[i]!;
    at = gallop(docs, d, at);
    if (at < docs.length && docs[at] === d && costs[at]! < out[d]!) out[d] = costs[at]!;
  }
}

/** A list this many times shorter than the bucket and the other list is joined from its own documents. */
const FEW = 8;

/** The documents of entry runs, ascending. */
function runDocs(p: Posting, runs: Uint32Array): Uint32Array {
  const out = new Uint32Array(runs.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = p.docs[runs[2 * i]!]!;
  return out;
}

/** Entry runs by list, per bucket: kept as long as the bucket's array lives. */
const bucketRanges = new WeakMap<Uint32Array, Map<Uint32Array, Uint32Array>>();

/**
 * Pair costs of `left` followed by `right` for the documents of `bucket` (ascending),
 * written into `out` by docid (documents without both units keep MAX_PAIR_COST); only
 * their entries of each list are read. With `typoAt`, only the occurrences of each
 * document's least-typo derivations count (its typo count per unit), as in its occurrence
 * lists. With `stateMemo`, the costs of two common words are kept there for the
 * next queries, and `out` may then receive exact costs of that pair of words for documents
 * outside the bucket: every cost written is a minimum over pairs of sources, so a later call
 * for those documents lowers it to their cost over all sources, as if it had not been there.
 */
export function bulkPairCosts(
  left: Unit, right: Unit, bucket: Uint32Array, out: Uint8Array,
  weights: Int32Array, byAttribute: boolean,
  typoAt: ((d: number, unit: number) => number) | null = null,
  stateMemo: Map<string, unknown> | null = null,
): void {
  const span = left.isPhrase ? left.qposEnd - left.qpos : 0;
  // Entry runs of the bucket's documents in each list, found once per list and bucket (a
  // middle word is the right of one pair and the left of the next).
  let memo = bucketRanges.get(bucket);
  if (memo === undefined) bucketRanges.set(bucket, (memo = new Map()));
  const known = memo;
  const rangesOf = (p: Posting): Uint32Array => {
    let r = known.get(p.docs);
    if (r === undefined) known.set(p.docs, (r = entryRanges(p.docs, bucket, p.ndocs)));
    return r;
  };
  for (const sa of left.sources) {
    const A = sa.posting;
    const ta = sa.typo + left.baseTypo;
    for (const sb of right.sources) {
      const B = sb.posting;
      const kept = typoAt === null && span === 0 && stateMemo !== null ? keptPairCosts(stateMemo, sa, sb, bucket.length, weights, byAttribute) : null;
      if (kept !== null) {
        applyKept(kept, bucket, out);
        continue;
      }
      const tb = sb.typo + right.baseTypo;
      // A list far shorter than the bucket and the other list (a split, a rare derivation):
      // the other list's runs are looked up at its documents only, not over the bucket.
      let ra: Uint32Array;
      let rb: Uint32Array;
      if (A.ndocs * FEW < Math.min(bucket.length, B.ndocs)) {
        ra = rangesOf(A);
        rb = entryRanges(B.docs, runDocs(A, ra), B.ndocs);
      } else if (B.ndocs * FEW < Math.min(bucket.length, A.ndocs)) {
        rb = rangesOf(B);
        ra = entryRanges(A.docs, runDocs(B, rb), A.ndocs);
      } else {
        ra = rangesOf(A);
        rb = rangesOf(B);
      }
      pairRanges(A, ra, B, rb, (d, a0, a1, b0, b1) => {
        if (out[d] === 0) return;
        if (typoAt !== null && (typoAt(d, left.id) !== ta || typoAt(d, right.id) !== tb)) return;
        const c = closestPair(A.fps, a0, a1, span, B.fps, b0, b1, byAttribute, weights);
        if (c < out[d]!) out[d] = c;
      });
    }
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
