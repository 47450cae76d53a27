// Chat completions (`POST /chats/{workspace}/chat/completions`): an OpenAI-compatible
// conversation with the workspace's language model, streamed back as server-sent events.
// The model gets one tool, `_meiliSearchInIndex`, which runs real searches with the caller's
// key; the conversation goes on until the model stops asking for searches. The client may
// also declare `_meiliSearchProgress`, `_meiliSearchSources` and
// `_meiliAppendConversationMessage` to be told what is searched, what was found, and which
// messages to keep, as the reference's clients do.

import { randomUUID } from 'node:crypto';
import { ApiError } from '../errors/api-error.js';
import type { Engine } from '../engine/engine.js';
import { facetDistribution } from '../engine/facets/index.js';
import { runSearch, type SearchOptions, type SearchQuery } from '../engine/search/answer-query.js';
import { DEFAULT_MAX_BYTES, DEFAULT_TEMPLATE, DocumentTemplate } from '../engine/vector/document-template.js';
import type { ChatSettings } from './workspaces.js';
import { stringifyJson } from '../util/exact-json.js';

export const SEARCH_IN_INDEX = '_meiliSearchInIndex';
export const SEARCH_PROGRESS = '_meiliSearchProgress';
export const SEARCH_SOURCES = '_meiliSearchSources';
export const APPEND_CONVERSATION_MESSAGE = '_meiliAppendConversationMessage';
const CLIENT_TOOLS = new Set([SEARCH_PROGRESS, SEARCH_SOURCES, APPEND_CONVERSATION_MESSAGE]);

/** Rounds of searches one request may make the model go through. */
const MAX_ROUNDS = 20;

type Json = Record<string, unknown>;

export interface ChatEnv {
  engine: Engine;
  settings: ChatSettings;
  /** Indexes the caller's key may search, by uid. */
  indexes: string[];
  /** Checks the caller may search `index` and gives the filter its tenant token imposes there. */
  authorizeSearch(index: string): Promise<unknown>;
  /** Search features of the node (contains filter, dynamic search rules, foreign keys) as a search would use them. */
  searchOptions: SearchOptions;
  log: { warn(obj: unknown, msg?: string): void };
}

interface Support {
  progress: boolean;
  sources: boolean;
  append: boolean;
}

export interface PreparedChat {
  request: Json;
  support: Support;
}

/**
 * The refusals the reference gives before it even looks for the workspace: several choices,
 * then a response that is not streamed.
 */
export function checkChatRequest(body: Json): void {
  const n = body['n'];
  if (n !== undefined && n !== null && n !== 1) {
    throw new ApiError('unimplemented_multi_choice_chat_completions', `You tried to specify n = ${JSON.stringify(n)} but only single choices are supported (n = 1).`);
  }
  if (body['stream'] !== true) {
    throw new ApiError('unimplemented_non_streaming_chat_completions', 'Non-streamed chat completions is not implemented');
  }
}

