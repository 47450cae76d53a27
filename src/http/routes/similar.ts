import type { FastifyInstance } from 'fastify';
import { normalizeDocumentId } from '../../engine/documents/primary-key.js';
import { similarDocuments } from '../../engine/search/similar-query.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s, valueError, type Ctx } from '../schema.js';

const idSchema = s.custom(
  (v, ctx: Ctx) => {
    try {
      return normalizeDocumentId(v);
    } catch {
      throw valueError(
        ctx,
        'the value of `id` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.',
      );
    }
  },
  { oneOf: [{ type: 'string' }, { type: 'integer' }] },
);

const thresholdSchema = s.custom(
  (v, ctx: Ctx) => {
    const n = s.number().parse(v, ctx);
    if (n < 0 || n > 1) throw valueError(ctx, 'the value of `rankingScoreThreshold` is invalid, expected a float between `0.0` and `1.0`.');
    return n;
  },
  { type: 'number', minimum: 0, maximum: 1 },
);

// Required fields last: like the reference, a bad value present is reported before a missing field.
function similarSchema(mode: 'json' | 'query') {
  return s.object({
    offset: s.field(s.uint(), 'invalid_similar_offset'),
    limit: s.field(s.uint(), 'invalid_similar_limit'),
    filter: s.field(mode === 'json' ? s.any({ oneOf: [{ type: 'string' }, { type: 'array' }, { type: 'null' }] }) : s.string(), 'invalid_similar_filter'),
    attributesToRetrieve: s.field(s.array(s.string()).nullable(), 'invalid_similar_attributes_to_retrieve'),
    retrieveVectors: s.field(s.boolean(), 'invalid_similar_retrieve_vectors'),
    showRankingScore: s.field(s.boolean(), 'invalid_similar_show_ranking_score'),
    showRankingScoreDetails: s.field(s.boolean(), 'invalid_similar_show_ranking_score_details'),
    showPerformanceDetails: s.field(s.boolean(), 'invalid_similar_show_performance_details'),
    rankingScoreThreshold: s.field(thresholdSchema.nullable(), 'invalid_similar_ranking_score_threshold'),
    id: s.required(idSchema, 'invalid_similar_id', 'bad_request'),
    embedder: s.required(s.string(), 'invalid_similar_embedder', 'bad_request'),
  });
}

const bodySchema = similarSchema('json');
const querySchema = similarSchema('query');

export function similarRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'POST',
    url: '/indexes/:indexUid/similar',
    summary: 'Documents similar to a document, by one embedder',
    tags: ['Search'],
    action: 'search',
    body: bodySchema,
    exactIntegers: true,
    status: 200,
    handler: async (_req, _reply, { uid, body }) => similarDocuments(ctx.engine, uid, body),
  });

  route(app, {
    method: 'GET',
    url: '/indexes/:indexUid/similar',
    summary: 'Documents similar to a document, parameters in the query string',
    tags: ['Search'],
    action: 'search',
    query: querySchema,
    status: 200,
    handler: async (_req, _reply, { uid, query }) => similarDocuments(ctx.engine, uid, query),
  });
}
