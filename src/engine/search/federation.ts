// Federated multi-search: several queries (possibly on several indexes) answered as one
// ranked list. Each query is ranked on its own; hits are then merged by comparing their
// weighted scores rule by rule (adjacent ranking rules merged into one score, sort rules
// compared by value when both sides sort the same way), falling back to the weighted
// global score, and earlier queries first on ties.

import { normalizeFacet } from '../tokenizer/index.js';
import type { Doc } from '../documents/primary-key.js';
import { localScore, mergeRank, type Rank } from '../ranking/rank.js';
import type { RankedHit, ScoreValue } from './rank-query.js';

/** `vector`: a semantic similarity, which the reference never merges with ranks. */
export type Weighted = { score: number; vector?: true } | { sort: { ascending: boolean; value: unknown } };

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
      out.push('sort' in v ? { sort: v.sort } : { score: v.similarity * weight, vector: true });
    }
  }
  flush();
  return out;
}

/** Ordering of two sort values as the reference's `compare_sort_values`: greater is better. */
export function compareSortValues(ascending: boolean, a: unknown, b: unknown): number {
  // A remote's hits may carry a sort value past 2^53 read exactly (a bigint): a number all the same.
  const rank = (v: unknown) => (v === null || v === undefined ? 0 : typeof v === 'string' ? 1 : typeof v === 'number' || typeof v === 'bigint' ? 2 : -1);
  const ra = rank(a);
  const rb = rank(b);
  if (ra < 0 || rb < 0) return 0;
  if (ra !== rb) return ra - rb;
  if (ra === 0) return 0;
  let order: number;
  if (ra === 2) order = Number(a) - Number(b);
  else order = normalizeFacet(a as string) < normalizeFacet(b as string) ? -1 : normalizeFacet(a as string) > normalizeFacet(b as string) ? 1 : 0;
  return ascending ? -order : order;
}

/** Positive when `a` should come first; null when the two cannot be compared rule by rule. */
export function comparePartial(a: readonly Weighted[], b: readonly Weighted[]): number | null {
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
  /** Null for a hit another instance found (a remote query). */
  ranked: RankedHit | null;
  indexUid: string;
  queryIndex: number;
  weightedScore: number;
  /** The hit's weighted score rule by rule, as the merge compares them. */
  weighted: Weighted[];
}

/** A rule's weighted score as instances exchange them (the reference's `WeightedScoreValue`). */
export type WireScore =
  | { weightedScore: number }
  | { sort: { asc: boolean; value: unknown } }
  | { geoSort: { asc: boolean; distance: number | null } }
  | { vectorSort: number };

export function toWire(values: readonly Weighted[]): WireScore[] {
  return values.map((v) =>
    'score' in v ? (v.vector ? { vectorSort: v.score } : { weightedScore: v.score }) : { sort: { asc: v.sort.ascending, value: v.sort.value } },
  );
}

/** Null when `raw` is not a list of weighted score values. */
export function fromWire(raw: unknown): Weighted[] | null {
  if (!Array.isArray(raw)) return null;
  const out: Weighted[] = [];
  for (const v of raw as Record<string, unknown>[]) {
    if (typeof v !== 'object' || v === null) return null;
    if (typeof v['weightedScore'] === 'number') out.push({ score: v['weightedScore'] });
    else if (typeof v['vectorSort'] === 'number') out.push({ score: v['vectorSort'], vector: true });
    else if (typeof v['sort'] === 'object' && v['sort'] !== null) {
      const s = v['sort'] as { asc?: unknown; value?: unknown };
      out.push({ sort: { ascending: s.asc === true, value: s.value } });
    } else if (typeof v['geoSort'] === 'object' && v['geoSort'] !== null) {
      const s = v['geoSort'] as { asc?: unknown; distance?: unknown };
      out.push({ sort: { ascending: s.asc === true, value: s.distance ?? null } });
    } else return null;
  }
  return out;
}

/**
 * Merges lists of hits, each already in rank order (one per local query, one per remote
 * instance), into one: rule by rule, the weighted global score when the rules cannot be
 * compared, and the earlier query on ties.
 */
export function mergeFederated(queries: readonly FederatedQueryHits[], remote: readonly MergedHit[][] = []): MergedHit[] {
  const lists: MergedHit[][] = queries.map((q) =>
    q.hits.map((hit, k) => {
      const ranked = q.ranked[k]!;
      return { hit, ranked, indexUid: q.indexUid, queryIndex: q.queryIndex, weightedScore: ranked.score * q.weight, weighted: weightedValues(ranked.values, q.weight) };
    }),
  );
  for (const l of remote) lists.push(l);
  const heads = lists.map(() => 0);
  const out: MergedHit[] = [];
  for (;;) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      if (heads[i]! >= lists[i]!.length) continue;
      if (best < 0) {
        best = i;
        continue;
      }
      const a = lists[i]![heads[i]!]!;
      const b = lists[best]![heads[best]!]!;
      let c = comparePartial(a.weighted, b.weighted);
      if (c === null) c = a.weightedScore - b.weightedScore;
      if (c === 0) c = b.queryIndex - a.queryIndex;
      if (c > 0) best = i;
    }
    if (best < 0) break;
    out.push(lists[best]![heads[best]!++]!);
  }
  return out;
}
