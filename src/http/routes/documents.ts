import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { requestGrant } from '../../auth/request-auth.js';
import { normalizeDocumentId, type Doc } from '../../engine/documents/primary-key.js';
import { listDocuments, presentDocument, type DocumentsQuery } from '../../engine/documents/list-documents.js';
import { hydrateForeignKeys } from '../../engine/documents/foreign-keys.js';
import { compileEdition, PREVIEW_DOCUMENTS, previewEdition } from '../../engine/documents/edit-by-function.js';
import { fromJson } from '../../engine/rhai/values.js';
import type { IndexHandle } from '../../engine/indexes/index-handle.js';
import { filterDocids } from '../../engine/facets/index.js';
import { engineFilterOptions } from '../../engine/search/answer-query.js';
import { parseRequiredFilter } from '../../engine/filter/filter-tree.js';
import type { TaskSpec } from '../../tasks/task.js';
import { bodyBytes, bodyFormat, contentEncoding } from '../body.js';
import { preparePayloadAside } from '../payload/payload-parser.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s, typeError } from '../schema.js';
import { enqueueTask, writeQuery } from './params.js';
import { checkUseNetwork, isProxied } from './multi-search.js';
import { documentsOverNetwork } from '../../network/network-reads.js';
import { endOfValue, serdePosition, serdeUnexpected } from '../../util/json-syntax.js';
import { stringifyJson } from '../../util/exact-json.js';

const fieldsSchema = s.array(s.string());
const idsSchema = s.custom((v, ctx) => {
  const list = ctx.mode === 'query' && typeof v === 'string' ? v.split(',').map((x) => x.trim()) : v;
  if (!Array.isArray(list)) {
    throw typeError({ ...ctx, code: 'invalid_document_ids' }, 'an array', v);
  }
  return list.map((id, i) => {
    try {
      return normalizeDocumentId(id);
    } catch (e) {
      const at = `${ctx.path}[${i}]`;
      throw new ApiError('invalid_document_ids', ctx.mode === 'json' ? `In \`${at}\`: ${(e as Error).message}` : `Invalid value in parameter \`${at}\`: ${(e as Error).message}`);
    }
  });
}, { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'integer' }] } });

const listQuery = s.object({
  offset: s.field(s.uint(), 'invalid_document_offset'),
  limit: s.field(s.uint(), 'invalid_document_limit'),
  fields: s.field(fieldsSchema, 'invalid_document_fields'),
  retrieveVectors: s.field(s.boolean(), 'invalid_document_retrieve_vectors'),
  ids: s.field(idsSchema, 'invalid_document_ids'),
  filter: s.field(s.string(), 'invalid_document_filter'),
  sort: s.field(s.array(s.string()), 'invalid_document_sort'),
  useNetwork: s.field(s.boolean(), 'invalid_document_use_network'),
});

const fetchBody = s.object({
  offset: s.field(s.uint(), 'invalid_document_offset'),
  limit: s.field(s.uint(), 'invalid_document_limit'),
  fields: s.field(fieldsSchema.nullable(), 'invalid_document_fields'),
  retrieveVectors: s.field(s.boolean(), 'invalid_document_retrieve_vectors'),
  ids: s.field(idsSchema.nullable(), 'invalid_document_ids'),
  filter: s.field(s.any({ oneOf: [{ type: 'string' }, { type: 'array' }, { type: 'null' }] }), 'invalid_document_filter'),
  sort: s.field(s.array(s.string()).nullable(), 'invalid_document_sort'),
  useNetwork: s.field(s.boolean(), 'invalid_document_use_network'),
});

const getOneQuery = s.object({
  fields: s.field(fieldsSchema, 'invalid_document_fields'),
  retrieveVectors: s.field(s.boolean(), 'invalid_document_retrieve_vectors'),
  useNetwork: s.field(s.boolean(), 'invalid_document_use_network'),
});

const addQuery = s.object({
  primaryKey: s.field(s.string(), 'invalid_index_primary_key'),
  csvDelimiter: s.field(s.string(), 'invalid_document_csv_delimiter'),
  customMetadata: s.field(s.string(), 'invalid_index_custom_metadata'),
  skipCreation: s.field(s.boolean(), 'invalid_skip_creation'),
});
type AddQuery = ReturnType<typeof addQuery.validate>;

/** The reference reads this body as a plain JSON list and words a body of another type as its parser does. */
function idListOnly(raw: unknown, text: string): void {
  if (Array.isArray(raw)) return;
  const first = text.length - text.trimStart().length;
  const at = raw !== null && typeof raw === 'object' ? first : endOfValue(text);
  throw new ApiError('bad_request', `Json deserialize error: invalid type: ${serdeUnexpected(raw)}, expected a sequence ${serdePosition(text, at)}`);
}

