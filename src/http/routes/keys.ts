import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ACTIONS, invalidIndexPatternMessage, isGlobalAction, isValidIndexPattern } from '../../auth/actions.js';
import { parseUuid } from '../../util/uuid.js';
import { KeyStore, type ApiKey, type KeyOp, type NewKey } from '../../auth/key-store.js';
import { ApiError, type ErrorCode } from '../../errors/api-error.js';
import { rfc3339 } from '../../util/time.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { refuseImmutable, s, typeError, valueError } from '../schema.js';

/** `expiresAt` as the reference prints it: RFC 3339, fraction only when there is one. */
function expiryText(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, 'Z').replace(/(\.\d*?)0+Z$/, '$1Z');
}

/** The key object of every `/keys` answer, fields in the reference's order. */
export function keyView(keys: KeyStore, k: ApiKey): Record<string, unknown> {
  return {
    name: k.name,
    description: k.description,
    key: keys.keyValue(k.uid),
    uid: k.uid,
    actions: k.actions,
    indexes: k.indexes,
    expiresAt: k.expiresAt === null ? null : expiryText(k.expiresAt),
    createdAt: rfc3339(k.createdAt),
    updatedAt: rfc3339(k.updatedAt),
  };
}

const DATE_FORMS = [
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})()()$/,
  /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})()()$/,
  /^(\d{4})-(\d{2})-(\d{2})()()()()()$/,
];

/** The reference's accepted expiry forms: RFC 3339, or a date (and time) without offset read as UTC. */
export function parseExpiry(text: string): number | null {
  for (const form of DATE_FORMS) {
    const m = form.exec(text);
    if (!m) continue;
    const [y, mo, d, h, mi, sec] = m.slice(1, 7).map((x) => (x ? Number(x) : 0)) as [number, number, number, number, number, number];
    const ms = Date.UTC(y, mo - 1, d, h, mi, sec);
    const back = new Date(ms);
    // Date.UTC rolls over out-of-range parts (Feb 30 → Mar 2): such dates are invalid.
    if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || sec > 59) return null;
    const frac = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0;
    const off = m[8] && m[8].toUpperCase() !== 'Z' ? (m[8][0] === '-' ? -1 : 1) * (Number(m[8].slice(1, 3)) * 60 + Number(m[8].slice(4, 6))) : 0;
    return ms + frac - off * 60_000;
  }
  return null;
}

const nullableText = () => s.string().nullable();

const uidSchema = s.custom(
  (v, ctx) => {
    if (typeof v !== 'string') throw typeError(ctx, 'a string', v);
    const parsed = parseUuid(v);
    if ('error' in parsed) throw valueError(ctx, parsed.error);
    return parsed.uuid;
  },
  { type: 'string', format: 'uuid' },
);

const patternSchema = s.custom(
  (v, ctx) => {
    if (typeof v !== 'string') throw typeError(ctx, 'a string', v);
    if (!isValidIndexPattern(v)) throw valueError(ctx, invalidIndexPatternMessage(v));
    return v;
  },
  { type: 'string', description: 'An index uid, optionally ending with `*`, or `*`' },
);

const expirySchema = s.custom(
  (v, ctx) => {
    if (v === null) return null;
    if (typeof v !== 'string') throw typeError(ctx, 'a string', v);
    const ms = parseExpiry(v);
    if (ms === null || ms <= Date.now()) {
      throw valueError(
        ctx,
        `\`${v}\` is not a valid date. It should follow the RFC 3339 format to represents a date or datetime in the future or specified as a null value. e.g. 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'.\n`,
      );
    }
    return ms;
  },
  { type: ['string', 'null'], format: 'date-time' },
);

const createBody = s.object({
  description: s.field(nullableText(), 'invalid_api_key_description'),
  name: s.field(nullableText(), 'invalid_api_key_name'),
  uid: s.field(uidSchema, 'invalid_api_key_uid'),
  actions: s.required(s.array(s.enum(ACTIONS)), 'invalid_api_key_actions', 'missing_api_key_actions'),
  indexes: s.required(s.array(patternSchema), 'invalid_api_key_indexes', 'missing_api_key_indexes'),
  expiresAt: s.required(expirySchema, 'invalid_api_key_expires_at', 'missing_api_key_expires_at'),
});

