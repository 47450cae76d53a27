// `exactness`: first documents with an attribute that is exactly the query, then those
// with an attribute starting with it, then the rest; within each, documents holding more
// query words exactly (no typo, not as a mere prefix) first.

import { fieldWordCountIn, fieldWordTable } from '../fulltext/index-state.js';
import { bestTiling, simpleFor, type Level } from '../search/levels.js';
import type { Unit } from '../search/derivations.js';
import { EXACT_AT_START, EXACT_PRESENT, EXACT_WHOLE_FIELD, NO_TYPO } from '../search/match-table.js';
import { globalScore, localScore, rankFromCost, type Rank } from './rank.js';
import { singleUnit, type RankingContext, type RankingRule } from './rule.js';

const RADIX = 1024;
const MATCH_TYPES = ['exactMatch', 'matchesStart', 'noExactMatch'] as const;

/**
 * The single-term unit of each kept term of a level, and the query words they cover; null
 * when a term has none, or one without exact words (no attribute can then equal the query).
 * Per level, not per document: a bucket of every document asks for each.
 */
const exactTermsOf = new WeakMap<Level, { terms: Unit[]; positions: number } | null>();

function exactTerms(level: Level): { terms: Unit[]; positions: number } | null {
  let t = exactTermsOf.get(level);
  if (t === undefined) {
    const terms = level.kept.map((k) => level.units.find((f) => f.unit.start === k && f.unit.end === k)?.unit);
    t = terms.every((u) => u?.exactWords) ? { terms: terms as Unit[], positions: terms.reduce((n, u) => n + (u!.qposEnd - u!.qpos + 1), 0) } : null;
    exactTermsOf.set(level, t);
  }
  return t;
}

/** 0: an attribute equals the query; 1: one starts with it; 2: neither. */
function exactAttribute(ctx: RankingContext, d: number, level: Level): number {
  if (!level.contiguousFromStart) return 2;
  if (level.units.length === 1) {
    const flags = ctx.table!.exactAt(d, level.units[0]!.unit.id);
    return flags & EXACT_WHOLE_FIELD ? 0 : flags & EXACT_AT_START ? 1 : 2;
  }
  // One single-term unit per kept term; they must all sit at their query position in one field.
  const exact = exactTerms(level);
  return exact === null ? 2 : termsAttribute(ctx, d, exact);
}

/** exactAttribute of a level of several units, contiguous from the query's start, given its exact terms. */
function termsAttribute(ctx: RankingContext, d: number, exact: { terms: Unit[]; positions: number }): number {
  const table = ctx.table!;
  const { terms, positions } = exact;
  // Cheap rejection first: every term's exact word must sit at its query position somewhere.
  for (let i = 0; i < terms.length; i++) if ((table.exactAt(d, terms[i]!.id) & EXACT_AT_START) === 0) return 2;
  const occ = ctx.occurrences(d);
  const first = terms[0]!;
  let best = 2;
  for (const fp of occ.exact[first.id] ?? []) {
    if ((fp & 0xffff) !== first.qpos) continue;
    const f = fp >>> 16;
    if (!allAtQueryPositions(occ, terms, f)) continue;
    if (fieldWordCountIn(ctx.state, fieldWordTable(ctx.state, f), f, d) === positions) return 0;
    best = 1;
  }
  return best;
}

/**
 * Whether every term's exact word sits at its query position in field `f`. A loop, not a
 * closure: exactAttribute runs once per document, and a closure over its locals made V8
 * allocate a context on every call.
 */
function allAtQueryPositions(occ: ReturnType<RankingContext['occurrences']>, terms: readonly Unit[], f: number): boolean {
  for (const u of terms) if (!(occ.exact[u.id] ?? []).includes(((f << 16) | u.qpos) >>> 0)) return false;
  return true;
}

function exactWordsCost(ctx: RankingContext, d: number, level: Level): number {
  const table = ctx.table!;
  const simple = simpleFor(level, table.unitsOf(d));
  if (simple !== null) {
    let missing = 0;
    for (let i = 0; i < simple.length; i++) if ((table.exactAt(d, simple[i]!) & EXACT_PRESENT) === 0) missing++;
    return missing;
  }
  return tiledExactWordsCost(table, level, d);
}

