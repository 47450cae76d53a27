// Sort rules: the `sort` search parameter at the place of `sort` in the ranking rules,
// and the permanent `field:asc` / `field:desc` custom rules. They order documents by a
// field's value (numbers, then strings, then documents without it) and take no part in
// `_rankingScore`; their details show the value used.

import { bestValue, buildSortColumn, MISSING_RANK, valuesOf, type SortColumn } from '../fulltext/field-values.js';
import { recordOf, type IndexState } from '../fulltext/index-state.js';
import { mapCosts, type RankingRule } from './rule.js';

export function sortColumn(state: IndexState, field: string, ascending: boolean): SortColumn {
  const key = `sort:${ascending ? 'asc' : 'desc'}:${field}`;
  let col = state.memo.get(key) as SortColumn | undefined;
  if (!col) {
    col = buildSortColumn(state.capacity, (d) => recordOf(state, d), field, ascending);
    state.memo.set(key, col);
  }
  return col;
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
      const col = column(ctx.state);
      return mapCosts(ctx, docs, (d) => (d < col.rank.length ? col.rank[d]! : MISSING_RANK));
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
