// Several searches in one request: answered one by one, or federated into one ranked list
// (merged by weighted scores, see `federation.ts`), with federated pagination, distinct and
// facets per index or merged.

import { ApiError } from '../../errors/api-error.js';
import { uuidv7 } from '../../util/uuid.js';
import type { Engine } from '../engine.js';
import { facetDistribution, type FacetsResult } from '../facets/index.js';
import { countValues, MAX_FILTER_VALUES, parseFilter, tooManyFilterValues, type FilterNode } from '../filter/filter-tree.js';
import { distinctKeys } from '../fulltext/field-values.js';
import { searchStateOf } from '../fulltext/fulltext-index.js';
import { StepTrace } from '../../util/step-trace.js';
import { recordOf } from '../fulltext/index-state.js';
import { paginationFields, performSearch, runSearch, searchWindow, type SearchOptions, type SearchQuery } from './answer-query.js';
import { mergeFederated, toWire, weightedValues, type FederatedQueryHits, type MergedHit } from './federation.js';
import { placePins } from './pins.js';

/** Most queries one multi-search may hold: each is a whole search, run one after the other. */
export const MAX_MULTI_SEARCH_QUERIES = 100;

export interface MultiSearchItem extends SearchQuery {
  indexUid: string;
  /** Answered by the whole network (see `network/network-search.ts`); read before the engine sees the query. */
  useNetwork?: boolean;
  federationOptions?: { weight?: number; remote?: string | null; queryPosition?: number } | null;
}

export interface Federation {
  limit?: number;
  offset?: number;
  page?: number;
  hitsPerPage?: number;
  facetsByIndex?: Record<string, string[] | null> | null;
  mergeFacets?: { maxValuesPerFacet?: number } | null;
  distinct?: string | null;
  /** Answer with the time each step took, the queries' own steps added up. */
  showPerformanceDetails?: boolean;
}

export interface MultiSearchOptions extends SearchOptions {
  includeMetadata: boolean;
}

/** What other instances found for the queries sent to them, ready to merge (see `network/`). */
export interface RemoteHits {
  lists: MergedHit[][];
  estimatedTotalHits: number;
  processingTimeMs: number;
  /** Each index's facets as each remote counted them. */
  facetsByIndex: Record<string, FacetsResult[]>;
}

export interface FederatedOptions extends MultiSearchOptions {
  /** Some queries went to other instances: local hits are tagged with `self`, theirs merged in. */
  remote?: { self: string | null; hits: Promise<RemoteHits> };
  /** Another instance sent this search: each hit carries its weighted scores, for that instance's merge. */
  proxied?: boolean;
}

/** A query's position: its own, unless the instance that sent it here gave the original one. */
function positionOf(item: MultiSearchItem, i: number): number {
  return item.federationOptions?.queryPosition ?? i;
}

/** An error about query `i`, worded as the reference words it. */
export function inside(i: number, e: unknown): unknown {
  return e instanceof ApiError ? e.prefixed(`Inside \`.queries[${i}]\`: `) : e;
}

/**
 * The number of queries, and their filters together held to the values one filter may name,
 * so that a multi-search cannot multiply the work of the largest filter by its number of
 * queries. A filter that does not parse (or is too large alone) is left for its search to
 * report, with that search's words.
 */
export function checkMultiSearchSize(items: readonly MultiSearchItem[]): void {
  if (items.length > MAX_MULTI_SEARCH_QUERIES) {
    throw new ApiError(
      'bad_request',
      `Too many queries: a multi-search holds at most ${MAX_MULTI_SEARCH_QUERIES} queries, and this one holds ${items.length}. Send them in several requests.`,
    );
  }
  let total = 0;
  items.forEach((item, i) => {
    let node: FilterNode | null = null;
    try {
      node = parseFilter(item.filter ?? null, { code: 'invalid_search_filter', containsFilter: true });
    } catch {
      return;
    }
    if (node) total += countValues(node);
    if (total > MAX_FILTER_VALUES) throw inside(i, tooManyFilterValues('invalid_search_filter', total, 'the filters of the queries up to this one name'));
  });
}

/** Each query answered on its own, as `POST /indexes/{uid}/search` would. */
export async function multiSearch(engine: Engine, items: readonly MultiSearchItem[], opts: MultiSearchOptions): Promise<{ results: unknown[] }> {
  checkMultiSearchSize(items);
  const results: unknown[] = [];
  for (let i = 0; i < items.length; i++) results.push(await answerQuery(engine, items[i]!, i, opts));
  return { results };
}

