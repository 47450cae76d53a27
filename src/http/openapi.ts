import { PUBLIC_ROUTES } from '../auth/request-auth.js';
import { ERROR_CODES, type ErrorCode } from '../errors/api-error.js';
import { ERROR_LINK_BASE } from '../errors/codes.js';
import { TASK_STATUSES, TASK_TYPES } from '../tasks/task.js';
import { VERSION } from '../version.js';
import type { RouteDoc } from './route.js';
import type { JsonSchema } from './schema.js';

/**
 * The OpenAPI 3.1 document, generated from what `route()` recorded: the same schema objects
 * validate requests (`schema.ts`) and describe them here, so the document cannot drift from
 * what the server accepts. Schema objects are JSON Schema 2020-12, as OpenAPI 3.1 wants.
 */

const REF = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Shapes every route shares, built from the tables the server itself uses. */
function components(): Record<string, unknown> {
  const codes = Object.keys(ERROR_CODES).sort();
  return {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: 'The master key, an API key, or (on search routes) a tenant token. Without a master key every route but `/keys` is open.',
      },
    },
    schemas: {
      Error: {
        type: 'object',
        description: 'Every error response and every failed task carries this object.',
        properties: {
          message: { type: 'string', description: 'What went wrong, for humans' },
          code: { type: 'string', enum: codes },
          type: { type: 'string', enum: ['invalid_request', 'internal', 'auth', 'system'] },
          link: { type: 'string', format: 'uri', description: `${ERROR_LINK_BASE}<code>` },
        },
        required: ['message', 'code', 'type', 'link'],
        additionalProperties: false,
      },
      SummarizedTask: {
        type: 'object',
        description: 'The answer of every route that enqueues a task; follow it with `GET /tasks/{taskUid}`.',
        properties: {
          taskUid: { type: 'integer', minimum: 0 },
          indexUid: { type: ['string', 'null'] },
          status: { type: 'string', enum: ['enqueued'] },
          type: { type: 'string', enum: [...TASK_TYPES] },
          enqueuedAt: { type: 'string', format: 'date-time' },
          customMetadata: { type: 'string' },
        },
        required: ['taskUid', 'indexUid', 'status', 'type', 'enqueuedAt'],
      },
      Task: {
        type: 'object',
        properties: {
          uid: { type: 'integer', minimum: 0 },
          batchUid: { type: ['integer', 'null'] },
          indexUid: { type: ['string', 'null'] },
          status: { type: 'string', enum: [...TASK_STATUSES] },
          type: { type: 'string', enum: [...TASK_TYPES] },
          canceledBy: { type: ['integer', 'null'] },
          details: { type: 'object', description: 'Per task type; absent for `snapshotCreation`' },
          error: { oneOf: [REF('Error'), { type: 'null' }] },
          duration: { type: ['string', 'null'], description: 'ISO 8601 duration' },
          enqueuedAt: { type: 'string', format: 'date-time' },
          startedAt: { type: ['string', 'null'], format: 'date-time' },
          finishedAt: { type: ['string', 'null'], format: 'date-time' },
          customMetadata: { type: 'string' },
        },
        required: ['uid', 'batchUid', 'indexUid', 'status', 'type', 'canceledBy', 'error', 'duration', 'enqueuedAt', 'startedAt', 'finishedAt'],
      },
    },
  };
}

/** `/indexes/:indexUid` → `/indexes/{indexUid}`, with the parameter names. */
function openapiPath(url: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = url.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path, params };
}

const PATH_PARAMS: Record<string, JsonSchema> = {
  indexUid: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,400}$', description: 'Uid of the index' },
  taskUid: { type: 'integer', minimum: 0 },
  batchUid: { type: 'integer', minimum: 0 },
  documentId: { type: 'string', description: 'The document\'s primary key value' },
  key: { type: 'string', description: 'The key\'s uid or the key itself' },
  nodeId: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', description: 'Id of a cluster member' },
};

