import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { withSearchRules } from '../../auth/request-auth.js';
import { isIndexScoped, performSearch, type SearchQuery } from '../../engine/search/answer-query.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { includeMetadata } from './params.js';
import { searchBody, searchQueryString, toSearchQuery } from './search-params.js';
import { checkUseNetwork, isProxied, searchOverNetwork } from './multi-search.js';
import { searchOptions } from './search-options.js';

async function search(ctx: AppContext, uid: string, q: SearchQuery, req: FastifyRequest, useNetwork: boolean | undefined): Promise<unknown> {
  // A tenant token's rule for this index is AND-ed with the query's own filter.
  q.filter = withSearchRules(req, uid, q.filter ?? null);
  const done = ctx.metrics.searchTimer(uid);
  try {
    if (checkUseNetwork(ctx, { useNetwork }) && !isProxied(req)) {
      return await searchOverNetwork(ctx, uid, q, { includeMetadata: includeMetadata(req), ...searchOptions(ctx) });
    }
    return await performSearch(ctx.engine, uid, q, {
      includeMetadata: includeMetadata(req),
      indexPrefix: true,
      ...searchOptions(ctx),
    });
  } catch (e) {
    if (e instanceof ApiError && isIndexScoped(e)) throw e.prefixed(`Index \`${uid}\`: `);
    throw e;
  } finally {
    done();
  }
}

export function searchRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'POST',
    url: '/indexes/:indexUid/search',
    summary: 'Search an index',
    tags: ['Search'],
    action: 'search',
    body: searchBody,
    status: 200,
    response: 'hits, query, processingTimeMs, pagination fields, facets, requestUid',
    errors: ['index_not_found', 'invalid_search_q', 'invalid_search_limit', 'invalid_search_offset', 'invalid_search_sort', 'invalid_search_filter', 'invalid_search_use_network', 'feature_not_enabled'],
    handler: async (req, _reply, { uid, body }) => search(ctx, uid, toSearchQuery(body), req, body.useNetwork),
  });

  route(app, {
    method: 'GET',
    url: '/indexes/:indexUid/search',
    summary: 'Search an index with URL parameters',
    tags: ['Search'],
    action: 'search',
    query: searchQueryString,
    status: 200,
    response: 'same as POST',
    errors: ['index_not_found', 'invalid_search_q', 'invalid_search_limit', 'invalid_search_offset', 'invalid_search_sort', 'invalid_search_filter', 'invalid_search_use_network', 'feature_not_enabled'],
    handler: async (req, _reply, { uid, query }) => search(ctx, uid, toSearchQuery(query), req, query.useNetwork),
  });
}
