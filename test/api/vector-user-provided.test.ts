import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { call, write } from '../helpers/vector-api.js';

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
  await write(t, 'PATCH', '/indexes/doggo/settings', { embedders: { manual: { source: 'userProvided', dimensions: 3 } }, filterableAttributes: ['kind'] });
  await write(t, 'POST', '/indexes/doggo/documents', [
    { id: 0, name: 'kefir', kind: 'dog', _vectors: { manual: [0, 0, 1] } },
    { id: 1, name: 'echo', kind: 'dog', _vectors: { manual: [1, 1, 1] } },
    { id: 2, name: 'billou', kind: 'cat', _vectors: { manual: [[2, 2, 2], [2, 2, 3]] } },
    { id: 3, name: 'intel', kind: 'cat', _vectors: { manual: { regenerate: false, embeddings: [3, 3, -3] } } },
    { id: 4, name: 'max', kind: 'dog', _vectors: { manual: null } },
  ]);
});
afterAll(async () => {
  await t.close();
});

describe('user-provided vectors', () => {
  it('shows the stored embeddings with retrieveVectors, and hides them otherwise', async () => {
    const plain = await call(t, 'GET', '/indexes/doggo/documents/2');
    expect(plain.body).toEqual({ id: 2, name: 'billou', kind: 'cat' });
    const one = await call(t, 'GET', '/indexes/doggo/documents/2?retrieveVectors=true');
    expect(one.body['_vectors']).toEqual({ manual: { embeddings: [[2, 2, 2], [2, 2, 3]], regenerate: false } });
    const opted = await call(t, 'GET', '/indexes/doggo/documents/4?retrieveVectors=true');
    expect(opted.body['_vectors']).toEqual({ manual: { embeddings: [], regenerate: false } });
    const stats = await call(t, 'GET', '/indexes/doggo/stats');
    expect(stats.body).toMatchObject({ numberOfEmbeddings: 5, numberOfEmbeddedDocuments: 4 });
  });

  it('fails a document without vectors with the reference error, naming the embedder', async () => {
    const task = await write(t, 'POST', '/indexes/doggo/documents', [{ id: 40, name: 'a' }, { id: 41, name: 'b' }], 'failed');
    expect(task['error']).toMatchObject({
      code: 'vector_embedding_error',
      message:
        'Index `doggo`: While embedding documents for embedder `manual`: no vectors provided for document `40` and at least 1 other document(s)\n- Note: `manual` has `source: userProvided`, so documents must provide embeddings as an array in `_vectors.manual`.\n- Hint: opt-out for a document with `_vectors.manual: null`',
    });
    expect(task['details']).toEqual({ receivedDocuments: 2, indexedDocuments: 0 });
    expect((await call(t, 'GET', '/indexes/doggo/documents/40')).status).toBe(404);
  });

  it('hints at a misspelt embedder name', async () => {
    const task = await write(t, 'POST', '/indexes/doggo/documents', [{ id: 42, name: 'kefir', _vectors: { manaul: [0, 0, 0] } }], 'failed');
    expect(task['error']['message']).toContain('- Hint: try replacing `_vectors.manaul` by `_vectors.manual` in 1 document(s).');
  });

  it('refuses vectors of the wrong size or shape', async () => {
    const dims = await write(t, 'POST', '/indexes/doggo/documents', [{ id: 0, name: 'kefir', _vectors: { manual: [0, 0] } }], 'failed');
    expect(dims['error']).toMatchObject({
      code: 'invalid_vector_dimensions',
      message: 'Index `doggo`: Invalid vector dimensions in document with id `0` in `._vectors.manual`.\n  - note: embedding #0 has dimensions 2\n  - note: embedder `manual` requires 3',
    });
    const shape = await write(t, 'POST', '/indexes/doggo/documents', [{ id: 0, name: 'kefir', _vectors: { manual: { embeddings: [0, 0, 0] } } }], 'failed');
    expect(shape['error']).toMatchObject({
      code: 'invalid_vectors_type',
      message:
        'Index `doggo`: Bad embedder configuration in the document with id: `0`. Missing field `._vectors.manual.regenerate`\n  - note: `._vectors.manual` must be an array of floats, an array of arrays of floats, or an object with field `regenerate`',
    });
    const mixed = await write(t, 'POST', '/indexes/doggo/documents', [{ id: 0, _vectors: { manual: { regenerate: false, embeddings: [[0.1, 0.2], 0.3] } } }], 'failed');
    expect(mixed['error']['message']).toBe('Index `doggo`: Bad embedder configuration in the document with id: `0`. Invalid value type at `._vectors.manual.embeddings[1]`: expected an array, but found a number: `0.3`');
  });

  it('keeps user vectors when a document is replaced without `_vectors`', async () => {
    await write(t, 'PATCH', '/indexes/keep/settings', { embedders: { manual: { source: 'userProvided', dimensions: 2 } } });
    await write(t, 'POST', '/indexes/keep/documents', [{ id: 1, name: 'a', _vectors: { manual: [1, 0] } }]);
    await write(t, 'POST', '/indexes/keep/documents', [{ id: 1, name: 'b' }]);
    const got = await call(t, 'GET', '/indexes/keep/documents/1?retrieveVectors=true');
    expect(got.body).toEqual({ id: 1, name: 'b', _vectors: { manual: { embeddings: [[1, 0]], regenerate: false } } });
    await write(t, 'DELETE', '/indexes/keep/documents/1', undefined);
    const similar = await call(t, 'POST', '/indexes/keep/similar', { id: 1, embedder: 'manual' });
    expect(similar.body['code']).toBe('not_found_similar_id');
  });
});

