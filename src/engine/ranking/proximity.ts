// `proximity`: query terms close to each other in the document first. For each pair of
// consecutive kept terms that are adjacent in the query, the cost is the distance between
// them in one attribute minus one, capped at 3 (4 positions or more, or different
// attributes); a pair in reverse order counts one more. Pairs separated in the query (a
// dropped term, a hard separator) cost nothing. An n-gram adds its extra words.

import type { Unit } from '../search/derivations.js';
import { bestChain, tilingProximityMax, type Level } from '../search/levels.js';
import { closestPair, MAX_PAIR_COST } from '../search/pair-proximity.js';
import { localScore, rankFromCost } from './rank.js';
import { mapCosts, singleUnit, type RankingContext, type RankingRule } from './rule.js';


function extraWords(u: Unit): number {
  return u.end - u.start;
}

/** A pair of units as one number (unit ids stay below 32, one bit each in a mask). */
function pairKey(prev: Unit, next: Unit): number {
  return prev.id * 32 + next.id;
}

function adjacent(prev: Unit, next: Unit): boolean {
  return prev.qposEnd + 1 === next.qpos;
}

/** Smallest pair cost between two occurrence lists (fps sorted ascending). */
export function pairCost(left: readonly number[], leftSpan: number, right: readonly number[], byAttribute: boolean): number {
  return closestPair(left, 0, left.length, leftSpan, right, 0, right.length, byAttribute);
}

export function proximityCost(ctx: RankingContext, d: number, bulk?: Map<number, Uint8Array | null>): number {
  const level = ctx.levelOf(d);
  if (level.kept.length <= 1 && level.units.length <= 1) return level.units[0] ? extraWords(level.units[0].unit) : 0;
  const table = ctx.table!;
  const mask = table.unitsOf(d);
  let found: ReturnType<RankingContext['occurrences']> | null = null;
  const occ = () => (found ??= ctx.occurrences(d));
  const pairOf = (prev: Unit, next: Unit): number => {
    const pre = bulk?.get(pairKey(prev, next));
    if (pre) return pre[d]!;
    const left = occ().any[prev.id];
    const right = occ().any[next.id];
    const span = prev.isPhrase ? prev.qposEnd - prev.qpos : 0;
    return left && right ? pairCost(left, span, right, ctx.proximityByAttribute) : MAX_PAIR_COST;
  };
  const simple = level.simpleUnits;
  if (simple !== null) {
    // One tiling: the sum of its pairs.
    let sum = 0;
    for (let i = 1; i < simple.length; i++) {
      const prev = ctx.units[simple[i - 1]!]!;
      const next = ctx.units[simple[i]!]!;
      if (adjacent(prev, next)) sum += pairOf(prev, next);
    }
    return sum;
  }
  const c = bestChain(
    level,
    (u) => ((mask >>> u.id) & 1) === 1,
    (u) => extraWords(u),
    (prev, next) => (adjacent(prev, next) ? pairOf(prev, next) : 0) + extraWords(next),
  );
  return Number.isFinite(c) ? c : 0;
}

/** The highest cost over the query paths the documents of the bucket took. */
function maxProximity(ctx: RankingContext, level: Level, paths: Uint32Array | null): number {
  return ctx.tilingMax('proximity', level, paths, (t) => tilingProximityMax(t, MAX_PAIR_COST));
}

export const proximityRule: RankingRule = {
  name: 'proximity',
  isSort: false,
  // Positions come from the posting lists (many documents) or from each document's record
  // (OccurrenceFinder fills that document's aggregates itself): no aggregates are read.
  usesMatches: false,
  constant(ctx, docs) {
    const one = singleUnit(ctx, docs);
    return one ? extraWords(ctx.units[one.unit]!) : null;
  },
  costs(ctx, docs) {
    const one = singleUnit(ctx, docs);
    if (one) return ctx.scratch.ints(docs.length).fill(extraWords(ctx.units[one.unit]!));
    // Many documents sharing a level: pair costs come from the posting lists (pairCosts
    // says from how many, null below).
    let bulk: Map<number, Uint8Array | null> | undefined;
    const level = ctx.commonLevel(docs);
    if (level) {
      bulk = new Map();
      for (const a of level.units) {
        for (const b of level.units) {
          if (b.from === a.to + 1 && adjacent(a.unit, b.unit)) bulk.set(pairKey(a.unit, b.unit), ctx.pairCosts(a.unit, b.unit, docs));
        }
      }
    }
    return mapCosts(ctx, docs, (d) => proximityCost(ctx, d, bulk));
  },
  ranks(ctx, d, cost, paths) {
    return [rankFromCost(cost, maxProximity(ctx, ctx.levelOf(d), paths))];
  },
  detail(ctx, d, cost, order, paths) {
    return ['proximity', { order, score: localScore(rankFromCost(cost, maxProximity(ctx, ctx.levelOf(d), paths))) }];
  },
};
