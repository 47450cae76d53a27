// A facet search on one index: the values of one facet that match a facet query, counted
// among the documents `q` and `filter` select. With `hybrid`, `vector` or `media` the search
// is semantic, and a semantic search matches every document the filter allows (as the
// reference counts it).

import type { Engine } from '../engine.js';
import { checkFacetSearchable, facetSearch, facetSortRules, filterBitmap, parseFilter, toBitmap, type FacetHit } from '../facets/index.js';
import { searchStateOf } from '../fulltext/fulltext-index.js';
import { SemanticPlan } from '../vector/hybrid-search.js';
import type { MatchingStrategy } from './levels.js';
import { engineFilterOptions } from './answer-query.js';
import { executeSearch } from './rank-query.js';

export interface FacetSearchQuery {
  facetName: string;
  facetQuery?: string | null;
  q?: string | null;
  filter?: unknown;
  matchingStrategy?: MatchingStrategy;
  attributesToSearchOn?: string[] | null;
  locales?: string[] | null;
  hybrid?: { embedder: string; semanticRatio?: number } | null;
  vector?: number[] | null;
  media?: Record<string, unknown> | null;
}

export interface FacetSearchAnswer {
  facetHits: FacetHit[];
  facetQuery: string | null;
  processingTimeMs: number;
}

/** Documents `q` matches (before ranking), or null when it keeps every document. */
function queryMatches(engine: Engine, uid: string, p: FacetSearchQuery): Uint32Array | null {
  const q = p.q ?? '';
  if (q.trim() === '') return null;
  const h = engine.getIndex(uid);
  const state = searchStateOf(h);
  if (!state) return null;
  return executeSearch(state, state.settings, {
    q,
    offset: 0,
    limit: 0,
    evaluate: 0,
    matchingStrategy: p.matchingStrategy ?? 'last',
    attributesToSearchOn: p.attributesToSearchOn ?? null,
    sort: [],
    sortRule: facetSortRules(h),
    distinct: null,
    rankingScoreThreshold: null,
    locales: p.locales ?? null,
    allowed: null,
    exhaustiveCount: false,
    scores: false,
  }, engine.scratch).universe;
}

export function answerFacetSearch(engine: Engine, uid: string, p: FacetSearchQuery, opts: { containsFilter: boolean; foreignKeys?: boolean }): FacetSearchAnswer {
  const started = performance.now();
  const h = engine.getIndex(uid);
  const filter = p.filter ?? null;
  // A malformed filter is refused before the facet name, as the reference checks them.
  parseFilter(filter, { code: 'invalid_search_filter', containsFilter: opts.containsFilter, foreignKeys: opts.foreignKeys ?? false });
  checkFacetSearchable(p.facetName, h.meta.settings);
  let candidates = filterBitmap(h, filter, { code: 'invalid_search_filter', indexPrefix: true, ...engineFilterOptions(engine, opts) }) ?? toBitmap(h, null);
  const semantic = SemanticPlan.of(h, { q: p.q ?? null, hybrid: p.hybrid ?? null, vector: p.vector ?? null, media: p.media ?? null });
  const matched = semantic ? null : queryMatches(engine, uid, p);
  if (matched) candidates = candidates.and(toBitmap(h, matched));
  const facetHits = facetSearch(h, p.facetName, p.facetQuery ?? null, candidates);
  return { facetHits, facetQuery: p.facetQuery ?? null, processingTimeMs: Math.floor(performance.now() - started) };
}
