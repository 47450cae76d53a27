// A search on one index as the API answers it: parameter checks against the settings,
// pagination arithmetic (offset/limit or page/hitsPerPage, capped by maxTotalHits), the
// ranked search, the documents fetched in one read, formatting, scores and facets.

import { ApiError } from '../../errors/api-error.js';
import { uuidv7 } from '../../util/uuid.js';
import type { Doc } from '../documents/primary-key.js';
import { projectFields } from '../documents/project.js';
import type { Engine } from '../engine.js';
import {
  checkDistinctAttribute, checkSortable, facetDistribution, facetSortRules, facetStateOf, filterMask, geoDistance, parseSort, searchSortCriterion,
  type FacetsResult,
} from '../facets/index.js';
import type { IndexHandle } from '../indexes/index-handle.js';
import { recordOf, type IndexState } from '../fulltext/index-state.js';
import { distinctKeys } from '../fulltext/field-values.js';
import { semanticRules } from '../ranking/rules.js';
import { searchStateOf } from '../fulltext/fulltext-index.js';
import { HitFormatter } from '../format/format-hit.js';
import type { IndexSettings } from '../settings/settings.js';
import { SemanticPlan } from '../vector/hybrid-search.js';
import { documentVectors } from '../vector/semantic-search.js';
import { checkAttributesToSearchOn, executeSearch, sortContext, type RankedHit } from './rank-query.js';
import type { MatchingStrategy } from './levels.js';
import { hydrateForeignKeys } from '../documents/foreign-keys.js';
import { pinnedHit, placePins, resolvePins, withoutPinned, withPinnedUniverse } from './pins.js';
import type { SearchRuleStore } from '../search-rules/rules.js';
import { StepTrace } from '../../util/step-trace.js';

export const DEFAULT_LIMIT = 20;
export const DEFAULT_CROP_LENGTH = 10;
export const DEFAULT_CROP_MARKER = '…';
export const DEFAULT_PRE_TAG = '<em>';
export const DEFAULT_POST_TAG = '</em>';

/** The search parameters, already type-checked. */
export interface SearchQuery {
  q?: string | null;
  offset?: number;
  limit?: number;
  page?: number;
  hitsPerPage?: number;
  attributesToRetrieve?: string[] | null;
  retrieveVectors?: boolean;
  attributesToCrop?: string[] | null;
  cropLength?: number;
  cropMarker?: string | null;
  attributesToHighlight?: string[] | null;
  highlightPreTag?: string | null;
  highlightPostTag?: string | null;
  showMatchesPosition?: boolean;
  showRankingScore?: boolean;
  showRankingScoreDetails?: boolean;
  filter?: unknown;
  sort?: string[] | null;
  distinct?: string | null;
  facets?: string[] | null;
  matchingStrategy?: MatchingStrategy;
  attributesToSearchOn?: string[] | null;
  rankingScoreThreshold?: number | null;
  locales?: string[] | null;
  hybrid?: { embedder: string; semanticRatio?: number } | null;
  vector?: number[] | null;
  media?: Record<string, unknown> | null;
  /** Answer with the time each step of the search took. */
  showPerformanceDetails?: boolean;
}

/** Absent means the default; null (or empty) means nothing is inserted. */
function orDefault(v: string | null | undefined, def: string): string {
  return v === undefined ? def : (v ?? '');
}

const INDEX_SCOPED = Symbol('indexScoped');

/** Marks an error the reference reports with an ``Index `uid`: `` prefix on a single search. */
export function indexScoped(e: ApiError): ApiError {
  (e as unknown as Record<symbol, boolean>)[INDEX_SCOPED] = true;
  return e;
}

export function isIndexScoped(e: unknown): boolean {
  return e instanceof ApiError && (e as unknown as Record<symbol, boolean>)[INDEX_SCOPED] === true;
}

function scoped<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ApiError) throw indexScoped(e);
    throw e;
  }
}

export interface Window {
  offset: number;
  limit: number;
  /** Finite pagination (page/hitsPerPage): exact totals. */
  finite: boolean;
  page: number;
  hitsPerPage: number;
}

/** The pagination parameters of a search (or of a federated search). */
export interface Pagination {
  offset?: number;
  limit?: number;
  page?: number;
  hitsPerPage?: number;
}

