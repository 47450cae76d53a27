// One keyword (or placeholder) search over a published index state: parse the query,
// derive the units, read their postings, sort the candidates bucket by bucket, and score
// the hits. Synchronous from start to end, so the state cannot change under it.

import { ApiError } from '../../errors/api-error.js';
import { distinctKeys } from '../fulltext/field-values.js';
import { isPathOrChild, matchesPattern } from '../fulltext/field-table.js';
import { byteOrder } from '../filter/rules.js';
import { distinctColumn, recordOf, type IndexState } from '../fulltext/index-state.js';
import type { StepTrace } from '../../util/step-trace.js';
import { globalScore, SKIPPED_RANK, type Rank } from '../ranking/rank.js';
import type { RankingContext, RankingRule } from '../ranking/rule.js';
import { rankingRules, type SortCriterion, type SortRuleMaker } from '../ranking/rules.js';
import type { IndexSettings } from '../settings/settings.js';
import { bucketSort, type HitTrace } from './bucket-sort.js';
import { buildUnits, queryTypoBudget, type Unit } from './derivations.js';
import { buildLevels, firstTiling, removalOrder, tiles, type Level, type MatchingStrategy } from './levels.js';
import { MatchTable } from './match-table.js';
import { OccurrenceFinder, type DocOccurrences } from './occurrences.js';
import { bulkPairCosts, MAX_PAIR_COST } from './pair-proximity.js';
import { phrasePosting, wordPosting } from './phrase.js';
import { parseQuery, type QueryTerm } from './query-parser.js';
import type { SearchScratch } from './scratch.js';

export const DEFAULT_SEARCH_CUTOFF_MS = 1500;
const WORDS_LIMIT = 10;

export interface SearchRequest {
  q: string | null;
  offset: number;
  limit: number;
  /** Rank at least this many documents (exact totals with a threshold). */
  evaluate: number;
  matchingStrategy: MatchingStrategy;
  attributesToSearchOn: string[] | null;
  sort: SortCriterion[];
  /** Makes the field sort rules (the facet index's columns); by default they read the records. */
  sortRule?: SortRuleMaker;
  distinct: string | null;
  rankingScoreThreshold: number | null;
  locales: string[] | null;
  /** Documents the filter allows (by docid), or null for all. */
  allowed: Uint8Array | null;
  /** Count duplicates out of the total exactly (finite pagination with distinct). */
  exhaustiveCount: boolean;
  /** Compute `_rankingScore` and its details for the hits. */
  scores: boolean;
  /** Times the steps of the search (`showPerformanceDetails`). */
  trace?: StepTrace | null;
}

/** One rule's contribution, in rule order: a rank, the value a sort rule used, or a semantic similarity. */
export type ScoreValue = { rank: Rank } | { sort: { ascending: boolean; value: unknown } } | { similarity: number };

export interface RankedHit {
  docid: number;
  score: number;
  details: Record<string, Record<string, unknown>>;
  values: ScoreValue[];
}

export interface SearchOutcome {
  hits: RankedHit[];
  /** Candidates after the words rule, the threshold and (exhaustively) distinct. */
  candidates: number;
  /** Every candidate, ascending, for facet distributions. */
  universe: Uint32Array;
  terms: QueryTerm[];
  units: Unit[];
  degraded: boolean;
}

/**
 * Field weights for this query: -1 for a field outside `attributesToSearchOn` or not
 * searchable. A name there picks a searchable field (or the fields below it); a name with
 * `*` that picks none is a pattern over the searchable fields' paths (`*.title`,
 * `details.*`). Weights stay those of `searchableAttributes`, whatever order the list has.
 * A name picking nothing is an error unless every attribute is searchable, as in the
 * reference, or unless `searchableAttributes` names it (no document has it yet).
 */
