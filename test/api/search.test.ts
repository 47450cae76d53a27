import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { dataset } from '../fixtures/index.js';

const movies = dataset<Record<string, any>>('movies');

let t: TestNode;

const books = [
  { id: 1, title: 'The Hobbit', author: 'Tolkien', genre: 'fantasy', year: 1937, summary: 'A hobbit goes on an unexpected journey with dwarves.' },
  { id: 2, title: 'The Lord of the Rings', author: 'Tolkien', genre: 'fantasy', year: 1954, summary: 'The fellowship must destroy the one ring.' },
  { id: 3, title: 'Dune', author: 'Herbert', genre: 'science fiction', year: 1965, summary: 'A desert planet, spice and a young duke.' },
  { id: 4, title: 'Neuromancer', author: 'Gibson', genre: 'science fiction', year: 1984, summary: 'A hacker is hired for one last job in cyberspace.' },
  { id: 5, title: 'The Hobbit companion', author: 'Someone', genre: 'reference', year: 2001, summary: 'Everything about hobbits and the shire.' },
  { id: 6, title: 'Foundation', author: 'Asimov', genre: 'science fiction', year: 1951, summary: 'A mathematician predicts the fall of an empire.' },
];

beforeAll(async () => {
  t = await startTestNode();
  await t.client.index('movies').addDocuments(movies).waitTask();
  await t.client.index('books').addDocuments(books).waitTask();
});
afterAll(async () => {
  await t.close();
});

