import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { openapiDocument } from '../openapi.js';
import { route } from '../route.js';

/**
 * `GET /openapi.json`: public, like `/health` (see `PUBLIC_ROUTES`), so that API tools can
 * read it without a key; it describes the release, not this instance's data. Built on the
 * first request, once every route of the app has been registered.
 */
export function openapiRoutes(app: FastifyInstance, _ctx: AppContext): void {
  let doc: string | null = null;
  route(app, {
    method: 'GET',
    url: '/openapi.json',
    summary: 'This API described as an OpenAPI 3.1 document (public)',
    tags: ['OpenAPI'],
    status: 200,
    response: 'The OpenAPI 3.1 document',
    responseSchema: { type: 'object', required: ['openapi', 'info', 'paths'] },
    handler: async (_req, reply) => {
      doc ??= JSON.stringify(openapiDocument(app.routeDocs));
      reply.header('content-type', 'application/json; charset=utf-8');
      return doc;
    },
  });
}
