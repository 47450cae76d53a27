// The contract between the bucket sort and the ranking rules. A rule gives every
// document of a bucket a cost (lower is better, equal costs tie and go on to the next
// rule) and, for the returned hits, its rank(s) and its `_rankingScoreDetails` entry.

import type { IndexState } from '../fulltext/index-state.js';
import type { Unit } from '../search/derivations.js';
import type { Level } from '../search/levels.js';
import type { MatchTable } from '../search/match-table.js';
import type { DocOccurrences } from '../search/occurrences.js';
import type { Rank } from './rank.js';
import type { SearchScratch } from '../search/scratch.js';

export interface RankingContext {
  readonly state: IndexState;
  /** Memory the rules' cost arrays come from, valid until the search ends. */
  readonly scratch: SearchScratch;
  readonly units: readonly Unit[];
  readonly levels: readonly Level[];
  /** Null for a placeholder search. */
  readonly table: MatchTable | null;
  /** The `words` level a matched document belongs to. */
  levelOf(d: number): Level;
  /** Level index (= terms removed) by docid for the candidates, when computed for all of them. */
  levelIndexes(): Uint8Array | null;
  occurrences(d: number): DocOccurrences;
  /** Fills whatever the rules read for these documents (called before every cost pass). */
  prepare(docs: Uint32Array): void;
  /** Fills at least the typo counts of these documents (cheaper than `prepare` for many). */
  prepareTypos(docs: Uint32Array): void;
  /** The level all these documents share, or null when they differ. */
  commonLevel(docs: Uint32Array): Level | null;
  /**
   * Pair costs (by docid) of `left` then `right` for a large set of documents, or null
   * when the documents are few enough to be handled one by one. `bucket` (default: the
   * number of documents) is the size of the bucket they come from, which decides how: a
   * bucket's costs are the same whichever of its documents are asked for first.
   */
  pairCosts(left: Unit, right: Unit, docs: Uint32Array, bucket?: number): Uint8Array | null;
  /** Per-query memo (maxima per level, sort orders). */
  memo<T>(key: string, make: () => T): T;
  /** Highest attribute weight among the searchable fields. */
  readonly maxWeight: number;
  /**
   * The highest `perTiling` over the query paths the documents of `paths` took (each
   * document takes the first tiling of its level it matches); over every tiling of the
   * level when `paths` is null. Memoized per document set.
   */
  tilingMax(key: string, level: Level, paths: Uint32Array | null, perTiling: (tiling: readonly Unit[]) => number): number;
  /**
   * The typo rule's maximum when no `words` rule narrowed the query before it (matching
   * strategy `all`): every tiling the query allows counts, found in the index or not.
   */
  readonly queryTypoMax: number | null;
  readonly proximityByAttribute: boolean;
  /** `maxMatchingWords` of the words rule. */
  readonly maxMatchingWords: number;
  /**
   * The id of the only unit when the query is a single term without n-grams (one level,
   * one unit): rules then read the match table directly, which matters for the huge
   * candidate sets of short prefixes. -1 otherwise.
   */
  readonly single: number;
}

export type DetailEntry = [key: string, value: Record<string, unknown>];

/** The cost of a document whose cost a rule has not computed yet (see partialCosts). */
export const PENDING = 0x7fffffff;

export interface PartialCosts {
  costs: Int32Array;
  /** Costs of the pending documents (a subset of the bucket, ascending). */
  rest(pending: Uint32Array): Int32Array;
}

export interface RankingRule {
  readonly name: string;
  /** Sort rules order documents but take no part in `_rankingScore`. */
  readonly isSort: boolean;
  /** Reads the per-document match aggregates (so they must be filled first). */
  readonly usesMatches: boolean;
  costs(ctx: RankingContext, docs: Uint32Array): Int32Array;
  /**
   * The costs of the cheapest documents of a large bucket when only `need` of them are
   * wanted: every document left at {@link PENDING} costs more than every cost given, and at
   * least `need` documents have theirs (or none is pending). `rest` gives the pending ones'
   * costs if the bucket sort gets to them. Null: the rule costs every document.
   */
  partialCosts?(ctx: RankingContext, docs: Uint32Array, need: number): PartialCosts | null;
  /** The cost every one of these documents has, when the rule cannot tell them apart. */
  constant?(ctx: RankingContext, docs: Uint32Array): number | null;
  /**
   * The rank(s) of a document of cost `cost`; `paths` are the documents whose query paths
   * this rule ranked (see {@link RankingContext.tilingMax}).
   */
  ranks(ctx: RankingContext, d: number, cost: number, paths: Uint32Array | null): Rank[];
  detail(ctx: RankingContext, d: number, cost: number, order: number, paths: Uint32Array | null): DetailEntry;
}

/**
 * The unit id when every document of the set has a level made of one unit (then the
 * rules read that unit's aggregates directly), else -1.
 */
export function singleUnit(ctx: RankingContext, docs: Uint32Array): { unit: number; level: Level } | null {
  if (ctx.single >= 0) return { unit: ctx.single, level: ctx.levels[0]! };
  const level = ctx.commonLevel(docs);
  if (level && level.units.length === 1 && level.kept.length === 1) return { unit: level.units[0]!.unit.id, level };
  return null;
}

/**
 * The units of the one tiling every document of the set takes (their common level has a
 * single tiling), or null: a rule can then cost the set along it without looking up each
 * document's level.
 */
export function sharedTiling(ctx: RankingContext, docs: Uint32Array): readonly number[] | null {
  return ctx.commonLevel(docs)?.simpleUnits ?? null;
}

/**
 * Costs of the rule for each document, computed one by one: for paths taken rarely. A
 * rule's main cost pass keeps a loop of its own, where V8 inlines that rule's cost function;
 * through this one call site, shared by every rule, it stays a call per document (11% of a
 * search whose 400,000 candidates tie on every rule).
 */
export function mapCosts(ctx: RankingContext, docs: Uint32Array, cost: (d: number) => number): Int32Array {
  const out = ctx.scratch.ints(docs.length);
  for (let i = 0; i < docs.length; i++) out[i] = cost(docs[i]!);
  return out;
}
