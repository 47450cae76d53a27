import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { authenticateAs, isIndexAuthorized } from '../../auth/request-auth.js';
import { ruleFilter } from '../../auth/tenant-token.js';
import { assertIndexUid } from '../../engine/indexes/index-uid.js';
import { checkChatRequest, errorEvent, prepareChat, runChat, type ChatEnv } from '../../chat/completions.js';
import {
  CHAT_SOURCES,
  ChatWorkspaces,
  chatNotFound,
  chatSettingsView,
  defaultChatSettings,
  mergeChatSettings,
  type ChatOp,
  type ChatSettingsPatch,
} from '../../chat/workspaces.js';
import type { AppContext } from '../context.js';
import { route, sendOpenStream } from '../route.js';
import { s } from '../schema.js';
import { pageQuery } from './params.js';
import { searchOptions } from './search-options.js';

const text = s.string().nullable();

const promptsBody = s.object(
  {
    system: s.field(text, 'invalid_chat_completion_system_prompt'),
    searchDescription: s.field(text, 'invalid_chat_completion_search_description_prompt'),
    searchQParam: s.field(text, 'invalid_chat_completion_search_query_param_prompt'),
    searchFilterParam: s.field(text, 'invalid_chat_completion_search_filter_param_prompt'),
    searchIndexUidParam: s.field(text, 'invalid_chat_completion_search_index_uid_param_prompt'),
  },
  { unknownCode: 'invalid_chat_completion_prompts' },
);

const settingsBody = s.object({
  source: s.field(s.enum(CHAT_SOURCES).nullable(), 'invalid_chat_completion_source'),
  orgId: s.field(text, 'invalid_chat_completion_org_id'),
  projectId: s.field(text, 'invalid_chat_completion_project_id'),
  apiVersion: s.field(text, 'invalid_chat_completion_api_version'),
  deploymentId: s.field(text, 'invalid_chat_completion_deployment_id'),
  baseUrl: s.field(text, 'invalid_chat_completion_base_api'),
  apiKey: s.field(text, 'invalid_chat_completion_api_key'),
  prompts: s.field(promptsBody.nullable(), 'invalid_chat_completion_prompts'),
});

const completionBody = s.any({
  type: 'object',
  description: 'An OpenAI chat completion request (`model`, `messages`, `stream: true`); the tools may only be `_meiliSearchProgress`, `_meiliSearchSources` and `_meiliAppendConversationMessage`',
  properties: { model: { type: 'string' }, messages: { type: 'array', items: { type: 'object' } }, stream: { type: 'boolean' } },
});