/** Apart from exactWordsCost: closures over its arguments there made V8 allocate a context on every call. */
function tiledExactWordsCost(table: NonNullable<RankingContext['table']>, level: Level, d: number): number {
  const words = (u: { start: number; end: number }) => u.end - u.start + 1;
  const c = bestTiling(level, (u) => {
    if (table.typoAt(d, u.id) === NO_TYPO) return Infinity;
    return table.exactAt(d, u.id) & EXACT_PRESENT ? 0 : words(u);
  });
  return Number.isFinite(c) ? c : bestTiling(level, words, true);
}

/**
 * Costs of a bucket whose documents share one level: what depends on the level alone is
 * looked up once, not per document (a common word's bucket holds most of the index).
 */
function commonLevelCosts(ctx: RankingContext, docs: Uint32Array, level: Level, out: Int32Array): Int32Array {
  const table = ctx.table!;
  const several = level.contiguousFromStart && level.units.length > 1;
  const exact = several ? exactTerms(level) : null;
  // The exact terms are usually the single-term tiling's units themselves (the only array
  // simpleFor answers for this level): one read of each slot then gives both the missing exact
  // words and the cheap rejection of termsAttribute.
  const fused = exact !== null && sameIds(exact.terms, level.simpleUnits ?? level.singles ?? []);
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]!;
    let words: number;
    let rejected = false;
    const simple = simpleFor(level, table.unitsOf(d));
    if (simple !== null) {
      words = 0;
      let atStart = EXACT_AT_START;
      for (let k = 0; k < simple.length; k++) {
        const flags = table.exactAt(d, simple[k]!);
        if ((flags & EXACT_PRESENT) === 0) words++;
        atStart &= flags;
      }
      rejected = fused && atStart === 0;
    } else words = tiledExactWordsCost(table, level, d);
    const attr = rejected ? 2 : exact !== null ? termsAttribute(ctx, d, exact) : several ? 2 : exactAttribute(ctx, d, level);
    out[i] = attr * RADIX + words;
  }
  return out;
}

function sameIds(units: readonly Unit[], ids: readonly number[]): boolean {
  return units.length === ids.length && units.every((u, i) => u.id === ids[i]);
}

function maxExactWords(ctx: RankingContext, level: Level): number {
  return ctx.memo(`exactness:max:${level.index}`, () => Math.max(0, bestTiling(level, (u) => u.end - u.start + 1, true)));
}

function ranksOf(ctx: RankingContext, d: number, cost: number): [Rank, Rank] {
  const attr = Math.floor(cost / RADIX);
  return [{ rank: 3 - attr, max: 3 }, rankFromCost(cost % RADIX, maxExactWords(ctx, ctx.levelOf(d)))];
}

export const exactnessRule: RankingRule = {
  name: 'exactness',
  isSort: false,
  usesMatches: true,
  costs(ctx, docs) {
    const one = singleUnit(ctx, docs);
    if (one) {
      const t = ctx.table!;
      const u = one.unit;
      const level = one.level;
      const words = level.kept.length;
      const out = ctx.scratch.ints(docs.length);
      for (let i = 0; i < docs.length; i++) {
        const flags = t.exactAt(docs[i]!, u);
        const attr = !level.contiguousFromStart ? 2 : flags & EXACT_WHOLE_FIELD ? 0 : flags & EXACT_AT_START ? 1 : 2;
        out[i] = attr * RADIX + (flags & EXACT_PRESENT ? 0 : words);
      }
      return out;
    }
    const out = ctx.scratch.ints(docs.length);
    const level = ctx.commonLevel(docs);
    if (level !== null) return commonLevelCosts(ctx, docs, level, out);
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      const level = ctx.levelOf(d);
      out[i] = exactAttribute(ctx, d, level) * RADIX + exactWordsCost(ctx, d, level);
    }
    return out;
  },
  ranks(ctx, d, cost) {
    return ranksOf(ctx, d, cost);
  },
  detail(ctx, d, cost, order) {
    const [attr, words] = ranksOf(ctx, d, cost);
    const matchType = MATCH_TYPES[3 - attr.rank]!;
    if (matchType !== 'noExactMatch') return ['exactness', { order, matchType, score: localScore(attr) }];
    return [
      'exactness',
      { order, matchType, matchingWords: words.rank - 1, maxMatchingWords: words.max - 1, score: globalScore([attr, words]) },
    ];
  },
};
