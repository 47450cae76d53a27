import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { normalizeDocumentId, type Doc } from '../../engine/documents/primary-key.js';
import { projectFields } from '../../engine/documents/project.js';
import { filterDocids } from '../../engine/facets/index.js';
import type { IndexHandle } from '../../engine/indexes/index-handle.js';
import { documentVectors, resolveEmbedder, semanticSearch, vectorPartOf, vectorScoreDetails } from '../../engine/vector/semantic-search.js';
import { jsonBody } from '../body.js';
import type { AppContext } from '../context.js';
import { queryRecord, route } from '../route.js';
import { s, valueError, type Ctx } from '../schema.js';
import { indexUidParam } from './params.js';

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
type SimilarParams = ReturnType<typeof bodySchema.validate>;

function checkFilterType(filter: unknown): void {
  if (filter === undefined || filter === null || typeof filter === 'string' || Array.isArray(filter)) return;
  throw new ApiError('invalid_similar_filter', `Invalid syntax for the filter parameter: \`expected String, Array, found: ${JSON.stringify(filter)}\`.`);
}

/** The document as shown: displayed attributes, then `attributesToRetrieve`, `_vectors` on demand. */
async function hitDocument(h: IndexHandle, docid: number, doc: Doc, p: SimilarParams): Promise<Doc> {
  const displayed = h.meta.settings.displayedAttributes;
  let out = projectFields(projectFields(doc, displayed), p.attributesToRetrieve ?? null);
  out = { ...out };
  delete out['_vectors'];
  const vectorsShown = displayed.includes('*') || displayed.includes('_vectors');
  if (p.retrieveVectors && vectorsShown) out['_vectors'] = await documentVectors(h, docid, doc);
  return out;
}

async function similar(ctx: AppContext, uid: string, p: SimilarParams): Promise<Record<string, unknown>> {
  const started = performance.now();
  checkFilterType(p.filter);
  const h = ctx.engine.getIndex(uid);
  const embedder = resolveEmbedder(h, p.embedder, 'similar');
  const docid = h.ext.get(p.id);
  if (docid === undefined) throw new ApiError('not_found_similar_id', `Document \`${p.id}\` not found.`);
  const allowedList = filterDocids(h, p.filter, { code: 'invalid_similar_filter' });
  const offset = p.offset ?? 0;
  const limit = p.limit ?? 20;
  // The reference document's first embedding stands for it.
  const target = embedder.state?.docs.get(docid)?.slots.length ? ((await vectorPartOf(h)?.record(embedder.name, docid))?.vectors[0] ?? null) : null;
  let hits: { docid: number; similarity: number | null }[] = [];
  let total = 0;
  if (target) {
    const r = semanticSearch(h, embedder, {
      vector: target,
      limit: offset + limit,
      allowed: allowedList ? new Set(allowedList) : null,
      threshold: p.rankingScoreThreshold ?? null,
      exclude: docid,
    });
    // Only documents with embeddings are similar to anything.
    hits = r.hits.filter((x) => x.similarity !== null).slice(offset);
    total = r.candidates;
  }
  const docs = await ctx.engine.readDocs(ctx.engine.store, h, hits.map((x) => x.docid));
  const out: Doc[] = [];
  for (const [i, hit] of hits.entries()) {
    const doc = docs[i];
    if (!doc) continue;
    const shown = await hitDocument(h, hit.docid, doc, p);
    if (p.showRankingScore) shown['_rankingScore'] = hit.similarity ?? 0;
    if (p.showRankingScoreDetails) shown['_rankingScoreDetails'] = vectorScoreDetails(hit.similarity);
    out.push(shown);
  }
  const body: Record<string, unknown> = {
    hits: out,
    id: p.id,
    processingTimeMs: Math.round(performance.now() - started),
    limit,
    offset,
    estimatedTotalHits: Math.min(total, h.meta.settings.pagination.maxTotalHits),
  };
  if (p.showPerformanceDetails) body['performanceDetails'] = { total: `${(performance.now() - started).toFixed(2)}ms` };
  return body;
}

export function similarRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'POST',
    url: '/indexes/:indexUid/similar',
    summary: 'Documents similar to a document, by one embedder',
    tags: ['Search'],
    action: 'search',
    body: bodySchema,
    status: 200,
    handler: async (req) => {
      const uid = indexUidParam(req);
      return similar(ctx, uid, bodySchema.validate(jsonBody(req, ctx.options.httpJsonPayloadSizeLimit), 'json'));
    },
  });

  route(app, {
    method: 'GET',
    url: '/indexes/:indexUid/similar',
    summary: 'Documents similar to a document, parameters in the query string',
    tags: ['Search'],
    action: 'search',
    query: querySchema,
    status: 200,
    handler: async (req) => {
      const uid = indexUidParam(req);
      return similar(ctx, uid, querySchema.validate(queryRecord(req), 'query'));
    },
  });
}
