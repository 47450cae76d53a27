import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { assertIndexUid } from '../../engine/indexes/index-uid.js';
import { distinctKeys } from '../../engine/fulltext/field-values.js';
import { searchStateOf } from '../../engine/fulltext/fulltext-index.js';
import { computeFacets, type FacetOutput } from '../../engine/search/facet-hook.js';
import { mergeFederated, type FederatedQueryHits } from '../../engine/search/federation.js';
import { assertQueryIndexAuthorized, withSearchRules } from '../../auth/request-auth.js';
import { DEFAULT_LIMIT, performSearch, runSearch, type SearchQuery } from '../../engine/search/answer-query.js';
import { checkFacets } from '../../engine/search/validate.js';
import { countValues, MAX_FILTER_VALUES, parseFilter, tooManyFilterValues, type FilterNode } from '../../engine/filter/filter-tree.js';
import { uuidv7 } from '../../util/uuid.js';
import { jsonBody } from '../body.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s, valueError } from '../schema.js';
import { includeMetadata } from './search.js';
import { searchFields, toSearchQuery } from './search-params.js';

const indexUidSchema = s.custom((v, ctx) => {
  const uid = s.string().parse(v, ctx);
  assertIndexUid(uid);
  return uid;
}, { type: 'string' });

const weight = s.custom((v, ctx) => {
  const n = s.number().parse(v, ctx);
  if (n < 0) throw valueError(ctx, 'the value of `weight` is invalid, expected a positive float (>= 0.0).');
  return n;
}, { type: 'number', minimum: 0 });

const federationOptions = s.object({
  weight: s.field(weight, 'invalid_multi_search_weight'),
  remote: s.field(s.string().nullable(), 'invalid_multi_search_remote'),
  queryPosition: s.field(s.uint(), 'invalid_multi_search_query_position'),
});

const queryItem = s.object({
  indexUid: s.required(indexUidSchema, 'invalid_index_uid', 'missing_index_uid'),
  ...searchFields,
  federationOptions: s.field(federationOptions.nullable(), 'invalid_multi_search_federation_options'),
});

const facetsByIndex = s.custom((v, ctx) => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw valueError(ctx, 'expected an object');
  const out: Record<string, string[] | null> = {};
  for (const [uid, facets] of Object.entries(v as Record<string, unknown>)) {
    out[uid] = s.array(s.string()).nullable().parse(facets, { ...ctx, path: `${ctx.path}.${uid}` });
  }
  return out;
}, { type: 'object', additionalProperties: { type: ['array', 'null'], items: { type: 'string' } } });

const federation = s.object({
  limit: s.field(s.uint(), 'invalid_search_limit'),
  offset: s.field(s.uint(), 'invalid_search_offset'),
  page: s.field(s.uint(), 'invalid_search_page'),
  hitsPerPage: s.field(s.uint(), 'invalid_search_hits_per_page'),
  facetsByIndex: s.field(facetsByIndex.nullable(), 'invalid_multi_search_facets_by_index'),
  mergeFacets: s.field(
    s.object({ maxValuesPerFacet: s.field(s.uint(), 'invalid_multi_search_max_values_per_facet') }).nullable(),
    'invalid_multi_search_merge_facets',
  ),
  distinct: s.field(s.string().nullable(), 'invalid_multi_search_distinct'),
  showPerformanceDetails: s.field(s.boolean(), 'invalid_multi_search_query_show_performance_details'),
});

const multiSearchBody = s.object({
  queries: s.required(s.array(queryItem), 'bad_request'),
  federation: s.field(federation.nullable(), 'invalid_multi_search_federated'),
});

type Body = ReturnType<typeof multiSearchBody.validate>;
type Item = Body['queries'][number];
type Federation = NonNullable<Body['federation']>;

/** Most queries one multi-search may hold: each is a whole search, run one after the other. */
export const MAX_MULTI_SEARCH_QUERIES = 100;

/**
 * The queries' filters together are held to the values one filter may name, so that a
 * multi-search cannot multiply the work of the largest filter by its number of queries. A
 * filter that does not parse (or is too large alone) is left for its search to report, with that
 * search's words.
 */
