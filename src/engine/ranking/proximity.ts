// `proximity`: query terms close to each other in the document first. For each pair of
// consecutive kept terms that are adjacent in the query, the cost is the distance between
// them in one attribute minus one, capped at 3 (4 positions or more, or different
// attributes); a pair in reverse order counts one more. Pairs separated in the query (a
// dropped term, a hard separator) cost nothing. An n-gram adds its extra words.

import type { Unit } from '../search/derivations.js';
import { bestChain, simpleFor, tilingProximityMax, type Level } from '../search/levels.js';
import { closestPair, MAX_PAIR_COST } from '../search/pair-proximity.js';
import { localScore, rankFromCost } from './rank.js';
import { PENDING, sharedTiling, singleUnit, type RankingContext, type RankingRule } from './rule.js';


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

type Occurrences = ReturnType<RankingContext['occurrences']>;

/** A pair's cost from the document's occurrences (read from its record). */
function pairFromOccurrences(ctx: RankingContext, occ: Occurrences, prev: Unit, next: Unit): number {
  const left = occ.any[prev.id];
  const right = occ.any[next.id];
  const span = prev.isPhrase ? prev.qposEnd - prev.qpos : 0;
  return left && right ? pairCost(left, span, right, ctx.proximityByAttribute) : MAX_PAIR_COST;
}

export function proximityCost(ctx: RankingContext, d: number, bulk?: Map<number, Uint8Array | null>): number {
  const level = ctx.levelOf(d);
  if (level.kept.length <= 1 && level.units.length <= 1) return level.units[0] ? extraWords(level.units[0].unit) : 0;
  const mask = ctx.table!.unitsOf(d);
  const simple = simpleFor(level, mask);
  if (simple !== null) {
    // One tiling: the sum of its pairs. No closures in this function: a bucket of every
    // document of the index comes through this path once per document.
    let occ: Occurrences | null = null;
    let sum = 0;
    for (let i = 1; i < simple.length; i++) {
      const prev = ctx.units[simple[i - 1]!]!;
      const next = ctx.units[simple[i]!]!;
      if (!adjacent(prev, next)) continue;
      const pre = bulk?.get(pairKey(prev, next));
      if (pre) sum += pre[d]!;
      else sum += pairFromOccurrences(ctx, (occ ??= ctx.occurrences(d)), prev, next);
    }
    return sum;
  }
  return chainedProximityCost(ctx, d, level, mask, bulk);
}

/**
 * Apart from proximityCost, which runs once per document of a bucket: closures over its
 * arguments there made V8 allocate a context on every call, simple tiling or not.
 */
function chainedProximityCost(ctx: RankingContext, d: number, level: Level, mask: number, bulk: Map<number, Uint8Array | null> | undefined): number {
  let found: Occurrences | null = null;
  const pairOf = (prev: Unit, next: Unit): number => {
    const pre = bulk?.get(pairKey(prev, next));
    return pre ? pre[d]! : pairFromOccurrences(ctx, (found ??= ctx.occurrences(d)), prev, next);
  };
  const c = bestChain(
    level,
    (u) => ((mask >>> u.id) & 1) === 1,
    (u) => extraWords(u),
    (prev, next) => (adjacent(prev, next) ? pairOf(prev, next) : 0) + extraWords(next),
  );
  return Number.isFinite(c) ? c : 0;
}

/** proximityCost of each document (a loop of this rule's own: see mapCosts). */
function proximityCosts(ctx: RankingContext, docs: Uint32Array, bulk: Map<number, Uint8Array | null> | undefined): Int32Array {
  const out = ctx.scratch.ints(docs.length);
  const columns = bulk === undefined ? null : tilingPairCosts(ctx, docs, bulk);
  if (columns !== null) {
    // The sum proximityCost takes along a single tiling, its pairs read for every document.
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      let sum = 0;
      for (let k = 0; k < columns.length; k++) sum += columns[k]![d]!;
      out[i] = sum;
    }
    return out;
  }
  for (let i = 0; i < docs.length; i++) out[i] = proximityCost(ctx, docs[i]!, bulk);
  return out;
}

/**
 * The pair costs (by docid) along the one tiling every document of `docs` takes, when each
 * pair was read for all of them; null otherwise (then each document is costed on its own).
 */
function tilingPairCosts(ctx: RankingContext, docs: Uint32Array, bulk: Map<number, Uint8Array | null>): Uint8Array[] | null {
  // A one-unit tiling has no pair: no column, a cost of 0 (that unit covers a single term).
  const simple = sharedTiling(ctx, docs);
  if (simple === null) return null;
  const columns: Uint8Array[] = [];
  for (let i = 1; i < simple.length; i++) {
    const prev = ctx.units[simple[i - 1]!]!;
    const next = ctx.units[simple[i]!]!;
    if (!adjacent(prev, next)) continue;
    const pre = bulk.get(pairKey(prev, next));
    if (!pre) return null;
    columns.push(pre);
  }
  return columns;
}

