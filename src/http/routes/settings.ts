import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestGrant } from '../../auth/request-auth.js';
import { SETTING_FIELDS, settingsSchema, type SettingField } from '../../engine/settings/fields.js';
import {
  checkSettingsPatch,
  parseSettingBody,
  parseSettingsBody,
  resetAllPatch,
  settingsDetails,
  storedPatch,
  type PatchEnv,
  type SettingsPatch,
} from '../../engine/settings/patch.js';
import { settingsView, settingView } from '../../engine/settings/settings.js';
import { isFinished } from '../../tasks/task.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s } from '../schema.js';
import { enqueueTask, writeQuery } from './params.js';

/**
 * What the settings checks know of the index: the experimental features, and each embedder as
 * stored, unless an unfinished task may still change it.
 */
function patchEnv(ctx: AppContext, uid: string): PatchEnv {
  let unsettled: Set<string> | 'all' | null = null;
  const pendingEmbedders = (): Set<string> | 'all' => {
    if (unsettled) return unsettled;
    const names = new Set<string>();
    for (const t of ctx.queue.tasks.values()) {
      if (isFinished(t.status)) continue;
      const p = t.params;
      if (p.op === 'swap' && p.swaps.some((sw) => sw.indexes.includes(uid))) return (unsettled = 'all');
      if (t.indexUid !== uid) continue;
      if (p.op === 'deleteIndex' || p.op === 'updateIndex') return (unsettled = 'all');
      if (p.op !== 'settings' || !('embedders' in p.settings)) continue;
      const e = p.settings['embedders'];
      if (e === null) return (unsettled = 'all');
      for (const name of Object.keys(e as object)) names.add(name);
    }
    return (unsettled = names);
  };
  return {
    isEnabled: (feature) => ctx.features.isEnabled(feature),
    currentEmbedder(name) {
      const pending = pendingEmbedders();
      if (pending === 'all' || pending.has(name)) return 'pending';
      return ctx.engine.indexes.get(uid)?.meta.settings.embedders[name];
    },
  };
}

/** A bare JSON value as the body: Fastify would send a string as plain text. */
function jsonValue(reply: FastifyReply, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  reply.header('content-type', 'application/json; charset=utf-8');
  return JSON.stringify(value);
}

export function settingsRoutes(app: FastifyInstance, ctx: AppContext): void {
  /** Checks a parsed update against the node and the index, then enqueues it. */
  async function enqueue(
    req: FastifyRequest,
    input: { uid: string; query: { customMetadata?: string } },
    patch: SettingsPatch,
    opts: { check: boolean; replace?: boolean; reset?: boolean },
  ) {
    const { uid } = input;
    if (opts.check) checkSettingsPatch(patch, patchEnv(ctx, uid));
    return enqueueTask(ctx, {
      type: 'settingsUpdate',
      indexUid: uid,
      details: settingsDetails(patch),
      params: {
        op: 'settings',
        settings: storedPatch(patch, { replace: opts.replace ?? false }),
        // Resetting the settings of an index that does not exist fails (index_not_found), as in
        // the reference; an update creates it, if the requester may create indexes.
        ...(requestGrant(req).mayCreateIndexes && !opts.reset ? {} : { createIndex: false as const }),
      },
    }, input.query);
  }

  route(app, {
    method: 'GET',
    url: '/indexes/:indexUid/settings',
    summary: 'All settings of an index',
    tags: ['Settings'],
    action: 'settings.get',
    status: 200,
    errors: ['index_not_found'],
    handler: async (_req, _reply, { uid }) => settingsView(ctx.engine.getIndex(uid).meta.settings, { foreignKeys: ctx.features.isEnabled('foreignKeys') }),
  });

  route(app, {
    method: 'PATCH',
    url: '/indexes/:indexUid/settings',
    summary: 'Update settings (partial; `null` resets a setting; a missing index is created)',
    tags: ['Settings'],
    action: 'settings.update',
    query: writeQuery,
    body: s.any(settingsSchema()),
    // Checked by the settings rules, whose words are the reference's (see engine/settings/).
    read: 'unchecked',
    status: 202,
    errors: ['bad_request', 'feature_not_enabled'],
    handler: async (req, _reply, input) => enqueue(req, input, parseSettingsBody(input.body), { check: true }),
  });

  route(app, {
    method: 'DELETE',
    url: '/indexes/:indexUid/settings',
    summary: 'Reset every setting to its default',
    tags: ['Settings'],
    action: 'settings.update',
    query: writeQuery,
    status: 202,
    handler: async (req, _reply, input) => enqueue(req, input, resetAllPatch(), { check: false, reset: true }),
  });

  for (const field of SETTING_FIELDS) singleSettingRoutes(field);

  function singleSettingRoutes(field: SettingField): void {
    const url = `/indexes/:indexUid/settings/${field.route}`;
    route(app, {
      method: 'GET',
      url,
      summary: `Get \`${field.key}\``,
      tags: ['Settings'],
      action: 'settings.get',
      status: 200,
      errors: ['index_not_found'],
      handler: async (_req, reply, { uid }) => jsonValue(reply, settingView(ctx.engine.getIndex(uid).meta.settings, field.key)),
    });

    // `chat` is replaced by PUT (the spec's verb) and merged by PATCH (the reference's, which its clients use).
    const verbs: ('PUT' | 'PATCH')[] = field.key === 'chat' ? ['PUT', 'PATCH'] : [field.verb];
    for (const verb of verbs) {
      route(app, {
        method: verb,
        url,
        summary: `Update \`${field.key}\` (\`null\` resets it)`,
        tags: ['Settings'],
        action: 'settings.update',
        query: writeQuery,
        body: s.any({ oneOf: [field.schema, { type: 'null' }] }),
        read: 'unchecked',
        status: 202,
        errors: [field.code],
        handler: async (req, _reply, input) =>
          enqueue(req, input, parseSettingBody(field.key, input.body), { check: true, replace: verb === 'PUT' && field.key === 'chat' }),
      });
    }

    route(app, {
      method: 'DELETE',
      url,
      summary: `Reset \`${field.key}\` to its default`,
      tags: ['Settings'],
      action: 'settings.update',
      query: writeQuery,
      status: 202,
      handler: async (req, _reply, input) => enqueue(req, input, { [field.key]: null }, { check: false, reset: true }),
    });
  }
}