/** Errors refusing the request before anything is streamed; otherwise the request the model gets. */
export function prepareChat(body: Json, env: Omit<ChatEnv, 'authorizeSearch' | 'log'>): PreparedChat {
  checkChatRequest(body);
  if (typeof body['model'] !== 'string') throw new ApiError('bad_request', 'Missing or invalid field `model`: expected the name of a model, as a string');
  if (!Array.isArray(body['messages'])) throw new ApiError('bad_request', 'Missing or invalid field `messages`: expected an array of messages');
  const tools = Array.isArray(body['tools']) ? (body['tools'] as Json[]) : [];
  const support: Support = { progress: false, sources: false, append: false };
  for (const tool of tools) {
    const name = String((tool['function'] as Json | undefined)?.['name'] ?? '');
    if (name === SEARCH_IN_INDEX) throw new ApiError('bad_request', `${SEARCH_IN_INDEX} function is already defined.`);
    if (!CLIENT_TOOLS.has(name)) throw new ApiError('unimplemented_external_function_calling', `${name}: External functions are not supported yet.`);
    if (name === SEARCH_PROGRESS) support.progress = true;
    if (name === SEARCH_SOURCES) support.sources = true;
    if (name === APPEND_CONVERSATION_MESSAGE) support.append = true;
  }
  const { prompts } = env.settings;
  let description = prompts.searchDescription;
  let filterDescription = prompts.searchFilterParam;
  for (const uid of env.indexes) {
    const h = env.engine.indexes.get(uid);
    if (!h) continue;
    const indexDescription = typeof h.meta.settings.chat['description'] === 'string' ? h.meta.settings.chat['description'] : '';
    description += `\n\n - ${uid}: ${indexDescription}\n\n`;
    filterDescription += `\n## Facet distributions of the ${uid} index\n${facetSummary(env.engine, uid)}\n`;
  }
  const searchTool = {
    type: 'function',
    function: {
      name: SEARCH_IN_INDEX,
      description,
      parameters: {
        type: 'object',
        properties: {
          index_uid: { type: 'string', enum: env.indexes, description: prompts.searchIndexUidParam },
          q: { type: 'string', description: prompts.searchQParam },
          filter: { type: 'string', description: filterDescription },
        },
        required: ['index_uid', 'q', 'filter'],
        additionalProperties: false,
      },
      strict: true,
    },
  };
  const role = systemRole(env.settings.source, body['model']);
  const request: Json = {
    ...body,
    messages: [{ role, content: prompts.system }, ...(body['messages'] as unknown[])],
    tools: [searchTool],
    stream: true,
  };
  if (env.settings.source === 'openAi' || env.settings.source === 'azureOpenAi') request['stream_options'] = { include_usage: true };
  return { request, support };
}

/** Newer OpenAI models take their instructions as `developer` messages; the others as `system`. */
function systemRole(source: ChatSettings['source'], model: string): 'system' | 'developer' {
  if (source !== 'openAi' && source !== 'azureOpenAi') return 'system';
  const old = ['gpt-3.5', 'gpt-4', 'gpt-4.1', 'gpt-4.5', 'gpt-4o', 'chatgpt-4o'].some((p) => model.startsWith(p) && (model.length === p.length || model[p.length] === '-'));
  return old ? 'system' : 'developer';
}

/** The ten most frequent values of each filterable field, for the model to write filters with. */
function facetSummary(engine: Engine, uid: string): string {
  const h = engine.indexes.get(uid)!;
  if (h.meta.settings.filterableAttributes.length === 0) return '';
  let dist: Record<string, Record<string, number>>;
  try {
    dist = facetDistribution(h, null, ['*']).facetDistribution;
  } catch {
    return '';
  }
  return Object.entries(dist)
    .map(([field, values]) => {
      const top = Object.entries(values)
        .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
        .slice(0, 10)
        .map(([v]) => v);
      return `${field}: ${top.join(', ')}.`;
    })
    .join('\n');
}

function endpoint(s: ChatSettings): string {
  if (s.source === 'azureOpenAi') {
    return `${s.baseUrl!.replace(/\/+$/, '')}/openai/deployments/${encodeURIComponent(s.deploymentId!)}/chat/completions?api-version=${encodeURIComponent(s.apiVersion!)}`;
  }
  const defaults: Partial<Record<ChatSettings['source'], string>> = {
    openAi: 'https://api.openai.com/v1',
    mistral: 'https://api.mistral.ai/v1',
    gemini: 'https://generativelanguage.googleapis.com/v1beta/openai',
  };
  const base = s.baseUrl ?? defaults[s.source];
  if (!base) throw new ApiError('bad_request', `The chat workspace needs a \`baseUrl\` for the \`${s.source}\` source`);
  return `${base.replace(/\/+$/, '')}/chat/completions`;
}

function headers(s: ChatSettings): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (s.apiKey !== null) {
    if (s.source === 'azureOpenAi') h['api-key'] = s.apiKey;
    else h['authorization'] = `Bearer ${s.apiKey}`;
  }
  if (s.orgId !== null) h['openai-organization'] = s.orgId;
  if (s.projectId !== null) h['openai-project'] = s.projectId;
  return h;
}

/** The data of each server-sent event of a response body. */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
    let cut: RegExpExecArray | null;
    const sep = /\r?\n\r?\n/;
    while ((cut = sep.exec(buffer))) {
      const event = buffer.slice(0, cut.index);
      buffer = buffer.slice(cut.index + cut[0].length);
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data !== '') yield data;
    }
    if (done) {
      if (buffer.trim().startsWith('data:')) yield buffer.trim().slice(5).trim();
      return;
    }
  }
}

