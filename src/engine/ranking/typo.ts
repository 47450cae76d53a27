// `typo`: fewer typos first. A document's cost is the smallest total over the ways its
// units tile the kept terms; an n-gram costs its number of words on top of its typos.

import { bestTiling, type Level } from '../search/levels.js';
import { NO_TYPO } from '../search/match-table.js';
import { localScore, rankFromCost } from './rank.js';
import { mapCosts, singleUnit, type RankingContext, type RankingRule } from './rule.js';

export function typoCost(ctx: RankingContext, d: number): number {
  const table = ctx.table!;
  const level = ctx.levelOf(d);
  const simple = level.simpleUnits;
  if (simple !== null) {
    let sum = 0;
    for (let i = 0; i < simple.length; i++) {
      const t = table.typoAt(d, simple[i]!);
      if (t !== NO_TYPO) sum += t;
    }
    return sum;
  }
  const c = bestTiling(level, (u) => {
    const t = table.typoAt(d, u.id);
    return t === NO_TYPO ? Infinity : t;
  });
  return Number.isFinite(c) ? c : 0;
}

function maxTypo(ctx: RankingContext, level: Level): number {
  return ctx.memo(`typo:max:${level.index}`, () => Math.max(0, bestTiling(level, (u) => u.maxTypo, true)));
}

export const typoRule: RankingRule = {
  name: 'typo',
  isSort: false,
  usesMatches: true,
  constant(ctx, docs) {
    const one = singleUnit(ctx, docs);
    return one && ctx.units[one.unit]!.maxTypo === 0 ? 0 : null;
  },
  costs(ctx, docs) {
    const one = singleUnit(ctx, docs);
    if (one && ctx.units[one.unit]!.maxTypo === 0) return ctx.scratch.ints(docs.length);
    if (one) {
      const t = ctx.table!;
      const out = ctx.scratch.ints(docs.length);
      for (let i = 0; i < docs.length; i++) {
        const v = t.typoAt(docs[i]!, one.unit);
        out[i] = v === NO_TYPO ? 0 : v;
      }
      return out;
    }
    return mapCosts(ctx, docs, (d) => typoCost(ctx, d));
  },
  ranks(ctx, d, cost) {
    return [rankFromCost(cost, maxTypo(ctx, ctx.levelOf(d)))];
  },
  detail(ctx, d, cost, order) {
    const max = maxTypo(ctx, ctx.levelOf(d));
    return ['typo', { order, typoCount: cost, maxTypoCount: max, score: localScore(rankFromCost(cost, max)) }];
  },
};
