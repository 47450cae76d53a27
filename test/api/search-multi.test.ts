import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeilisearchApiError } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { dataset } from '../fixtures/index.js';

const movies = dataset<Record<string, any>>('movies');

let t: TestNode;

const products = [
  { id: 'p1', name: 'Captain hat', price: 10 },
  { id: 'p2', name: 'Marvel poster', price: 5 },
  { id: 'p3', name: 'Glass of water', price: 1 },
];

beforeAll(async () => {
  t = await startTestNode();
  await t.client.index('movies').addDocuments(movies).waitTask();
  await t.client.index('products').addDocuments(products).waitTask();
});
afterAll(async () => {
  await t.close();
});

async function post(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${t.url}/multi-search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe('multi-search', () => {
  it('answers each query separately, in order, with its index uid', async () => {
    const r = await t.client.multiSearch({
      queries: [
        { indexUid: 'movies', q: 'captain' },
        { indexUid: 'products', q: 'glass', limit: 1 },
        { indexUid: 'movies', q: 'glass', attributesToHighlight: ['title'] },
      ],
    });
    expect(r.results.map((x) => x.indexUid)).toEqual(['movies', 'products', 'movies']);
    expect(r.results[0]!.hits.map((h) => h['title'])).toEqual(['Captain Marvel']);
    expect(r.results[1]).toMatchObject({ limit: 1, estimatedTotalHits: 1 });
    expect((r.results[2]!.hits[0]!['_formatted'] as Record<string, unknown>)['title']).toBe('<em>Gläss</em>');
  });

  it('reports a failing query by its position', async () => {
    const r = await post({ queries: [{ indexUid: 'movies', q: 'a' }, { indexUid: 'missing', q: 'a' }] });
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ code: 'index_not_found', message: 'Inside `.queries[1]`: Index `missing` not found.' });
  });

  it('refuses federation options outside a federated search', async () => {
    const r = await post({ queries: [{ indexUid: 'movies', q: 'a', federationOptions: { weight: 2 } }] });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('invalid_multi_search_federation_options');
  });
});

describe('federated search', () => {
  it('merges hits of several indexes by score, with _federation on each hit', async () => {
    const r = await post({
      federation: {},
      queries: [
        { indexUid: 'movies', q: 'captain marvel' },
        { indexUid: 'products', q: 'captain marvel' },
      ],
    });
    expect(r.status).toBe(200);
    const hits = r.body['hits'] as Record<string, unknown>[];
    expect(hits[0]!['title']).toBe('Captain Marvel');
    expect(hits[0]!['_federation']).toMatchObject({ indexUid: 'movies', queriesPosition: 0 });
    // With `last`, "Marvel poster" lacks the first word and is no candidate.
    expect(hits.map((h) => (h['_federation'] as Record<string, unknown>)['indexUid'])).toEqual(['movies', 'products']);
    expect(r.body).toMatchObject({ limit: 20, offset: 0, estimatedTotalHits: 2 });
    const scores = hits.map((h) => (h['_federation'] as Record<string, number>)['weightedRankingScore']!);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('applies query weights and federation offset/limit, or page/hitsPerPage', async () => {
    const heavy = await post({
      federation: { limit: 2 },
      queries: [
        { indexUid: 'movies', q: 'glass' },
        { indexUid: 'products', q: 'glass', federationOptions: { weight: 2 } },
      ],
    });
    const hits = heavy.body['hits'] as Record<string, unknown>[];
    expect(hits.map((h) => h['id'])).toEqual(['p3', '450465']);
    // A weight of 2 can lift a score above 1.
    expect((hits[0]!['_federation'] as Record<string, number>)['weightedRankingScore']).toBeGreaterThan(1);
    const paged = await post({
      federation: { hitsPerPage: 1, page: 2 },
      queries: [
        { indexUid: 'movies', q: 'glass' },
        { indexUid: 'products', q: 'glass', federationOptions: { weight: 2 } },
      ],
    });
    expect(paged.body).toMatchObject({ hitsPerPage: 1, page: 2, totalHits: 2, totalPages: 2 });
    expect((paged.body['hits'] as Record<string, unknown>[]).map((h) => h['id'])).toEqual(['450465']);
  });

  it('refuses pagination and facets inside federated queries', async () => {
    const r = await post({ federation: {}, queries: [{ indexUid: 'movies', q: 'a', limit: 3 }] });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('invalid_multi_search_query_pagination');
    expect(r.body['message']).toMatch(/^Inside `\.queries\[0\]`: Using pagination options is not allowed in federated queries\./);
    const f = await post({ federation: {}, queries: [{ indexUid: 'movies', q: 'a', facets: ['color'] }] });
    expect(f.body['code']).toBe('invalid_multi_search_query_facets');
  });

  it('works through the official client', async () => {
    try {
      const r = await t.client.multiSearch({
        federation: { limit: 5 },
        queries: [{ indexUid: 'movies', q: 'shazam' }, { indexUid: 'products', q: 'poster' }],
      });
      expect(r.hits.map((h) => h['id']).sort()).toEqual(['287947', 'p2']);
    } catch (e) {
      if (e instanceof MeilisearchApiError) throw new Error(JSON.stringify(e.cause));
      throw e;
    }
  });
});