/** An error event in the shape the reference streams them (OpenAI's realtime error event). */
export function errorEvent(type: string, message: string, code: string | null = null, param: string | null = null): Json {
  return { event_id: randomUUID(), type: 'error', error: { type, code, message, param, event_id: null } };
}

/** The upstream's own error, as OpenAI (`{error: {...}}`) or Mistral (`{message, type, ...}`) words it. */
async function upstreamError(r: Response): Promise<Json> {
  const text = await r.text().catch(() => '');
  try {
    const body = JSON.parse(text) as Json;
    const e = (body['error'] && typeof body['error'] === 'object' ? body['error'] : body) as Json;
    if (typeof e['message'] === 'string') {
      return errorEvent(typeof e['type'] === 'string' ? e['type'] : 'unknown', e['message'], e['code'] == null ? null : String(e['code']), e['param'] == null ? null : String(e['param']));
    }
  } catch {
    // not JSON: reported as is below
  }
  return errorEvent('reqwest_error', `The language model answered ${r.status}${text ? `: ${text.slice(0, 500)}` : ''}`);
}

interface ToolCall {
  id: string;
  name: string;
  arguments: string;
  internal: boolean;
}

/** A chunk the client is sent, built on the model's own chunk so ids and model stay consistent. */
function toolChunk(base: Json, name: string, args: unknown): Json {
  return {
    ...base,
    choices: [
      {
        index: 0,
        delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: randomUUID(), type: 'function', function: { name, arguments: JSON.stringify(args) } }] },
        finish_reason: null,
        logprobs: null,
      },
    ],
  };
}

/**
 * Runs one `_meiliSearchInIndex` call: the rendered documents for the model, the shown ones for
 * the client. A search the model worded wrong (a bad filter) gives the model the error to fix;
 * a missing index or a key that may not search there throws.
 */
async function searchTool(env: ChatEnv, args: Json): Promise<{ text: string; sources: unknown[] }> {
  const uid = String(args['index_uid'] ?? '');
  const h = env.engine.getIndex(uid);
  const tenantFilter = await env.authorizeSearch(uid);
  const chat = h.meta.settings.chat;
  const params = (chat['searchParameters'] ?? {}) as SearchQuery;
  const own = typeof args['filter'] === 'string' && args['filter'].trim() !== '' ? args['filter'] : null;
  const filter = own !== null && tenantFilter !== null ? [own, tenantFilter] : (own ?? tenantFilter);
  const q: SearchQuery = { ...params, q: typeof args['q'] === 'string' ? args['q'] : null, filter };
  const limit = typeof params.limit === 'number' ? params.limit : 20;
  let run: Awaited<ReturnType<typeof runSearch>>;
  try {
    run = await runSearch(env.engine, uid, q, { offset: 0, limit, exhaustive: false }, env.searchOptions);
  } catch (e) {
    if (e instanceof ApiError && e.status < 500) return { text: e.message, sources: [] };
    throw e;
  }
  const docs = await env.engine.readDocs(env.engine.store, h, run.ranked.map((r) => r.docid));
  const template = new DocumentTemplate(
    typeof chat['documentTemplate'] === 'string' ? chat['documentTemplate'] : DEFAULT_TEMPLATE,
    typeof chat['documentTemplateMaxBytes'] === 'number' ? chat['documentTemplateMaxBytes'] : DEFAULT_MAX_BYTES,
  );
  const text = docs.map((d) => (d ? template.render(d, h.meta.settings.searchableAttributes) : '')).join('\n');
  return { text, sources: run.hits };
}

