// Bucket sort: the first rule splits the candidates into buckets of equal cost, the best
// bucket is split by the next rule, and so on, depth first, until enough documents are
// out. Only the buckets that can reach the requested page are ever refined, which keeps
// large result sets cheap. Ties left after the last rule stay in docid order.
//
// Scores come from the buckets, as in the reference: a rule's maxima depend on the query
// paths the documents of the bucket before it took, so each returned hit keeps, per rule
// applied, its bucket's cost and those documents. Rules a hit skipped (its bucket was
// alone, or past the page) are applied to it alone afterwards; rules left out when the
// time budget ran out are reported as skipped.

import { globalScore, SKIPPED_RANK, type Rank } from '../ranking/rank.js';
import { PENDING, type PartialCosts, type RankingContext, type RankingRule } from '../ranking/rule.js';
import type { SearchScratch } from './scratch.js';

export interface BucketSortInput {
  ctx: RankingContext;
  rules: readonly RankingRule[];
  /** Candidates, ascending docids. */
  universe: Uint32Array;
  offset: number;
  limit: number;
  /** Distinct keys of a document (empty: never a duplicate), or null without distinct. */
  distinct: ((d: number) => string[]) | null;
  threshold: number | null;
  /** performance.now() value after which buckets are no longer refined. */
  deadline: number;
  /** Documents to rank before stopping (more than offset + limit when counting exactly). */
  evaluate: number;
  /** Keep, for every returned hit, what its score is computed from. */
  scores?: boolean;
}

/** One rule applied to a hit's bucket. */
export interface BucketStep {
  cost: number;
  /**
   * The documents whose query paths the rule ranked: the bucket of the last non-sort rule
   * before it, null when none ran (every path of the query).
   */
  paths: Uint32Array | null;
}

/** What a returned hit's score is computed from. */
export interface HitTrace {
  /** One step per rule applied, in rule order. */
  steps: BucketStep[];
  /** The paths the next rule would rank. */
  paths: Uint32Array | null;
  /** The time budget ran out before the next rule: the rest is skipped. */
  skipped: boolean;
}

export interface BucketSortOutput {
  hits: number[];
  /** Per hit, with `scores`. */
  traces: HitTrace[] | null;
  /** Candidates minus those dropped by the threshold or as duplicates. */
  candidates: number;
  degraded: boolean;
}

interface Group {
  cost: number;
  docs: Uint32Array;
  /**
   * Set on the last group when only the cheapest groups were split off: the groups of the
   * remaining documents, split when a page needs them (`docs` is then empty).
   */
  more?: () => Group[];
}

/**
 * Splits docs (ascending) into groups of equal cost, cheapest first; docs stay ascending.
 * With `need`, only the cheapest groups that hold at least that many documents are split
 * off at once; the rest follow from the last group's `more`. A common word's bucket holds
 * most of the index while a page needs ten: placing every document cost a fifth of such a
 * search.
 */
export function groupByCost(docs: Uint32Array, costs: Int32Array, scratch: SearchScratch, need = Infinity): Group[] {
  const n = docs.length;
  if (n === 0) return [];
  let min = costs[0]!;
  let max = costs[0]!;
  for (let i = 1; i < n; i++) {
    const c = costs[i]!;
    if (c < min) min = c;
    else if (c > max) max = c;
  }
  if (min === max) return [{ cost: min, docs }];
  const range = max - min + 1;
  if (range <= Math.max(64, n * 2)) {
    const counts = new Uint32Array(range + 1);
    for (let i = 0; i < n; i++) counts[costs[i]! - min + 1]!++;
    for (let k = 1; k <= range; k++) counts[k]! += counts[k - 1]!;
    // counts[k + 1]: documents of cost min + k or less.
    let last = range - 1;
    if (need < n) {
      last = 0;
      while (counts[last + 1]! < need) last++;
    }
    return cheapestGroups(docs, costs, scratch, min, counts, last);
  }
  const order = sortedByCost(costs, n, min, range);
  const out = scratch.uints(n);
  for (let i = 0; i < n; i++) out[i] = docs[order[i]!]!;
  const groups: Group[] = [];
  let start = 0;
  for (let i = 1; i <= n; i++) {
    if (i === n || costs[order[i]!] !== costs[order[start]!]) {
      groups.push({ cost: costs[order[start]!]!, docs: out.subarray(start, i) });
      start = i;
    }
  }
  return groups;
}

/**
 * The groups of cost min..min+last (`counts` as groupByCost leaves it), then, when documents
 * cost more, a group whose `more` splits them.
 */
function cheapestGroups(docs: Uint32Array, costs: Int32Array, scratch: SearchScratch, min: number, counts: Uint32Array, last: number): Group[] {
  const n = docs.length;
  const kept = counts[last + 1]!;
  const starts = counts.slice(0, last + 1);
  const out = scratch.uints(kept);
  const top = min + last;
  for (let i = 0; i < n; i++) {
    const c = costs[i]!;
    if (c <= top) out[starts[c - min]!++] = docs[i]!;
  }
  const groups: Group[] = [];
  for (let k = 0; k <= last; k++) {
    const a = counts[k]!;
    const b = counts[k + 1]!;
    if (b > a) groups.push({ cost: min + k, docs: out.subarray(a, b) });
  }
  if (kept === n) return groups;
  // Costs and documents live in the search's scratch arenas, untouched until the search ends.
  const more = (): Group[] => {
    const restDocs = scratch.uints(n - kept);
    const restCosts = scratch.ints(n - kept);
    for (let i = 0, j = 0; i < n; i++) {
      const c = costs[i]!;
      if (c > top) {
        restDocs[j] = docs[i]!;
        restCosts[j++] = c;
      }
    }
    return groupByCost(restDocs, restCosts, scratch);
  };
  groups.push({ cost: top, docs: new Uint32Array(0), more });
  return groups;
}