/** Buckets from which the proximity rule reads its pairs in stages (partialCosts). */
const STAGED_DOCS = 1024;
/** Staged only when the first pair's bound leaves at most 1/SELECTIVE of the bucket at its lowest. */
const SELECTIVE = 8;

/** Pairs of units of the level that follow each other in a tiling and in the query. */
function levelPairs(level: Level): [Unit, Unit][] {
  const out: [Unit, Unit][] = [];
  for (const a of level.units) {
    for (const b of level.units) if (b.from === a.to + 1 && adjacent(a.unit, b.unit)) out.push([a.unit, b.unit]);
  }
  return out;
}

function entries(u: Unit): number {
  let n = 0;
  for (const s of u.sources) n += s.posting.docs.length;
  return n;
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
      for (const [a, b] of levelPairs(level)) bulk.set(pairKey(a, b), ctx.pairCosts(a, b, docs));
    }
    return proximityCosts(ctx, docs, bulk);
  },
  partialCosts(ctx, docs, need) {
    if (docs.length < STAGED_DOCS || need * 4 > docs.length || singleUnit(ctx, docs)) return null;
    const level = ctx.commonLevel(docs);
    if (!level) return null;
    const pairs = levelPairs(level);
    if (pairs.length < 2) return null;
    const bucket = docs.length;
    // The pair read first, for every document, bounds each document's cost from below (a pair
    // not read counts 0): the other pairs are read only for the documents whose bound can
    // still reach the first page. First a pair of two single words, which every tiling
    // without n-grams holds, of the fewest posting entries, so that a prefix's many
    // derivations are read for the few documents left in the running.
    const rank = ([a, b]: [Unit, Unit]) => (a.start === a.end && b.start === b.end ? 0 : 2 ** 40) + entries(a) + entries(b);
    pairs.sort((x, y) => rank(x) - rank(y));
    const [a0, b0] = pairs[0]!;
    const first = ctx.pairCosts(a0, b0, docs, bucket);
    if (!first) return null;
    const zero = new Uint8Array(first.length);
    const bound = new Map<number, Uint8Array | null>(pairs.map(([a, b]) => [pairKey(a, b), zero]));
    bound.set(pairKey(a0, b0), first);
    const lower = proximityCosts(ctx, docs, bound);
    // A bound that leaves many documents at its lowest value leaves the other pairs to read
    // for most of the bucket anyway (and a prefix's derivations cost nearly as much for a
    // part of it as for all of it): every cost is then computed at once, this pair read.
    let min = PENDING;
    let least = 0;
    for (let i = 0; i < docs.length; i++) {
      const v = lower[i]!;
      if (v < min) (min = v), (least = 0);
      if (v === min) least++;
    }
    if (least * SELECTIVE > docs.length) return null;
    const read = (subset: Uint32Array): Map<number, Uint8Array | null> => {
      const exact = new Map<number, Uint8Array | null>();
      for (const [a, b] of pairs) exact.set(pairKey(a, b), ctx.pairCosts(a, b, subset, bucket));
      return exact;
    };
    const costs = ctx.scratch.ints(docs.length).fill(PENDING);
    const bounds = [...new Set(lower)].sort((x, y) => x - y);
    const done = new Uint8Array(docs.length);
    for (const t of bounds) {
      const ids: number[] = [];
      for (let i = 0; i < docs.length; i++) if (done[i] === 0 && lower[i]! <= t) ids.push(i);
      if (ids.length > 0) {
        const exact = read(Uint32Array.from(ids, (i) => docs[i]!));
        for (const i of ids) {
          done[i] = 1;
          costs[i] = proximityCost(ctx, docs[i]!, exact);
        }
      }
      // Every document of cost t or less has its cost now (its bound is at most t).
      let within = 0;
      for (let i = 0; i < docs.length; i++) if (costs[i]! <= t) within++;
      if (within >= need) {
        for (let i = 0; i < docs.length; i++) if (costs[i]! > t) costs[i] = PENDING;
        break;
      }
    }
    return {
      costs,
      rest: (pending) => {
        const exact = read(pending);
        return proximityCosts(ctx, pending, exact);
      },
    };
  },
  ranks(ctx, d, cost, paths) {
    return [rankFromCost(cost, maxProximity(ctx, ctx.levelOf(d), paths))];
  },
  detail(ctx, d, cost, order, paths) {
    return ['proximity', { order, score: localScore(rankFromCost(cost, maxProximity(ctx, ctx.levelOf(d), paths))) }];
  },
};