/** Query `i` of a multi-search without federation, answered alone. */
export async function answerQuery(engine: Engine, item: MultiSearchItem, i: number, opts: MultiSearchOptions): Promise<unknown> {
  const { indexUid, federationOptions, useNetwork: _, ...q } = item;
  if (federationOptions !== undefined && federationOptions !== null) {
    throw new ApiError(
      'invalid_multi_search_federation_options',
      `Using \`federationOptions\` is not allowed in a non-federated search.\n - Hint: remove \`federationOptions\` from query #${i} or add \`federation\` to the request.`,
    );
  }
  try {
    // Errors about an index's configuration name it, as in a single search.
    return { indexUid, ...(await performSearch(engine, indexUid, q, { ...opts, indexPrefix: true })) };
  } catch (e) {
    throw inside(i, e);
  }
}

const PAGINATION = ['offset', 'limit', 'page', 'hitsPerPage'] as const;

export function checkFederatedItems(items: readonly MultiSearchItem[]): void {
  items.forEach((item, at) => {
    const i = positionOf(item, at);
    for (const key of PAGINATION) {
      if (item[key] !== undefined) {
        throw new ApiError(
          'invalid_multi_search_query_pagination',
          `Inside \`.queries[${i}]\`: Using pagination options is not allowed in federated queries.\n - Hint: remove \`${key}\` from query #${i} or remove \`federation\` from the request\n - Hint: pass \`federation.limit\` and \`federation.offset\` for pagination in federated search`,
        );
      }
    }
    if (item.showPerformanceDetails !== undefined) {
      throw new ApiError(
        'invalid_multi_search_query_show_performance_details',
        `Inside \`.queries[${i}]\`: Using \`.showPerformanceDetails\` is not allowed in federated queries.\n - Hint: remove \`showPerformanceDetails\` from query #${i} or remove \`federation\` from the request`,
      );
    }
    if (item.facets !== undefined && item.facets !== null) {
      throw new ApiError(
        'invalid_multi_search_query_facets',
        `Inside \`.queries[${i}]\`: Using facet options is not allowed in federated queries.\n - Hint: remove \`facets\` from query #${i} or remove \`federation\` from the request\n - Hint: pass \`federation.facetsByIndex.${item.indexUid}: ${JSON.stringify(item.facets).replace(/,/g, ', ')}\` for facets in federated search`,
      );
    }
  });
}

/** Facet distributions summed value by value, stats widened, values alphabetical and capped. */
function mergeFacetResults(parts: FacetsResult[], maxValues: number): FacetsResult {
  const dist: FacetsResult['facetDistribution'] = {};
  const stats: FacetsResult['facetStats'] = {};
  for (const p of parts) {
    for (const [facet, values] of Object.entries(p.facetDistribution)) {
      const d = (dist[facet] ??= {});
      for (const [v, n] of Object.entries(values)) d[v] = (d[v] ?? 0) + n;
    }
    for (const [facet, st] of Object.entries(p.facetStats)) {
      const cur = stats[facet];
      stats[facet] = cur ? { min: Math.min(cur.min, st.min), max: Math.max(cur.max, st.max) } : { ...st };
    }
  }
  for (const [facet, values] of Object.entries(dist)) {
    dist[facet] = Object.fromEntries(Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, maxValues));
  }
  return { facetDistribution: dist, facetStats: stats };
}

/**
 * Facets of each index asked for, over the candidates of every query on that index, with the
 * counts other instances made of the same index added.
 */
function federatedFacets(engine: Engine, fed: Federation, universes: Map<string, Uint32Array[]>, remote: Record<string, FacetsResult[]>): Record<string, unknown> {
  const byIndex: Record<string, { distribution: FacetsResult['facetDistribution']; stats: FacetsResult['facetStats'] }> = {};
  const parts: FacetsResult[] = [];
  for (const [uid, facets] of Object.entries(fed.facetsByIndex ?? {})) {
    const handle = engine.getIndex(uid);
    const names = facets ?? [];
    const all = new Set<number>();
    for (const u of universes.get(uid) ?? []) for (const d of u) all.add(d);
    const own = facetDistribution(handle, Uint32Array.from(all).sort(), names);
    const others = remote[uid] ?? [];
    const f = others.length > 0 ? mergeFacetResults([own, ...others], handle.meta.settings.faceting.maxValuesPerFacet) : own;
    byIndex[uid] = { distribution: f.facetDistribution, stats: f.facetStats };
    parts.push(f);
  }
  if (fed.mergeFacets) {
    const merged = mergeFacetResults(parts, fed.mergeFacets.maxValuesPerFacet ?? 100);
    return { facetDistribution: merged.facetDistribution, facetStats: merged.facetStats };
  }
  return { facetsByIndex: byIndex };
}

