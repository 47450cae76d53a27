import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { parseUuid } from '../../util/uuid.js';
import { immutableWebhook, NIL_UUID, webhookNotFound, webhookView, WebhookStore, type WebhookOp } from '../../webhooks/webhook-store.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { refuseImmutable, s } from '../schema.js';

const headersSchema = s.record(s.string().nullable());

const webhookBody = s.object({
  url: s.field(s.string().nullable(), 'invalid_webhook_url'),
  headers: s.field(headersSchema.nullable(), 'invalid_webhook_headers'),
});

const webhookSchema = {
  type: 'object',
  properties: {
    uuid: { type: 'string', format: 'uuid' },
    isEditable: { type: 'boolean' },
    url: { type: 'string' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
  },
  required: ['uuid', 'isEditable', 'url', 'headers'],
};

/** In a create or update, `uuid` and `isEditable` are the server's, not the client's: refused before the schema's checks. */
const rejectImmutable = refuseImmutable({ uuid: 'immutable_webhook_uuid', isEditable: 'immutable_webhook_is_editable' }, ['url', 'headers']);

function uuidParam(req: FastifyRequest): string {
  const raw = (req.params as { uuid: string }).uuid;
  const parsed = parseUuid(raw);
  if ('error' in parsed) throw new ApiError('invalid_webhook_uuid', `Invalid UUID: ${parsed.error}`);
  return parsed.uuid;
}

export function webhookRoutes(app: FastifyInstance, ctx: AppContext): void {
  const configure = (op: WebhookOp) => ctx.configure(WebhookStore.COMMAND, op);

  route(app, {
    method: 'GET',
    url: '/webhooks',
    summary: 'List the webhooks notified after every batch (Authorization values masked)',
    tags: ['Webhooks'],
    action: 'webhooks.get',
    status: 200,
    responseSchema: { type: 'object', properties: { results: { type: 'array', items: webhookSchema } } },
    handler: async () => ({ results: ctx.webhooks.all().map(([uuid, w]) => webhookView(uuid, w)) }),
  });

  route(app, {
    method: 'POST',
    url: '/webhooks',
    summary: 'Register a webhook: its URL receives the tasks of every finished batch as gzip-compressed NDJSON',
    tags: ['Webhooks'],
    action: 'webhooks.create',
    body: webhookBody,
    precheck: rejectImmutable,
    status: 201,
    responseSchema: webhookSchema,
    errors: ['invalid_webhook_url', 'invalid_webhook_headers', 'invalid_webhooks', 'immutable_webhook_uuid', 'immutable_webhook_is_editable'],
    handler: async (_req, _reply, { body }) => {
      // Decided here, once, and carried in the log entry.
      const uuid = randomUUID();
      const headers = Object.fromEntries(Object.entries(body.headers ?? {}).map(([k, v]) => [k, v ?? '']));
      return configure({ op: 'create', uuid, url: body.url ?? null, headers });
    },
  });

  route(app, {
    method: 'GET',
    url: '/webhooks/:uuid',
    summary: 'Get one webhook',
    tags: ['Webhooks'],
    action: 'webhooks.get',
    status: 200,
    responseSchema: webhookSchema,
    errors: ['invalid_webhook_uuid', 'webhook_not_found'],
    handler: async (req) => {
      const uuid = uuidParam(req);
      const w = ctx.webhooks.get(uuid);
      if (!w) throw webhookNotFound(uuid);
      return webhookView(uuid, w);
    },
  });

  route(app, {
    method: 'PATCH',
    url: '/webhooks/:uuid',
    summary: 'Change a webhook: `url`, or `headers` (merged; a header set to null is removed, `headers: null` removes them all)',
    tags: ['Webhooks'],
    action: 'webhooks.update',
    body: webhookBody,
    precheck: rejectImmutable,
    status: 200,
    responseSchema: webhookSchema,
    errors: ['invalid_webhook_uuid', 'webhook_not_found', 'immutable_webhook', 'invalid_webhook_url', 'invalid_webhook_headers'],
    handler: async (req, _reply, { body }) => {
      const uuid = uuidParam(req);
      if (uuid === NIL_UUID) throw immutableWebhook(uuid);
      return configure({
        op: 'update',
        uuid,
        ...(body.url !== undefined ? { url: body.url } : {}),
        ...(body.headers !== undefined ? { headers: body.headers } : {}),
      });
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/webhooks/:uuid',
    summary: 'Remove a webhook',
    tags: ['Webhooks'],
    action: 'webhooks.delete',
    status: 204,
    errors: ['invalid_webhook_uuid', 'webhook_not_found', 'immutable_webhook'],
    handler: async (req, reply) => {
      const uuid = uuidParam(req);
      if (uuid === NIL_UUID) throw immutableWebhook(uuid);
      await configure({ op: 'delete', uuid });
      return reply.status(204).send();
    },
  });
}
