import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { startFakeOpenAi, type FakeOpenAi } from '../helpers/fake-openai.js';
import { DEFAULT_SYSTEM_PROMPT, PROMPT_DEFAULTS } from '../../src/chat/workspaces.js';
import { apiError } from '../helpers/api-error.js';

const MASTER = 'chat-master-key-0123456789';
const API_KEY = 'sk-fake-0123456789abcdefghijklmnop';
let t: TestNode;
let llm: FakeOpenAi;

beforeAll(async () => {
  llm = await startFakeOpenAi();
  t = await startTestNode(['--master-key', MASTER]);
  await t.client.index('movies').updateSettings({ filterableAttributes: ['genre'] }).waitTask();
  await t.client
    .index('movies')
    .addDocuments([
      { id: 1, title: 'Alien', year: 1979, genre: 'horror' },
      { id: 2, title: 'Aliens', year: 1986, genre: 'action' },
      { id: 3, title: 'Heat', year: 1995, genre: 'crime' },
    ])
    .waitTask();
  await t.client.index('secret').addDocuments([{ id: 1, title: 'Alien secret' }]).waitTask();
});
afterAll(async () => {
  await t?.close();
  await llm?.close();
});

async function raw(method: string, path: string, body?: unknown, key = MASTER) {
  const r = await fetch(t.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, body: text && r.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Record<string, any>) : null };
}

/** The data of each server-sent event. */
async function events(stream: ReadableStream<Uint8Array> | string): Promise<string[]> {
  const text = typeof stream === 'string' ? stream : await new Response(stream).text();
  return text
    .split('\n\n')
    .filter((e) => e.trim() !== '')
    .map((e) => {
      expect(e.startsWith('data: ')).toBe(true);
      return e.slice('data: '.length);
    });
}

function toolCalls(data: string[], name: string): any[] {
  return data
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as Record<string, any>)
    .flatMap((c) => (c['choices']?.[0]?.delta?.tool_calls ?? []) as any[])
    .filter((c) => c.function.name === name)
    .map((c) => JSON.parse(c.function.arguments as string));
}

function content(data: string[]): string {
  return data
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as Record<string, any>)
    .map((c) => (c['choices']?.[0]?.delta?.content ?? '') as string)
    .join('');
}

describe('chat workspaces', () => {
  it('are behind the chatCompletions experimental feature', async () => {
    const e = await apiError(t.client.getChatWorkspaces());
    expect(e).toMatchObject({
      status: 400,
      code: 'feature_not_enabled',
      message: 'listing the chats requires enabling the `chat completions` experimental feature. See https://github.com/orgs/meilisearch/discussions/835',
    });
    const s = await raw('PATCH', '/chats/support/settings', { apiKey: 'x' });
    expect(s.body).toMatchObject({ code: 'feature_not_enabled', message: expect.stringMatching(/^using the \/chats\/settings route requires/) });
    const c = await raw('POST', '/chats/support/chat/completions', { model: 'm', messages: [], stream: true });
    expect(c.body).toMatchObject({ code: 'feature_not_enabled', message: expect.stringMatching(/^using the \/chats chat completions route requires/) });
    await t.client.updateExperimentalFeatures({ chatCompletions: true });
  });

  it('are created by a settings update, listed, read, reset and deleted', async () => {
    const ws = t.client.chat('support');
    const created = await ws.update({ source: 'openAi', baseUrl: llm.url, apiKey: API_KEY, prompts: { system: 'Be brief.' } });
    expect(created).toEqual({
      source: 'openAi',
      orgId: null,
      projectId: null,
      apiVersion: null,
      deploymentId: null,
      baseUrl: llm.url,
      apiKey: 'sk-faXXXXXX...',
      prompts: { ...PROMPT_DEFAULTS, system: 'Be brief.' },
    });
    expect(await ws.get()).toEqual(created);
    await t.client.chat('other').update({ source: 'mistral' } as never);
    expect(await t.client.getChatWorkspaces()).toEqual({ results: [{ uid: 'other' }, { uid: 'support' }], offset: 0, limit: 20, total: 2 });
    expect(await t.client.getChatWorkspaces({ offset: 1, limit: 1 })).toEqual({ results: [{ uid: 'support' }], offset: 1, limit: 1, total: 2 });
    expect(await t.client.getChatWorkspace('support')).toEqual({ uid: 'support' });

    // Left out: kept; null: reset. Prompts merge one by one.
    const patched = await ws.update({ prompts: { searchDescription: 'Search the movies.' } } as never);
    expect(patched.prompts).toMatchObject({ system: 'Be brief.', searchDescription: 'Search the movies.' });
    expect(patched.apiKey).toBe('sk-faXXXXXX...');
    const reset = (await raw('PATCH', '/chats/support/settings', { prompts: { system: null } })).body!;
    expect(reset['prompts']).toMatchObject({ system: DEFAULT_SYSTEM_PROMPT, searchDescription: 'Search the movies.' });

    // DELETE …/settings resets everything but keeps the workspace.
    const r = await raw('DELETE', '/chats/other/settings');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ source: 'openAi', apiKey: null, baseUrl: null, prompts: PROMPT_DEFAULTS });
    await t.client.chat('other').reset();
    await t.client.deleteChatWorkspace('other');
    expect((await t.client.getChatWorkspaces()).results).toEqual([{ uid: 'support' }]);
  });

  it('refuse bad settings and missing workspaces with the reference codes', async () => {
    expect((await raw('PATCH', '/chats/support/settings', { source: 'claude' })).body).toMatchObject({ code: 'invalid_chat_completion_source' });
    expect((await raw('PATCH', '/chats/support/settings', { apiKey: 3 })).body).toMatchObject({ code: 'invalid_chat_completion_api_key' });
    expect((await raw('PATCH', '/chats/support/settings', { baseUrl: [] })).body).toMatchObject({ code: 'invalid_chat_completion_base_api' });
    expect((await raw('PATCH', '/chats/support/settings', { prompts: { system: 1 } })).body).toMatchObject({ code: 'invalid_chat_completion_system_prompt' });
    expect((await raw('PATCH', '/chats/support/settings', { prompts: { preQuery: 'x' } })).body).toMatchObject({ code: 'invalid_chat_completion_prompts' });
    expect((await raw('PATCH', '/chats/support/settings', { model: 'x' })).body).toMatchObject({ code: 'bad_request' });
    const azure = await raw('PATCH', '/chats/support/settings', { source: 'azureOpenAi' });
    expect(azure.status).toBe(400);
    expect(azure.body).toMatchObject({ code: 'bad_request', message: 'azureOpenAi requires setting a valid `baseUrl`, `deploymentId`, and `apiVersion`' });
    // Nothing was changed by the refusals.
    expect((await t.client.chat('support').get()).source).toBe('openAi');

    expect(await apiError(t.client.chat('nope').get())).toMatchObject({ status: 404, code: 'chat_not_found', message: 'Chat `nope` not found' });
    expect(await apiError(t.client.getChatWorkspace('nope'))).toMatchObject({ status: 404, code: 'chat_not_found', message: 'chat nope not found' });
    expect(await apiError(t.client.deleteChatWorkspace('nope'))).toMatchObject({ status: 404, code: 'chat_not_found' });
    expect((await raw('DELETE', '/chats/nope/settings')).status).toBe(404);
  });
});

