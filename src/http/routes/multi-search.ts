import type { FastifyInstance } from 'fastify';
import { assertIndexUid } from '../../engine/indexes/index-uid.js';
import { assertQueryIndexAuthorized, withSearchRules } from '../../auth/request-auth.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s, valueError } from '../schema.js';
import { includeMetadata } from './params.js';
import { searchFields, toSearchQuery } from './search-params.js';
import { federatedSearch, multiSearch, type MultiSearchItem } from '../../engine/search/multi-search.js';

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

function toSearchItem(item: ReturnType<typeof queryItem.validate>): MultiSearchItem {
  return { ...(toSearchQuery(item) as MultiSearchItem), indexUid: item.indexUid, federationOptions: item.federationOptions };
}

export function multiSearchRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'POST',
    url: '/multi-search',
    summary: 'Run several searches at once, separately or federated into one list',
    tags: ['Search'],
    action: 'search',
    body: multiSearchBody,
    status: 200,
    response: '{ results } or, with `federation`, one merged list of hits',
    handler: async (req, _reply, { body }) => {
      // Each query is held to the key's indexes and to the tenant token's rule for its index.
      body.queries.forEach((item, i) => {
        assertQueryIndexAuthorized(req, item.indexUid, i);
        item.filter = withSearchRules(req, item.indexUid, item.filter ?? null) as typeof item.filter;
      });
      const opts = { includeMetadata: includeMetadata(req), containsFilter: ctx.features.isEnabled('containsFilter') };
      const queries = body.queries.map(toSearchItem);
      return body.federation ? federatedSearch(ctx.engine, queries, body.federation, opts) : multiSearch(ctx.engine, queries, opts);
    },
  });
}
