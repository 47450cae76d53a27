// `attribute`: the reference's attribute rank then word position, reported together.
// Attribute rank: each term costs the weight of the best searchable attribute holding it
// (its index in `searchableAttributes`; 0 for every field with `["*"]`), times its words.
// Word position: each term costs how far (bucketed) its position in the attribute is
// from its position in the query. Both are minimized over tilings; the first decides,
// the second breaks ties.

import { bestTiling, simpleFor, type Level } from '../search/levels.js';
import { globalScore, localScore, rankFromCost, type Rank } from './rank.js';
import { sharedTiling, singleUnit, type RankingContext, type RankingRule } from './rule.js';

/** Position costs stay below this, so one integer carries both parts. */
const RADIX = 1024;
const MAX_POSITION_COST_PER_WORD = 10;

/** Attribute rank and word position of a document as one cost (no pair allocated: called once per document of a bucket). */
function costOf(ctx: RankingContext, d: number): number {
  const table = ctx.table!;
  const level = ctx.levelOf(d);
  const simple = simpleFor(level, table.unitsOf(d));
  return simple !== null ? simpleCost(table, d, simple) : tiledCostOf(table, level, d);
}

/** The cost of a document along one tiling: the sum of its units' attribute and position costs. */
function simpleCost(table: NonNullable<RankingContext['table']>, d: number, simple: readonly number[]): number {
  let f = 0;
  let p = 0;
  for (let i = 0; i < simple.length; i++) {
    const fu = table.fidAt(d, simple[i]!);
    const pu = table.posAt(d, simple[i]!);
    if (fu !== Infinity) f += fu;
    if (pu !== Infinity) p += pu;
  }
  return f * RADIX + Math.min(p, RADIX - 1);
}

/** Apart from costOf: closures over its arguments there made V8 allocate a context on every call. */
function tiledCostOf(table: NonNullable<RankingContext['table']>, level: Level, d: number): number {
  const bf = bestTiling(level, (u) => table.fidAt(d, u.id));
  const bp = bestTiling(level, (u) => table.posAt(d, u.id));
  const f = Number.isFinite(bf) ? bf : 0;
  const p = Number.isFinite(bp) ? bp : 0;
  return f * RADIX + Math.min(p, RADIX - 1);
}

function maxima(ctx: RankingContext, level: Level): [number, number] {
  return ctx.memo(`attribute:max:${level.index}`, () => {
    const words = (u: { start: number; end: number }) => u.end - u.start + 1;
    const f = bestTiling(level, (u) => ctx.maxWeight * words(u), true);
    const p = bestTiling(level, (u) => MAX_POSITION_COST_PER_WORD * words(u), true);
    return [Math.max(0, f), Math.max(0, p)] as [number, number];
  });
}

function ranksOf(ctx: RankingContext, d: number, cost: number): [Rank, Rank] {
  const [maxF, maxP] = maxima(ctx, ctx.levelOf(d));
  return [rankFromCost(Math.floor(cost / RADIX), maxF), rankFromCost(cost % RADIX, maxP)];
}

export const attributeRule: RankingRule = {
  name: 'attribute',
  isSort: false,
  usesMatches: true,
  costs(ctx, docs) {
    const one = singleUnit(ctx, docs);
    if (one) {
      const t = ctx.table!;
      const u = one.unit;
      const out = ctx.scratch.ints(docs.length);
      for (let i = 0; i < docs.length; i++) out[i] = t.attributeCostAt(docs[i]!, u, RADIX);
      return out;
    }
    const out = ctx.scratch.ints(docs.length);
    // Documents that all take their level's one tiling: the level is looked up once.
    const tiling = sharedTiling(ctx, docs);
    if (tiling !== null) {
      const t = ctx.table!;
      for (let i = 0; i < docs.length; i++) out[i] = simpleCost(t, docs[i]!, tiling);
      return out;
    }
    for (let i = 0; i < docs.length; i++) out[i] = costOf(ctx, docs[i]!);
    return out;
  },
  ranks(ctx, d, cost) {
    return ranksOf(ctx, d, cost);
  },
  detail(ctx, d, cost, order) {
    const [fid, pos] = ranksOf(ctx, d, cost);
    return [
      'attribute',
      {
        order,
        attributeRankingOrderScore: localScore(fid),
        queryWordDistanceScore: localScore(pos),
        score: globalScore([fid, pos]),
      },
    ];
  },
};