/** The reference's pagination arithmetic (see api-facts §1.7.1). */
export function searchWindow(q: Pagination, maxTotalHits: number): Window {
  const finite = q.page !== undefined || q.hitsPerPage !== undefined;
  if (finite) {
    const hitsPerPage = q.hitsPerPage ?? DEFAULT_LIMIT;
    const page = q.page ?? 1;
    const rawOffset = page === 0 ? 0 : (page - 1) * hitsPerPage;
    const offset = Math.min(rawOffset, maxTotalHits);
    const limit = page === 0 ? 0 : Math.min(hitsPerPage, maxTotalHits - offset);
    return { offset, limit, finite, page, hitsPerPage };
  }
  const offset = Math.min(q.offset ?? 0, maxTotalHits);
  const limit = Math.min(q.limit ?? DEFAULT_LIMIT, maxTotalHits - offset);
  return { offset, limit, finite, page: 1, hitsPerPage: 0 };
}

/** How an answer tells its pagination: page counts in finite mode, an estimate otherwise. */
export function paginationFields(w: Window, q: Pagination, total: number): Record<string, number> {
  if (w.finite) {
    return { hitsPerPage: w.hitsPerPage, page: w.page, totalPages: w.hitsPerPage === 0 ? 0 : Math.ceil(total / w.hitsPerPage), totalHits: total };
  }
  return { limit: q.limit ?? DEFAULT_LIMIT, offset: q.offset ?? 0, estimatedTotalHits: total };
}

export interface SearchRun {
  settings: IndexSettings;
  hits: Doc[];
  ranked: RankedHit[];
  /** With `separatePins`: the pinned hits, left out of `hits`, for the caller to place. */
  pinned: { hit: Doc; ranked: RankedHit; position: number }[];
  /** Candidates before the maxTotalHits cap. */
  candidates: number;
  facets: FacetsResult | null;
  universe: Uint32Array;
  primaryKey: string | null;
  /** Set for semantic and hybrid searches. */
  semantic: { hitCount: number; queryVector: Float32Array | null } | null;
}

export interface SearchOptions {
  /** The `containsFilter` experimental feature is on. */
  containsFilter?: boolean;
  /** Errors about the index's own configuration carry ``Index `uid`: `` (single-index search). */
  indexPrefix?: boolean;
  /** Dynamic search rules to apply (the `dynamicSearchRules` feature is on). */
  searchRules?: SearchRuleStore | null;
  /** Pins are returned apart instead of placed in the window (a federated search places them in its merged list). */
  separatePins?: boolean;
  /** The `foreignKeys` feature is on: referenced documents are shown in place of their ids. */
  foreignKeys?: boolean;
  /** Times the steps of the search (`showPerformanceDetails`); steps met again add up. */
  trace?: StepTrace | null;
}

/** Documents the filter keeps, as a mask by docid; null when it keeps every document. */
function allowedDocs(engine: Engine, handle: IndexHandle, state: IndexState, filter: unknown, opts: SearchOptions): Uint8Array | null {
  return filterMask(handle, filter, { code: 'invalid_search_filter', indexPrefix: opts.indexPrefix ?? false, ...engineFilterOptions(engine, opts) }, state.capacity + 1);
}

/** The filter options that the node's features and its other indexes decide. */
export function engineFilterOptions(engine: Engine, opts: { containsFilter?: boolean; foreignKeys?: boolean }) {
  return {
    containsFilter: opts.containsFilter ?? false,
    foreignKeys: opts.foreignKeys ?? false,
    foreignIndex: (uid: string) => engine.getIndex(uid),
    shards: Object.keys(engine.network.get().shards),
  };
}