const deleteBatchBody = s.array(s.any({ oneOf: [{ type: 'string' }, { type: 'integer' }] }));
const deleteByFilterBody = s.object({
  filter: s.required(s.any({ oneOf: [{ type: 'string' }, { type: 'array' }] }), 'invalid_document_filter', 'missing_document_filter'),
});

const editBody = s.object({
  function: s.required(s.string(), 'invalid_document_edition_function_filter', 'missing_document_edition_function'),
  filter: s.field(s.any({ oneOf: [{ type: 'string' }, { type: 'array' }, { type: 'null' }] }), 'invalid_document_filter'),
  context: s.field(s.any({ type: ['object', 'null'] }), 'invalid_document_edition_context'),
});

/** Ids one deletion by id may name: a million take a second or two to register. */
export const MAX_DELETE_BATCH_IDS = 1_000_000;

function documentNotFound(id: string): ApiError {
  return new ApiError('document_not_found', `Document \`${id}\` not found.`);
}

/** Referenced documents in place of their ids, while the `foreignKeys` feature is on. */
async function withForeign(ctx: AppContext, h: IndexHandle, docs: Doc[]): Promise<Doc[]> {
  if (ctx.features.isEnabled('foreignKeys')) await hydrateForeignKeys(ctx.engine, h.meta.settings, docs);
  return docs;
}

/** A page of documents as `listDocuments` gives it, references resolved. */
async function documentsPage(ctx: AppContext, uid: string, p: DocumentsQuery, withSortValues = false) {
  const page = await listDocuments(ctx.engine, uid, p, { containsFilter: ctx.features.isEnabled('containsFilter'), foreignKeys: ctx.features.isEnabled('foreignKeys'), withSortValues });
  return { ...page, results: await withForeign(ctx, ctx.engine.getIndex(uid), page.results) };
}

/**
 * `useNetwork` given: refused unless the `network` feature is on; true sends the fetch to the
 * whole network (never again when another instance sent it here).
 */
function fetchesNetwork(ctx: AppContext, req: FastifyRequest, useNetwork: boolean | undefined): boolean {
  return checkUseNetwork(ctx, { useNetwork }, 'a documents fetch') && !isProxied(req);
}

/**
 * The documents route's answer. Asked by another instance (`Meili-Proxy-Search`), each document
 * carries in `_federation.weightedScoreValues` the values it was sorted by, for that instance's merge.
 */
async function documentsAnswer(ctx: AppContext, req: FastifyRequest, uid: string, p: DocumentsQuery & { useNetwork?: boolean }) {
  const { useNetwork, ...q } = p;
  ctx.engine.getIndex(uid);
  if (fetchesNetwork(ctx, req, useNetwork)) return documentsOverNetwork(ctx.engine.network.get(), uid, q, (sub) => documentsPage(ctx, uid, sub, true));
  if (!isProxied(req)) return documentsPage(ctx, uid, q);
  const { sortValues, ...page } = await documentsPage(ctx, uid, q, true);
  return { ...page, results: page.results.map((d, i) => ({ ...d, _federation: { weightedScoreValues: sortValues?.[i] ?? [] } })) };
}

