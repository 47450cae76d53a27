import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode } from '../../errors/api-error.js';
import { normalizeDocumentId } from '../../engine/documents/primary-key.js';
import { invalidIndexUidMessage, isValidIndexUid } from '../../engine/indexes/index-uid.js';
import { ruleNotFound, ruleView, type PinAction, type RuleConditions, type SearchRule } from '../../engine/search-rules/rules.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s, typeError, valueError, type Ctx } from '../schema.js';
import { enqueueTask, writeQuery } from './params.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function dateTime(v: unknown, ctx: Ctx): string {
  const text = s.string().parse(v, ctx);
  if (!RFC3339.test(text) || Number.isNaN(Date.parse(text))) throw valueError(ctx, `\`${text}\` is not a valid RFC 3339 date-time, such as \`2025-11-28T00:00:00Z\``);
  return text;
}

/** Everything inside `conditions` (or `actions`) reports that field's code, unknown fields included. */
function conditionsSchema(code: ErrorCode) {
  const query = s.custom((v, ctx) => {
    const q = s.object({ isEmpty: s.field(s.boolean().nullable(), code), words: s.field(s.string().nullable(), code) }, { unknownCode: code }).parse(v, ctx);
    const out: NonNullable<RuleConditions['query']> = {};
    if (q.isEmpty !== undefined && q.isEmpty !== null) out.isEmpty = q.isEmpty;
    if (q.words !== undefined && q.words !== null) out.words = q.words;
    if (out.isEmpty !== undefined && out.words !== undefined) throw valueError(ctx, 'either `isEmpty` or `words` can be used, not all at once');
    if (out.isEmpty === undefined && out.words === undefined) throw valueError(ctx, 'at least `isEmpty` or `words` must be used');
    return out;
  }, { type: 'object', properties: { isEmpty: { type: ['boolean', 'null'] }, words: { type: ['string', 'null'] } }, additionalProperties: false });
  const time = s.custom((v, ctx) => {
    const t = s.object({ start: s.field(s.custom(dateTime, { type: 'string' }).nullable(), code), end: s.field(s.custom(dateTime, { type: 'string' }).nullable(), code) }, { unknownCode: code }).parse(v, ctx);
    const out: NonNullable<RuleConditions['time']> = {};
    if (t.start) out.start = t.start;
    if (t.end) out.end = t.end;
    if (out.start && out.end && Date.parse(out.start) > Date.parse(out.end)) throw valueError(ctx, `\`end\` (\`${out.end}\`) should be later than \`start\` (\`${out.start}\`)`);
    return out;
  }, { type: 'object', properties: { start: { type: ['string', 'null'] }, end: { type: ['string', 'null'] } }, additionalProperties: false });
  return s.custom((v, ctx): RuleConditions => {
    const c = s.object({ query: s.field(query.nullable(), code), time: s.field(time.nullable(), code) }, { unknownCode: code }).parse(v, ctx);
    const out: RuleConditions = {};
    if (c.query) out.query = c.query;
    if (c.time) out.time = c.time;
    return out;
  }, { type: 'object', properties: { query: { type: ['object', 'null'] }, time: { type: ['object', 'null'] } }, additionalProperties: false });
}

function actionsSchema(code: ErrorCode) {
  const indexUid = s.custom((v, ctx) => {
    const uid = s.string().parse(v, ctx);
    if (!isValidIndexUid(uid)) throw valueError(ctx, invalidIndexUidMessage(uid));
    return uid;
  }, { type: 'string' });
  const docId = s.custom((v, ctx) => {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'bigint') throw typeError(ctx, 'a string or an integer', v);
    try {
      return normalizeDocumentId(v);
    } catch (e) {
      throw valueError(ctx, (e as Error).message);
    }
  }, { oneOf: [{ type: 'string' }, { type: 'integer' }] });
  const selector = s.object({ indexUid: s.field(indexUid.nullable(), code), id: s.required(docId, code) }, { unknownCode: code });
  const action = s.object({ type: s.required(s.enum(['pin'] as const), code), position: s.required(s.uint(), code) }, { unknownCode: code });
  const one = s.custom((v, ctx): PinAction => {
    const a = s.object({ selector: s.required(selector, code), action: s.required(action, code) }, { unknownCode: code }).parse(v, ctx);
    return {
      selector: { ...(a.selector.indexUid ? { indexUid: a.selector.indexUid } : {}), id: a.selector.id },
      action: { type: 'pin', position: a.action.position },
    };
  }, { type: 'object', properties: { selector: { type: 'object' }, action: { type: 'object' } }, required: ['selector', 'action'] });
  return s.array(one);
}

const updateBody = s.object({
  description: s.field(s.string().nullable(), 'invalid_dynamic_search_rule_description'),
  precedence: s.field(s.uint().nullable(), 'invalid_dynamic_search_rule_priority'),
  active: s.field(s.boolean().nullable(), 'invalid_dynamic_search_rule_active'),
  conditions: s.field(conditionsSchema('invalid_dynamic_search_rule_conditions').nullable(), 'invalid_dynamic_search_rule_conditions'),
  actions: s.field(actionsSchema('invalid_dynamic_search_rule_actions').nullable(), 'invalid_dynamic_search_rule_actions'),
});