export function searchOnWeights(state: IndexState, settings: IndexSettings, only: string[] | null): Int32Array {
  const w = state.rules.weightTable();
  if (!only) return w;
  const names = state.names.names;
  const keep = new Uint8Array(w.length);
  const wildcard = settings.searchableAttributes.includes('*');
  let universal = false;
  for (const a of only) {
    if (a === '*') {
      universal = true;
      continue;
    }
    let found = false;
    for (let f = 0; f < w.length; f++) {
      if (w[f]! >= 0 && isPathOrChild(a, names[f]!)) keep[f] = 1, (found = true);
    }
    if (!found && a.includes('*')) {
      for (let f = 0; f < w.length; f++) {
        if (w[f]! >= 0 && matchesPattern(a, names[f]!)) keep[f] = 1, (found = true);
      }
    }
    if (found || wildcard || settings.searchableAttributes.includes(a)) continue;
    throw new ApiError('invalid_search_attributes_to_search_on', notSearchableMessage(state, settings, a));
  }
  if (universal) return w;
  for (let f = 0; f < w.length; f++) if (keep[f] === 0) w[f] = -1;
  return w;
}

/** The reference's message: the searchable fields in byte order, hidden ones left out. */
function notSearchableMessage(state: IndexState, settings: IndexSettings, attribute: string): string {
  const displayed = settings.displayedAttributes;
  const shown = (name: string) => displayed.includes('*') || displayed.some((d) => isPathOrChild(d, name));
  const all = [...new Set(state.rules.searchableNames())].sort(byteOrder);
  const visible = all.filter(shown);
  const hidden = visible.length < all.length ? ', <..hidden-attributes>' : '';
  return `Attribute \`${attribute}\` is not searchable. Available searchable attributes are: \`${visible.join(', ')}${hidden}\`.`;
}

export function checkAttributesToSearchOn(state: IndexState, settings: IndexSettings, only: string[] | null): void {
  searchOnWeights(state, settings, only);
}

/**
 * The documents a search may match, as a mask by docid (1 = may), or null for every one:
 * the filter's own mask when no word is negated, else one that also leaves out the documents
 * holding a negated word or phrase.
 */
function admittedDocs(state: IndexState, parsed: ReturnType<typeof parseQuery>, allowed: Uint8Array | null, scratch: SearchScratch): Uint8Array | null {
  if (parsed.negativeWords.length === 0 && parsed.negativePhrases.length === 0) return allowed;
  const n = state.capacity;
  const out = scratch.admissions(n + 1);
  if (allowed) {
    const kept = Math.min(allowed.length, out.length);
    out.set(allowed.subarray(0, kept));
    out.fill(0, kept); // the buffer holds the last search's mask
  } else out.fill(1);
  const drop = (docs: Uint32Array) => {
    for (let i = 0; i < docs.length; i++) out[docs[i]!] = 0;
  };
  for (const w of parsed.negativeWords) drop(wordPosting(state, w).docs);
  for (const p of parsed.negativePhrases) drop(phrasePosting(state, p).docs);
  return out;
}

function filterUniverse(docids: Uint32Array, admitted: Uint8Array | null): Uint32Array {
  if (!admitted) return docids;
  // A plain loop: TypedArray#filter calls back per element, ~25 ms over a million docids.
  let n = 0;
  for (let i = 0; i < docids.length; i++) if (admitted[docids[i]!] === 1) n++;
  const out = new Uint32Array(n);
  n = 0;
  for (let i = 0; i < docids.length; i++) {
    const d = docids[i]!;
    if (admitted[d] === 1) out[n++] = d;
  }
  return out;
}

const NO_LEVEL = 255;
/** From this many documents on, pair proximities come from the posting lists. */
const BULK_PAIR_DOCS = 1024;
/** From this many documents sharing a level, pair costs come from the posting lists. */
const LEAST_TYPO_PAIR_DOCS = 64;
/** From this many documents on, the typo rule fills typo counts alone (MatchTable.fillTypos). */
const TYPO_FILL_DOCS = 256;
class Context implements RankingContext {
  private readonly levelCache = new Map<number, Level | null>();
  private readonly memos = new Map<string, unknown>();
  finder: OccurrenceFinder | null = null;

