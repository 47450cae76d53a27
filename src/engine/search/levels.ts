// Levels of the `words` rule and tilings of the query.
//
// Level 0 keeps every term; each further level removes one more group of terms in the
// order the matching strategy gives (`last`: one term at a time from the end;
// `frequency`: the terms matching the most documents first, terms matching none before
// all others, equally frequent terms together; `all`: never). Phrases are never removed
// and, without phrases, the last group of the removal order always stays. A document matches a level when its matched units can
// tile the kept terms: a unit fits when all its terms are kept, and units follow each
// other without overlap. Every graph-like rule (typo, proximity, attribute, exactness)
// then minimizes its cost over the tilings available to the document.

import type { Unit } from './derivations.js';
import type { QueryTerm } from './query-parser.js';

export type MatchingStrategy = 'last' | 'all' | 'frequency';

export interface Level {
  index: number;
  /** Number of terms removed so far (the words rule's cost). */
  removed: number;
  /** Kept term indexes, ascending. */
  kept: number[];
  /** Units that fit the kept terms, with their start and end slot in `kept`. */
  units: { unit: Unit; from: number; to: number }[];
  /** For each slot of `kept`, the units starting there. */
  byStart: { unit: Unit; from: number; to: number }[][];
  /** Kept terms form 0..n-1 without holes (exactness can look for whole attributes). */
  contiguousFromStart: boolean;
  /**
   * When the only tiling is one single-term unit per kept term (no n-gram or phrase
   * spans two kept terms), their ids: rule costs are then plain sums.
   */
  simpleUnits: number[] | null;
  /** The single-term unit of each kept term, in order (what `simpleFor` falls back to). */
  singles: number[] | null;
  /** Units spanning two kept terms or more, one bit per unit id. */
  spanMask: number;
}

/**
 * The unit ids whose plain sum is a document's cost, given the units it matched (`mask`):
 * the level's only tiling, or the single-term units when the document matched none of the
 * level's n-grams (its only tiling then). Null when the document has several tilings.
 */
export function simpleFor(level: Level, mask: number): number[] | null {
  if (level.simpleUnits !== null) return level.simpleUnits;
  return (mask & level.spanMask) === 0 ? level.singles : null;
}

/** Groups of term indexes, in the order they are removed. */
export function removalOrder(terms: readonly QueryTerm[], strategy: MatchingStrategy, frequency: (term: number) => number): number[][] {
  if (strategy === 'all') return [];
  const removable = terms.map((t, i) => ({ t, i })).filter((x) => x.t.kind === 'word').map((x) => x.i);
  const hasPhrase = removable.length < terms.length;
  let order: number[][];
  if (strategy === 'last') order = [...removable].reverse().map((i) => [i]);
  else {
    // A term no document holds counts as the most frequent: it goes first.
    const freq = new Map(removable.map((i) => [i, frequency(i) || Infinity]));
    const byFreq = new Map<number, number[]>();
    for (const i of removable) {
      const f = freq.get(i)!;
      byFreq.set(f, [...(byFreq.get(f) ?? []), i]);
    }
    order = [...byFreq.entries()].sort((a, b) => b[0] - a[0]).map(([, group]) => group);
  }
  // Without a phrase, the last group of the order is what is left at the end.
  return hasPhrase ? order : order.slice(0, Math.max(0, order.length - 1));
}

export function buildLevels(terms: readonly QueryTerm[], units: readonly Unit[], order: readonly (readonly number[])[]): Level[] {
  const levels: Level[] = [];
  const removed = new Set<number>();
  for (let l = 0; l <= order.length; l++) {
    if (l > 0) for (const t of order[l - 1]!) removed.add(t);
    const kept = terms.map((_, i) => i).filter((i) => !removed.has(i));
    if (kept.length === 0) break;
    const slotOf = new Map(kept.map((t, s) => [t, s]));
    const fit: Level['units'] = [];
    for (const u of units) {
      const from = slotOf.get(u.start);
      const to = slotOf.get(u.end);
      if (from === undefined || to === undefined || to - from !== u.end - u.start) continue;
      fit.push({ unit: u, from, to });
    }
    const byStart: Level['byStart'] = kept.map(() => []);
    for (const f of fit) byStart[f.from]!.push(f);
    let spanMask = 0;
    for (const f of fit) if (f.from !== f.to) spanMask |= 1 << f.unit.id;
    levels.push({
      index: l,
      removed: removed.size,
      kept,
      units: fit,
      byStart,
      contiguousFromStart: kept.every((t, s) => t === s),
      simpleUnits: fit.length === kept.length && fit.every((f) => f.from === f.to) ? fit.map((f) => f.unit.id) : null,
      singles: byStart.every((starting) => starting.some((f) => f.from === f.to))
        ? byStart.map((starting) => starting.find((f) => f.from === f.to)!.unit.id)
        : null,
      spanMask,
    });
  }
  return levels;
}