function checkFilterValues(items: Item[]): void {
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

function inside(i: number, e: unknown): unknown {
  return e instanceof ApiError ? e.prefixed(`Inside \`.queries[${i}]\`: `) : e;
}

const PAGINATION = ['offset', 'limit', 'page', 'hitsPerPage'] as const;

function mergeFacetOutputs(parts: FacetOutput[], maxValues: number): FacetOutput {
  const dist: FacetOutput['facetDistribution'] = {};
  const stats: FacetOutput['facetStats'] = {};
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

async function federated(ctx: AppContext, items: Item[], fed: Federation, metadata: boolean): Promise<Record<string, unknown>> {
  const started = performance.now();
  items.forEach((item, i) => {
    for (const key of PAGINATION) {
      if (item[key] !== undefined) {
        throw new ApiError(
          'invalid_multi_search_query_pagination',
          `Inside \`.queries[${i}]\`: Using pagination options is not allowed in federated queries.\n - Hint: remove \`${key}\` from query #${i} or remove \`federation\` from the request\n - Hint: pass \`federation.limit\` and \`federation.offset\` for pagination in federated search`,
        );
      }
    }
    if (item.facets !== undefined && item.facets !== null) {
      throw new ApiError(
        'invalid_multi_search_query_facets',
        `Inside \`.queries[${i}]\`: Using facet options is not allowed in federated queries.\n - Hint: remove \`facets\` from query #${i} or remove \`federation\` from the request\n - Hint: pass \`federation.facetsByIndex.${item.indexUid}: ${JSON.stringify(item.facets).replace(/,/g, ', ')}\` for facets in federated search`,
      );
    }
  });
  const finite = fed.page !== undefined || fed.hitsPerPage !== undefined;
  const hitsPerPage = fed.hitsPerPage ?? DEFAULT_LIMIT;
  const page = fed.page ?? 1;
  const skip = finite ? (page === 0 ? 0 : (page - 1) * hitsPerPage) : (fed.offset ?? 0);
  const take = finite ? (page === 0 ? 0 : hitsPerPage) : (fed.limit ?? DEFAULT_LIMIT);
  const required = skip + take;

  const lists: FederatedQueryHits[] = [];
  const universes = new Map<string, Uint32Array[]>();
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const q = toSearchQuery(item) as SearchQuery;
    try {
      const run = await runSearch(ctx.engine, item.indexUid, q, { offset: 0, limit: required, exhaustive: finite, scores: true }, {
        containsFilter: ctx.features.isEnabled('containsFilter'),
      });
      total += Math.min(run.candidates, run.settings.pagination.maxTotalHits);
      lists.push({ indexUid: item.indexUid, queryIndex: i, weight: item.federationOptions?.weight ?? 1, hits: run.hits, ranked: run.ranked });
      const u = universes.get(item.indexUid) ?? [];
      u.push(run.universe);
      universes.set(item.indexUid, u);
    } catch (e) {
      throw inside(i, e);
    }
  }
  let merged = mergeFederated(lists);
  if (fed.distinct) {
    const field = fed.distinct;
    const seen = new Set<string>();
    merged = merged.filter((m) => {
      const state = searchStateOf(ctx.engine.getIndex(m.indexUid));
      const keys = state ? distinctKeys(state.records[m.ranked.docid], field) : [];
      if (keys.some((k) => seen.has(k))) {
        total--;
        return false;
      }
      for (const k of keys) seen.add(k);
      return true;
    });
  }
  const hits = merged.slice(skip, skip + take).map((m) => ({
    ...m.hit,
    _federation: { indexUid: m.indexUid, queriesPosition: m.queryIndex, weightedRankingScore: m.weightedScore },
  }));
  const out: Record<string, unknown> = { hits, processingTimeMs: 0 };
  if (finite) {
    out['hitsPerPage'] = hitsPerPage;
    out['page'] = page;
    out['totalPages'] = hitsPerPage === 0 ? 0 : Math.ceil(total / hitsPerPage);
    out['totalHits'] = total;
  } else {
    out['limit'] = fed.limit ?? DEFAULT_LIMIT;
    out['offset'] = fed.offset ?? 0;
    out['estimatedTotalHits'] = total;
  }
  if (fed.facetsByIndex) {
    const byIndex: Record<string, { distribution: FacetOutput['facetDistribution']; stats: FacetOutput['facetStats'] }> = {};
    const parts: FacetOutput[] = [];
    for (const [uid, facets] of Object.entries(fed.facetsByIndex)) {
      const handle = ctx.engine.getIndex(uid);
      const state = searchStateOf(handle);
      if (!state) continue;
      let names: string[];
      try {
        names = checkFacets(facets ?? [], state.settings);
      } catch (e) {
        throw e instanceof ApiError ? new ApiError('invalid_multi_search_facets', `Inside \`.federation.facetsByIndex.${uid}\`: ${e.message}`) : e;
      }
      const us = universes.get(uid) ?? [];
      const all = new Set<number>();
      for (const u of us) for (const d of u) all.add(d);
      const candidates = Uint32Array.from([...all]).sort();
      const f = computeFacets({ state, settings: state.settings, facets: names, candidates });
      byIndex[uid] = { distribution: f.facetDistribution, stats: f.facetStats };
      parts.push(f);
    }
    if (fed.mergeFacets) {
      const merged = mergeFacetOutputs(parts, fed.mergeFacets.maxValuesPerFacet ?? 100);
      out['facetDistribution'] = merged.facetDistribution;
      out['facetStats'] = merged.facetStats;
    } else out['facetsByIndex'] = byIndex;
  }
  out['processingTimeMs'] = Math.round(performance.now() - started);
  out['requestUid'] = uuidv7();
  if (metadata) {
    out['metadata'] = items.map((item) => ({ queryUid: uuidv7(), indexUid: item.indexUid, primaryKey: ctx.engine.getIndex(item.indexUid).meta.primaryKey }));
  }
  return out;
}

export function multiSearchRoutes(app: FastifyInstance, ctx: AppContext): void {
  const limit = ctx.options.httpJsonPayloadSizeLimit;
  route(app, {
    method: 'POST',
    url: '/multi-search',
    summary: 'Run several searches at once, separately or federated into one list',
    tags: ['Search'],
    action: 'search',
    body: multiSearchBody,
    status: 200,
    response: '{ results } or, with `federation`, one merged list of hits',
    handler: async (req) => {
      const body = multiSearchBody.validate(jsonBody(req, limit), 'json');
      if (body.queries.length > MAX_MULTI_SEARCH_QUERIES) {
        throw new ApiError(
          'bad_request',
          `Too many queries: a multi-search holds at most ${MAX_MULTI_SEARCH_QUERIES} queries, and this one holds ${body.queries.length}. Send them in several requests.`,
        );
      }
      // Each query is held to the key's indexes and to the tenant token's rule for its index.
      body.queries.forEach((item, i) => {
        assertQueryIndexAuthorized(req, item.indexUid, i);
        item.filter = withSearchRules(req, item.indexUid, item.filter ?? null) as typeof item.filter;
      });
      checkFilterValues(body.queries);
      const metadata = includeMetadata(req);
      if (body.federation) return federated(ctx, body.queries, body.federation, metadata);
      const results: unknown[] = [];
      for (let i = 0; i < body.queries.length; i++) {
        const item = body.queries[i]!;
        if (item.federationOptions !== undefined && item.federationOptions !== null) {
          throw new ApiError(
            'invalid_multi_search_federation_options',
            `Using \`federationOptions\` is not allowed in a non-federated search.\n - Hint: remove \`federationOptions\` from query #${i} or add \`federation\` to the request.`,
          );
        }
        try {
          const r = await performSearch(ctx.engine, item.indexUid, toSearchQuery(item), {
            includeMetadata: metadata,
            containsFilter: ctx.features.isEnabled('containsFilter'),
          });
          results.push({ indexUid: item.indexUid, ...r });
        } catch (e) {
          throw inside(i, e);
        }
      }
      return { results };
    },
  });
}