export function documentRoutes(app: FastifyInstance, ctx: AppContext): void {
  // `_foreign(…)` is refused here while its feature is off; the task then reads it at apply time.
  const filterFeatures = () => ({ containsFilter: ctx.features.isEnabled('containsFilter'), foreignKeys: ctx.features.isEnabled('foreignKeys') });

  route(app, {
    method: 'GET',
    url: '/indexes/:indexUid/documents',
    summary: 'List documents',
    tags: ['Documents'],
    action: 'documents.get',
    query: listQuery,
    status: 200,
    handler: async (req, _reply, { uid, query }) => documentsAnswer(ctx, req, uid, query),
  });

  route(app, {
    method: 'POST',
    url: '/indexes/:indexUid/documents/fetch',
    summary: 'List documents, with parameters in the body',
    tags: ['Documents'],
    action: 'documents.get',
    body: fetchBody,
    exactIntegers: true,
    status: 200,
    handler: async (req, _reply, { uid, body }) => documentsAnswer(ctx, req, uid, body),
  });

  route(app, {
    method: 'GET',
    url: '/indexes/:indexUid/documents/:documentId',
    summary: 'Get one document',
    tags: ['Documents'],
    action: 'documents.get',
    query: getOneQuery,
    status: 200,
    handler: async (req, _reply, { uid, query }) => {
      const id = (req.params as { documentId: string }).documentId;
      const h = ctx.engine.getIndex(uid);
      const network = fetchesNetwork(ctx, req, query.useNetwork);
      const doc = await ctx.engine.getDocument(uid, id);
      if (!doc && network) {
        // Not held here: the instance holding it answers.
        const { fields, retrieveVectors } = query;
        const page = await documentsOverNetwork(ctx.engine.network.get(), uid, { ids: [id], limit: 1, fields, retrieveVectors }, (sub) => documentsPage(ctx, uid, sub, true));
        if (page.results.length > 0) return page.results[0];
      }
      if (!doc) throw documentNotFound(id);
      return (await withForeign(ctx, h, [await presentDocument(h, doc, query.fields, query.retrieveVectors)]))[0];
    },
  });

  const addOrUpdate = (method: 'replace' | 'update') => async (req: FastifyRequest, _reply: unknown, { uid, query: q }: { uid: string; query: AddQuery }) => {
    const format = bodyFormat(req, ['json', 'ndjson', 'csv']);
    let delimiter = ',';
    if (q.csvDelimiter !== undefined) {
      if (format !== 'csv') {
        throw new ApiError(
          'invalid_document_csv_delimiter',
          'The Content-Type `' + String(req.headers['content-type']) + '` does not support the use of a csv delimiter. The csv delimiter can only be used with the Content-Type `text/csv`.',
        );
      }
      if (q.csvDelimiter.length !== 1 || q.csvDelimiter.charCodeAt(0) > 127) {
        throw new ApiError(
          'invalid_document_csv_delimiter',
          `Invalid value in parameter \`csvDelimiter\`: expect a string of one character, but found the following string of ${q.csvDelimiter.length} characters: \`${q.csvDelimiter}\``,
        );
      }
      delimiter = q.csvDelimiter;
    }
    const { documents, bytes: payload, exactIntegers } = await preparePayloadAside({
      format,
      body: bodyBytes(req),
      encoding: contentEncoding(req),
      limit: app.bodyLimits.payload,
      csvDelimiter: delimiter,
    });
    const spec: TaskSpec = {
      type: 'documentAdditionOrUpdate',
      indexUid: uid,
      details: { receivedDocuments: documents, indexedDocuments: null },
      params: {
        op: 'documents',
        method,
        primaryKey: q.primaryKey ?? null,
        ...(q.skipCreation ? { skipCreation: true } : {}),
        ...(exactIntegers ? { exactIntegers: true as const } : {}),
        ...(requestGrant(req).mayCreateIndexes ? {} : { createIndex: false as const }),
      },
      payloadBytes: payload.length,
    };
    return enqueueTask(ctx, spec, q, payload);
  };

  for (const [method, kind, summary] of [
    ['POST', 'replace', 'Add or replace documents'],
    ['PUT', 'update', 'Add or update documents (fields are merged)'],
  ] as const) {
    route(app, {
      method,
      url: '/indexes/:indexUid/documents',
      summary,
      tags: ['Documents'],
      action: 'documents.add',
      query: addQuery,
      body: s.any({ oneOf: [{ type: 'array', items: { type: 'object' } }, { type: 'object' }] }),
      bodyMediaTypes: ['application/json', 'application/x-ndjson', 'text/csv'],
      // JSON, NDJSON or CSV, read by the handler (see parse-payload.ts).
      read: 'raw',
      status: 202,
      handler: addOrUpdate(kind),
    });
  }

  route(app, {
    method: 'DELETE',
    url: '/indexes/:indexUid/documents/:documentId',
    summary: 'Delete one document',
    tags: ['Documents'],
    action: 'documents.delete',
    query: writeQuery,
    status: 202,
    handler: async (req, _reply, { uid, query }) => {
      const id = (req.params as { documentId: string }).documentId;
      return enqueueTask(ctx, {
        type: 'documentDeletion',
        indexUid: uid,
        details: { providedIds: 1, deletedDocuments: null, originalFilter: null },
        params: { op: 'deleteIds', ids: [id] },
      }, query);
    },
  });

  route(app, {
    method: 'POST',
    url: '/indexes/:indexUid/documents/delete-batch',
    summary: 'Delete documents by id',
    tags: ['Documents'],
    action: 'documents.delete',
    query: writeQuery,
    body: deleteBatchBody,
    precheck: idListOnly,
    largeBody: true,
    exactIntegers: true,
    status: 202,
    handler: async (_req, _reply, { uid, query, body: raw }) => {
      if (raw.length > MAX_DELETE_BATCH_IDS) {
        throw new ApiError(
          'bad_request',
          `Too many document ids: one deletion takes at most ${MAX_DELETE_BATCH_IDS} ids, and this one names ${raw.length}. Send them in several requests.`,
        );
      }
      const ids = raw.map((v, i) => {
        // Integers up to the u64 maximum keep every digit (bigints past 2^53), as ids do.
        if ((typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint') return String(v);
        if (typeof v === 'string') return v;
        throw new ApiError(
          'bad_request',
          `Invalid value type at \`[${i}]\`: expected a string or an integer, but found ${stringifyJson(v)}`,
        );
      });
      return enqueueTask(ctx, {
        type: 'documentDeletion',
        indexUid: uid,
        details: { providedIds: ids.length, deletedDocuments: null, originalFilter: null },
        params: { op: 'deleteIds', ids },
      }, query);
    },
  });

  route(app, {
    method: 'POST',
    url: '/indexes/:indexUid/documents/delete',
    summary: 'Delete documents matching a filter',
    tags: ['Documents'],
    action: 'documents.delete',
    query: writeQuery,
    body: deleteByFilterBody,
    status: 202,
    handler: async (_req, _reply, { uid, query, body }) => {
      const f = body.filter;
      parseRequiredFilter(f, { code: 'invalid_document_filter', ...filterFeatures() });
      return enqueueTask(ctx, {
        type: 'documentDeletion',
        indexUid: uid,
        details: { providedIds: 0, deletedDocuments: null, originalFilter: JSON.stringify(f) },
        params: { op: 'deleteFilter', filter: f },
      }, query);
    },
  });

  route(app, {
    method: 'POST',
    url: '/indexes/:indexUid/documents/edit',
    summary: 'Edit documents with a function (Rhai): it runs on each document the `filter` keeps (all without one), with `doc` and `context` in scope; `doc = ()` deletes the document',
    tags: ['Documents'],
    action: 'documents.*',
    query: writeQuery,
    body: editBody,
    status: 202,
    errors: ['feature_not_enabled', 'missing_document_edition_function', 'invalid_document_edition_context', 'invalid_document_filter', 'bad_request', 'edit_documents_by_function_error'],
    handler: async (_req, _reply, { uid, query, body }) => {
      ctx.features.check('editDocumentsByFunction', 'Using the documents edit route');
      const script = compileEdition(body.function);
      const f = body.filter ?? null;
      // A filter given must say something: a blank one would read as every document.
      if (f !== null) parseRequiredFilter(f, { code: 'invalid_document_filter', ...filterFeatures() });
      const c = body.context ?? null;
      if (c !== null && (typeof c !== 'object' || Array.isArray(c))) throw new ApiError('invalid_document_edition_context', 'The context must be an object');
      const context = c as Record<string, unknown> | null;
      // The clock limit, on a sample of what the function will meet (see `previewEdition`).
      const h = ctx.engine.indexes.get(uid);
      // A filter on attributes the index does not filter by fails the task, as the reference
      // checks it only when the task runs; there is then nothing to preview.
      const matched = h ? filterOrNone(() => filterDocids(h, f, { code: 'invalid_document_filter', ...engineFilterOptions(ctx.engine, filterFeatures()) })) : undefined;
      if (h && matched !== undefined) {
        const ids = matched !== null ? [...matched.subarray(0, PREVIEW_DOCUMENTS)] : firstOf(h.ext.values(), PREVIEW_DOCUMENTS);
        const sample = (await ctx.engine.readDocs(ctx.engine.store, h, ids)).filter((d): d is Doc => d !== null);
        previewEdition(script, sample, context ? fromJson(context) : undefined, h.meta.primaryKey);
      }
      return enqueueTask(
        ctx,
        {
          type: 'documentEdition',
          indexUid: uid,
          details: { deletedDocuments: null, editedDocuments: null, originalFilter: f === null ? null : JSON.stringify(f), context, function: body.function },
          params: { op: 'edit', function: body.function, filter: f, context },
        },
        query,
      );
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/indexes/:indexUid/documents',
    summary: 'Delete every document of an index',
    tags: ['Documents'],
    action: 'documents.delete',
    query: writeQuery,
    status: 202,
    handler: async (req, _reply, { uid, query }) => {
      // Trailing slashes are ignored elsewhere, but here `documents/` is what deleting one document
      // with an empty id produces (`/documents/${id}`): it must not read as "delete them all".
      if (req.url.split('?')[0]!.endsWith('/')) {
        throw new ApiError(
          'missing_document_id',
          'The document identifier is missing from the path. `DELETE /indexes/{indexUid}/documents/{documentId}` deletes one document; `DELETE /indexes/{indexUid}/documents`, without a trailing slash, deletes every document of the index.',
        );
      }
      return enqueueTask(ctx, { type: 'documentDeletion', indexUid: uid, details: { deletedDocuments: null }, params: { op: 'clear' } }, query);
    },
  });
}

/** The documents a filter keeps, or undefined when the index refuses the filter (the task will fail with that error). */
function filterOrNone<T>(run: () => T): T | undefined {
  try {
    return run();
  } catch (e) {
    if (e instanceof ApiError && e.code === 'invalid_document_filter') return undefined;
    throw e;
  }
}

function firstOf<T>(items: Iterable<T>, n: number): T[] {
  const out: T[] = [];
  for (const x of items) {
    if (out.length >= n) break;
    out.push(x);
  }
  return out;
}