/** Whether the units in `mask` can tile the level. */
export function tiles(level: Level, mask: number): boolean {
  const n = level.kept.length;
  const reach = new Uint8Array(n + 1);
  reach[0] = 1;
  for (let s = 0; s < n; s++) {
    if (!reach[s]) continue;
    for (const f of level.byStart[s]!) if ((mask >>> f.unit.id) & 1) reach[f.to + 1] = 1;
  }
  return reach[n] === 1;
}

/**
 * Minimum (or maximum) over tilings of the sum of `cost(unit)`; a unit whose cost is
 * not finite cannot be used. Returns Infinity (or -Infinity) when nothing tiles.
 */
export function bestTiling(level: Level, cost: (u: Unit) => number, maximize = false): number {
  const n = level.kept.length;
  const worst = maximize ? -Infinity : Infinity;
  const best = new Array<number>(n + 1).fill(worst);
  best[0] = 0;
  for (let s = 0; s < n; s++) {
    const here = best[s]!;
    if (here === worst) continue;
    for (const f of level.byStart[s]!) {
      const c = cost(f.unit);
      if (!Number.isFinite(c)) continue;
      const v = here + c;
      if (maximize ? v > best[f.to + 1]! : v < best[f.to + 1]!) best[f.to + 1] = v;
    }
  }
  return best[n]!;
}

/**
 * Same with a cost for each pair of consecutive units (proximity): `first(u)` for the
 * unit starting the tiling, `pair(prev, next)` for every following one.
 */
export function bestChain(
  level: Level,
  usable: (u: Unit) => boolean,
  first: (u: Unit) => number,
  pair: (prev: Unit, next: Unit) => number,
  maximize = false,
): number {
  const worst = maximize ? -Infinity : Infinity;
  const endCost = new Map<Unit, number>();
  let result = worst;
  const n = level.kept.length;
  for (let s = 0; s < n; s++) {
    for (const f of level.byStart[s]!) {
      if (!usable(f.unit)) continue;
      let c = worst;
      if (s === 0) c = first(f.unit);
      else {
        for (const g of level.units) {
          if (g.to !== s - 1) continue;
          const prev = endCost.get(g.unit);
          if (prev === undefined) continue;
          const v = prev + pair(g.unit, f.unit);
          if (maximize ? v > c : v < c) c = v;
        }
      }
      if (c === worst) continue;
      endCost.set(f.unit, c);
      if (f.to === n - 1 && (maximize ? c > result : c < result)) result = c;
    }
  }
  return result;
}

/**
 * The first tiling of the level, in the reference's path order (at each term, the single
 * term before the n-grams starting there), made of units in `mask`; null when none tiles.
 * A document belongs to the first path it matches: the maxima of the rules that follow
 * are taken over the paths the documents of their bucket took.
 */
export function firstTiling(level: Level, mask: number): Unit[] | null {
  const n = level.kept.length;
  const path: Unit[] = [];
  // Slots from which the end cannot be reached with these units: never retried.
  const dead = new Uint8Array(n + 1);
  const walk = (s: number): boolean => {
    if (s === n) return true;
    if (dead[s]) return false;
    for (const f of level.byStart[s]!) {
      if (((mask >>> f.unit.id) & 1) === 0) continue;
      path.push(f.unit);
      if (walk(f.to + 1)) return true;
      path.pop();
    }
    dead[s] = 1;
    return false;
  };
  return walk(0) ? path : null;
}

/** The proximity rule's highest cost along a tiling: 3 per pair adjacent in the query, plus the n-grams' extra words. */
export function tilingProximityMax(tiling: readonly Unit[], maxPair: number): number {
  let c = 0;
  for (let i = 0; i < tiling.length; i++) {
    const u = tiling[i]!;
    c += u.end - u.start;
    if (i > 0 && tiling[i - 1]!.qposEnd + 1 === u.qpos) c += maxPair;
  }
  return c;
}
