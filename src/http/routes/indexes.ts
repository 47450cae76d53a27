import type { FastifyInstance } from 'fastify';
import { assertIndexAuthorized, indexVisibility } from '../../auth/request-auth.js';
import { ApiError } from '../../errors/api-error.js';
import { assertIndexUid } from '../../engine/indexes/index-uid.js';
import { rfc3339 } from '../../util/time.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { refuseImmutable, s, typeError } from '../schema.js';
import { enqueueTask, pageQuery, writeQuery } from './params.js';
import { embeddingCounts } from '../../engine/vector/semantic-search.js';

const uidSchema = s.custom((v, ctx) => {
  if (typeof v !== 'string') {
    throw typeError({ ...ctx, code: 'invalid_index_uid' }, 'a string', v);
  }
  assertIndexUid(v, ctx.path);
  return v;
}, { type: 'string', pattern: '^[A-Za-z0-9_-]{1,400}$' });

const createBody = s.object({
  uid: s.required(uidSchema, 'invalid_index_uid', 'missing_index_uid'),
  primaryKey: s.field(s.string().nullable(), 'invalid_index_primary_key'),
});

const updateBody = s.object({
  primaryKey: s.field(s.string().nullable(), 'invalid_index_primary_key'),
  uid: s.field(uidSchema, 'invalid_index_uid'),
});

const swapBody = s.array(
  s.object({
    indexes: s.required(s.array(s.string()), 'invalid_swap_indexes', 'missing_swap_indexes'),
    rename: s.field(s.boolean(), 'invalid_swap_rename'),
  }),
);

export function indexView(ctx: AppContext, uid: string): Record<string, unknown> {
  const h = ctx.engine.getIndex(uid);
  return {
    uid: h.uid,
    createdAt: rfc3339(h.meta.createdAt),
    updatedAt: rfc3339(h.meta.updatedAt),
    primaryKey: h.meta.primaryKey,
  };
}

export async function indexStats(ctx: AppContext, uid: string): Promise<Record<string, unknown>> {
  const h = ctx.engine.getIndex(uid);
  const m = h.meta;
  const current = ctx.executor.current;
  const isIndexing =
    !!current && current.taskUids.some((u) => ctx.queue.get(u)?.indexUid === uid && ctx.queue.get(u)?.status === 'processing');
  const embedded = embeddingCounts(h);
  return {
    numberOfDocuments: m.docCount,
    rawDocumentDbSize: m.rawDocumentBytes,
    avgDocumentSize: m.docCount > 0 ? Math.round(m.rawDocumentBytes / m.docCount) : 0,
    isIndexing,
    numberOfEmbeddings: embedded.embeddings,
    numberOfEmbeddedDocuments: embedded.documents,
    fieldDistribution: m.fieldDistribution,
  };
}

export function indexRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'GET',
    url: '/indexes',
    summary: 'List indexes',
    tags: ['Indexes'],
    action: 'indexes.get',
    query: pageQuery,
    status: 200,
    handler: async (req, _reply, { query: q }) => {
      const offset = q.offset ?? 0;
      const lim = q.limit ?? 20;
      const visible = indexVisibility(req);
      const all = ctx.engine.listIndexes().filter((h) => !visible || visible(h.uid));
      return {
        results: all.slice(offset, offset + lim).map((h) => indexView(ctx, h.uid)),
        offset,
        limit: lim,
        total: all.length,
      };
    },
  });

  route(app, {
    method: 'POST',
    url: '/indexes',
    summary: 'Create an index',
    tags: ['Indexes'],
    action: 'indexes.create',
    query: writeQuery,
    body: createBody,
    status: 202,
    handler: async (req, _reply, { query, body }) => {
      assertIndexAuthorized(req, body.uid);
      const primaryKey = body.primaryKey ?? null;
      return enqueueTask(ctx, { type: 'indexCreation', indexUid: body.uid, details: { primaryKey }, params: { op: 'createIndex', primaryKey } }, query);
    },
  });

  route(app, {
    method: 'GET',
    url: '/indexes/:indexUid',
    summary: 'Get an index',
    tags: ['Indexes'],
    action: 'indexes.get',
    status: 200,
    handler: async (_req, _reply, { uid }) => indexView(ctx, uid),
  });

  route(app, {
    method: 'PATCH',
    url: '/indexes/:indexUid',
    summary: 'Update an index: primary key, or rename it with `uid`',
    tags: ['Indexes'],
    action: 'indexes.update',
    query: writeQuery,
    body: updateBody,
    precheck: refuseImmutable({ createdAt: 'immutable_index_created_at', updatedAt: 'immutable_index_updated_at' }, ['primaryKey', 'uid']),
    status: 202,
    handler: async (req, _reply, { uid, query, body }) => {
      if (body.uid !== undefined) assertIndexAuthorized(req, body.uid);
      const details: Record<string, unknown> = { primaryKey: body.primaryKey ?? null };
      if (body.uid !== undefined && body.uid !== uid) {
        details['oldIndexUid'] = uid;
        details['newIndexUid'] = body.uid;
      }
      return enqueueTask(ctx, { type: 'indexUpdate', indexUid: uid, details, params: { op: 'updateIndex', primaryKey: body.primaryKey, newUid: body.uid ?? null } }, query);
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/indexes/:indexUid',
    summary: 'Delete an index',
    tags: ['Indexes'],
    action: 'indexes.delete',
    query: writeQuery,
    status: 202,
    handler: async (_req, _reply, { uid, query }) =>
      enqueueTask(ctx, { type: 'indexDeletion', indexUid: uid, details: { deletedDocuments: null }, params: { op: 'deleteIndex' } }, query),
  });

  route(app, {
    method: 'GET',
    url: '/indexes/:indexUid/stats',
    summary: 'Statistics of an index',
    tags: ['Stats'],
    action: 'stats.get',
    status: 200,
    handler: async (_req, _reply, { uid }) => indexStats(ctx, uid),
  });

  route(app, {
    method: 'POST',
    url: '/swap-indexes',
    summary: 'Swap or rename indexes',
    tags: ['Indexes'],
    action: 'indexes.swap',
    query: writeQuery,
    body: swapBody,
    bodyCode: 'invalid_swap_indexes',
    status: 202,
    handler: async (req, _reply, { query, body: swaps }) => {
      const seen = new Set<string>();
      const out: { indexes: [string, string]; rename: boolean }[] = [];
      swaps.forEach((sw, i) => {
        if (sw.indexes.length !== 2) {
          throw new ApiError(
            'invalid_swap_indexes',
            `Invalid value at \`[${i}].indexes\`: two indexes must be given for each swap. The list \`${JSON.stringify(sw.indexes)}\` contains ${sw.indexes.length} elements.`,
          );
        }
        sw.indexes.forEach((u, j) => assertIndexUid(u, `[${i}].indexes[${j}]`));
        sw.indexes.forEach((u) => assertIndexAuthorized(req, u));
        for (const u of sw.indexes) {
          if (seen.has(u)) {
            throw new ApiError(
              'invalid_swap_duplicate_index_found',
              `Indexes must be declared only once during a swap. \`${u}\` was specified several times.`,
            );
          }
          seen.add(u);
        }
        out.push({ indexes: [sw.indexes[0]!, sw.indexes[1]!], rename: sw.rename ?? false });
      });
      return enqueueTask(ctx, { type: 'indexSwap', indexUid: null, details: { swaps: out }, params: { op: 'swap', swaps: out } }, query);
    },
  });
}
