// One keyword (or placeholder) search over a published index state: parse the query,
// derive the units, read their postings, sort the candidates bucket by bucket, and score
// the hits. Synchronous from start to end, so the state cannot change under it.

import { ApiError } from '../../errors/api-error.js';
import { distinctKeys } from '../fulltext/field-values.js';
import { isPathOrChild } from '../fulltext/field-table.js';
import { recordOf, type IndexState } from '../fulltext/index-state.js';
import { globalScore, type Rank } from '../ranking/rank.js';
import type { RankingContext } from '../ranking/rule.js';
import { rankingRules, type SortCriterion } from '../ranking/rules.js';
import type { IndexSettings } from '../settings/settings.js';
import { bucketSort, firstOfDistinct } from './bucket-sort.js';
import { buildUnits, type Unit } from './derivations.js';
import { buildLevels, removalOrder, tiles, type Level, type MatchingStrategy } from './levels.js';
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
  distinct: string | null;
  rankingScoreThreshold: number | null;
  locales: string[] | null;
  /** Documents the filter allows (by docid), or null for all. */
  allowed: Uint8Array | null;
  /** Count duplicates out of the total exactly (finite pagination with distinct). */
  exhaustiveCount: boolean;
  /** Compute `_rankingScore` and its details for the hits. */
  scores: boolean;
}

/** One rule's contribution, in rule order: a rank, or the value a sort rule used. */
export type ScoreValue = { rank: Rank } | { sort: { ascending: boolean; value: unknown } };

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

/** Field weights for this query: -1 outside `attributesToSearchOn` or not searchable. */
function queryWeights(state: IndexState, settings: IndexSettings, only: string[] | null): Int32Array {
  const w = state.rules.weightTable();
  if (!only || only.includes('*')) return w;
  const names = state.names.names;
  for (let f = 0; f < w.length; f++) {
    if (w[f]! >= 0 && !only.some((a) => isPathOrChild(a, names[f]!))) w[f] = -1;
  }
  void settings;
  return w;
}

export function checkAttributesToSearchOn(state: IndexState, settings: IndexSettings, only: string[] | null): void {
  if (!only) return;
  const list = settings.searchableAttributes;
  if (list.includes('*')) return;
  for (const a of only) {
    if (a === '*' || list.includes(a)) continue;
    throw new ApiError(
      'invalid_search_attributes_to_search_on',
      `Attribute \`${a}\` is not searchable. Available searchable attributes are: \`${list.join(', ')}\`.`,
    );
  }
  void state;
}

function excludedDocs(state: IndexState, parsed: ReturnType<typeof parseQuery>, allowed: Uint8Array | null): Uint8Array | null {
  if (!allowed && parsed.negativeWords.length === 0 && parsed.negativePhrases.length === 0) return null;
  const n = state.capacity;
  const out = new Uint8Array(n + 1);
  if (allowed) for (let d = 0; d < n; d++) if (allowed[d] !== 1) out[d] = 1;
  const mark = (docs: Uint32Array) => {
    for (let i = 0; i < docs.length; i++) out[docs[i]!] = 1;
  };
  for (const w of parsed.negativeWords) mark(wordPosting(state, w).docs);
  for (const p of parsed.negativePhrases) mark(phrasePosting(state, p).docs);
  return out;
}

function filterUniverse(docids: Uint32Array, excluded: Uint8Array | null): Uint32Array {
  if (!excluded) return docids;
  return docids.filter((d) => excluded[d] !== 1);
}

