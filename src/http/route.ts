import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { ErrorCode } from '../errors/codes.js';
import type { ObjectSchema, Schema, FieldDef } from './schema.js';
import { assertActionGranted } from '../auth/request-auth.js';

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

/** Every route registered, in registration order. */
export const ROUTES: RouteDoc[] = [];

export interface RouteDef extends RouteDoc {
  handler: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  /** An open-ended stream (logs, server-sent events): sent as written, never compressed (that would hold it back). */
  streaming?: boolean;
}

/** Registers a route and records its description for the OpenAPI document. */
export function route(app: FastifyInstance, def: RouteDef): void {
  const { handler, streaming, ...doc } = def;
  if (!ROUTES.some((r) => r.method === doc.method && r.url === doc.url)) ROUTES.push(doc);
  app.route({
    method: def.method,
    url: def.url,
    config: { action: def.action },
    ...(streaming ? { compress: false as const } : {}),
    handler: async (req, reply) => {
      for (const a of def.alsoRequires ?? []) assertActionGranted(req, a);
      const out = await handler(req, reply);
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