/** Ranks, fetches and formats; `window` picks the hits (a federated search asks for more). */
export async function runSearch(
  engine: Engine,
  uid: string,
  q: SearchQuery,
  window: { offset: number; limit: number; exhaustive: boolean; scores?: boolean },
  opts: SearchOptions = {},
): Promise<SearchRun> {
  const handle = engine.getIndex(uid);
  const state = searchStateOf(handle);
  if (!state) throw new ApiError('internal', 'This node keeps no search structures.');
  const settings = state.settings;
  const criteria = parseSort(q.sort ?? []);
  scoped(() => checkSortable(criteria, settings, 'invalid_search_sort', true));
  const sort = criteria.map((c) => searchSortCriterion(handle, c));
  const sortRule = facetSortRules(handle);
  if (q.distinct !== undefined && q.distinct !== null) {
    const distinct = q.distinct;
    scoped(() => checkDistinctAttribute(distinct, settings));
  }
  const facets = q.facets ?? null;
  scoped(() => checkAttributesToSearchOn(state, settings, q.attributesToSearchOn ?? null));
  const trace = opts.trace ?? null;
  if (trace && q.filter !== undefined && q.filter !== null) trace.step('filter');
  const filtered = allowedDocs(engine, handle, state, q.filter, opts);
  trace?.end();
  const threshold = q.rankingScoreThreshold ?? null;
  const maxTotalHits = settings.pagination.maxTotalHits;
  const wantScores = !!(q.showRankingScore || q.showRankingScoreDetails || window.scores);
  const distinctAttr = q.distinct ?? settings.distinctAttribute ?? null;
  const distinctOf = distinctAttr ? (d: number) => distinctKeys(recordOf(state, d), distinctAttr) : null;
  // Pinned documents are kept out of the organic search, which then fills the other positions.
  const pins = opts.searchRules ? resolvePins(handle, opts.searchRules.pinsFor(uid, q.q, Date.now()), filtered, distinctOf) : [];
  const allowed = pins.length > 0 ? withoutPinned(state, filtered, pins, distinctOf) : filtered;
  const placing = pins.length > 0 && !opts.separatePins;
  const organic = placing ? { ...window, offset: 0, limit: window.offset + window.limit } : window;
  // With `hybrid`/`vector` the keyword search runs as the semantic plan says, then both merge.
  const ai = SemanticPlan.of(handle, q);
  const kw = ai ? ai.keywordWindow(organic) : { q: q.q ?? null, offset: organic.offset, limit: organic.limit };
  let outcome = executeSearch(state, settings, {
    q: kw.q,
    offset: kw.offset,
    limit: kw.limit,
    evaluate: window.exhaustive && threshold !== null ? maxTotalHits : 0,
    matchingStrategy: q.matchingStrategy ?? 'last',
    attributesToSearchOn: q.attributesToSearchOn ?? null,
    sort,
    sortRule,
    distinct: distinctAttr,
    rankingScoreThreshold: threshold,
    locales: q.locales ?? null,
    allowed,
    exhaustiveCount: window.exhaustive,
    scores: wantScores || ai !== null,
    trace,
  }, engine.scratch);
  if (ai) {
    const ordering = {
      distinct: distinctOf,
      order: { ...semanticRules(settings.rankingRules, sort, sortRule), ctx: sortContext(state, engine.scratch) },
    };
    trace?.step('semantic search');
    outcome = { ...outcome, ...(await ai.merge(outcome, organic, allowed, threshold, ordering)) };
    trace?.end();
  }
  const pinnedRanked = pins.map((p) => ({ item: pinnedHit(p), position: p.position }));
  const shown = placing ? placePins(outcome.hits, pinnedRanked).slice(window.offset, window.offset + window.limit) : outcome.hits;
  const apart = opts.separatePins ? pinnedRanked.map((p) => p.item) : [];
  const positionOf = new Map(pins.map((p) => [p.docid, p.position]));
  const listed = [...shown, ...apart];
  trace?.step('format');
  const docs = await engine.readDocs(engine.store, handle, listed.map((h) => h.docid));
  const formatter = new HitFormatter(state, outcome.units, {
    attributesToHighlight: q.attributesToHighlight ?? null,
    attributesToCrop: q.attributesToCrop ?? null,
    cropLength: q.cropLength ?? DEFAULT_CROP_LENGTH,
    cropMarker: orDefault(q.cropMarker, DEFAULT_CROP_MARKER),
    highlightPreTag: orDefault(q.highlightPreTag, DEFAULT_PRE_TAG),
    highlightPostTag: orDefault(q.highlightPostTag, DEFAULT_POST_TAG),
    showMatchesPosition: q.showMatchesPosition === true,
    retrieve: q.attributesToRetrieve ?? null,
    displayed: settings.displayedAttributes,
    locales: q.locales ?? null,
  });
  let hits: Doc[] = [];
  let ranked: RankedHit[] = [];
  const geoSort = sort.find((c) => c.geo)?.geo;
  docs.forEach((doc, i) => {
    if (!doc) return;
    let displayed = projectFields(doc, settings.displayedAttributes);
    if (!q.retrieveVectors && '_vectors' in displayed) {
      displayed = { ...displayed };
      delete displayed['_vectors'];
    }
    const hit: Doc = { ...projectFields(displayed, q.attributesToRetrieve ?? null) };
    const meters = geoSort ? geoDistance(facetStateOf(handle), listed[i]!.docid, geoSort.lat, geoSort.lng) : null;
    if (meters !== null) hit['_geoDistance'] = meters;
    const { formatted, matches } = formatter.format(displayed);
    if (formatted) hit['_formatted'] = formatted;
    if (matches) hit['_matchesPosition'] = matches;
    const r = listed[i]!;
    if (q.showRankingScore) hit['_rankingScore'] = r.score;
    if (q.showRankingScoreDetails) hit['_rankingScoreDetails'] = r.details;
    hits.push(hit);
    ranked.push(r);
  });
  const vectorsShown = settings.displayedAttributes.includes('*') || settings.displayedAttributes.includes('_vectors');
  if (q.retrieveVectors && vectorsShown) {
    const docOf = new Map(listed.map((r, i) => [r.docid, docs[i]]));
    for (const [i, hit] of hits.entries()) hit['_vectors'] = await documentVectors(handle, ranked[i]!.docid, docOf.get(ranked[i]!.docid) ?? {});
  }
  if (opts.foreignKeys) await hydrateForeignKeys(engine, settings, hits);
  trace?.end();
  // Pinned documents count among the results, matching the query or not.
  const universe = withPinnedUniverse(outcome.universe, pins);
  if (trace && facets) trace.step('facet distribution');
  const facetOut = facets ? facetDistribution(handle, universe, facets) : null;
  trace?.end();
  // Pins asked apart were listed after the organic hits.
  const pinned: SearchRun['pinned'] = [];
  if (apart.length > 0) {
    const isApart = new Set(apart.map((a) => a.docid));
    ranked.forEach((r, i) => {
      if (isApart.has(r.docid)) pinned.push({ hit: hits[i]!, ranked: r, position: positionOf.get(r.docid)! });
    });
    hits = hits.filter((_, i) => !isApart.has(ranked[i]!.docid));
    ranked = ranked.filter((r) => !isApart.has(r.docid));
  }
  return {
    settings,
    hits,
    ranked,
    pinned,
    candidates: outcome.candidates + pins.length,
    facets: facetOut,
    universe,
    primaryKey: handle.meta.primaryKey,
    semantic: ai ? { hitCount: ai.semanticHitCount, queryVector: ai.queryVector } : null,
  };
}

