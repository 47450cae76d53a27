// `attribute`: the reference's attribute rank then word position, reported together.
// Attribute rank: each term costs the weight of the best searchable attribute holding it
// (its index in `searchableAttributes`; 0 for every field with `["*"]`), times its words.
// Word position: each term costs how far (bucketed) its position in the attribute is
// from its position in the query. Both are minimized over tilings; the first decides,
// the second breaks ties.

import { bestTiling, simpleFor, type Level } from '../search/levels.js';
import { FID_SHIFT, POS_MASK, POS_SHIFT, TYPO_MASK } from '../search/slot.js';
import { globalScore, localScore, rankFromCost, type Rank } from './rank.js';
import { singleUnit, type RankingContext, type RankingRule } from './rule.js';

/** Position costs stay below this, so one integer carries both parts. */
const RADIX = 1024;
const MAX_POSITION_COST_PER_WORD = 10;

/** Attribute rank and word position of a document of `level` as one cost (no pair allocated: called once per document of a bucket). */
function costAt(table: NonNullable<RankingContext['table']>, level: Level, d: number): number {
  const simple = simpleFor(level, table.unitsOf(d));
  return simple !== null ? simpleCost(table, d, simple) : tiledCostOf(table, level, d);
}

/**
 * The cost of a document along one tiling: the sum of its units' attribute and position
 * costs. Each slot is read and unpacked once, in integers (through fidAt and posAt, which
 * answer Infinity for a missing unit, the sums were doubles: a fifth of a search whose
 * 400,000 candidates tie on every rule).
 */
function simpleCost(table: NonNullable<RankingContext['table']>, d: number, simple: readonly number[]): number {
  let f = 0;
  let p = 0;
  for (let i = 0; i < simple.length; i++) {
    const v = table.slotAt(d, simple[i]!);
    if ((v & TYPO_MASK) === 0) continue;
    f += v >>> FID_SHIFT;
    p += (v >>> POS_SHIFT) & POS_MASK;
  }
  return f * RADIX + (p < RADIX ? p : RADIX - 1);
}

/** Apart from costAt: closures over its arguments there made V8 allocate a context on every call. */
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
    const t = ctx.table!;
    // Documents that share a level (a common word's bucket holds most of the index): it is
    // looked up once, not per document.
    const level = ctx.commonLevel(docs);
    if (level !== null) for (let i = 0; i < docs.length; i++) out[i] = costAt(t, level, docs[i]!);
    else for (let i = 0; i < docs.length; i++) out[i] = costAt(t, ctx.levelOf(docs[i]!), docs[i]!);
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