  constructor(
    readonly scratch: SearchScratch,
    readonly state: IndexState,
    readonly units: readonly Unit[],
    readonly levels: readonly Level[],
    readonly table: MatchTable | null,
    readonly maxWeight: number,
    readonly proximityByAttribute: boolean,
    readonly maxMatchingWords: number,
    readonly queryTypoMax: number | null = null,
  ) {
    this.single = units.length === 1 && levels.length === 1 ? units[0]!.id : -1;
  }

  private readonly pathMaxima = new WeakMap<Uint32Array, Map<string, number>>();

  tilingMax(key: string, level: Level, paths: Uint32Array | null, perTiling: (tiling: readonly Unit[]) => number): number {
    if (paths === null || level.simpleUnits !== null || !this.table) {
      return this.memo(`${key}:all:${level.index}`, () => Math.max(0, allTilingsMax(level, perTiling)));
    }
    let found = this.pathMaxima.get(paths);
    if (!found) this.pathMaxima.set(paths, (found = new Map()));
    const k = `${key}:${level.index}`;
    const known = found.get(k);
    if (known !== undefined) return known;
    const byMask = this.memo(`tilings:${k}`, () => new Map<number, number>());
    const t = this.table;
    let max = 0;
    let last = -1;
    for (let i = 0; i < paths.length; i++) {
      const mask = t.unitsOf(paths[i]!);
      if (mask === last) continue;
      last = mask;
      let v = byMask.get(mask);
      if (v === undefined) {
        const tiling = firstTiling(level, mask);
        byMask.set(mask, (v = tiling ? perTiling(tiling) : 0));
      }
      if (v > max) max = v;
    }
    found.set(k, max);
    return max;
  }

  readonly single: number;

  // Masks repeat a lot: a small direct-mapped cache in front of the map avoids hashing.
  private fast: { keys: Uint32Array; vals: Int16Array } | null = null;

  levelFor(mask: number): Level | null {
    const fast = (this.fast ??= this.scratch.levelCache());
    const h = Math.imul(mask, 0x9e3779b1) >>> 20;
    if (fast.vals[h] !== -2 && fast.keys[h] === mask) {
      const v = fast.vals[h]!;
      return v < 0 ? null : this.levels[v]!;
    }
    let l = this.levelCache.get(mask);
    if (l === undefined) this.levelCache.set(mask, (l = this.firstTiled(mask)));
    fast.keys[h] = mask;
    fast.vals[h] = l ? l.index : -1;
    return l;
  }

  /**
   * The first level whose units the mask tiles. Apart from levelFor, which runs once per
   * candidate: a closure over its argument there made V8 allocate a context on every call,
   * 0.75 MB per three-word search of the longdocs dictionary (a scavenge every dozen).
   */
  private firstTiled(mask: number): Level | null {
    return this.levels.find((lv) => tiles(lv, mask)) ?? null;
  }

  /** Level index per docid for the candidates, filled by `candidates()`. */
  private levelIdx: Uint8Array | null = null;
  /** The last large bucket commonLevel read, and its answer: each rule asks again of the same bucket. */
  private levelOfBucket: { docs: Uint32Array; level: Level | null } | null = null;

  levelOf(d: number): Level {
    const idx = this.levelIdx;
    if (idx !== null && idx[d] !== NO_LEVEL) return this.levels[idx[d]!]!;
    return this.levelFor(this.table ? this.table.unitsOf(d) : 0) ?? this.levels[this.levels.length - 1]!;
  }

  levelIndexes(): Uint8Array | null {
    return this.levelIdx;
  }

