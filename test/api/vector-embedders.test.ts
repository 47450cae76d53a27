import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { call, fakeEmbedding, fakeProvider, write, type FakeProvider } from '../helpers/vector-api.js';

let t: TestNode;
let rest: FakeProvider;
let local: FakeProvider;
let hosted: FakeProvider;

beforeAll(async () => {
  // Failing providers give up fast in tests.
  t = await startTestNode(['--embedder-timeout', '300ms', '--embedder-max-retry-delay', '5ms', '--embedder-attempts', '3']);
  rest = await fakeProvider((_p, body) => ({ results: body.inputs.map((x: { text: string }) => ({ vec: fakeEmbedding(x.text) })) }));
  local = await fakeProvider((path, body) => (path === '/api/embed' ? { embeddings: body.input.map((x: string) => fakeEmbedding(x)) } : { embedding: fakeEmbedding(body.prompt) }));
  hosted = await fakeProvider((_p, body) => ({ data: body.input.map((x: string, i: number) => ({ index: i, embedding: fakeEmbedding(x, 8) })) }));
});
afterAll(async () => {
  await t.close();
  await Promise.all([rest.close(), local.close(), hosted.close()]);
});

const DOCS = [
  { id: 1, title: 'aaaa', kind: 'x' },
  { id: 2, title: 'bbbb', kind: 'y' },
  { id: 3, title: 'cccc dddd', kind: 'x' },
];

describe('rest embedder', () => {
  it('sends batched texts through the request template, with the headers, and stores the answers', async () => {
    await write(t, 'PATCH', '/indexes/rest/settings', {
      embedders: {
        r: {
          source: 'rest',
          url: rest.url + '/embed',
          apiKey: 'secret-key',
          headers: { 'X-Team': 'search' },
          request: { inputs: [{ text: '{{text}}' }, '{{..}}'], model: 'tiny' },
          response: { results: [{ vec: '{{embedding}}' }, '{{..}}'] },
          documentTemplate: 'title {{doc.title}}',
        },
      },
    });
    await write(t, 'POST', '/indexes/rest/documents', DOCS);
    const req = rest.received.at(-1)!;
    expect(req.headers['authorization']).toBe('Bearer secret-key');
    expect(req.headers['x-team']).toBe('search');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.body).toEqual({ inputs: [{ text: 'title aaaa' }, { text: 'title bbbb' }, { text: 'title cccc dddd' }], model: 'tiny' });
    const doc = await call(t, 'GET', '/indexes/rest/documents/3?retrieveVectors=true');
    expect(doc.body['_vectors']).toEqual({ r: { embeddings: [fakeEmbedding('title cccc dddd')], regenerate: true } });
  });

  it('embeds again only the documents whose text changed', async () => {
    const before = rest.received.length;
    await write(t, 'POST', '/indexes/rest/documents', [{ id: 1, title: 'aaaa', kind: 'z' }, { id: 2, title: 'changed' }]);
    expect(rest.received.length).toBe(before + 1);
    expect(rest.received.at(-1)!.body.inputs).toEqual([{ text: 'title changed' }]);
  });

  it('fails the task naming the embedder when the provider refuses, and keeps nothing of the batch', async () => {
    rest.failNext(1, 401, '{"error":"bad key"}');
    const task = await write(t, 'POST', '/indexes/rest/documents', [{ id: 9, title: 'new one' }], 'failed');
    expect(task['error']).toMatchObject({
      code: 'vector_embedding_error',
      message:
        'Index `rest`: While embedding documents for embedder `r`: user error: could not authenticate against embedding server\n  - server replied with `{"error":"bad key"}`\n  - Hint: Check the `apiKey` parameter in the embedder configuration',
    });
    expect((await call(t, 'GET', '/indexes/rest/documents/9')).status).toBe(404);
  });

  it('retries transient failures, then succeeds', async () => {
    rest.failNext(2, 503, 'busy');
    await write(t, 'POST', '/indexes/rest/documents', [{ id: 10, title: 'retried' }]);
    const doc = await call(t, 'GET', '/indexes/rest/documents/10?retrieveVectors=true');
    expect(doc.body['_vectors']['r']['embeddings']).toEqual([fakeEmbedding('title retried')]);
  });

  it('gives up on a provider that keeps timing out', async () => {
    rest.failNext(10, 0);
    const task = await write(t, 'POST', '/indexes/rest/documents', [{ id: 11, title: 'slow' }], 'failed');
    expect(task['error']['message']).toMatch(/^Index `rest`: While embedding documents for embedder `r`: runtime error: could not reach embedding server:\n {2}- .*timed out/);
    rest.failNext(0, 200);
  });

  it('reports a response that does not fit the template', async () => {
    await write(t, 'PATCH', '/indexes/rest/settings', { embedders: { r: { response: { wrong: ['{{embedding}}', '{{..}}'] } } } }, 'failed').then((task) => {
      expect(task['error']['code']).toBe('vector_embedding_error');
      expect(task['error']['message']).toContain('error extracting embeddings from the response');
    });
  });
});

