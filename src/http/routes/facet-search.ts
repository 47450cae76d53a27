import type { FastifyInstance } from 'fastify';
import { withSearchRules } from '../../auth/request-auth.js';
import { answerFacetSearch } from '../../engine/search/facet-search-query.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s } from '../schema.js';
import { searchFields } from './search-params.js';
import { checkUseNetwork, isProxied } from './multi-search.js';
import { facetSearchOverNetwork } from '../../network/network-reads.js';

const facetSearchBody = s.object({
  facetName: s.required(s.string(), 'invalid_facet_search_facet_name', 'missing_facet_search_facet_name'),
  facetQuery: s.field(s.string().nullable(), 'invalid_facet_search_query'),
  q: s.field(s.string().nullable(), 'invalid_search_q'),
  filter: s.field(s.any({ oneOf: [{ type: 'string' }, { type: 'array' }, { type: 'null' }] }), 'invalid_search_filter'),
  matchingStrategy: s.field(s.enum(['last', 'all', 'frequency'] as const), 'invalid_search_matching_strategy'),
  attributesToSearchOn: s.field(s.array(s.string()).nullable(), 'invalid_search_attributes_to_search_on'),
  rankingScoreThreshold: s.field(s.number().nullable(), 'invalid_search_ranking_score_threshold'),
  locales: s.field(s.array(s.string()).nullable(), 'invalid_search_locales'),
  exhaustiveFacetCount: s.field(s.boolean().nullable(), 'invalid_facet_search_exhaustive_facet_count'),
  hybrid: searchFields.hybrid,
  vector: searchFields.vector,
  media: searchFields.media,
  useNetwork: s.field(s.boolean(), 'invalid_search_use_network'),
});

/** `POST /indexes/{uid}/facet-search` (see `engine/search/facet-search-query.ts`). */
export function facetSearchRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'POST',
    url: '/indexes/:indexUid/facet-search',
    summary: 'Search the values of a facet',
    tags: ['Facet search'],
    action: 'search',
    body: facetSearchBody,
    status: 200,
    errors: ['index_not_found', 'invalid_facet_search_facet_name', 'invalid_search_filter', 'invalid_search_use_network', 'feature_not_enabled'],
    handler: async (req, _reply, { uid, body }) => {
      // The tenant token's rule applies before the search is sent to other instances.
      const filter = withSearchRules(req, uid, body.filter ?? null);
      const { useNetwork: _, ...query } = body;
      const opts = { containsFilter: ctx.features.isEnabled('containsFilter'), foreignKeys: ctx.features.isEnabled('foreignKeys') };
      if (checkUseNetwork(ctx, body, 'a facet search') && !isProxied(req)) {
        const by = ctx.engine.getIndex(uid).meta.settings.faceting.sortFacetValuesBy;
        const order = by[body.facetName] ?? by['*'] ?? 'alpha';
        return facetSearchOverNetwork(ctx.engine.network.get(), uid, { ...query, filter }, order, (f) => answerFacetSearch(ctx.engine, uid, { ...query, filter: f }, opts));
      }
      return answerFacetSearch(ctx.engine, uid, { ...query, filter }, opts);
    },
  });
}
