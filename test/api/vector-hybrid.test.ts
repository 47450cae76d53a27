import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { call, fakeEmbedding, fakeProvider, write, type FakeProvider } from '../helpers/vector-api.js';

let t: TestNode;
let provider: FakeProvider;

beforeAll(async () => {
  t = await startTestNode();
  provider = await fakeProvider((_p, body) => ({ embedding: fakeEmbedding(body.text) }));
  await write(t, 'PATCH', '/indexes/fruits/settings', {
    embedders: {
      manual: { source: 'userProvided', dimensions: 2 },
      remote: { source: 'rest', url: provider.url, request: { text: '{{text}}' }, response: { embedding: '{{embedding}}' }, documentTemplate: '{{doc.title}}' },
    },
    filterableAttributes: ['color'],
  });
  await write(t, 'POST', '/indexes/fruits/documents', [
    { id: 1, title: 'apple', color: 'red', _vectors: { manual: [0, 1] } },
    { id: 2, title: 'apple banana', color: 'yellow', _vectors: { manual: [1, 0] } },
    { id: 3, title: 'cherry', color: 'red', _vectors: { manual: [1, 0.1] } },
    { id: 4, title: 'date', color: 'brown', _vectors: { manual: [-1, 0] } },
  ]);
});
afterAll(async () => {
  await t.close();
  await provider.close();
});

const search = (body: Record<string, unknown>) => call(t, 'POST', '/indexes/fruits/search', body);
const ids = (r: { body: Record<string, any> }) => r.body['hits'].map((h: any) => h.id);

