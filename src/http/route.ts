import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { assertIndexUid } from '../engine/indexes/index-uid.js';
import type { ErrorCode } from '../errors/codes.js';
import { jsonBodyAndText } from './body.js';
import type { FieldDef, FieldsOf, ObjectSchema, Schema } from './schema.js';
import { assertActionGranted, requestGrant } from '../auth/request-auth.js';
import { runWithAuthority } from '../util/request-context.js';

/** A route as the OpenAPI document describes it. */
export interface RouteDoc {
  method: HTTPMethods;
  url: string;
  summary: string;
  tags: string[];
  /** Key action required (for documentation; auth enforces it). */
  action?: string;
  /** Further actions the key must hold too (the reference's double-action routes); `route()` checks them. */
  alsoRequires?: string[];
  query?: ObjectSchema<Record<string, FieldDef>>;
  body?: Schema<unknown>;
  bodyMediaTypes?: string[];
  /** Success status and a description of the response. */
  status: number;
  response?: string;
  /** JSON Schema of the success body, when known (`$ref` to `#/components/schemas/...` allowed). */
  responseSchema?: Record<string, unknown>;
  /** Media type of the success body when it is not JSON. */
  responseMediaType?: string;
  errors?: ErrorCode[];
}

/** What a handler gets: the request read and checked by the schemas its route declares. */
export interface RouteInput<Q, B> {
  /** The `{indexUid}` of the path, checked against the uid rules ('' when the path has none). */
  uid: string;
  /** The query string, checked by `query` (empty without it). */
  query: Q;
  /** The body: checked by `body` as JSON by default, as parsed JSON with `read: 'unchecked'`, undefined with `read: 'raw'`. */
  body: B;
}

export interface RouteDef<F extends Record<string, FieldDef>, B> extends Omit<RouteDoc, 'query' | 'body'> {
  query?: ObjectSchema<F>;
  body?: Schema<B>;
  /**
   * How the body is read. `checked` (the default when `body` is declared): a JSON body checked
   * by `body`; `unchecked`: a JSON body the handler checks itself (by rules richer than the
   * schema, whose words the reference fixes); `raw`: the handler reads the body itself.
   */
  read?: 'checked' | 'unchecked' | 'raw';
  /** Code of an error about the body as a whole (a wrong type, an unknown field). */
  bodyCode?: ErrorCode;
  /** Checks run on the parsed JSON before the schema (errors the reference reports first). */
  precheck?: (raw: unknown, text: string) => void;
  /** An absent body reads as `{}` (a body whose every field is optional, for a bare POST). */
  emptyBodyIs?: unknown;
  /** Bodies up to the payload limit (document uploads, deletions by id) rather than the JSON limit. */
  largeBody?: boolean;
  /** Integers past 2^53 in the body read as bigints, exactly (bodies that name document ids; see exact-json.ts). */
  exactIntegers?: boolean;
  /** An open-ended stream (logs, server-sent events): sent as written, never compressed (that would hold it back). */
  streaming?: boolean;
  handler: (req: FastifyRequest, reply: FastifyReply, input: RouteInput<FieldsOf<F>, B>) => Promise<unknown>;
}

/** The body size limits of this app (see `--http-payload-size-limit` and `--http-json-payload-size-limit`). */
export interface BodyLimits {
  payload: number;
  json: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered through `route()`, in registration order, for the OpenAPI document. */
    routeDocs: RouteDoc[];
    bodyLimits: BodyLimits;
  }
}

/** Makes `route()` usable on this app: the body limits routes read with, and the list of route descriptions. */
export function prepareRoutes(app: FastifyInstance, limits: BodyLimits): void {
  app.decorate('bodyLimits', limits);
  app.decorate('routeDocs', [] as RouteDoc[]);
}

function isEmptyBody(req: FastifyRequest): boolean {
  return req.body === undefined || (Buffer.isBuffer(req.body) && req.body.length === 0);
}

/**
 * Registers a route and records its description for the OpenAPI document. The same schemas
 * check the request: the path's index uid, then the query string, then the body, so that
 * what the document says and what the server accepts cannot drift apart.
 */
export function route<F extends Record<string, FieldDef> = Record<string, never>, B = undefined>(app: FastifyInstance, def: RouteDef<F, B>): void {
  const { handler, read: readMode, bodyCode, precheck, emptyBodyIs, largeBody, exactIntegers, streaming, ...doc } = def;
  const docs = app.routeDocs;
  if (!docs.some((r) => r.method === doc.method && r.url === doc.url)) docs.push(doc as RouteDoc);
  const read = readMode ?? (def.body ? 'checked' : 'raw');
  const hasUid = def.url.includes(':indexUid');
  app.route({
    method: def.method,
    url: def.url,
    // `status` tells hooks which routes create a task (202), such as the network's write forwarding.
    config: { action: def.action, status: def.status },
    ...(streaming ? { compress: false as const } : {}),
    handler: async (req, reply) => {
      for (const a of def.alsoRequires ?? []) assertActionGranted(req, a);
      let uid = '';
      if (hasUid) {
        uid = (req.params as { indexUid: string }).indexUid;
        assertIndexUid(uid);
      }
      const query = (def.query ? def.query.validate(queryRecord(req), 'query') : {}) as FieldsOf<F>;
      let body: unknown;
      if (read !== 'raw') {
        const limit = largeBody ? app.bodyLimits.payload : app.bodyLimits.json;
        const { value: raw, text } = emptyBodyIs !== undefined && isEmptyBody(req) ? { value: emptyBodyIs, text: '' } : jsonBodyAndText(req, limit, exactIntegers);
        precheck?.(raw, text);
        body = read === 'checked' && def.body ? def.body.parse(raw, { path: '', code: bodyCode ?? 'bad_request', mode: 'json' }) : raw;
      }
      // The commands the handler makes carry the key that authorized it (see request-context.ts).
      const out = await runWithAuthority(req.log, requestGrant(req).authority, () => handler(req, reply, { uid, query, body: body as B }));
      if (reply.sent) return reply;
      reply.status(def.status);
      return out;
    },
  });
}

/** Query parameters as a flat record of strings (the last value wins). */
export function queryRecord(req: FastifyRequest): Record<string, string> {
  const q = (req.query ?? {}) as Record<string, string | string[]>;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) out[k] = Array.isArray(v) ? v[v.length - 1]! : v;
  return out;
}

/**
 * Sends an open-ended stream (the route declares `streaming`): its headers go out at once,
 * before the first chunk, so a client sees the response start even while nothing is written.
 */
export function sendOpenStream(reply: FastifyReply, stream: NodeJS.ReadableStream, contentType: string): FastifyReply {
  reply.header('content-type', contentType);
  reply.raw.once('pipe', () => reply.raw.flushHeaders());
  return reply.send(stream);
}
