import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t.close();
});

function errorBody(code: string, message: string) {
  return { message, code, type: 'invalid_request', link: `https://docs.meilisearch.com/errors#${code}` };
}

async function call(method: string, path: string, body?: unknown) {
  const r = await fetch(t.url + path, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

async function embedders(uid: string, body: unknown) {
  return call('PATCH', `/indexes/${uid}/settings/embedders`, body);
}

async function accepted(uid: string, body: unknown) {
  const r = await embedders(uid, body);
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const task = await t.client.tasks.waitForTask(r.body!['taskUid'] as number);
  expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
  return task;
}

const REST = { source: 'rest', url: 'https://embed.example.com/v1', request: { input: '{{text}}' }, response: { data: '{{embedding}}' } };

describe('embedders per source', () => {
  it('accepts a valid embedder of each source, with the reference names as aliases', async () => {
    const task = await accepted('valid', {
      hosted: { source: 'openAi', model: 'text-embedding-3-small', apiKey: 'sk-0123456789abcdefghijklmnopqrstuvwxyz', dimensions: 512 },
      hub: { source: 'hubModel', model: 'BAAI/bge-base-en-v1.5', revision: 'abc', pooling: 'forceMean', documentTemplate: '{{doc.title}}' },
      local: { source: 'ollama', model: 'nomic-embed-text', url: 'http://localhost:11434/api/embeddings' },
      manual: { source: 'userProvided', dimensions: 3, binaryQuantized: true, distribution: { mean: 0.7, sigma: 0.3 } },
      remote: { ...REST, apiKey: 'short', headers: { 'X-Team': 'search' }, documentTemplateMaxBytes: 200 },
    });
    // Secrets are masked in the task as in the settings.
    expect((task.details as { embedders: Record<string, { apiKey?: string }> }).embedders['hosted']!.apiKey).toBe('sk-01XXXXXX...');
    const got = await t.client.index('valid').getEmbedders();
    expect(got).toEqual({
      hosted: { source: 'hostedA', model: 'text-embedding-3-small', apiKey: 'sk-01XXXXXX...', dimensions: 512 },
      hub: { source: 'hubModel', model: 'BAAI/bge-base-en-v1.5', revision: 'abc', pooling: 'forceMean', documentTemplate: '{{doc.title}}' },
      local: { source: 'localRunner', model: 'nomic-embed-text', url: 'http://localhost:11434/api/embeddings' },
      manual: { source: 'userProvided', dimensions: 3, binaryQuantized: true, distribution: { mean: 0.7, sigma: 0.3 } },
      remote: { ...REST, apiKey: 'XXX...', documentTemplateMaxBytes: 200, headers: { 'X-Team': 'search' } },
    });
    expect(Object.keys(got ?? {})).toEqual(['hosted', 'hub', 'local', 'manual', 'remote']);
  });

  const refusals: [string, unknown, string, string][] = [
    [
      'a field the source does not take',
      { e: { source: 'hostedA', revision: 'x' } },
      'invalid_settings_embedders',
      '`.embedders.e`: Field `revision` unavailable for source `hostedA`.\n  - note: `revision` is available for sources: `hubModel`\n  - note: available fields for source `hostedA`: `source`, `model`, `apiKey`, `dimensions`, `documentTemplate`, `documentTemplateMaxBytes`, `url`, `distribution`, `binaryQuantized`',
    ],
    [
      'pooling outside hubModel',
      { e: { ...REST, pooling: 'useModel' } },
      'invalid_settings_embedders',
      '`.embedders.e`: Field `pooling` unavailable for source `rest`.\n  - note: `pooling` is available for sources: `hubModel`\n  - note: available fields for source `rest`: `source`, `apiKey`, `dimensions`, `documentTemplate`, `documentTemplateMaxBytes`, `url`, `indexingFragments`, `searchFragments`, `request`, `response`, `headers`, `distribution`, `binaryQuantized`',
    ],
    [
      'a document template on a user-provided embedder',
      { e: { source: 'userProvided', dimensions: 2, documentTemplate: '{{doc.title}}' } },
      'invalid_settings_embedders',
      '`.embedders.e`: Field `documentTemplate` unavailable for source `userProvided`.\n  - note: `documentTemplate` is available for sources: `hostedA`, `hubModel`, `localRunner`, `rest`\n  - note: available fields for source `userProvided`: `source`, `dimensions`, `distribution`, `binaryQuantized`',
    ],
    [
      'a url on hubModel',
      { e: { source: 'huggingFace', url: 'http://x' } },
      'invalid_settings_embedders',
      '`.embedders.e`: Field `url` unavailable for source `hubModel`.\n  - note: `url` is available for sources: `hostedA`, `localRunner`, `rest`\n  - note: available fields for source `hubModel`: `source`, `model`, `revision`, `pooling`, `dimensions`, `documentTemplate`, `documentTemplateMaxBytes`, `distribution`, `binaryQuantized`',
    ],
    ['localRunner without a model', { e: { source: 'localRunner' } }, 'invalid_settings_embedders', '`.embedders.e`: Missing field `model` (note: this field is mandatory for source `localRunner`)'],
    [
      'rest without a url',
      { e: { source: 'rest', request: REST.request, response: REST.response } },
      'invalid_settings_embedders',
      '`.embedders.e`: Missing field `url` (note: this field is mandatory for source `rest`)',
    ],
    ['rest without a request', { e: { source: 'rest', url: REST.url, response: REST.response } }, 'invalid_settings_embedders', '`.embedders.e`: Missing field `request` (note: this field is mandatory for source `rest`)'],
    [
      'a localRunner url with the wrong path',
      { e: { source: 'localRunner', model: 'm', url: 'http://localhost:11434/v1' } },
      'vector_embedding_error',
      'Error while generating embeddings: user error: unsupported URL for source `localRunner`.\n  - For `localRunner` sources, the URL must end with `/api/embed` or `/api/embeddings`\n  - Got `http://localhost:11434/v1`',
    ],
    ['zero dimensions', { e: { source: 'userProvided', dimensions: 0 } }, 'invalid_settings_embedders', '`.embedders.e.dimensions`: `dimensions` cannot be zero'],
    ['an unknown hosted model', { e: { source: 'hostedA', model: 'gpt-embed' } }, 'invalid_settings_embedders', '`.embedders.e.model`: Invalid model `gpt-embed` for source `hostedA`. Supported models: ["text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large"]'],
    ['a broken template', { e: { source: 'hostedA', documentTemplate: '{{ doc.title' } }, 'invalid_settings_embedders', ''],
    ['a distribution out of range', { e: { source: 'userProvided', dimensions: 1, distribution: { mean: 2, sigma: 0.1 } } }, 'invalid_settings_embedders', 'Invalid value at `.e.distribution`: the distribution mean must be in the range [0, 1], got 2'],
    ['an unknown field', { e: { source: 'rest', header: {} } }, 'invalid_settings_embedders', 'Unknown field `header` inside `.e`: did you mean `headers`? expected one of `source`, `model`, `revision`, `pooling`, `apiKey`, `dimensions`, `binaryQuantized`, `documentTemplate`, `documentTemplateMaxBytes`, `url`, `indexingFragments`, `searchFragments`, `request`, `response`, `headers`, `searchEmbedder`, `indexingEmbedder`, `distribution`'],
    ['a new embedder without a source', { e: { dimensions: 3 } }, 'invalid_settings_embedders', '`.embedders.e`: Missing field `source`.\n  - note: this field is mandatory'],
    [
      'composite before its feature is on',
      { e: { source: 'composite' } },
      'feature_not_enabled',
      'using `"composite"` as source requires enabling the `composite embedders` experimental feature. See https://github.com/orgs/meilisearch/discussions/816',
    ],
    [
      'fragments before their feature is on',
      { e: { ...REST, indexingFragments: { text: { value: '{{doc.title}}' } } } },
      'feature_not_enabled',
      'setting `indexingFragments` requires enabling the `multimodal` experimental feature. See https://github.com/orgs/meilisearch/discussions/846',
    ],
  ];

  it.each(refusals)('refuses %s', async (_what, body, code, message) => {
    const r = await embedders('refused', body);
    expect(r.status).toBe(400);
    if (message === '') {
      expect(r.body).toMatchObject({ code });
      expect(r.body!['message']).toMatch(/^`\.embedders\.e\.documentTemplate`: Invalid template: .+\.$/);
    } else expect(r.body).toEqual(errorBody(code, message));
  });

  it('merges an update into the embedder of that name; null removes one', async () => {
    await accepted('merge', { a: { source: 'userProvided', dimensions: 3 }, b: { ...REST } });
    await accepted('merge', { b: { headers: { Authorization: 'Bearer x' } }, a: null });
    expect(await t.client.index('merge').getEmbedders()).toEqual({ b: { ...REST, headers: { Authorization: 'Bearer x' } } });
    // A field the source refuses is caught against the stored embedder, before anything is enqueued.
    const r = await embedders('merge', { b: { model: 'x' } });
    expect(r.body).toMatchObject({ code: 'invalid_settings_embedders', message: expect.stringMatching(/^`\.embedders\.b`: Field `model` unavailable for source `rest`\./) });
  });

  it('judges an update of an embedder still being changed when its task runs', async () => {
    // Whether the earlier tasks are applied when the later requests arrive depends on timing;
    // either way the outcome is the same, answered at once or by the task.
    const missing = errorBody('invalid_settings_embedders', '`.embedders.gone`: Missing field `source`.\n  - note: this field is mandatory');
    const requests = [
      await embedders('deferred', { r: { ...REST }, gone: { source: 'userProvided', dimensions: 1 } }),
      await embedders('deferred', { r: { headers: { 'X-A': '1' } } }),
      await embedders('deferred', { gone: null }),
    ];
    const orphan = await embedders('deferred', { gone: { dimensions: 2 } });
    const tasks = await Promise.all(requests.map((r) => t.client.tasks.waitForTask(r.body!['taskUid'] as number)));
    expect(tasks.map((task) => task.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    if (orphan.status === 202) {
      const task = await t.client.tasks.waitForTask(orphan.body!['taskUid'] as number);
      expect(task.status).toBe('failed');
      expect(task.error).toEqual(missing);
    } else expect(orphan.body).toEqual(missing);
    expect(await t.client.index('deferred').getEmbedders()).toEqual({ r: { ...REST, headers: { 'X-A': '1' } } });
  });

  it('never turns binary quantization back off', async () => {
    await accepted('quantized', { q: { source: 'userProvided', dimensions: 2, binaryQuantized: true } });
    const r = await embedders('quantized', { q: { binaryQuantized: false } });
    expect(r.body).toEqual(
      errorBody(
        'invalid_settings_embedders',
        '`.embedders.q.binaryQuantized`: Cannot disable the binary quantization.\n - Note: Binary quantization is a lossy operation that cannot be reverted.\n - Hint: Add a new embedder that is non-quantized and regenerate the vectors.',
      ),
    );
  });

  it('holds at most 256 embedders', async () => {
    const many = Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`e${i}`, { source: 'userProvided', dimensions: 1 }]));
    expect((await embedders('many', many)).body).toEqual(errorBody('invalid_settings_embedders', 'Too many embedders in the configuration. Found 257, but limited to 256.'));
  });
});

describe('experimental features', () => {
  it('lists every flag off, and PATCH answers all of them once applied', async () => {
    const initial = (await call('GET', '/experimental-features')).body!;
    expect(Object.values(initial).every((v) => v === false)).toBe(true);
    for (const f of ['containsFilter', 'vectorStoreSetting', 'chatCompletions', 'compositeEmbedders', 'metrics', 'editDocumentsByFunction', 'network']) {
      expect(initial[f], f).toBe(false);
    }
    const r = await call('PATCH', '/experimental-features', { containsFilter: true, metrics: null });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ...initial, containsFilter: true });
    expect((await call('GET', '/experimental-features')).body).toEqual({ ...initial, containsFilter: true });
    await call('PATCH', '/experimental-features', { containsFilter: false });
  });

  it('refuses unknown flags and non-booleans', async () => {
    const unknown = await call('PATCH', '/experimental-features', { vectorStore: true });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual(
      errorBody(
        'bad_request',
        'Unknown field `vectorStore`: expected one of `metrics`, `logsRoute`, `editDocumentsByFunction`, `containsFilter`, `dynamicSearchRules`, `network`, `getTaskDocumentsRoute`, `taskQueueCompactionRoute`, `compositeEmbedders`, `chatCompletions`, `multimodal`, `vectorStoreSetting`, `foreignKeys`, `disableDocumentsFetchQueue`, `legacySearch`, `renderRoute`',
      ),
    );
    const close = await call('PATCH', '/experimental-features', { chatCompletion: true });
    expect(close.body!['message']).toMatch(/^Unknown field `chatCompletion`: did you mean `chatCompletions`\? expected one of /);
    const typed = await call('PATCH', '/experimental-features', { network: 'yes' });
    expect(typed.body).toEqual(errorBody('bad_request', 'Invalid value type at `.network`: expected a boolean, but found a string: `"yes"`'));
  });

  it('gates chat and vectorStore settings, which then work', async () => {
    const chat = await call('PUT', '/indexes/gated/settings/chat', { description: 'People' });
    expect(chat.body).toEqual(
      errorBody('feature_not_enabled', 'setting `chat` in the index settings requires enabling the `chat completions` experimental feature. See https://github.com/orgs/meilisearch/discussions/835'),
    );
    const store = await call('PATCH', '/indexes/gated/settings/vector-store', 'experimental');
    expect(store.body).toEqual(
      errorBody('feature_not_enabled', 'setting `vectorStore` in the index settings requires enabling the `vector_store_setting` experimental feature. See https://github.com/orgs/meilisearch/discussions/860'),
    );
    await call('PATCH', '/experimental-features', { chatCompletions: true, vectorStoreSetting: true });

    const wait = async (r: { body: Record<string, unknown> | null }) => t.client.tasks.waitForTask(r.body!['taskUid'] as number);
    await wait(await call('PUT', '/indexes/gated/settings/chat', { description: 'People', searchParameters: { limit: 5 } }));
    await wait(await call('PATCH', '/indexes/gated/settings/chat', { documentTemplateMaxBytes: 100 }));
    expect((await call('GET', '/indexes/gated/settings/chat')).body).toEqual({ description: 'People', documentTemplateMaxBytes: 100, searchParameters: { limit: 5 } });
    await wait(await call('PUT', '/indexes/gated/settings/chat', { description: 'Only this' }));
    expect((await call('GET', '/indexes/gated/settings/chat')).body).toEqual({ description: 'Only this' });
    const badChat = await call('PUT', '/indexes/gated/settings/chat', { searchParameters: { matchingStrategy: 'some' } });
    expect(badChat.body).toEqual(errorBody('invalid_settings_index_chat', 'Unknown value `some` at `.searchParameters.matchingStrategy`: expected one of `last`, `all`, `frequency`'));

    await wait(await call('PATCH', '/indexes/gated/settings/vector-store', 'experimental'));
    expect((await call('GET', '/indexes/gated/settings/vector-store')).body).toBe('experimental');
    expect((await call('GET', '/indexes/gated/settings')).body!['vectorStore']).toBe('experimental');
    await wait(await call('DELETE', '/indexes/gated/settings/vector-store'));
    await wait(await call('DELETE', '/indexes/gated/settings/chat'));
    expect((await call('GET', '/indexes/gated/settings/vector-store')).body).toBe('stable');
    expect((await call('GET', '/indexes/gated/settings/chat')).body).toEqual({});
    await call('PATCH', '/experimental-features', { chatCompletions: false, vectorStoreSetting: false });
  });

  it('gates composite embedders, then checks both halves', async () => {
    await call('PATCH', '/experimental-features', { compositeEmbedders: true });
    const half = { source: 'hubModel', model: 'BAAI/bge-small-en-v1.5' };
    await accepted('composite', { c: { source: 'composite', indexingEmbedder: { ...half, documentTemplate: '{{doc.name}}' }, searchEmbedder: half } });
    const nested = await embedders('composite', { d: { source: 'composite', indexingEmbedder: half, searchEmbedder: { ...half, documentTemplate: 'x' } } });
    expect(nested.body).toEqual(
      errorBody(
        'invalid_settings_embedders',
        '`.embedders.d.searchEmbedder`: Field `documentTemplate` unavailable for source `hubModel` for the search embedder.\n  - note: available fields for source `hubModel` for the search embedder: `source`, `model`, `revision`, `pooling`, `dimensions`\n  - note: `documentTemplate` is available when source `hubModel` is not for the search embedder',
      ),
    );
    const user = await embedders('composite', { d: { source: 'composite', indexingEmbedder: { source: 'userProvided' }, searchEmbedder: half } });
    expect(user.body).toEqual(errorBody('invalid_settings_embedders', '`.embedders.d.indexingEmbedder.source`: Source `userProvided` is not available in a nested embedder'));
    await call('PATCH', '/experimental-features', { compositeEmbedders: false });
  });

  it('keeps the flags across a restart', async () => {
    await call('PATCH', '/experimental-features', { network: true });
    const dir = t.dir;
    await t.close({ keepData: true });
    t = await startTestNode([], dir);
    expect((await call('GET', '/experimental-features')).body).toMatchObject({ network: true, containsFilter: false });
  });
});
