import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { PROXY_SEARCH_HEADER, SEARCH_DEADLINE_MS, remoteHits, searchRemotes } from '../../network/remote-search.js';
import type { Remote } from '../../engine/network/network.js';
import { isSharded } from '../../engine/network/shards.js';
import { uuidv7 } from '../../util/uuid.js';
import { assertIndexUid } from '../../engine/indexes/index-uid.js';
import { assertQueryIndexAuthorized, withSearchRules } from '../../auth/request-auth.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s, valueError } from '../schema.js';
import { includeMetadata } from './params.js';
import { searchOptions } from './search-options.js';
import { searchFields, toSearchQuery } from './search-params.js';
import {
  answerQuery, checkFederatedItems, checkMultiSearchSize, federatedSearch, inside, multiSearch, type Federation, type MultiSearchItem, type MultiSearchOptions,
} from '../../engine/search/multi-search.js';
import { searchWindow, type SearchQuery } from '../../engine/search/answer-query.js';
import { asSearchAnswer, federationOf, partitionQuery } from '../../network/network-search.js';

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
  const out: MultiSearchItem = { ...(toSearchQuery(item) as MultiSearchItem), indexUid: item.indexUid, federationOptions: item.federationOptions };
  if (item.useNetwork !== undefined) out.useNetwork = item.useNetwork;
  return out;
}

/** A query of a federated search sent to a named remote (never sent to the whole network by default). */
function namesRemote(item: MultiSearchItem): boolean {
  return item.federationOptions?.remote !== undefined && item.federationOptions.remote !== null;
}

/** A federated search another instance sent here, for its own merge. */
export function isProxied(req: FastifyRequest): boolean {
  const v = req.headers[PROXY_SEARCH_HEADER];
  return (Array.isArray(v) ? v[0] : v)?.trim().toLowerCase() === 'true';
}

/** Queries answered one by one, those with `useNetwork: true` by the whole network. */
async function multiSearchOverNetwork(ctx: AppContext, items: MultiSearchItem[], opts: MultiSearchOptions, proxied: boolean) {
  const network = items.map((item) => checkUseNetwork(ctx, item, undefined, namesRemote(item)));
  if (proxied || !network.some(Boolean)) return multiSearch(ctx.engine, items, opts);
  checkMultiSearchSize(items);
  const results: unknown[] = [];
  for (let i = 0; i < items.length; i++) {
    const { useNetwork: _u, ...item } = items[i]!;
    if (!network[i] || (item.federationOptions !== undefined && item.federationOptions !== null)) {
      results.push(await answerQuery(ctx.engine, item, i, opts));
      continue;
    }
    const { indexUid, federationOptions: _, ...q } = item;
    try {
      results.push({ indexUid, ...(await searchOverNetwork(ctx, indexUid, q, opts)) });
    } catch (e) {
      throw inside(i, e);
    }
  }
  return { results };
}

/**
 * A federated search whose queries may name other instances (`federationOptions.remote`):
 * those go to their remote, all at once, while the others run here; the engine merges both.
 * A query naming this instance's own name stays here. Each query keeps its place in the
 * request (`queryPosition`, given by the instance that sent it here or by a `useNetwork`
 * query it was made from), which hits and errors report.
 */
/** A query of the request as its `metadata` names it: its index, and the remote it was sent to. */
export interface QueryPlace {
  indexUid: string;
  remote: string | null;
}

