// `words`: documents matching more query terms first. The level a document reached
// (how many terms the matching strategy had to drop) is its cost.

import { localScore, type Rank } from './rank.js';
import { mapCosts, type RankingContext, type RankingRule } from './rule.js';

export const wordsRule: RankingRule = {
  name: 'words',
  isSort: false,
  usesMatches: false,
  constant(ctx) {
    return ctx.levels.length <= 1 ? 0 : null;
  },
  costs(ctx, docs) {
    if (ctx.levels.length <= 1) return ctx.scratch.ints(docs.length);
    const idx = ctx.levelIndexes();
    if (idx) {
      const out = ctx.scratch.ints(docs.length);
      for (let i = 0; i < docs.length; i++) out[i] = idx[docs[i]!]!;
      return out;
    }
    return mapCosts(ctx, docs, (d) => ctx.levelOf(d).removed);
  },
  ranks(ctx, _d, cost): Rank[] {
    return [wordsRank(ctx, cost)];
  },
  detail(ctx, _d, cost, order) {
    const r = wordsRank(ctx, cost);
    return ['words', { order, matchingWords: r.rank, maxMatchingWords: r.max, score: localScore(r) }];
  },
};

function wordsRank(ctx: RankingContext, removed: number): Rank {
  const max = ctx.maxMatchingWords;
  return { rank: Math.max(1, max - removed), max };
}