async function raw(path: string, init?: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(t.url + path, init);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe('search responses', () => {
  it('answers with hits, query, timing, pagination and a UUID v7 request id', async () => {
    const r = await t.client.index('movies').search('escape');
    expect(r.hits).toEqual([movies[2]]);
    expect(r).toMatchObject({ query: 'escape', limit: 20, offset: 0, estimatedTotalHits: 1 });
    expect(typeof r.processingTimeMs).toBe('number');
    expect((r as unknown as { requestUid: string }).requestUid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('returns every document in insertion order for a placeholder search', async () => {
    const r = await t.client.index('movies').search();
    expect(r.hits.map((h) => h['id'])).toEqual(movies.map((m) => m.id));
    expect(r.query).toBe('');
    const empty = await t.client.index('movies').search('');
    expect(empty.estimatedTotalHits).toBe(movies.length);
  });

  it('ignores case and accents', async () => {
    const r = await t.client.index('movies').search('GLASS');
    expect(r.hits.map((h) => h['title'])).toEqual(['Gläss']);
  });

  it('answers 404 for a missing index', async () => {
    const r = await raw('/indexes/nope/search', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(r.status).toBe(404);
    expect(r.body['code']).toBe('index_not_found');
  });

  it('adds metadata when asked with Service-Include-Metadata', async () => {
    const r = await raw('/indexes/movies/search', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'service-include-metadata': 'true' },
      body: JSON.stringify({ q: 'escape' }),
    });
    expect(r.body['metadata']).toMatchObject({ indexUid: 'movies', primaryKey: 'id' });
    const without = await raw('/indexes/movies/search?q=escape');
    expect(without.body).not.toHaveProperty('metadata');
  });
});

describe('pagination', () => {
  it('estimates totals with offset/limit and reports the requested limit', async () => {
    const r = await t.client.index('books').search('', { offset: 4, limit: 5 });
    expect(r.hits.map((h) => h['id'])).toEqual([5, 6]);
    expect(r).toMatchObject({ offset: 4, limit: 5, estimatedTotalHits: 6 });
    const zero = await t.client.index('books').search('hobbit', { limit: 0 });
    expect(zero.hits).toEqual([]);
    expect(zero.estimatedTotalHits).toBe(2);
  });

  it('counts exactly with page/hitsPerPage, including page 0 and hitsPerPage 0', async () => {
    const r = await t.client.index('books').search('', { page: 2, hitsPerPage: 4 });
    expect(r.hits.map((h) => h['id'])).toEqual([5, 6]);
    expect(r).toMatchObject({ page: 2, hitsPerPage: 4, totalHits: 6, totalPages: 2 });
    expect(r).not.toHaveProperty('estimatedTotalHits');
    const page0 = await t.client.index('books').search('', { page: 0, hitsPerPage: 4 });
    expect(page0).toMatchObject({ hits: [], totalHits: 6, totalPages: 2 });
    const none = await t.client.index('books').search('', { hitsPerPage: 0 });
    expect(none).toMatchObject({ hits: [], totalHits: 6, totalPages: 0, page: 1 });
  });

  it('never goes past maxTotalHits', async () => {
    await t.client.index('capped').addDocuments(books).waitTask();
    await t.client.index('capped').updatePagination({ maxTotalHits: 3 }).waitTask();
    const r = await t.client.index('capped').search('', { limit: 10 });
    expect(r.hits).toHaveLength(3);
    expect(r.estimatedTotalHits).toBe(3);
    const past = await t.client.index('capped').search('', { offset: 5 });
    expect(past.hits).toEqual([]);
    const pages = await t.client.index('capped').search('', { hitsPerPage: 2, page: 2 });
    expect(pages).toMatchObject({ totalHits: 3, totalPages: 2 });
    expect(pages.hits).toHaveLength(1);
  });
});

describe('query syntax', () => {
  it('treats the last word as a prefix unless the query ends with a space', async () => {
    expect((await t.client.index('books').search('neuro')).hits.map((h) => h['id'])).toEqual([4]);
    expect((await t.client.index('books').search('neuro ')).hits).toEqual([]);
  });

  it('matches quoted phrases exactly and excludes negated words and phrases', async () => {
    const phrase = await t.client.index('books').search('"the one ring"');
    expect(phrase.hits.map((h) => h['id'])).toEqual([2]);
    const apart = await t.client.index('books').search('"ring one"');
    expect(apart.hits).toEqual([]);
    const minus = await t.client.index('books').search('hobbit -companion');
    expect(minus.hits.map((h) => h['id'])).toEqual([1]);
    const minusPhrase = await t.client.index('books').search('science -"last job"');
    expect(minusPhrase.hits.map((h) => h['id']).sort()).toEqual([3, 6]);
  });

  it('tolerates typos by word length', async () => {
    expect((await t.client.index('books').search('foundaton ')).hits.map((h) => h['id'])).toEqual([6]);
    expect((await t.client.index('books').search('dnue ')).hits).toEqual([]);
    expect((await t.client.index('books').search('nueromancer ')).hits.map((h) => h['id'])).toEqual([4]);
  });

  it('answers a 10 000-character query', async () => {
    const q = 'hobbit '.repeat(1500).slice(0, 10_000);
    const started = Date.now();
    const r = await t.client.index('books').search(q);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(r.hits.map((h) => h['id'])).toEqual([1, 5]);
    const cjk = await t.client.index('books').search('ホビット 霍比特人 ฮอบบิท');
    expect(cjk.hits).toEqual([]);
  });
});

describe('ranking through settings', () => {
  it('orders by searchable attributes, custom rules and the sort parameter', async () => {
    const index = t.client.index('ranked');
    await index.addDocuments(books).waitTask();
    await index.updateSettings({ searchableAttributes: ['summary', 'title'] }).waitTask();
    expect((await index.search('hobbit')).hits.map((h) => h['id'])).toEqual([1, 5]);
    await index.updateSettings({ rankingRules: ['words', 'year:desc', 'typo'] }).waitTask();
    expect((await index.search('the')).hits.map((h) => h['id'])).toEqual([5, 2, 6, 1]);
    await index.updateSettings({ rankingRules: ['words', 'sort', 'typo'], sortableAttributes: ['year'] }).waitTask();
    const sorted = await index.search('the', { sort: ['year:asc'], showRankingScoreDetails: true });
    expect(sorted.hits.map((h) => h['id'])).toEqual([1, 6, 2, 5]);
    expect(sorted.hits[0]!['_rankingScoreDetails']).toMatchObject({ 'year:asc': { order: 1, value: 1937 } });
  });

  it('re-indexes when stop words change and finds nothing more for them', async () => {
    const index = t.client.index('stops');
    await index.addDocuments(books).waitTask();
    expect((await index.search('fellowsh')).hits).toHaveLength(1);
    await index.updateStopWords(['fellowship']).waitTask();
    // Stop words are no longer indexed; a query made only of them is a placeholder search.
    expect((await index.search('fellowsh')).hits).toHaveLength(0);
    expect((await index.search('fellowship ')).hits).toHaveLength(books.length);
  });

  it('forgets deleted documents', async () => {
    const index = t.client.index('deletes');
    await index.addDocuments(books).waitTask();
    await index.deleteDocument(4).waitTask();
    expect((await index.search('neuromancer')).hits).toEqual([]);
    await index.addDocuments([{ id: 4, title: 'Count Zero' }]).waitTask();
    expect((await index.search('neuromancer')).hits).toEqual([]);
    expect((await index.search('count zero')).hits.map((h) => h['id'])).toEqual([4]);
  });
});

describe('scores and thresholds', () => {
  it('shows scores and details with the fields of each rule', async () => {
    const r = await t.client.index('books').search('hobbit journey', { showRankingScore: true, showRankingScoreDetails: true });
    const first = r.hits[0]!;
    expect(first['id']).toBe(1);
    expect(first['_rankingScore']).toBeGreaterThan(0);
    expect(first['_rankingScore']).toBeLessThanOrEqual(1);
    expect(Object.keys(first['_rankingScoreDetails'] as object)).toEqual(['words', 'typo', 'proximity', 'attribute', 'exactness']);
    expect(first['_rankingScoreDetails']).toMatchObject({
      words: { order: 0, matchingWords: 2, maxMatchingWords: 2, score: 1 },
      typo: { order: 1, typoCount: 0 },
      attribute: { order: 3, attributeRankingOrderScore: 1 },
      exactness: { order: 4, matchType: 'noExactMatch' },
    });
  });

  it('drops hits below rankingScoreThreshold from hits and totals', async () => {
    const all = await t.client.index('books').search('hobbit journey', { showRankingScore: true });
    const threshold = ((all.hits[0]!['_rankingScore'] as number) + (all.hits[1]!['_rankingScore'] as number)) / 2;
    const cut = await t.client.index('books').search('hobbit journey', { rankingScoreThreshold: threshold });
    expect(cut.hits.map((h) => h['id'])).toEqual([1]);
    expect(cut.estimatedTotalHits).toBe(1);
    const paged = await t.client.index('books').search('hobbit journey', { rankingScoreThreshold: threshold, hitsPerPage: 10 });
    expect(paged.totalHits).toBe(1);
  });

  it('restricts the searched attributes with attributesToSearchOn', async () => {
    const r = await t.client.index('books').search('hobbit', { attributesToSearchOn: ['summary'] });
    expect(r.hits.map((h) => h['id'])).toEqual([1, 5]);
    const title = await t.client.index('books').search('journey', { attributesToSearchOn: ['title'] });
    expect(title.hits).toEqual([]);
  });
});

describe('GET', () => {
  it('gives the same results as POST, with lists comma-separated', async () => {
    const post = await t.client.index('books').search('hobbit', { attributesToRetrieve: ['title', 'year'], limit: 1, attributesToHighlight: ['title'] });
    const get = await raw('/indexes/books/search?q=hobbit&attributesToRetrieve=title,year&limit=1&attributesToHighlight=title');
    expect(get.status).toBe(200);
    expect(get.body['hits']).toEqual(post.hits);
    expect(get.body['estimatedTotalHits']).toBe(post.estimatedTotalHits);
  });
});