  /**
   * Matched documents that reach some level, ascending, remembering each one's level. They are
   * gathered at the head of the table's own list of documents (unless a kept scan shares it):
   * a fresh array the size of a common word's documents was an eighth of the memory a
   * three-word search of the longdocs dictionary handed the garbage collector.
   */
  candidates(): Uint32Array {
    const t = this.table!;
    const docs = t.docs;
    if (this.single >= 0) return docs;
    const idx = this.scratch.levelIndex(this.state.capacity + 1, NO_LEVEL);
    this.levelIdx = idx;
    this.levelOfBucket = null;
    const out = t.docsShared ? new Uint32Array(docs.length) : docs;
    let n = 0;
    // Neighbouring documents mostly match the same units: the last mask's level is reused.
    let lastMask = -1;
    let last: Level | null = null;
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      const m = t.unitsOf(d);
      if (m !== lastMask) {
        lastMask = m;
        last = this.levelFor(m);
      }
      if (last === null) continue;
      idx[d] = last.index;
      out[n++] = d;
    }
    return out.subarray(0, n);
  }

  release(): void {
    const idx = this.levelIdx;
    if (!idx || !this.table) return;
    const docs = this.table.docs;
    if (docs.length > idx.length / 8) idx.fill(NO_LEVEL);
    else for (let i = 0; i < docs.length; i++) idx[docs[i]!] = NO_LEVEL;
    this.levelIdx = null;
    this.levelOfBucket = null;
  }

  prepare(docs: Uint32Array): void {
    if (!this.table) return;
    const level = this.commonLevel(docs);
    this.table.ensure(docs, level ? level.units.map((f) => f.unit) : this.units);
  }

  prepareTypos(docs: Uint32Array): void {
    if (!this.table) return;
    const level = this.commonLevel(docs);
    const units = level ? level.units.map((f) => f.unit) : this.units;
    // A few documents read their records faster than every source's document list.
    if (docs.length < TYPO_FILL_DOCS || !this.table.fillTypos(docs, units)) this.table.ensure(docs, units);
  }

  commonLevel(docs: Uint32Array): Level | null {
    if (this.single >= 0) return this.levels[0] ?? null;
    const idx = this.levelIdx;
    if (!idx || docs.length === 0) return null;
    const seen = this.levelOfBucket;
    if (seen !== null && seen.docs === docs) return seen.level;
    let level: Level | null = null;
    const first = idx[docs[0]!]!;
    if (first !== NO_LEVEL) {
      let i = 1;
      while (i < docs.length && idx[docs[i]!] === first) i++;
      if (i === docs.length) level = this.levels[first]!;
    }
    // A bucket's documents and their levels stay as they are until the candidates are read
    // again or released; small buckets cost less to read again than to remember.
    if (docs.length >= 1024) this.levelOfBucket = { docs, level };
    return level;
  }

  private readonly pairCache = new Map<string, { out: Uint8Array; done: Uint8Array }>();

  pairCosts(left: Unit, right: Unit, docs: Uint32Array, bucket = docs.length): Uint8Array | null {
    const table = this.table;
    if (!table || bucket < LEAST_TYPO_PAIR_DOCS) return null;
    // Thousands of documents: every derivation's occurrences count. Fewer: only those of
    // each document's least-typo derivations, as its occurrences (from its record) would.
    const leastTypo = bucket < BULK_PAIR_DOCS;
    if (leastTypo && !table.fillTypos(docs, [left, right])) return null;
    const key = `${leastTypo ? 'least' : 'all'}:${left.id}:${right.id}`;
    const n = this.state.capacity + 1;
    let entry = this.pairCache.get(key);
    if (!entry) this.pairCache.set(key, (entry = { out: this.scratch.byteTable(n, MAX_PAIR_COST), done: this.scratch.byteTable(n, 0) }));
    const list = new Uint32Array(docs.length);
    let count = 0;
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      if (entry.done[d] === 1) continue;
      entry.done[d] = 1;
      list[count++] = d;
    }
    if (count > 0) {
      const weights = table.opts.rankWeights ?? table.opts.weights;
      const typoAt = leastTypo ? (d: number, u: number) => table.typoAt(d, u) : null;
      // The bucket itself when none of it was done: its entry runs are then shared by its pairs.
      bulkPairCosts(left, right, count === docs.length ? docs : list.subarray(0, count), entry.out, weights, this.proximityByAttribute, typoAt, this.state.memo);
    }
    return entry.out;
  }

  occurrences(d: number): DocOccurrences {
    this.finder ??= new OccurrenceFinder(this.state, this.units, this.table!);
    return this.finder.of(d);
  }

  memo<T>(key: string, make: () => T): T {
    if (!this.memos.has(key)) this.memos.set(key, make());
    return this.memos.get(key) as T;
  }
}