describe('similar documents', () => {
  it('ranks the other documents by similarity, with vectorSort details', async () => {
    const r = await call(t, 'POST', '/indexes/doggo/similar', { id: 1, embedder: 'manual', showRankingScore: true, showRankingScoreDetails: true });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body['hits'].map((h: any) => h.id)).toEqual([2, 0, 3]);
    expect(r.body['hits'][0]['_rankingScore']).toBeCloseTo(1, 5);
    expect(r.body['hits'][0]['_rankingScoreDetails']).toEqual({ vectorSort: { order: 0, similarity: r.body['hits'][0]['_rankingScore'] } });
    // cos([1,1,1], [0,0,1]) = 1/√3 → (1 + 0.577) / 2
    expect(r.body['hits'][1]['_rankingScore']).toBeCloseTo((1 + 1 / Math.sqrt(3)) / 2, 5);
    expect(r.body).toMatchObject({ id: '1', offset: 0, limit: 20 });
  });

  it('filters, paginates, thresholds and answers the GET form the same', async () => {
    const f = await call(t, 'POST', '/indexes/doggo/similar', { id: 1, embedder: 'manual', filter: 'kind = cat' });
    expect(f.body['hits'].map((h: any) => h.id)).toEqual([2, 3]);
    const page = await call(t, 'GET', '/indexes/doggo/similar?id=1&embedder=manual&offset=1&limit=1&attributesToRetrieve=name');
    expect(page.body['hits']).toEqual([{ name: 'kefir' }]);
    const th = await call(t, 'POST', '/indexes/doggo/similar', { id: 1, embedder: 'manual', rankingScoreThreshold: 0.9 });
    expect(th.body['hits'].map((h: any) => h.id)).toEqual([2]);
    expect(th.body['estimatedTotalHits']).toBe(1);
  });

  it('reports the reference errors', async () => {
    const cases: [unknown, string, string][] = [
      [{ id: 1, embedder: 'auto' }, 'invalid_similar_embedder', 'Cannot find embedder with name `auto`.'],
      [{ id: 'nope', embedder: 'manual' }, 'not_found_similar_id', 'Document `nope` not found.'],
      [{ id: 1 }, 'bad_request', 'Missing field `embedder`'],
      [{ rankingScoreThreshold: 42 }, 'invalid_similar_ranking_score_threshold', 'Invalid value at `.rankingScoreThreshold`: the value of `rankingScoreThreshold` is invalid, expected a float between `0.0` and `1.0`.'],
      [{ id: 1, filter: true, embedder: 'manual' }, 'invalid_similar_filter', 'Invalid syntax for the filter parameter: `expected String, Array, found: true`.'],
      [{ id: 1, filter: 'many = Glass', embedder: 'manual' }, 'invalid_similar_filter', 'Attribute `many` is not filterable. Available filterable attribute patterns are: `kind`.\n1:5 many = Glass'],
    ];
    for (const [body, code, message] of cases) {
      const r = await call(t, 'POST', '/indexes/doggo/similar', body);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code, message });
    }
    const bad = await call(t, 'POST', '/indexes/doggo/similar', { id: ['doggo'] });
    expect(bad.body['code']).toBe('invalid_similar_id');
    const get = await call(t, 'GET', '/indexes/doggo/similar?id=1&offset=doggo&embedder=manual');
    expect(get.body).toMatchObject({ code: 'invalid_similar_offset', message: 'Invalid value in parameter `offset`: could not parse `doggo` as a positive integer' });
    expect((await call(t, 'POST', '/indexes/nope/similar', { id: 1, embedder: 'manual' })).status).toBe(404);
  });
});

describe('persistence', () => {
  it('finds the vectors again after a restart', async () => {
    let n = await startTestNode();
    const dir = n.dir;
    await write(n, 'PATCH', '/indexes/p/settings', { embedders: { e: { source: 'userProvided', dimensions: 2, binaryQuantized: true } } });
    await write(n, 'POST', '/indexes/p/documents', [
      { id: 1, _vectors: { e: [0.5, -2] } },
      { id: 2, _vectors: { e: [3, 1] } },
    ]);
    await n.close({ keepData: true });
    n = await startTestNode([], dir);
    try {
      const doc = await call(n, 'GET', '/indexes/p/documents/1?retrieveVectors=true');
      expect(doc.body['_vectors']).toEqual({ e: { embeddings: [[1, -1]], regenerate: false } });
      const r = await call(n, 'POST', '/indexes/p/search', { vector: [1, 1], hybrid: { embedder: 'e' } });
      expect(r.body['hits'].map((h: any) => h.id)).toEqual([2, 1]);
    } finally {
      await n.close();
    }
  });
});