/** Runs the model's pending search calls and adds their results to the conversation. */
async function answerCalls(env: ChatEnv, support: Support, calls: Map<number, ToolCall>, messages: Json[], chunk: Json, send: (data: string) => void): Promise<void> {
  const internal = [...calls.values()].filter((c) => c.internal);
  calls.clear();
  messages.push({ role: 'assistant', tool_calls: internal.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) });
  for (const call of internal) {
    if (support.progress) send(JSON.stringify(toolChunk(chunk, SEARCH_PROGRESS, { call_id: call.id, function_name: call.name, function_arguments: call.arguments })));
    if (support.append) {
      const assistant = { role: 'assistant', tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] };
      send(JSON.stringify(toolChunk(chunk, APPEND_CONVERSATION_MESSAGE, assistant)));
    }
    let answer: string;
    let failure: ApiError | null = null;
    let args: Json | null = null;
    try {
      args = JSON.parse(call.arguments) as Json;
    } catch (e) {
      answer = `the search tool call arguments are not valid JSON: ${(e as Error).message}`;
    }
    if (args) {
      try {
        const found = await searchTool(env, args);
        if (support.sources) send(stringifyJson(toolChunk(chunk, SEARCH_SOURCES, { call_id: call.id, sources: found.sources })));
        answer = found.text;
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        failure = e;
        answer = `the search tool call failed with ${e.message}`;
      }
    }
    const tool = { role: 'tool', tool_call_id: call.id, content: answer! };
    if (support.append) send(JSON.stringify(toolChunk(chunk, APPEND_CONVERSATION_MESSAGE, tool)));
    messages.push(tool);
    if (failure) send(JSON.stringify(errorEvent('response_error', failure.message, failure.code)));
  }
}

/**
 * The conversation: streams the model's chunks to `send` (each one server-sent event's data),
 * answering its search calls in between, and ends with `[DONE]`.
 */
export async function runChat(env: ChatEnv, prepared: PreparedChat, send: (data: string) => void, signal: AbortSignal): Promise<void> {
  const request = prepared.request;
  const messages = request['messages'] as Json[];
  const { support } = prepared;
  for (let round = 0; round < MAX_ROUNDS && !signal.aborted; round++) {
    let response: Response;
    try {
      response = await fetch(endpoint(env.settings), { method: 'POST', headers: headers(env.settings), body: JSON.stringify(request), signal });
    } catch (e) {
      if (signal.aborted) return;
      send(JSON.stringify(errorEvent('transport_error', e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e))));
      break;
    }
    if (!response.ok || !response.body) {
      send(JSON.stringify(await upstreamError(response)));
      break;
    }
    const calls = new Map<number, ToolCall>();
    let finish: string | null = null;
    let lastChunk: Json = {};
    try {
      for await (const data of sseData(response.body)) {
        if (data === '[DONE]') break;
        let chunk: Json;
        try {
          chunk = JSON.parse(data) as Json;
          lastChunk = chunk;
        } catch {
          send(JSON.stringify(errorEvent('json_deserialize_error', `The language model sent an event that is not JSON: ${data.slice(0, 200)}`, 'internal')));
          return void send('[DONE]');
        }
        const choice = (chunk['choices'] as Json[] | undefined)?.[0];
        if (!choice) {
          // Usage-only chunks (`stream_options.include_usage`) go to the client as they are.
          send(data);
          continue;
        }
        if (typeof choice['finish_reason'] === 'string') finish = choice['finish_reason'];
        const delta = (choice['delta'] ?? {}) as Json;
        const toolCalls = delta['tool_calls'] as Json[] | undefined;
        if (toolCalls && toolCalls.length > 0) {
          for (const c of toolCalls) {
            const index = Number(c['index'] ?? 0);
            const fn = (c['function'] ?? {}) as Json;
            const existing = calls.get(index);
            if (existing) existing.arguments += String(fn['arguments'] ?? '');
            else {
              const name = String(fn['name'] ?? '');
              calls.set(index, { id: String(c['id'] ?? randomUUID()), name, arguments: String(fn['arguments'] ?? ''), internal: name === SEARCH_IN_INDEX });
            }
          }
          continue;
        }
        if (calls.size === 0) {
          send(data);
          continue;
        }
        // The model asked for searches: they run now, and the next round gives it the results.
        await answerCalls(env, support, calls, messages, chunk, send);
      }
      // A stream that ended right after its tool calls still gets them answered.
      if (calls.size > 0) await answerCalls(env, support, calls, messages, lastChunk, send);
    } catch (e) {
      if (signal.aborted) return;
      env.log.warn({ err: e }, 'chat completion stream failed');
      send(JSON.stringify(errorEvent('transport_error', e instanceof Error ? e.message : String(e))));
      break;
    }
    if (finish !== 'tool_calls') break;
  }
  if (!signal.aborted) send('[DONE]');
}