describe('hybrid search', () => {
  it('semanticRatio 0 is a keyword search, 1 a semantic search, 0.5 mixes both', async () => {
    const keyword = await search({ q: 'apple', vector: [1, 0], hybrid: { embedder: 'manual', semanticRatio: 0 } });
    expect(keyword.status, JSON.stringify(keyword.body)).toBe(200);
    expect(ids(keyword).sort()).toEqual([1, 2]);
    expect(keyword.body).not.toHaveProperty('semanticHitCount');

    const semantic = await search({ q: 'apple', vector: [1, 0], hybrid: { embedder: 'manual', semanticRatio: 1 } });
    expect(ids(semantic)).toEqual([2, 3, 1, 4]);
    expect(semantic.body['semanticHitCount']).toBe(4);

    const mixed = await search({ q: 'apple', vector: [1, 0], hybrid: { embedder: 'manual' }, showRankingScore: true });
    const got = ids(mixed);
    // The keyword match without a close vector and the close vector without a keyword match both appear.
    expect(got).toContain(1);
    expect(got).toContain(3);
    expect(got[0]).toBe(2);
    expect(mixed.body['semanticHitCount']).toBeGreaterThan(0);
    expect(mixed.body['semanticHitCount']).toBeLessThan(got.length);
    expect(mixed.body['estimatedTotalHits']).toBe(4);
  });

  it('a vector without a query is a semantic search; filters, pagination and scores apply', async () => {
    const r = await search({ vector: [1, 0], hybrid: { embedder: 'manual' }, filter: 'color = red', showRankingScoreDetails: true, showRankingScore: true });
    expect(ids(r)).toEqual([3, 1]);
    expect(r.body['hits'][1]['_rankingScore']).toBeCloseTo(0.5, 5);
    expect(r.body['hits'][1]['_rankingScoreDetails']).toEqual({ vectorSort: { order: 0, similarity: r.body['hits'][1]['_rankingScore'] } });
    const page = await search({ vector: [1, 0], hybrid: { embedder: 'manual' }, offset: 1, limit: 2 });
    expect(ids(page)).toEqual([3, 1]);
    const th = await search({ vector: [1, 0], hybrid: { embedder: 'manual' }, rankingScoreThreshold: 0.9 });
    expect(ids(th)).toEqual([2, 3]);
    expect(th.body['estimatedTotalHits']).toBe(2);
    const facets = await search({ vector: [1, 0], hybrid: { embedder: 'manual' }, facets: ['color'], limit: 1 });
    expect(facets.body['facetDistribution']).toEqual({ color: { brown: 1, red: 2, yellow: 1 } });
  });

  it('embeds the query with the embedder and returns vectors on demand', async () => {
    const before = provider.received.length;
    const r = await search({ q: 'cherry', hybrid: { embedder: 'remote', semanticRatio: 1 }, retrieveVectors: true, limit: 1 });
    expect(provider.received.slice(before).map((x) => x.body)).toEqual([{ text: 'cherry' }]);
    expect(ids(r)).toEqual([3]);
    expect(r.body['queryVector']).toEqual(fakeEmbedding('cherry'));
    expect(r.body['hits'][0]['_vectors']).toEqual({
      manual: { embeddings: [[1, 0.1].map((x) => Math.fround(x))], regenerate: false },
      remote: { embeddings: [fakeEmbedding('cherry')], regenerate: true },
    });
  });

  it('answers the reference errors', async () => {
    const missing = await search({ vector: [1, 0] });
    expect(missing.body).toMatchObject({ code: 'missing_search_hybrid' });
    const unknown = await search({ q: 'a', hybrid: { embedder: 'nope' } });
    expect(unknown.body).toMatchObject({ code: 'invalid_search_embedder', message: 'Cannot find embedder with name `nope`.' });
    const dims = await search({ vector: [1, 0, 0], hybrid: { embedder: 'manual' } });
    expect(dims.body).toMatchObject({ code: 'invalid_vector_dimensions', message: 'Invalid vector dimensions: expected: `2`, found: `3`.' });
    const ratio = await search({ q: 'a', hybrid: { embedder: 'manual', semanticRatio: 2 } });
    expect(ratio.body['code']).toBe('invalid_search_semantic_ratio');
    const manual = await search({ q: 'apple', hybrid: { embedder: 'manual', semanticRatio: 1 } });
    expect(manual.body['code']).toBe('vector_embedding_error');
  });

  it('runs hybrid queries in multi-search, and the GET form', async () => {
    const r = await call(t, 'POST', '/multi-search', { queries: [{ indexUid: 'fruits', vector: [1, 0], hybrid: { embedder: 'manual', semanticRatio: 1 }, limit: 2 }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body['results'][0]['hits'].map((h: any) => h.id)).toEqual([2, 3]);
    expect(r.body['results'][0]['semanticHitCount']).toBe(2);
    const get = await call(t, 'GET', '/indexes/fruits/search?vector=1,0&hybridEmbedder=manual&hybridSemanticRatio=1&limit=1');
    expect(ids(get)).toEqual([2]);
  });

  it('facet search with hybrid counts every document the filter allows, and checks hybrid, vector and media as search does', async () => {
    const facet = (body: Record<string, unknown>) => call(t, 'POST', '/indexes/fruits/facet-search', { facetName: 'color', ...body });
    const keyword = await facet({ q: 'apple' });
    expect(keyword.status, JSON.stringify(keyword.body)).toBe(200);
    expect(keyword.body['facetHits']).toEqual([
      { value: 'red', count: 1 },
      { value: 'yellow', count: 1 },
    ]);
    const hybrid = await facet({ q: 'apple', vector: [1, 0], hybrid: { embedder: 'manual', semanticRatio: 0.5 } });
    expect(hybrid.body['facetHits']).toEqual([
      { value: 'brown', count: 1 },
      { value: 'red', count: 2 },
      { value: 'yellow', count: 1 },
    ]);
    const filtered = await facet({ vector: [1, 0], hybrid: { embedder: 'manual' }, filter: 'color != brown' });
    expect(filtered.body['facetHits']).toEqual([
      { value: 'red', count: 2 },
      { value: 'yellow', count: 1 },
    ]);
    // Ratio 0 is a keyword search.
    expect((await facet({ q: 'apple', hybrid: { embedder: 'manual', semanticRatio: 0 } })).body['facetHits']).toEqual(keyword.body['facetHits']);
    expect((await facet({ q: 'apple', hybrid: { embedder: 'nope' } })).body).toMatchObject({ code: 'invalid_search_embedder' });
    expect((await facet({ vector: [1, 0] })).body).toMatchObject({ code: 'missing_search_hybrid' });
    expect((await facet({ vector: [1, 0, 0], hybrid: { embedder: 'manual' } })).body).toMatchObject({ code: 'invalid_vector_dimensions' });
    expect((await facet({ hybrid: { embedder: 'manual', semanticRatio: 2 } })).body).toMatchObject({ code: 'invalid_search_semantic_ratio' });
    expect((await facet({ media: 'x', hybrid: { embedder: 'manual' } })).body).toMatchObject({ code: 'invalid_search_media' });
  });
});