/** Groups of the costed documents, cheapest first, then one group of the pending ones. */
function groupPartial(docs: Uint32Array, costs: Int32Array, scratch: SearchScratch): Group[] {
  const n = docs.length;
  let pending = 0;
  for (let i = 0; i < n; i++) if (costs[i] === PENDING) pending++;
  if (pending === 0) return groupByCost(docs, costs, scratch);
  const known = scratch.uints(n - pending);
  const knownCosts = scratch.ints(n - pending);
  const rest = scratch.uints(pending);
  for (let i = 0, k = 0, p = 0; i < n; i++) {
    if (costs[i] === PENDING) rest[p++] = docs[i]!;
    else {
      known[k] = docs[i]!;
      knownCosts[k++] = costs[i]!;
    }
  }
  return [...groupByCost(known, knownCosts, scratch), { cost: PENDING, docs: rest }];
}

/**
 * Indexes 0..n-1 ordered by cost then index. Cost and index packed into one double sort
 * natively (a comparator sort of tens of thousands of candidates costs milliseconds); a
 * range too wide to pack falls back to the comparator.
 */
function sortedByCost(costs: Int32Array, n: number, min: number, range: number): ArrayLike<number> {
  const shift = 2 ** Math.ceil(Math.log2(n + 1));
  if (range * shift >= 2 ** 53) return Array.from({ length: n }, (_, i) => i).sort((a, b) => costs[a]! - costs[b]! || a - b);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = (costs[i]! - min) * shift + i;
  keys.sort();
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = keys[i]! % shift;
  return order;
}

/**
 * Whether a document with these distinct keys is the first of its values; if so, its keys
 * are taken. A document holds several values when the distinct attribute is an array.
 */
export function firstOfDistinct(seen: Set<string>, keys: readonly string[]): boolean {
  if (keys.some((k) => seen.has(k))) return false;
  for (const k of keys) seen.add(k);
  return true;
}

export function bucketSort(input: BucketSortInput): BucketSortOutput {
  const { ctx, rules, offset, limit, distinct, threshold, deadline } = input;
  const need = Math.max(input.evaluate, offset + limit);
  const hits: number[] = [];
  const tracing = input.scores === true;
  const traces: HitTrace[] | null = tracing ? [] : null;
  // A page of no hits (`limit: 0`, as faceting interfaces ask for counts) orders nothing: the
  // count is the candidates'. Ranking the first document, as the loop below would, drops none.
  if (need === 0 && threshold === null) return { hits, traces, candidates: input.universe.length, degraded: false };
  const steps: BucketStep[] = [];
  const seen = new Set<string>();
  let emitted = 0;
  let dropped = 0;
  let degraded = false;

  const emit = (docs: Uint32Array, paths: Uint32Array | null, skipped: boolean): boolean => {
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      if (distinct && !firstOfDistinct(seen, distinct(d))) {
        dropped++;
        continue;
      }
      if (emitted >= offset && hits.length < limit) {
        hits.push(d);
        traces?.push({ steps: steps.slice(), paths, skipped });
      }
      emitted++;
      if (emitted >= need) return true;
    }
    return false;
  };

  const sortBucket = (docs: Uint32Array, r: number, ranks: Rank[], paths: Uint32Array | null): boolean => {
    if (docs.length === 0) return false;
    // A bucket entirely before the offset, or alone, needs no further ordering.
    if (r >= rules.length || (threshold === null && (docs.length === 1 || emitted + docs.length <= offset))) return emit(docs, paths, false);
    if (performance.now() > deadline) {
      degraded = true;
      // The reference scores what the budget left unranked as one skipped rule.
      if (threshold !== null && globalScore([...ranks, SKIPPED_RANK]) < threshold) {
        dropped += docs.length;
        return false;
      }
      return emit(docs, paths, true);
    }
    const rule = rules[r]!;
    const same = rule.constant?.(ctx, docs) ?? null;
    let groups: Group[];
    let partial: PartialCosts | null = null;
    if (same !== null) groups = [{ cost: same, docs }];
    else {
      if (rule.usesMatches) ctx.prepare(docs);
      // With a threshold every bucket is scored: no rule may stop at the first page.
      if (threshold === null) partial = rule.partialCosts?.(ctx, docs, need - emitted) ?? null;
      groups = partial ? groupPartial(docs, partial.costs, ctx.scratch) : groupByCost(docs, rule.costs(ctx, docs), ctx.scratch, need - emitted);
    }
    for (let k = 0; k < groups.length; k++) {
      const g = groups[k]!;
      if (g.more) {
        groups.push(...g.more());
        continue;
      }
      if (partial !== null && g.cost === PENDING) {
        // The cheaper groups did not fill the page: the rest are costed now, and all cost more.
        groups.push(...groupByCost(g.docs, partial.rest(g.docs), ctx.scratch));
        continue;
      }
      let next = ranks;
      if (threshold !== null && !rule.isSort) {
        next = [...ranks, ...rule.ranks(ctx, g.docs[0]!, g.cost, paths)];
        // A partial score bounds every final score of the bucket from above.
        if (globalScore(next) < threshold) {
          dropped += g.docs.length;
          continue;
        }
      }
      if (tracing) steps.push({ cost: g.cost, paths });
      const done = sortBucket(g.docs, r + 1, next, rule.isSort ? paths : g.docs);
      if (tracing) steps.pop();
      if (done) return true;
    }
    return false;
  };

  sortBucket(input.universe, 0, [], null);
  return { hits, traces, candidates: Math.max(0, input.universe.length - dropped), degraded };
}