export async function federatedOverNetwork(
  ctx: AppContext,
  items: MultiSearchItem[],
  fed: Federation,
  opts: MultiSearchOptions,
  proxied: boolean,
  /** The request's queries before `useNetwork` ones were split: one `metadata` entry each. */
  places: QueryPlace[] = items.map((item) => ({ indexUid: item.indexUid, remote: item.federationOptions?.remote ?? null })),
) {
  if (proxied) ctx.features.check('network', 'Performing a remote federated search');
  checkMultiSearchSize(items);
  checkFederatedItems(items);
  const network = ctx.engine.network.get();
  const byRemote = new Map<string, { remote: Remote; queries: Record<string, unknown>[] }>();
  const local: MultiSearchItem[] = [];
  let hasRemote = false;
  items.forEach((item, i) => {
    const options = item.federationOptions ?? {};
    const name = options.remote;
    const position = options.queryPosition ?? i;
    if (name !== undefined && name !== null) {
      hasRemote = true;
      ctx.features.check('network', 'Performing a remote federated search');
      if (name !== network.self) {
        const remote = ctx.engine.network.remote(name);
        if (!remote) throw new ApiError('invalid_multi_search_remote', `Invalid \`queries[${position}].federation_options.remote\`: remote \`${name}\` is not registered`);
        const entry = byRemote.get(name) ?? { remote, queries: [] };
        // The remote is not told its own name (it need not know it), but the query's place.
        const { federationOptions: _, ...query } = item;
        entry.queries.push({ ...query, federationOptions: { weight: options.weight ?? 1, queryPosition: position } });
        byRemote.set(name, entry);
        return;
      }
    }
    if (options.queryPosition !== undefined) ctx.features.check('network', 'Using `federationOptions.queryPosition`');
    local.push({ ...item, federationOptions: { ...options, queryPosition: position } });
  });
  if (!hasRemote) return federatedSearch(ctx.engine, items, fed, { ...opts, proxied });
  // Each remote returns the first hits of its own merge: offset and limit apply once, here.
  const w = searchWindow(fed, Infinity);
  const { page: _p, hitsPerPage: _h, mergeFacets: _m, ...rest } = fed;
  const pending = searchRemotes(byRemote, { ...rest, offset: 0, limit: w.offset + w.limit }, Date.now() + SEARCH_DEADLINE_MS, opts.includeMetadata).then(remoteHits);
  const out = await federatedSearch(ctx.engine, local, fed, { ...opts, proxied, remote: { self: network.self, hits: pending.then((r) => r.hits) } });
  const remote = await pending;
  out['remoteErrors'] = remote.errors;
  if (opts.includeMetadata) {
    // One entry per query of the request, in its order, naming where it ran: a query sent to a
    // remote gets that remote's primary key (from its metadata), the others this instance's.
    out['metadata'] = places.map(({ indexUid, remote: name }) => {
      const here = name === null || name === network.self;
      const primaryKey = here ? (ctx.engine.indexes.get(indexUid)?.meta.primaryKey ?? null) : (remote.primaryKeys.get(name)?.get(indexUid) ?? null);
      const entry: Record<string, unknown> = { queryUid: uuidv7(), indexUid, primaryKey };
      const where = name ?? network.self;
      if (where !== null) entry['remote'] = where;
      return entry;
    });
  }
  return out;
}

/**
 * Whether a query goes to the whole network. `useNetwork` given: refused unless the `network`
 * feature is on. Left out: yes when the network shards documents (a query naming a remote
 * excepted), as the reference defaults it, so that a sharded index answers as one index.
 */
export function checkUseNetwork(ctx: AppContext, q: { useNetwork?: boolean }, what = 'a search query', namesRemote = false): boolean {
  if (q.useNetwork === undefined) return !namesRemote && ctx.features.isEnabled('network') && isSharded(ctx.engine.network.get());
  ctx.features.check('network', `passing \`useNetwork\` in ${what}`);
  return q.useNetwork;
}

/**
 * A search on one index answered by the whole network (`useNetwork: true`): a federated search
 * of its parts (see `network-search.ts`), answered in the shape of a search on one index.
 */
export async function searchOverNetwork(ctx: AppContext, indexUid: string, q: SearchQuery & { useNetwork?: boolean }, opts: MultiSearchOptions) {
  const items = partitionQuery(ctx.engine.network.get(), indexUid, q, 0, undefined);
  const out = await federatedOverNetwork(ctx, items, federationOf(indexUid, q), opts, false, [{ indexUid, remote: null }]);
  return asSearchAnswer(out, indexUid, q.q ?? '');
}

/**
 * The queries of a federated search with their `useNetwork` ones replaced by their parts;
 * the parts keep the place of the query they come from.
 */
function expandNetworkQueries(ctx: AppContext, items: MultiSearchItem[], proxied: boolean): MultiSearchItem[] {
  const whole = items.map((item) => checkUseNetwork(ctx, item, undefined, namesRemote(item)));
  if (!whole.some(Boolean) || proxied) return items.map(({ useNetwork: _, ...item }) => item);
  const network = ctx.engine.network.get();
  return items.flatMap(({ useNetwork: _, ...item }, i) => {
    if (!whole[i]) return [item];
    if (item.federationOptions?.remote !== undefined && item.federationOptions.remote !== null) {
      throw new ApiError('invalid_multi_search_remote', `Invalid \`queries[${i}].federation_options.remote\`: a query with \`useNetwork: true\` is sent to the whole network and cannot name a remote`);
    }
    return partitionQuery(network, item.indexUid, item, item.federationOptions?.queryPosition ?? i, item.federationOptions?.weight);
  });
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
      const opts = { includeMetadata: includeMetadata(req), ...searchOptions(ctx) };
      const queries = body.queries.map(toSearchItem);
      const proxied = isProxied(req);
      const places = queries.map((item) => ({ indexUid: item.indexUid, remote: item.federationOptions?.remote ?? null }));
      return body.federation
        ? federatedOverNetwork(ctx, expandNetworkQueries(ctx, queries, proxied), body.federation, opts, proxied, places)
        : multiSearchOverNetwork(ctx, queries, opts, proxied);
    },
  });
}
