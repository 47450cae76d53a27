// `typo`: fewer typos first. A document's cost is the smallest total over the ways its
// units tile the kept terms; an n-gram costs its number of words on top of its typos.
// The maximum (`maxTypoCount`) is what the query allows, not what was found: each word
// its typo budget (at least one, a word may match split in two), over the query paths
// the documents of the bucket took.

import type { Unit } from '../search/derivations.js';
import { bestTiling, simpleFor, type Level } from '../search/levels.js';
import { NO_TYPO } from '../search/match-table.js';
import { localScore, rankFromCost } from './rank.js';
import { sharedTiling, singleUnit, type RankingContext, type RankingRule } from './rule.js';

export function typoCost(ctx: RankingContext, d: number): number {
  const table = ctx.table!;
  const level = ctx.levelOf(d);
  const simple = simpleFor(level, table.unitsOf(d));
  if (simple !== null) {
    let sum = 0;
    for (let i = 0; i < simple.length; i++) {
      const t = table.typoAt(d, simple[i]!);
      if (t !== NO_TYPO) sum += t;
    }
    return sum;
  }
  return tiledTypoCost(table, level, d);
}

/**
 * Apart from typoCost, which runs once per document of a bucket: a closure over its
 * arguments there made V8 allocate a context on every call, simple tiling or not.
 */
function tiledTypoCost(table: NonNullable<RankingContext['table']>, level: Level, d: number): number {
  const c = bestTiling(level, (u) => {
    const t = table.typoAt(d, u.id);
    return t === NO_TYPO ? Infinity : t;
  });
  return Number.isFinite(c) ? c : 0;
}

function maxTypo(ctx: RankingContext, level: Level, paths: Uint32Array | null): number {
  if (paths === null && ctx.queryTypoMax !== null) return ctx.queryTypoMax;
  return ctx.tilingMax('typo', level, paths, budgetOf);
}

function budgetOf(tiling: readonly Unit[]): number {
  let sum = 0;
  for (const u of tiling) sum += u.typoBudget;
  return sum;
}

export const typoRule: RankingRule = {
  name: 'typo',
  isSort: false,
  // Only typo counts are read: costs() fills those alone (see MatchTable.fillTypos).
  usesMatches: false,
  constant(ctx, docs) {
    const one = singleUnit(ctx, docs);
    if (one) return ctx.units[one.unit]!.maxTypo === 0 ? 0 : null;
    // One tiling for every document, none of its units with a source that costs a typo:
    // nothing to tell the documents apart by (a bucket of every document, where each cost
    // read its units' aggregates).
    const tiling = sharedTiling(ctx, docs);
    return tiling !== null && tiling.every((u) => ctx.units[u]!.maxTypo === 0) ? 0 : null;
  },
  costs(ctx, docs) {
    const one = singleUnit(ctx, docs);
    if (one && ctx.units[one.unit]!.maxTypo === 0) return ctx.scratch.ints(docs.length);
    ctx.prepareTypos(docs);
    if (one) {
      const t = ctx.table!;
      const out = ctx.scratch.ints(docs.length);
      for (let i = 0; i < docs.length; i++) {
        const v = t.typoAt(docs[i]!, one.unit);
        out[i] = v === NO_TYPO ? 0 : v;
      }
      return out;
    }
    const out = ctx.scratch.ints(docs.length);
    for (let i = 0; i < docs.length; i++) out[i] = typoCost(ctx, docs[i]!);
    return out;
  },
  ranks(ctx, d, cost, paths) {
    return [rankFromCost(cost, maxTypo(ctx, ctx.levelOf(d), paths))];
  },
  detail(ctx, d, cost, order, paths) {
    const max = maxTypo(ctx, ctx.levelOf(d), paths);
    return ['typo', { order, typoCount: cost, maxTypoCount: max, score: localScore(rankFromCost(cost, max)) }];
  },
};