const patchBody = s.object({
  description: s.field(nullableText(), 'invalid_api_key_description'),
  name: s.field(nullableText(), 'invalid_api_key_name'),
});

const IMMUTABLE: Record<string, ErrorCode> = {
  uid: 'immutable_api_key_uid',
  actions: 'immutable_api_key_actions',
  indexes: 'immutable_api_key_indexes',
  expiresAt: 'immutable_api_key_expires_at',
  createdAt: 'immutable_api_key_created_at',
  updatedAt: 'immutable_api_key_updated_at',
};

const refuseImmutableKeyField = refuseImmutable(IMMUTABLE, ['description', 'name']);

/** PATCH takes `name` and `description` only; the other key fields get their own error code, in body order. */
function checkPatchFields(body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  for (const k of Object.keys(body)) {
    if (k === 'name' || k === 'description') continue;
    refuseImmutableKeyField({ [k]: null });
    throw new ApiError('bad_request', `Unknown field \`${k}\`: expected one of \`description\`, \`name\``);
  }
}

const listQuery = s.object({
  offset: s.field(s.uint(), 'invalid_api_key_offset'),
  limit: s.field(s.uint(), 'invalid_api_key_limit'),
});

export function keyRoutes(app: FastifyInstance, ctx: AppContext): void {
  const keys = ctx.keys;
  const param = (req: FastifyRequest) => (req.params as { key: string }).key;
  const propose = (op: KeyOp) => ctx.configure(KeyStore.COMMAND, op);

  route(app, {
    method: 'POST',
    url: '/keys',
    summary: 'Create an API key',
    tags: ['Keys'],
    action: 'keys.create',
    body: createBody,
    status: 201,
    errors: ['api_key_already_exists', 'index_scoped_api_key_with_global_action'],
    handler: async (_req, _reply, { body }) => {
      if (!body.indexes.includes('*')) {
        const global = body.actions.find(isGlobalAction);
        if (global !== undefined) {
          throw new ApiError(
            'index_scoped_api_key_with_global_action',
            `The action \`${global}\` concerns the whole instance and cannot be given to a key restricted to some indexes. Use \`"indexes": ["*"]\` for this key, or leave the action out.`,
          );
        }
      }
      const key: NewKey = {
        // The proposer draws the uid so that every node applies the same one.
        uid: body.uid ?? randomUUID(),
        name: body.name ?? null,
        description: body.description ?? null,
        actions: body.actions,
        indexes: body.indexes,
        expiresAt: body.expiresAt,
      };
      await propose({ op: 'create', key });
      return keyView(keys, keys.get(key.uid)!);
    },
  });

  route(app, {
    method: 'GET',
    url: '/keys',
    summary: 'List API keys, newest first',
    tags: ['Keys'],
    action: 'keys.get',
    query: listQuery,
    status: 200,
    handler: async (_req, _reply, { query: q }) => {
      const offset = q.offset ?? 0;
      const lim = q.limit ?? 20;
      const all = keys.list();
      return { results: all.slice(offset, offset + lim).map((k) => keyView(keys, k)), offset, limit: lim, total: all.length };
    },
  });

  route(app, {
    method: 'GET',
    url: '/keys/:key',
    summary: 'Get an API key by uid or by value',
    tags: ['Keys'],
    action: 'keys.get',
    status: 200,
    errors: ['api_key_not_found'],
    handler: async (req) => keyView(keys, keys.resolve(param(req))),
  });

  route(app, {
    method: 'PATCH',
    url: '/keys/:key',
    summary: 'Rename or redescribe an API key',
    tags: ['Keys'],
    action: 'keys.update',
    body: patchBody,
    precheck: checkPatchFields,
    status: 200,
    errors: ['api_key_not_found'],
    handler: async (req, _reply, { body }) => {
      const ref = param(req);
      const { uid } = keys.resolve(ref);
      const op: KeyOp = { op: 'update', uid, ref: uid };
      if (body.name !== undefined) op.name = body.name;
      if (body.description !== undefined) op.description = body.description;
      await propose(op);
      return keyView(keys, keys.get(uid)!);
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/keys/:key',
    summary: 'Delete an API key',
    tags: ['Keys'],
    action: 'keys.delete',
    status: 204,
    errors: ['api_key_not_found'],
    handler: async (req) => {
      const { uid } = keys.resolve(param(req));
      await propose({ op: 'delete', uid, ref: uid });
      return undefined;
    },
  });
}