const NO_LEVEL = 255;
/** From this many documents on, pair proximities come from the posting lists. */
const BULK_PAIR_DOCS = 1024;
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
  ) {
    this.single = units.length === 1 && levels.length === 1 ? units[0]!.id : -1;
  }

  readonly single: number;

  // Masks repeat a lot: a small direct-mapped cache in front of the map avoids hashing.
  private readonly fastKeys = new Uint32Array(4096);
  private readonly fastVals = new Int16Array(4096).fill(-2);

  levelFor(mask: number): Level | null {
    const h = Math.imul(mask, 0x9e3779b1) >>> 20;
    if (this.fastVals[h] !== -2 && this.fastKeys[h] === mask) {
      const v = this.fastVals[h]!;
      return v < 0 ? null : this.levels[v]!;
    }
    let l = this.levelCache.get(mask);
    if (l === undefined) {
      l = this.levels.find((lv) => tiles(lv, mask)) ?? null;
      this.levelCache.set(mask, l);
    }
    this.fastKeys[h] = mask;
    this.fastVals[h] = l ? l.index : -1;
    return l;
  }

  /** Level index per docid for the candidates, filled by `candidates()`. */
  private levelIdx: Uint8Array | null = null;

  levelOf(d: number): Level {
    const idx = this.levelIdx;
    if (idx !== null && idx[d] !== NO_LEVEL) return this.levels[idx[d]!]!;
    return this.levelFor(this.table ? this.table.unitsOf(d) : 0) ?? this.levels[this.levels.length - 1]!;
  }

  levelIndexes(): Uint8Array | null {
    return this.levelIdx;
  }

  /** Matched documents that reach some level, ascending, remembering each one's level. */
  candidates(): Uint32Array {
    const t = this.table!;
    const docs = t.docs;
    if (this.single >= 0) return docs;
    const idx = this.scratch.levelIndex(this.state.capacity + 1, NO_LEVEL);
    this.levelIdx = idx;
    const out = new Uint32Array(docs.length);
    let n = 0;
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      const l = this.levelFor(t.unitsOf(d));
      if (l === null) continue;
      idx[d] = l.index;
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
  }

  prepare(docs: Uint32Array): void {
    if (!this.table) return;
    const level = this.commonLevel(docs);
    this.table.ensure(docs, level ? level.units.map((f) => f.unit) : this.units);
  }

  commonLevel(docs: Uint32Array): Level | null {
    if (this.single >= 0) return this.levels[0] ?? null;
    const idx = this.levelIdx;
    if (!idx || docs.length === 0) return null;
    const first = idx[docs[0]!]!;
    if (first === NO_LEVEL) return null;
    for (let i = 1; i < docs.length; i++) if (idx[docs[i]!] !== first) return null;
    return this.levels[first]!;
  }

  private readonly pairCache = new Map<string, { out: Uint8Array; done: Uint8Array }>();

  pairCosts(left: Unit, right: Unit, docs: Uint32Array): Uint8Array | null {
    if (docs.length < BULK_PAIR_DOCS || !this.table) return null;
    const key = `${left.id}:${right.id}`;
    const n = this.state.capacity + 1;
    let entry = this.pairCache.get(key);
    if (!entry) this.pairCache.set(key, (entry = { out: new Uint8Array(n).fill(MAX_PAIR_COST), done: new Uint8Array(n) }));
    const todo = new Uint8Array(n);
    let any = false;
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      if (entry.done[d] === 1) continue;
      todo[d] = 1;
      entry.done[d] = 1;
      any = true;
    }
    if (any) bulkPairCosts(left, right, todo, entry.out, this.table.opts.weights, this.proximityByAttribute);
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

/** A context for the sort rules alone (no query terms), e.g. to order semantic hits. */
export function sortContext(state: IndexState, scratch: SearchScratch): RankingContext {
  return new Context(scratch, state, [], [], null, 0, false, 0);
}