const settingsSchema = {
  type: 'object',
  properties: {
    source: { type: 'string', enum: [...CHAT_SOURCES] },
    orgId: { type: ['string', 'null'] },
    projectId: { type: ['string', 'null'] },
    apiVersion: { type: ['string', 'null'] },
    deploymentId: { type: ['string', 'null'] },
    baseUrl: { type: ['string', 'null'] },
    apiKey: { type: ['string', 'null'], description: 'Masked' },
    prompts: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

const workspaceSchema = { type: 'object', properties: { uid: { type: 'string' } }, required: ['uid'] };

function workspaceParam(req: FastifyRequest): string {
  return (req.params as { workspace: string }).workspace;
}

/** `GET` and `DELETE /chats/{workspace}` word a missing workspace their own way. */
function workspaceNotFound(uid: string): ApiError {
  return new ApiError('chat_not_found', `chat ${uid} not found`);
}

export function chatRoutes(app: FastifyInstance, ctx: AppContext): void {
  const limit = ctx.options.httpJsonPayloadSizeLimit;
  const check = (action: string) => ctx.features.check('chatCompletions', action);
  const configure = (op: ChatOp) => ctx.configure(ChatWorkspaces.COMMAND, op);
  const errors = ['feature_not_enabled', 'chat_not_found'] as const;

  route(app, {
    method: 'GET',
    url: '/chats',
    summary: 'List the chat workspaces, paginated',
    tags: ['Chats'],
    action: 'chats.get',
    query: pageQuery,
    status: 200,
    responseSchema: { type: 'object', properties: { results: { type: 'array', items: workspaceSchema }, offset: { type: 'integer' }, limit: { type: 'integer' }, total: { type: 'integer' } } },
    errors: ['feature_not_enabled', 'invalid_index_offset', 'invalid_index_limit'],
    handler: async (_req, _reply, { query: q }) => {
      check('listing the chats');
      const offset = q.offset ?? 0;
      const lim = q.limit ?? 20;
      const all = ctx.chats.list();
      return { results: all.slice(offset, offset + lim).map((uid) => ({ uid })), offset, limit: lim, total: all.length };
    },
  });

  route(app, {
    method: 'GET',
    url: '/chats/:workspace',
    summary: 'Get a chat workspace',
    tags: ['Chats'],
    action: 'chats.get',
    status: 200,
    responseSchema: workspaceSchema,
    errors: [...errors, 'invalid_index_uid'],
    handler: async (req) => {
      check('displaying a chat');
      const uid = workspaceParam(req);
      assertIndexUid(uid);
      if (!ctx.chats.get(uid)) throw workspaceNotFound(uid);
      return { uid };
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/chats/:workspace',
    summary: 'Delete a chat workspace and its settings',
    tags: ['Chats'],
    action: 'chats.delete',
    status: 204,
    errors: [...errors],
    handler: async (req, reply) => {
      check('deleting a chat');
      const uid = workspaceParam(req);
      if (!ctx.chats.get(uid)) throw workspaceNotFound(uid);
      await configure({ op: 'delete', uid });
      return reply.status(204).send();
    },
  });

  route(app, {
    method: 'GET',
    url: '/chats/:workspace/settings',
    summary: "Get a chat workspace's settings (language model source, endpoint, prompts; the API key masked)",
    tags: ['Chats'],
    action: 'chatsSettings.get',
    status: 200,
    responseSchema: settingsSchema,
    errors: [...errors],
    handler: async (req) => {
      check('using the /chats/settings route');
      const uid = workspaceParam(req);
      const settings = ctx.chats.get(uid);
      if (!settings) throw chatNotFound(uid);
      return chatSettingsView(settings);
    },
  });

  route(app, {
    method: 'PATCH',
    url: '/chats/:workspace/settings',
    summary: "Create a chat workspace or change its settings: fields left out are kept, `null` resets one (prompts merge one by one)",
    tags: ['Chats'],
    action: 'chatsSettings.update',
    body: settingsBody,
    status: 200,
    responseSchema: settingsSchema,
    errors: [
      'feature_not_enabled',
      'bad_request',
      'invalid_chat_completion_source',
      'invalid_chat_completion_org_id',
      'invalid_chat_completion_project_id',
      'invalid_chat_completion_api_version',
      'invalid_chat_completion_deployment_id',
      'invalid_chat_completion_base_api',
      'invalid_chat_completion_api_key',
      'invalid_chat_completion_prompts',
      'invalid_chat_completion_system_prompt',
      'invalid_chat_completion_search_description_prompt',
      'invalid_chat_completion_search_query_param_prompt',
      'invalid_chat_completion_search_filter_param_prompt',
      'invalid_chat_completion_search_index_uid_param_prompt',
    ],
    handler: async (req, _reply, { body }) => {
      const patch = body as ChatSettingsPatch;
      check('using the /chats/settings route');
      const uid = workspaceParam(req);
      // Checked here first, so a refused change never reaches the log.
      mergeChatSettings(ctx.chats.get(uid) ?? defaultChatSettings(), patch);
      return configure({ op: 'patch', uid, patch });
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/chats/:workspace/settings',
    summary: "Reset a chat workspace's settings to the defaults",
    tags: ['Chats'],
    action: 'chatsSettings.update',
    status: 200,
    responseSchema: settingsSchema,
    errors: [...errors],
    handler: async (req) => {
      check('using the /chats/settings route');
      const uid = workspaceParam(req);
      if (!ctx.chats.get(uid)) throw chatNotFound(uid);
      return configure({ op: 'reset', uid });
    },
  });

  route(app, {
    method: 'POST',
    url: '/chats/:workspace/chat/completions',
    summary:
      "Talk with the workspace's language model, which searches the indexes the key may search: an OpenAI-compatible chat completion, streamed as server-sent events",
    tags: ['Chats'],
    action: 'chatCompletions',
    body: completionBody,
    status: 200,
    responseMediaType: 'text/event-stream',
    streaming: true,
    errors: [
      ...errors,
      'bad_request',
      'unimplemented_non_streaming_chat_completions',
      'unimplemented_multi_choice_chat_completions',
      'unimplemented_external_function_calling',
    ],
    handler: async (req, reply, { body }) => {
      check('using the /chats chat completions route');
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('bad_request', 'The chat completion request must be a JSON object');
      const request = body as Record<string, unknown>;
      checkChatRequest(request);
      const uid = workspaceParam(req);
      const settings = ctx.chats.get(uid);
      if (!settings) throw chatNotFound(uid);
      const env: ChatEnv = {
        engine: ctx.engine,
        settings,
        indexes: ctx.engine
          .listIndexes()
          .map((h) => h.uid)
          .filter((u) => isIndexAuthorized(req, u)),
        // Each search the model asks for is one the caller's key must be allowed to make.
        authorizeSearch: async (index) => {
          const grant = await authenticateAs(req, ctx.keys, 'search', index);
          return grant.rules === null ? null : ruleFilter(grant.rules, index);
        },
        searchOptions: searchOptions(ctx),
        log: req.log,
      };
      const prepared = prepareChat(request, env);

      const out = new PassThrough();
      const abort = new AbortController();
      reply.raw.once('close', () => abort.abort());
      const send = (data: string) => {
        if (!out.writableEnded) out.write(`data: ${data}\n\n`);
      };
      runChat(env, prepared, send, abort.signal)
        .catch((e: unknown) => {
          req.log.error({ err: e }, 'chat completion failed');
          send(JSON.stringify(errorEvent('internal', e instanceof Error ? e.message : String(e))));
          send('[DONE]');
        })
        .finally(() => out.end());
      reply.header('cache-control', 'no-cache');
      reply.header('x-accel-buffering', 'no');
      return sendOpenStream(reply, out, 'text/event-stream');
    },
  });
}