const listBody = s.object({
  offset: s.field(s.uint(), 'invalid_dynamic_search_rule_offset'),
  limit: s.field(s.uint(), 'invalid_dynamic_search_rule_limit'),
  filter: s.field(
    s
      .object(
        {
          query: s.field(s.string().nullable(), 'invalid_dynamic_search_rule_filter_query'),
          active: s.field(s.boolean().nullable(), 'invalid_dynamic_search_rule_filter_active'),
        },
        { unknownCode: 'invalid_dynamic_search_rule_filter' },
      )
      .nullable(),
    'invalid_dynamic_search_rule_filter',
  ),
});

const ruleSchema = {
  type: 'object',
  properties: {
    uid: { type: 'string' },
    description: { type: 'string' },
    precedence: { type: 'integer' },
    active: { type: 'boolean' },
    conditions: { type: 'object' },
    actions: { type: 'array', items: { type: 'object' } },
    lastUpdatedAt: { type: 'string' },
  },
};

function uidParam(req: FastifyRequest): string {
  const uid = (req.params as { uid: string }).uid;
  if (!isValidIndexUid(uid)) {
    throw new ApiError(
      'invalid_dynamic_search_rule_uid',
      `\`${uid}\` is not a valid dynamic search rule uid. Rule uids are made of alphanumeric characters, hyphens (-) and underscores (_), 400 bytes at most.`,
    );
  }
  return uid;
}

/** Whether `query` (case and accents aside) is in the rule's uid, description or condition words. */
function mentions(rule: SearchRule, query: string): boolean {
  const fold = (t: string) => t.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
  const needle = fold(query.trim());
  if (needle === '') return true;
  return [rule.uid, rule.description ?? '', rule.conditions.query?.words ?? ''].some((t) => fold(t).includes(needle));
}

export function searchRuleRoutes(app: FastifyInstance, ctx: AppContext): void {
  const check = () => ctx.features.check('dynamicSearchRules', 'Using the `/dynamic-search-rules` routes');
  const tags = ['Dynamic search rules'];

  route(app, {
    method: 'POST',
    url: '/dynamic-search-rules',
    summary: 'List dynamic search rules by uid, paginated, filtered by `active` and by a text found in their uid, description or condition words',
    tags,
    action: 'dynamicSearchRules.get',
    body: listBody,
    status: 200,
    errors: ['feature_not_enabled'],
    handler: async (_req, _reply, { body }) => {
      check();
      const offset = body.offset ?? 0;
      const take = body.limit ?? 20;
      const f = body.filter;
      const all = ctx.engine.searchRules
        .list()
        .filter((r) => (f?.active === undefined || f.active === null || r.active === f.active) && (!f?.query || mentions(r, f.query)));
      return { results: all.slice(offset, offset + take).map(ruleView), offset, limit: take, total: all.length };
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/dynamic-search-rules',
    summary: 'Delete every dynamic search rule (task `dsrClear`)',
    tags,
    action: 'dynamicSearchRules.delete',
    query: writeQuery,
    status: 202,
    errors: ['feature_not_enabled'],
    handler: async (_req, _reply, { query }) => {
      check();
      return enqueueTask(ctx, { type: 'dsrClear', indexUid: null, details: { deletedRules: null }, params: { op: 'dsrClear' } }, query);
    },
  });

  route(app, {
    method: 'GET',
    url: '/dynamic-search-rules/:uid',
    summary: 'Get one dynamic search rule',
    tags,
    action: 'dynamicSearchRules.get',
    status: 200,
    responseSchema: ruleSchema,
    errors: ['feature_not_enabled', 'dynamic_search_rule_not_found'],
    handler: async (req) => {
      check();
      const uid = uidParam(req);
      const rule = ctx.engine.searchRules.get(uid);
      if (!rule) throw ruleNotFound(uid);
      return ruleView(rule);
    },
  });

  route(app, {
    method: 'PATCH',
    url: '/dynamic-search-rules/:uid',
    summary: 'Create a dynamic search rule, or change the fields given (`null` resets one) (task `dsrUpdate`)',
    tags,
    action: 'dynamicSearchRules.update',
    query: writeQuery,
    body: updateBody,
    // Pins name documents by id: integers past 2^53 keep their digits.
    exactIntegers: true,
    status: 202,
    errors: ['feature_not_enabled', 'invalid_dynamic_search_rule_uid', 'invalid_dynamic_search_rule_conditions', 'invalid_dynamic_search_rule_actions'],
    handler: async (req, _reply, { query, body }) => {
      check();
      const uid = uidParam(req);
      return enqueueTask(ctx, { type: 'dsrUpdate', indexUid: null, details: { rule: uid, updatedRules: null }, params: { op: 'dsrUpdate', uid, update: body } }, query);
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/dynamic-search-rules/:uid',
    summary: 'Delete one dynamic search rule (task `dsrUpdate`)',
    tags,
    action: 'dynamicSearchRules.delete',
    query: writeQuery,
    status: 202,
    errors: ['feature_not_enabled', 'invalid_dynamic_search_rule_uid'],
    handler: async (req, _reply, { query }) => {
      check();
      const uid = uidParam(req);
      return enqueueTask(ctx, { type: 'dsrUpdate', indexUid: null, details: { rule: uid, deletedRules: null }, params: { op: 'dsrDelete', uid } }, query);
    },
  });
}