/** The queries' hits merged into one list (with those of other instances), paginated as one search. */
export async function federatedSearch(engine: Engine, items: readonly MultiSearchItem[], fed: Federation, opts: FederatedOptions): Promise<Record<string, unknown>> {
  const started = performance.now();
  checkMultiSearchSize(items);
  checkFederatedItems(items);
  // Federated pagination is not capped by any index's maxTotalHits.
  const w = searchWindow(fed, Infinity);
  const lists: FederatedQueryHits[] = [];
  const pins: { item: MergedHit; position: number }[] = [];
  const universes = new Map<string, Uint32Array[]>();
  let total = 0;
  const trace = fed.showPerformanceDetails ? new StepTrace('search') : null;
  for (let at = 0; at < items.length; at++) {
    const { indexUid, federationOptions, ...q } = items[at]!;
    const i = positionOf(items[at]!, at);
    try {
      const run = await runSearch(engine, indexUid, q, { offset: 0, limit: w.offset + w.limit, exhaustive: w.finite, scores: true }, { ...opts, indexPrefix: true, separatePins: true, trace });
      total += Math.min(run.candidates, run.settings.pagination.maxTotalHits) - run.pinned.length;
      const weight = federationOptions?.weight ?? 1;
      lists.push({ indexUid, queryIndex: i, weight, hits: run.hits, ranked: run.ranked });
      for (const p of run.pinned) {
        const weighted = weightedValues(p.ranked.values, weight);
        pins.push({ item: { hit: p.hit, ranked: p.ranked, indexUid, queryIndex: i, weightedScore: p.ranked.score * weight, weighted }, position: p.position });
      }
      const u = universes.get(indexUid) ?? [];
      u.push(run.universe);
      universes.set(indexUid, u);
    } catch (e) {
      throw inside(i, e);
    }
  }
  const federating = performance.now();
  if (trace && opts.remote) trace.step('federation > wait for remote results');
  const remote = opts.remote ? await opts.remote.hits : null;
  trace?.step('federation > merge results');
  total += remote?.estimatedTotalHits ?? 0;
  // Pinned documents take their positions in the merged list, once each (queries in order).
  const pinKey = (m: MergedHit) => `${m.indexUid}\u0000${m.ranked?.docid}`;
  const placed = new Set<string>();
  const uniquePins = pins.filter((p) => !placed.has(pinKey(p.item)) && placed.add(pinKey(p.item))).sort((a, b) => a.position - b.position);
  total += uniquePins.length;
  const organic = mergeFederated(lists, remote?.lists ?? []).filter((m) => m.ranked === null || !placed.has(pinKey(m)));
  let merged = placePins(organic, uniquePins);
  if (fed.distinct) {
    const field = fed.distinct;
    const seen = new Set<string>();
    merged = merged.filter((m) => {
      // Another instance's hits were made distinct there.
      if (m.ranked === null) return true;
      const state = searchStateOf(engine.getIndex(m.indexUid));
      const keys = state ? distinctKeys(recordOf(state, m.ranked.docid), field) : [];
      if (keys.some((k) => seen.has(k))) {
        total--;
        return false;
      }
      for (const k of keys) seen.add(k);
      return true;
    });
  }
  const hits = merged.slice(w.offset, w.offset + w.limit).map((m) => {
    if (m.ranked === null) return m.hit;
    const federation: Record<string, unknown> = { indexUid: m.indexUid, queriesPosition: m.queryIndex, weightedRankingScore: m.weightedScore };
    if (opts.remote && !opts.proxied) federation['remote'] = opts.remote.self;
    if (opts.proxied) federation['weightedScoreValues'] = toWire(m.weighted);
    return { ...m.hit, _federation: federation };
  });
  const out: Record<string, unknown> = { hits, processingTimeMs: 0, ...paginationFields(w, fed, total) };
  if (fed.facetsByIndex) {
    trace?.step('federation > merge facets');
    Object.assign(out, federatedFacets(engine, fed, universes, remote?.facetsByIndex ?? {}));
  }
  if (trace) {
    trace.end();
    trace.add('federation', performance.now() - federating);
  }
  out['processingTimeMs'] = Math.max(Math.floor(performance.now() - started), remote?.processingTimeMs ?? 0);
  out['requestUid'] = uuidv7();
  if (opts.includeMetadata) {
    out['metadata'] = items.map((item) => ({ queryUid: uuidv7(), indexUid: item.indexUid, primaryKey: engine.getIndex(item.indexUid).meta.primaryKey }));
  }
  if (trace) out['performanceDetails'] = trace.finish();
  return out;
}
