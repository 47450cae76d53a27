// Sort rules: the `sort` search parameter at the place of `sort` in the ranking rules,
// and the permanent `field:asc` / `field:desc` custom rules. They order documents by a
// field's value (numbers, then strings, then documents without it) and take no part in
// `_rankingScore`; their details show the value used.

import { bestValue, buildSortColumn, MISSING_RANK, valuesOf, type SortColumn } from '../fulltext/field-values.js';
import { recordOf, type IndexState } from '../fulltext/index-state.js';
import { mapCosts, PENDING, type PartialCosts, type RankingContext, type RankingRule } from './rule.js';

export function sortColumn(state: IndexState, field: string, ascending: boolean): SortColumn {
  const key = `sort:${ascending ? 'asc' : 'desc'}:${field}`;
  let col = state.memo.get(key) as SortColumn | undefined;
  if (!col) {
    col = buildSortColumn(state.capacity, (d) => recordOf(state, d), field, ascending);
    state.memo.set(key, col);
  }
  return col;
}

/** Buckets from which a sort costs only the documents that can reach the page (partialCosts). */
const PARTIAL_SORT_DOCS = 4096;
const BINS = 1024;
/** A document without the field, in partial costs: PENDING is MISSING_RANK's own value. */
const MISSING_PARTIAL = MISSING_RANK - 1;

/**
 * The costs of the documents whose rank can reach the first `need`, the others PENDING:
 * one pass bins the ranks (1,024 bins over the ranks present), the bins that hold the first
 * `need` documents are costed. A placeholder search sorted over a whole index then groups a
 * few thousand documents instead of every one. Null where it would not save that.
 */
function partialSortCosts(ctx: RankingContext, docs: Uint32Array, need: number, rank: Int32Array): PartialCosts | null {
  if (docs.length < PARTIAL_SORT_DOCS || need * 8 > docs.length) return null;
  const costs = rankCosts(ctx, docs, rank);
  let max = 0;
  for (let i = 0; i < costs.length; i++) if (costs[i]! !== MISSING_RANK && costs[i]! > max) max = costs[i]!;
  let shift = 0;
  while (max >>> shift >= BINS) shift++;
  const bins = new Uint32Array(BINS);
  for (let i = 0; i < costs.length; i++) if (costs[i]! !== MISSING_RANK) bins[costs[i]! >>> shift]!++;
  // `known`: the documents in bins up to `last`, the first bins that hold `need`.
  let last = 0;
  let known = 0;
  for (; last < BINS; last++) if ((known += bins[last]!) >= need) break;
  // The page reaches the documents without the field, or the costed bins would be most of the bucket.
  if (last === BINS || known * 2 > docs.length) return null;
  for (let i = 0; i < costs.length; i++) if (costs[i]! === MISSING_RANK || costs[i]! >>> shift > last) costs[i] = PENDING;
  return {
    costs,
    rest: (pending) =>
      mapCosts(ctx, pending, (d) => {
        const r = rankAt(rank, d);
        return r === MISSING_RANK ? MISSING_PARTIAL : r;
      }),
  };
}

function rankAt(rank: Int32Array, d: number): number {
  return d < rank.length ? rank[d]! : MISSING_RANK;
}

/** rankAt of each document (a loop of this rule's own: see mapCosts). */
function rankCosts(ctx: RankingContext, docs: Uint32Array, rank: Int32Array): Int32Array {
  const out = ctx.scratch.ints(docs.length);
  for (let i = 0; i < docs.length; i++) out[i] = rankAt(rank, docs[i]!);
  return out;
}

/**
 * A sort rule over `field`. `columnOf` gives the order from elsewhere (the facet index,
 * which holds it far cheaper than the records); without it, or where it gives none, the
 * order is built from the documents' records.
 */
export function sortRule(field: string, ascending: boolean, columnOf?: () => SortColumn | null): RankingRule {
  const name = `${field}:${ascending ? 'asc' : 'desc'}`;
  const column = (state: IndexState) => columnOf?.() ?? sortColumn(state, field, ascending);
  return {
    name,
    isSort: true,
    usesMatches: false,
    costs(ctx, docs) {
      const rank = column(ctx.state).rank;
      return rankCosts(ctx, docs, rank);
    },
    partialCosts(ctx, docs, need) {
      return partialSortCosts(ctx, docs, need, column(ctx.state).rank);
    },
    ranks() {
      return [];
    },
    detail(ctx, d, _cost, order) {
      let value = column(ctx.state).valueOf(d);
      if (value === undefined) value = bestValue(valuesOf(recordOf(ctx.state, d), field), ascending)?.shown ?? null;
      return [name, { order, value }];
    },
  };
}