/** The highest `perTiling` over every tiling of the level. */
function allTilingsMax(level: Level, perTiling: (tiling: readonly Unit[]) => number): number {
  const n = level.kept.length;
  const path: Unit[] = [];
  let max = -Infinity;
  const walk = (s: number): void => {
    if (s === n) {
      max = Math.max(max, perTiling(path));
      return;
    }
    for (const f of level.byStart[s]!) {
      path.push(f.unit);
      walk(f.to + 1);
      path.pop();
    }
  };
  walk(0);
  return max;
}

/**
 * A returned hit's `_rankingScore`, details and per-rule values, from the buckets it went
 * through; the rules its bucket sort did not reach are applied to it alone.
 */
function scoreHit(ctx: RankingContext, rules: readonly RankingRule[], docid: number, trace: HitTrace): RankedHit {
  const ranks: Rank[] = [];
  const values: ScoreValue[] = [];
  const details: RankedHit['details'] = {};
  const one = Uint32Array.of(docid);
  let paths = trace.paths;
  for (let order = 0; order < rules.length; order++) {
    const rule = rules[order]!;
    let cost: number;
    let rulePaths: Uint32Array | null;
    const step = trace.steps[order];
    if (step) {
      cost = step.cost;
      rulePaths = step.paths;
    } else if (trace.skipped) {
      details['skipped'] = { order };
      ranks.push(SKIPPED_RANK);
      values.push({ rank: SKIPPED_RANK });
      break;
    } else {
      ctx.prepare(one);
      cost = rule.costs(ctx, one)[0]!;
      rulePaths = paths;
      if (!rule.isSort) paths = one;
    }
    const own = rule.ranks(ctx, docid, cost, rulePaths);
    ranks.push(...own);
    const [key, value] = rule.detail(ctx, docid, cost, order, rulePaths);
    details[key] = value;
    if (rule.isSort) values.push(sortScoreValue(key, value));
    else for (const r of own) values.push({ rank: r });
  }
  return { docid, score: globalScore(ranks), details, values };
}

/** A sort rule's value as merges compare it: the field's value, or the distance of a geo sort. */
export function sortScoreValue(key: string, detail: Record<string, unknown>): ScoreValue {
  const value = 'distance' in detail ? detail['distance'] : detail['value'];
  return { sort: { ascending: key.endsWith(':asc'), value } };
}

/** A context for the sort rules alone (no query terms), e.g. to order semantic hits. */
export function sortContext(state: IndexState, scratch: SearchScratch): RankingContext {
  return new Context(scratch, state, [], [], null, 0, false, 0);
}