describe('chat completions', () => {
  beforeAll(async () => {
    await t.client.index('movies').updateChat({ description: 'Famous movies', documentTemplate: '{{ doc.title }} ({{ doc.year }})' }).waitTask();
  });

  it('stream the model, answering its searches with the index, and tell the client what was searched and found', async () => {
    llm.requests.length = 0;
    llm.search = { index_uid: 'movies', q: 'alien', filter: 'genre = horror' };
    const stream = await t.client.chat('support').streamCompletion({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Which horror movie has aliens?' }],
      stream: true,
      tools: [
        { type: 'function', function: { name: '_meiliSearchProgress' } },
        { type: 'function', function: { name: '_meiliSearchSources' } },
        { type: 'function', function: { name: '_meiliAppendConversationMessage' } },
      ],
    } as never);
    const data = await events(stream);
    expect(data.at(-1)).toBe('[DONE]');
    expect(content(data)).toBe('Found: Alien (1979)');

    const progress = toolCalls(data, '_meiliSearchProgress');
    expect(progress).toEqual([{ call_id: 'call_1', function_name: '_meiliSearchInIndex', function_arguments: JSON.stringify(llm.search) }]);
    const sources = toolCalls(data, '_meiliSearchSources');
    expect(sources).toEqual([{ call_id: 'call_1', sources: [{ id: 1, title: 'Alien', year: 1979, genre: 'horror' }] }]);
    const appended = toolCalls(data, '_meiliAppendConversationMessage');
    expect(appended).toEqual([
      { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: '_meiliSearchInIndex', arguments: JSON.stringify(llm.search) } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'Alien (1979)' },
    ]);
    // The usage chunk the model sends at the end is passed on.
    expect(data.some((d) => d !== '[DONE]' && (JSON.parse(d) as Record<string, any>)['usage']?.total_tokens === 15)).toBe(true);

    // What the model was sent: the workspace's key, its prompts, one search tool over the indexes.
    expect(llm.requests).toHaveLength(2);
    const [first, second] = llm.requests;
    expect(first!.url).toBe('/v1/chat/completions');
    expect(first!.headers['authorization']).toBe(`Bearer ${API_KEY}`);
    expect(first!.body['stream']).toBe(true);
    expect(first!.body['stream_options']).toEqual({ include_usage: true });
    expect(first!.body['messages'][0]).toEqual({ role: 'system', content: DEFAULT_SYSTEM_PROMPT });
    expect(first!.body['tools']).toHaveLength(1);
    const fn = first!.body['tools'][0].function;
    expect(fn.name).toBe('_meiliSearchInIndex');
    expect(fn.description).toContain('Search the movies.');
    expect(fn.description).toContain(' - movies: Famous movies');
    expect(fn.parameters.properties.index_uid.enum).toEqual(['movies', 'secret']);
    expect(fn.parameters.properties.filter.description).toContain('## Facet distributions of the movies index\ngenre: action, crime, horror.');
    expect(second!.body['messages'].slice(-2)).toEqual([
      { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: '_meiliSearchInIndex', arguments: JSON.stringify(llm.search) } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'Alien (1979)' },
    ]);
  });

  it('answer with server-sent events the browser can read as they come', async () => {
    llm.search = { index_uid: 'movies', q: 'heat', filter: '' };
    const r = await raw('POST', '/chats/support/chat/completions', { model: 'gpt-5', messages: [{ role: 'user', content: 'heat?' }], stream: true });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(r.headers.get('x-accel-buffering')).toBe('no');
    expect(r.headers.get('content-encoding')).toBeNull();
    const data = await events(r.text);
    expect(content(data)).toBe('Found: Heat (1995)');
    // No client tools declared: nothing but the model's own chunks.
    expect(toolCalls(data, '_meiliSearchSources')).toEqual([]);
    // Newer OpenAI models get their instructions as a developer message.
    expect(llm.requests.at(-2)!.body['messages'][0].role).toBe('developer');
  });

  it('give the model the search error to fix, and search only where the key may', async () => {
    llm.search = { index_uid: 'movies', q: '', filter: 'year > 1980' };
    let data = await events((await raw('POST', '/chats/support/chat/completions', { model: 'gpt-4o', messages: [], stream: true })).text);
    expect(content(data)).toMatch(/^Found: Attribute `year` is not filterable/);

    const key = await t.client.createKey({ actions: ['chatCompletions', 'search'], indexes: ['movies'], expiresAt: null });
    llm.requests.length = 0;
    llm.search = { index_uid: 'secret', q: 'alien', filter: '' };
    data = await events((await raw('POST', '/chats/support/chat/completions', { model: 'gpt-4o', messages: [], stream: true }, key.key)).text);
    expect(llm.requests[0]!.body['tools'][0].function.parameters.properties.index_uid.enum).toEqual(['movies']);
    expect(content(data)).toMatch(/^Found: the search tool call failed with The API key cannot acces the index `secret`/);
    const errors = data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as Record<string, any>).filter((e) => e['type'] === 'error');
    expect(errors).toEqual([
      { event_id: expect.any(String), type: 'error', error: { type: 'response_error', code: 'invalid_api_key', message: expect.stringContaining('`secret`'), param: null, event_id: null } },
    ]);

    // A key without `search` may talk, but not search.
    const talkOnly = await t.client.createKey({ actions: ['chatCompletions'], indexes: ['*'], expiresAt: null });
    llm.search = { index_uid: 'movies', q: 'alien', filter: '' };
    data = await events((await raw('POST', '/chats/support/chat/completions', { model: 'gpt-4o', messages: [], stream: true }, talkOnly.key)).text);
    expect(content(data)).toBe('Found: the search tool call failed with The provided API key is invalid.');
    // And one without `chatCompletions` may not start.
    const searchOnly = await t.client.createKey({ actions: ['search'], indexes: ['*'], expiresAt: null });
    expect((await raw('POST', '/chats/support/chat/completions', { model: 'gpt-4o', messages: [], stream: true }, searchOnly.key)).body).toMatchObject({ code: 'invalid_api_key' });
  });

  it('pass on the model provider’s error as an error event', async () => {
    llm.failWith = { status: 401, body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key', param: null } } };
    const data = await events((await raw('POST', '/chats/support/chat/completions', { model: 'gpt-4o', messages: [], stream: true })).text);
    expect(data).toEqual([
      JSON.stringify({ event_id: JSON.parse(data[0]!).event_id, type: 'error', error: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided', param: null, event_id: null } }),
      '[DONE]',
    ]);
  });

  it('refuse what the reference does not support, before streaming', async () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
    expect((await raw('POST', '/chats/support/chat/completions', body)).body).toMatchObject({ code: 'unimplemented_non_streaming_chat_completions', message: 'Non-streamed chat completions is not implemented' });
    expect((await raw('POST', '/chats/support/chat/completions', body)).status).toBe(501);
    expect((await raw('POST', '/chats/support/chat/completions', { ...body, stream: true, n: 2 })).body).toMatchObject({
      code: 'unimplemented_multi_choice_chat_completions',
      message: 'You tried to specify n = 2 but only single choices are supported (n = 1).',
    });
    const external = await raw('POST', '/chats/support/chat/completions', { ...body, stream: true, tools: [{ type: 'function', function: { name: 'get_weather' } }] });
    expect(external.status).toBe(501);
    expect(external.body).toMatchObject({ code: 'unimplemented_external_function_calling', message: 'get_weather: External functions are not supported yet.' });
    const ours = await raw('POST', '/chats/support/chat/completions', { ...body, stream: true, tools: [{ type: 'function', function: { name: '_meiliSearchInIndex' } }] });
    expect(ours.body).toMatchObject({ code: 'bad_request', message: '_meiliSearchInIndex function is already defined.' });
    expect((await raw('POST', '/chats/nope/chat/completions', { ...body, stream: true })).body).toMatchObject({ code: 'chat_not_found', message: 'Chat `nope` not found' });
  });
});
