import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';

/**
 * Semantic hits follow `sort` and `distinct` as the reference orders a vector search: the
 * first text rule of the ranking rules becomes the vector sort, sort rules before it split
 * the candidates first, sort rules after it break ties (documents without embeddings, most
 * often), and one document per distinct value is returned.
 */
let t: TestNode;

const DOCS = [
  { id: 1, brand: 'a', price: 30, title: 'red shoe', _vectors: { manual: [1, 0] } },
  { id: 2, brand: 'a', price: 10, title: 'blue shoe', _vectors: { manual: [0.9, 0.1] } },
  { id: 3, brand: 'b', price: 20, title: 'red hat', _vectors: { manual: [0.8, 0.2] } },
  { id: 4, brand: 'c', price: 5, title: 'green scarf', _vectors: { manual: [0, 1] } },
  { id: 5, brand: 'b', price: 40, title: 'red scarf', _vectors: { manual: null } },
  { id: 6, brand: 'd', price: 1, title: 'blue hat', _vectors: { manual: null } },
];

beforeAll(async () => {
  t = await startTestNode();
  const index = t.client.index('shop');
  await t.client.createIndex('shop', { primaryKey: 'id' }).waitTask();
  await index
    .updateSettings({
      embedders: { manual: { source: 'userProvided', dimensions: 2 } },
      filterableAttributes: ['brand', 'price'],
      sortableAttributes: ['brand', 'price'],
    })
    .waitTask();
  await index.addDocuments(DOCS).waitTask();
});

afterAll(async () => {
  await t.close();
});

const semantic = { vector: [1, 0], hybrid: { embedder: 'manual', semanticRatio: 1 } };
const ids = (r: { hits: Record<string, unknown>[] }) => r.hits.map((h) => h['id']);

describe('semantic hits with sort and distinct', () => {
  it('keeps one document per distinct value, best first, documents without embeddings after them', async () => {
    const index = t.client.index('shop');
    expect(ids(await index.search('', semantic))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(ids(await index.search('', { ...semantic, distinct: 'brand' }))).toEqual([1, 3, 4, 6]);
    expect(ids(await index.search('', { ...semantic, distinct: 'brand', offset: 1, limit: 2 }))).toEqual([3, 4]);
    const paged = await index.search('', { ...semantic, distinct: 'brand', hitsPerPage: 2, page: 1 });
    expect(ids(paged)).toEqual([1, 3]);
    expect(paged.totalHits).toBe(4);
  });

  it('with the default ranking rules, sort only orders documents of equal similarity', async () => {
    const index = t.client.index('shop');
    expect(ids(await index.search('', { ...semantic, sort: ['price:asc'] }))).toEqual([1, 2, 3, 4, 6, 5]);
    expect(ids(await index.search('', { ...semantic, sort: ['price:desc'] }))).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('sort placed before the text rules splits the candidates first, then the vector sort orders each part', async () => {
    const index = t.client.index('shop');
    await index.updateRankingRules(['sort', 'words', 'typo', 'proximity', 'attribute', 'exactness']).waitTask();
    try {
      const r = await index.search('', { ...semantic, sort: ['brand:asc'], showRankingScoreDetails: true });
      expect(ids(r)).toEqual([1, 2, 3, 5, 4, 6]);
      expect(r.hits[0]!['_rankingScoreDetails']).toMatchObject({ vectorSort: { similarity: 1 } });
      expect(ids(await index.search('', { ...semantic, sort: ['brand:asc'], distinct: 'brand' }))).toEqual([1, 3, 4, 6]);
      expect(ids(await index.search('', { ...semantic, sort: ['price:asc'], filter: 'price >= 10' }))).toEqual([2, 3, 1, 5]);
      const th = await index.search('', { ...semantic, sort: ['price:asc'], rankingScoreThreshold: 0.9 });
      expect(ids(th)).toEqual([2, 3, 1]);
      expect(th.estimatedTotalHits).toBe(3);
    } finally {
      await index.resetRankingRules().waitTask();
    }
  });

  it('a hybrid search returns each distinct value once across its keyword and semantic hits', async () => {
    const index = t.client.index('shop');
    const r = await index.search('red', { vector: [1, 0], hybrid: { embedder: 'manual', semanticRatio: 0.5 }, distinct: 'brand' });
    const brands = r.hits.map((h) => h['brand']);
    expect(new Set(brands).size).toBe(brands.length);
    expect(brands.length).toBeGreaterThanOrEqual(3);
  });
});