export function executeSearch(state: IndexState, settings: IndexSettings, req: SearchRequest, scratch: SearchScratch): SearchOutcome {
  const started = performance.now();
  const deadline = started + (settings.searchCutoffMs ?? DEFAULT_SEARCH_CUTOFF_MS);
  const tr = req.trace ?? null;
  if (tr && req.q) tr.step('tokenize');
  const tokens = req.q ? state.tokenizer.tokenize(req.q, req.locales ? { locales: req.locales } : undefined) : [];
  const parsed = parseQuery(tokens, { wordsLimit: WORDS_LIMIT, prefixAllowed: settings.prefixSearch !== 'disabled' });
  const admitted = admittedDocs(state, parsed, req.allowed, scratch);
  const terms = parsed.terms;
  let table: MatchTable | null = null;
  let ctx: Context | null = null;
  try {
    let universe: Uint32Array;
    let units: Unit[] = [];
    if (terms.length === 0) {
      ctx = new Context(scratch, state, [], [], null, 0, false, 0);
      universe = filterUniverse(state.docids, admitted);
    } else {
      const typo = settings.typoTolerance;
      const derivation = {
        typoEnabled: typo.enabled,
        thresholds: typo.minWordSizeForTypos,
        disableOnWords: new Set(typo.disableOnWords.map((w) => state.tokenizer.words(w)[0]?.lemma ?? w)),
        disableOnNumbers: typo.disableOnNumbers,
      };
      units = buildUnits(state, terms, derivation);
      tr?.step('resolve universe');
      const weights = searchOnWeights(state, settings, req.attributesToSearchOn);
      const exactFields = new Uint8Array(weights.length);
      for (let f = 0; f < weights.length; f++) if (state.rules.isExact(f)) exactFields[f] = 1;
      const anchored = req.matchingStrategy === 'all' || (req.matchingStrategy === 'last' && terms.every((x) => x.kind === 'word'));
      const all = state.rules.weightTable();
      const rankWeights = all.some((w, f) => w !== weights[f]) ? all : null;
      table = new MatchTable(state, units, { weights, rankWeights, exactFields, admitted, anchored }, units.length === 1, scratch);
      const t = table;
      // A term's frequency counts the documents of every unit holding it, n-grams included.
      const freq = (i: number): number => {
        let bits = 0;
        for (const u of units) if (u.start <= i && i <= u.end) bits |= 1 << u.id;
        let n = 0;
        for (const d of t.docs) if ((t.unitsOf(d) & bits) !== 0) n++;
        return n;
      };
      const levels = buildLevels(terms, units, removalOrder(terms, req.matchingStrategy, freq));
      const phraseWords = terms.reduce((n, term) => n + (term.kind === 'phrase' ? term.words.filter((w) => w !== null).length : 0), 0);
      const maxMatchingWords = phraseWords > 0 ? phraseWords + terms.filter((x) => x.kind === 'word').length : terms.length;
      const typoMax = req.matchingStrategy === 'all' ? queryTypoBudget(terms, derivation) : null;
      ctx = new Context(scratch, state, units, levels, table, state.rules.maxWeight, settings.proximityPrecision === 'byAttribute', maxMatchingWords, typoMax);
      const c = ctx;
      universe = c.candidates();
    }
    tr?.step(terms.length === 0 ? 'placeholder search' : 'keyword search');
    const rules = rankingRules(settings.rankingRules, req.sort, {
      placeholder: terms.length === 0,
      matchingAll: req.matchingStrategy === 'all',
      sortRule: req.sortRule,
    });
    const keyCache = new Map<number, string[]>();
    const distinctAttr = req.distinct;
    const distinct = distinctAttr
      ? (d: number) => {
          let k = keyCache.get(d);
          if (!k) keyCache.set(d, (k = distinctKeys(recordOf(state, d), distinctAttr)));
          return k;
        }
      : null;
    const sorted = bucketSort({
      ctx,
      rules,
      universe,
      offset: req.offset,
      limit: req.limit,
      distinct,
      threshold: req.rankingScoreThreshold,
      deadline,
      evaluate: req.evaluate,
      scores: req.scores,
    });
    let candidates = sorted.candidates;
    if (distinctAttr && req.exhaustiveCount) {
      const column = distinctColumn(state, distinctAttr);
      const seen = new Uint8Array(column.ids.size);
      candidates = 0;
      for (const d of universe) if (column.firstOf(seen, d)) candidates++;
      if (req.rankingScoreThreshold !== null) candidates = Math.min(candidates, sorted.candidates);
    }
    const c = ctx;
    const hits: RankedHit[] = sorted.hits.map((docid, i) =>
      req.scores ? scoreHit(c, rules, docid, sorted.traces![i]!) : { docid, score: 1, details: {}, values: [] },
    );
    tr?.end();
    return { hits, candidates, universe, terms, units, degraded: sorted.degraded };
  } finally {
    ctx?.release();
    table?.release();
    scratch.reset();
  }
}