/** The response of `POST /indexes/{uid}/search`. */
export async function performSearch(
  engine: Engine,
  uid: string,
  q: SearchQuery,
  opts: SearchOptions & { includeMetadata: boolean },
): Promise<Record<string, unknown>> {
  const started = performance.now();
  const handle = engine.getIndex(uid);
  const maxTotalHits = handle.meta.settings.pagination.maxTotalHits;
  const w = searchWindow(q, maxTotalHits);
  const trace = q.showPerformanceDetails ? new StepTrace('search') : null;
  const run = await runSearch(engine, uid, q, { offset: w.offset, limit: w.limit, exhaustive: w.finite }, { ...opts, trace });
  const total = Math.min(run.candidates, maxTotalHits);
  const out: Record<string, unknown> = { hits: run.hits, query: q.q ?? '' };
  if (run.semantic?.queryVector && q.retrieveVectors) out['queryVector'] = Array.from(run.semantic.queryVector);
  out['processingTimeMs'] = Math.floor(performance.now() - started);
  Object.assign(out, paginationFields(w, q, total));
  if (run.facets) {
    out['facetDistribution'] = run.facets.facetDistribution;
    out['facetStats'] = run.facets.facetStats;
  }
  out['requestUid'] = uuidv7();
  if (opts.includeMetadata) out['metadata'] = { queryUid: uuidv7(), indexUid: uid, primaryKey: run.primaryKey };
  if (run.semantic) out['semanticHitCount'] = run.semantic.hitCount;
  if (trace) out['performanceDetails'] = trace.finish();
  return out;
}