export function executeSearch(state: IndexState, settings: IndexSettings, req: SearchRequest, scratch: SearchScratch): SearchOutcome {
  const started = performance.now();
  const deadline = started + (settings.searchCutoffMs ?? DEFAULT_SEARCH_CUTOFF_MS);
  const tokens = req.q ? state.tokenizer.tokenize(req.q, req.locales ? { locales: req.locales } : undefined) : [];
  const parsed = parseQuery(tokens, { wordsLimit: WORDS_LIMIT, prefixAllowed: settings.prefixSearch !== 'disabled' });
  const excluded = excludedDocs(state, parsed, req.allowed);
  const terms = parsed.terms;
  let table: MatchTable | null = null;
  let ctx: Context | null = null;
  try {
    let universe: Uint32Array;
    let units: Unit[] = [];
    if (terms.length === 0) {
      ctx = new Context(scratch, state, [], [], null, 0, false, 0);
      universe = filterUniverse(state.docids, excluded);
    } else {
      const typo = settings.typoTolerance;
      units = buildUnits(state, terms, {
        typoEnabled: typo.enabled,
        thresholds: typo.minWordSizeForTypos,
        disableOnWords: new Set(typo.disableOnWords.map((w) => state.tokenizer.words(w)[0]?.lemma ?? w)),
        disableOnNumbers: typo.disableOnNumbers,
      });
      const weights = queryWeights(state, settings, req.attributesToSearchOn);
      const exactFields = new Uint8Array(weights.length);
      for (let f = 0; f < weights.length; f++) if (state.rules.isExact(f)) exactFields[f] = 1;
      const anchored = req.matchingStrategy === 'all' || (req.matchingStrategy === 'last' && terms.every((x) => x.kind === 'word'));
      table = new MatchTable(state, units, { weights, exactFields, excluded, anchored }, units.length === 1, scratch);
      const t = table;
      const termUnits = terms.map((_, i) => units.find((u) => u.start === i && u.end === i)!);
      const freq = (i: number): number => {
        const bit = termUnits[i]!.id;
        let n = 0;
        for (const d of t.docs) if ((t.unitsOf(d) >>> bit) & 1) n++;
        return n;
      };
      const levels = buildLevels(terms, units, removalOrder(terms, req.matchingStrategy, freq));
      const phraseWords = terms.reduce((n, term) => n + (term.kind === 'phrase' ? term.words.filter((w) => w !== null).length : 0), 0);
      const maxMatchingWords = phraseWords > 0 ? phraseWords + terms.filter((x) => x.kind === 'word').length : terms.length;
      ctx = new Context(scratch, state, units, levels, table, state.rules.maxWeight, settings.proximityPrecision === 'byAttribute', maxMatchingWords);
      const c = ctx;
      universe = c.candidates();
    }
    const rules = rankingRules(settings.rankingRules, req.sort, {
      placeholder: terms.length === 0,
      matchingAll: req.matchingStrategy === 'all',
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
    });
    let candidates = sorted.candidates;
    if (distinct && req.exhaustiveCount) {
      const seen = new Set<string>();
      candidates = 0;
      for (const d of universe) if (firstOfDistinct(seen, distinct(d))) candidates++;
      if (req.rankingScoreThreshold !== null) candidates = Math.min(candidates, sorted.candidates);
    }
    const c = ctx;
    const hits: RankedHit[] = sorted.hits.map((docid) => {
      if (!req.scores) return { docid, score: 1, details: {}, values: [] };
      const ranks: Rank[] = [];
      const values: ScoreValue[] = [];
      const details: RankedHit['details'] = {};
      rules.forEach((rule, order) => {
        const one = Uint32Array.of(docid);
        c.prepare(one);
        const cost = rule.costs(c, one)[0]!;
        const own = rule.ranks(c, docid, cost);
        ranks.push(...own);
        const [key, value] = rule.detail(c, docid, cost, order);
        details[key] = value;
        if (rule.isSort) values.push({ sort: { ascending: key.endsWith(':asc'), value: value['value'] } });
        else for (const r of own) values.push({ rank: r });
      });
      return { docid, score: globalScore(ranks), details, values };
    });
    return { hits, candidates, universe, terms, units, degraded: sorted.degraded };
  } finally {
    ctx?.release();
    table?.release();
    scratch.reset();
  }
}