describe('local model server', () => {
  it('speaks /api/embed (batched) and /api/embeddings (one text a request)', async () => {
    await write(t, 'PATCH', '/indexes/local/settings', {
      embedders: {
        batch: { source: 'localRunner', model: 'nomic', url: local.url + '/api/embed', documentTemplate: '{{doc.title}}' },
        single: { source: 'ollama', model: 'nomic', url: local.url + '/api/embeddings', documentTemplate: '{{doc.title}}' },
      },
    });
    await write(t, 'POST', '/indexes/local/documents', DOCS.slice(0, 2));
    const batch = local.received.filter((r) => r.path === '/api/embed');
    const single = local.received.filter((r) => r.path === '/api/embeddings');
    expect(batch.map((r) => r.body)).toEqual([{ model: 'nomic', input: ['aaaa', 'bbbb'] }]);
    expect(single.map((r) => r.body).sort((a, b) => a.prompt.localeCompare(b.prompt))).toEqual([
      { model: 'nomic', prompt: 'aaaa' },
      { model: 'nomic', prompt: 'bbbb' },
    ]);
    const doc = await call(t, 'GET', '/indexes/local/documents/2?retrieveVectors=true');
    expect(doc.body['_vectors']['single']['embeddings']).toEqual([fakeEmbedding('bbbb')]);
  });

  it('names a missing model', async () => {
    local.failNext(1, 404, '{"error":"model \\"nomic\\" not found, try pulling it first"}');
    const task = await write(t, 'POST', '/indexes/local/documents', [{ id: 5, title: 'eeee' }], 'failed');
    expect(task['error']['message']).toContain('model not found');
  });
});

describe('hosted embeddings API', () => {
  it('sends model, inputs and dimensions, and reads data[].embedding', async () => {
    await write(t, 'PATCH', '/indexes/hosted/settings', {
      embedders: { h: { source: 'openAi', url: hosted.url + '/v1/embeddings', apiKey: 'sk-test', model: 'text-embedding-3-small', dimensions: 8, documentTemplate: '{{doc.title}}' } },
    });
    await write(t, 'POST', '/indexes/hosted/documents', DOCS.slice(0, 1));
    const req = hosted.received.at(-1)!;
    expect(req.body).toEqual({ model: 'text-embedding-3-small', input: ['aaaa'], dimensions: 8 });
    expect(req.headers['authorization']).toBe('Bearer sk-test');
  });
});

describe('document templates', () => {
  it('renders the default template and truncates it to documentTemplateMaxBytes on a character boundary', async () => {
    const seen: string[] = [];
    const p = await fakeProvider((_path, body) => {
      seen.push(body.text);
      return { e: fakeEmbedding(body.text) };
    });
    await write(t, 'PATCH', '/indexes/tpl/settings', {
      embedders: { e: { source: 'rest', url: p.url, request: { text: '{{text}}' }, response: { e: '{{embedding}}' }, documentTemplateMaxBytes: 20 } },
      searchableAttributes: ['title', 'body'],
    });
    await write(t, 'POST', '/indexes/tpl/documents', [{ id: 1, title: 'インテル', body: 'ザー ビーグル', hidden: 'x' }]);
    // "title: インテル\n" is 20 bytes; the next character would not fit whole.
    expect(seen).toEqual(['title: インテル\n']);
    await p.close();
  });
});