function operationId(method: string, path: string, taken: Set<string>): string {
  const words = path.split(/[/{}_-]+/).filter(Boolean);
  const base = method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}${n}`;
  taken.add(id);
  return id;
}

/** Error codes a route's own schemas can answer with (the field codes of its query and body). */
function schemaCodes(r: RouteDoc): ErrorCode[] {
  const out: ErrorCode[] = [];
  for (const fields of [r.query?.fields, (r.body as { fields?: Record<string, { code: ErrorCode; missingCode?: ErrorCode }> } | undefined)?.fields]) {
    for (const def of Object.values(fields ?? {})) {
      out.push(def.code);
      if (def.missingCode) out.push(def.missingCode);
    }
  }
  return out;
}

function errorCodes(r: RouteDoc, isPublic: boolean): ErrorCode[] {
  const codes = new Set<ErrorCode>([...(r.errors ?? []), ...schemaCodes(r)]);
  if (r.query || r.body) codes.add('bad_request');
  if (r.body) {
    for (const c of ['missing_payload', 'malformed_payload', 'missing_content_type', 'invalid_content_type', 'payload_too_large'] as const) codes.add(c);
  }
  if (r.url.includes(':indexUid')) codes.add('invalid_index_uid');
  if (!isPublic) {
    codes.add('missing_authorization_header');
    codes.add('invalid_api_key');
    if (r.action?.startsWith('keys.')) codes.add('missing_master_key');
  }
  return [...codes].filter((c) => c in ERROR_CODES);
}

function errorResponses(codes: ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) {
    const st = ERROR_CODES[c].status;
    byStatus.set(st, [...(byStatus.get(st) ?? []), c]);
  }
  const out: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    list.sort();
    out[String(status)] = {
      description: `Error codes: ${list.map((c) => `\`${c}\``).join(', ')}`,
      content: { 'application/json': { schema: { allOf: [REF('Error'), { properties: { code: { enum: list } } }] } } },
    };
  }
  out['default'] = {
    description: 'Any other error, in the same shape (e.g. `internal`, or `no_leader` while a cluster has no quorum)',
    content: { 'application/json': { schema: REF('Error') } },
  };
  return out;
}

function successResponse(r: RouteDoc): Record<string, unknown> {
  const description = r.response ?? r.summary;
  if (r.status === 204) return { description };
  const schema = r.responseSchema ?? (r.status === 202 ? REF('SummarizedTask') : {});
  return { description, content: { [r.responseMediaType ?? 'application/json']: { schema } } };
}

function bodyContent(r: RouteDoc): Record<string, unknown> {
  const schema = r.body!.jsonSchema();
  const content: Record<string, unknown> = {};
  for (const type of r.bodyMediaTypes ?? ['application/json']) {
    if (type === 'application/json') content[type] = { schema };
    else if (type === 'application/x-ndjson') content[type] = { schema: { type: 'string', description: 'One JSON object per line' } };
    else content[type] = { schema: { type: 'string', description: type === 'text/csv' ? 'CSV with a header row; `name:type` headers type a column' : type } };
  }
  return content;
}

function operation(r: RouteDoc, path: string, pathParams: string[], ids: Set<string>): Record<string, unknown> {
  const isPublic = PUBLIC_ROUTES.has(r.url);
  const parameters: Record<string, unknown>[] = pathParams.map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: PATH_PARAMS[name] ?? { type: 'string' },
  }));
  for (const [name, def] of Object.entries(r.query?.fields ?? {})) {
    const schema = def.schema.jsonSchema();
    const p: Record<string, unknown> = { name, in: 'query', required: !!def.required, schema };
    // Lists travel comma-separated in query strings.
    if (schema['type'] === 'array') Object.assign(p, { style: 'form', explode: false });
    parameters.push(p);
  }
  const op: Record<string, unknown> = {
    operationId: operationId(r.method as string, path, ids),
    summary: r.summary,
    tags: r.tags,
  };
  if (parameters.length > 0) op['parameters'] = parameters;
  if (r.body) op['requestBody'] = { required: true, content: bodyContent(r) };
  op['responses'] = { [String(r.status)]: successResponse(r), ...errorResponses(errorCodes(r, isPublic)) };
  if (isPublic) op['security'] = [];
  if (r.action) op['x-action'] = r.action;
  if (r.alsoRequires) op['x-also-requires'] = r.alsoRequires;
  return op;
}

/** Builds the document from `routes` (every route the server registered, by default). */
export function openapiDocument(routes: readonly RouteDoc[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const ids = new Set<string>();
  const tags = new Set<string>();
  const sorted = [...routes].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  for (const r of sorted) {
    const { path, params } = openapiPath(r.url);
    const methods = [r.method].flat().map((m) => String(m).toLowerCase());
    for (const m of methods) {
      if (m === 'head' || m === 'options') continue;
      (paths[path] ??= {})[m] = operation({ ...r, method: m.toUpperCase() as RouteDoc['method'] }, path, params, ids);
    }
    r.tags.forEach((t) => tags.add(t));
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Trine',
      version: VERSION.pkgVersion,
      summary: 'A replicated search engine that speaks the Meilisearch HTTP API',
      description:
        'Every write is a task: routes answering 202 return a summarized task to follow with `GET /tasks/{taskUid}`. `x-action` names the API key action an operation needs. Generated from the schemas the server validates requests with.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    security: [{ bearerAuth: [] }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: components(),
  };
}
