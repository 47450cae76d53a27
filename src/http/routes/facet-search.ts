import type { FastifyInstance } from 'fastify';
import { withSearchRules } from '../../auth/request-auth.js';
import { checkFacetSearchable, facetSearch, filterBitmap, parseFilter, queryCandidates, toBitmap } from '../../engine/facets/index.js';
import { jsonBody } from '../body.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s } from '../schema.js';
import { SemanticPlan } from '../../engine/vector/hybrid-search.js';
import { indexUidParam } from './params.js';
import { searchFields } from './search-params.js';

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
});

/**
 * `POST /indexes/{uid}/facet-search`: values of one facet matching `facetQuery` (prefix,
 * with typos), counted among the documents `q` and `filter` select (with `hybrid`, every
 * document the filter allows: semantic search matches them all).
 */
export function facetSearchRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'POST',
    url: '/indexes/:indexUid/facet-search',
    summary: 'Search the values of a facet',
    tags: ['Facet search'],
    action: 'search',
    body: facetSearchBody,
    status: 200,
    handler: async (req) => {
      const started = performance.now();
      const uid = indexUidParam(req);
      const body = facetSearchBody.validate(jsonBody(req, ctx.options.httpJsonPayloadSizeLimit), 'json');
      const h = ctx.engine.getIndex(uid);
      const filter = withSearchRules(req, uid, body.filter ?? null);
      const containsFilter = ctx.features.isEnabled('containsFilter');
      parseFilter(filter, { code: 'invalid_search_filter', containsFilter });
      checkFacetSearchable(body.facetName, h.meta.settings);
      let candidates = filterBitmap(h, filter, { code: 'invalid_search_filter', containsFilter, indexPrefix: true }) ?? toBitmap(h, null);
      // A semantic or hybrid search matches every document the filter allows, as in the reference.
      const semantic = SemanticPlan.of(h, { q: body.q ?? null, hybrid: body.hybrid ?? null, vector: body.vector ?? null, media: body.media ?? null });
      const matched = semantic ? null : await queryCandidates(h, {
        q: body.q ?? '',
        matchingStrategy: body.matchingStrategy ?? 'last',
        attributesToSearchOn: body.attributesToSearchOn ?? null,
        locales: body.locales ?? null,
      });
      if (matched) candidates = candidates.and(toBitmap(h, matched));
      const facetHits = facetSearch(h, body.facetName, body.facetQuery ?? null, candidates);
      return { facetHits, facetQuery: body.facetQuery ?? null, processingTimeMs: Math.round(performance.now() - started) };
    },
  });
}
