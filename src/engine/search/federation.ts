// Federated multi-search: several queries (possibly on several indexes) answered as one
// ranked list. Each query is ranked on its own; hits are then merged by comparing their
// weighted scores rule by rule (adjacent ranking rules merged into one score, sort rules
// compared by value when both sides sort the same way), falling back to the weighted
// global score, and earlier queries first on ties.

import { normalizeFacet } from '../tokenizer/index.js';
import type { Doc } from '../documents/primary-key.js';
import { localScore, mergeRank, type Rank } from '../ranking/rank.js';
import type { RankedHit, ScoreValue } from './rank-query.js';

type Weighted = { score: number } | { sort: { ascending: boolean; value: unknown } };

/** Adjacent ranks merged into one score, times the query's weight. */
export function weightedValues(values: readonly ScoreValue[], weight: number): Weighted[] {
  const out: Weighted[] = [];
  let acc: Rank | null = null;
  const flush = () => {
    if (acc) out.push({ score: localScore(acc) * weight });
    acc = null;
  };
  for (const v of values) {
    if ('rank' in v) acc = acc ? mergeRank(acc, v.rank) : v.rank;
    else {
      flush();
      out.push({ sort: v.sort });
    }
  }
  flush();
  return out;
}

/** Ordering of two sort values as the reference's `compare_sort_values`: greater is better. */
function compareSortValues(ascending: boolean, a: unknown, b: unknown): number {
  const rank = (v: unknown) => (v === null || v === undefined ? 0 : typeof v === 'string' ? 1 : typeof v === 'number' ? 2 : -1);
  const ra = rank(a);
  const rb = rank(b);
  if (ra < 0 || rb < 0) return 0;
  if (ra !== rb) return ra - rb;
  if (ra === 0) return 0;
  let order: number;
  if (ra === 2) order = (a as number) - (b as number);
  else order = normalizeFacet(a as string) < normalizeFacet(b as string) ? -1 : normalizeFacet(a as string) > normalizeFacet(b as string) ? 1 : 0;
  return ascending ? -order : order;
}

/** Positive when `a` should come first; null when the two cannot be compared rule by rule. */
function comparePartial(a: readonly Weighted[], b: readonly Weighted[]): number | null {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if ('score' in x && 'score' in y) {
      if (x.score !== y.score) return x.score - y.score;
    } else if ('sort' in x && 'sort' in y) {
      if (x.sort.ascending !== y.sort.ascending) return null;
      const c = compareSortValues(x.sort.ascending, x.sort.value, y.sort.value);
      if (c !== 0) return c;
    } else return null;
  }
  return 0;
}

export interface FederatedQueryHits {
  indexUid: string;
  queryIndex: number;
  weight: number;
  hits: Doc[];
  ranked: RankedHit[];
}

export interface MergedHit {
  hit: Doc;
  ranked: RankedHit;
  indexUid: string;
  queryIndex: number;
  weightedScore: number;
}

/** Merges the queries' hit lists (each already in rank order) into one. */
export function mergeFederated(queries: readonly FederatedQueryHits[]): MergedHit[] {
  const heads = queries.map(() => 0);
  const prepared = queries.map((q) => q.ranked.map((r) => weightedValues(r.values, q.weight)));
  const out: MergedHit[] = [];
  for (;;) {
    let best = -1;
    for (let i = 0; i < queries.length; i++) {
      if (heads[i]! >= queries[i]!.hits.length) continue;
      if (best < 0) {
        best = i;
        continue;
      }
      const a = prepared[i]![heads[i]!]!;
      const b = prepared[best]![heads[best]!]!;
      let c = comparePartial(a, b);
      if (c === null || c === 0) {
        const sa = queries[i]!.ranked[heads[i]!]!.score * queries[i]!.weight;
        const sb = queries[best]!.ranked[heads[best]!]!.score * queries[best]!.weight;
        c = c === null ? sa - sb : 0;
      }
      if (c > 0) best = i;
    }
    if (best < 0) break;
    const q = queries[best]!;
    const k = heads[best]!++;
    out.push({
      hit: q.hits[k]!,
      ranked: q.ranked[k]!,
      indexUid: q.indexUid,
      queryIndex: q.queryIndex,
      weightedScore: q.ranked[k]!.score * q.weight,
    });
  }
  return out;
}
