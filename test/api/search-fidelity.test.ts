import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hit } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { dataset } from '../fixtures/index.js';
import { call, write } from '../helpers/vector-api.js';

// Search behaviours checked against the reference engine's own answers: the expected
// scores and orders below are those its tests and its JavaScript client's tests assert
// (document sets from test/fixtures, the reference's test fixtures). Scores compare to 14
// digits where the reference's test harness, parsing its answers, can be one unit off in
// the last place.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t.close();
});

const ids = (hits: Hit[]) => hits.map((h) => h['id']);

// The JavaScript client's book set.
const books = [
  { id: 123, title: 'Pride and Prejudice', comment: 'A great book', genre: 'romance' },
  { id: 456, title: 'Le Petit Prince', comment: 'A french book', genre: 'adventure' },
  { id: 2, title: 'Le Rouge et le Noir', comment: 'Another french book', genre: 'romance' },
  { id: 1, title: 'Alice In Wonderland', comment: 'A weird book', genre: 'adventure' },
  { id: 1344, title: 'The Hobbit', comment: 'An awesome book', genre: 'sci fi' },
  { id: 4, title: 'Harry Potter and the Half-Blood Prince', comment: 'The best book', genre: 'fantasy' },
  { id: 42, title: "The Hitchhiker's Guide to the Galaxy", genre: 'fantasy' },
];

describe('ranking scores', () => {
  beforeAll(async () => {
    await t.client.index('score').addDocuments(dataset('score')).waitTask();
    await t.client.index('movies').addDocuments(dataset('movies')).waitTask();
    await t.client.index('books').addDocuments(books).waitTask();
  });

  it('follow the reference per rule and combined', async () => {
    const r = await t.client.index('score').search('Badman the dark knight returns 1', { showRankingScore: true });
    expect(r.hits.map((h) => [h['id'], h._rankingScore])).toEqual([
      ['A', 0.9746605609456898],
      ['B', 0.8055252965383685],
      ['E', 0.16666666666666666],
      ['C', 0.07702020202020202],
      ['D', 0.07702020202020202],
    ]);
  });

  it('show each rule as the reference does, maxTypoCount being the typos the query allowed', async () => {
    const r = await t.client.index('movies').search('train dragon', { showRankingScoreDetails: true });
    expect(r.hits.map((h) => h._rankingScoreDetails)).toEqual([
      {
        words: { order: 0, matchingWords: 2, maxMatchingWords: 2, score: 1 },
        typo: { order: 1, typoCount: 0, maxTypoCount: 2, score: 1 },
        proximity: { order: 2, score: 0.75 },
        attribute: { order: 3, attributeRankingOrderScore: 1, queryWordDistanceScore: 0.8095238095238095, score: 0.8095238095238095 },
        exactness: { order: 4, matchType: 'noExactMatch', matchingWords: 2, maxMatchingWords: 2, score: 0.3333333333333333 },
      },
    ]);
    // A word too short for typos still counts one: it may match split in two.
    const short = await t.client.index('books').search('the hobbit', { showRankingScoreDetails: true, attributesToSearchOn: ['title'] });
    expect(short.hits[0]!._rankingScoreDetails!['typo']).toEqual({ order: 1, typoCount: 0, maxTypoCount: 2, score: 1 });
  });

  it('cut at rankingScoreThreshold what the reference cuts', async () => {
    const scores = async (q: string, threshold: number) => {
      const r = await t.client.index('score').search(q, { showRankingScore: true, rankingScoreThreshold: threshold });
      return { total: r.estimatedTotalHits, hits: r.hits.map((h) => [h['id'], h._rankingScore]) };
    };
    const q = 'Badman dark returns 1';
    const all = await scores(q, 0);
    expect(all.total).toBe(5);
    expect(all.hits.map(([id]) => id)).toEqual(['A', 'B', 'E', 'C', 'D']);
    const expected = [0.93430081300813, 0.6685627880184332, 0.25, 0.11553030303030302, 0.11553030303030302];
    all.hits.forEach(([, score], i) => expect(score).toBeCloseTo(expected[i]!, 14));
    expect(await scores(q, 0.2)).toMatchObject({ total: 3, hits: [['A', expect.any(Number)], ['B', expect.any(Number)], ['E', 0.25]] });
    expect((await scores(q, 0.5)).total).toBe(2);
    expect((await scores(q, 0.8)).hits.map(([id]) => id)).toEqual(['A']);
    expect(await scores(q, 1)).toEqual({ total: 0, hits: [] });

    // The JavaScript client's own check: "prince" scores between 0.8 and 0.9 in its book set.
    const prince = await t.client.index('books').search('prince', { showRankingScore: true, rankingScoreThreshold: 0.8 });
    expect(prince.hits.map((h) => h['title'])).toEqual(['Le Petit Prince', 'Harry Potter and the Half-Blood Prince']);
    for (const h of prince.hits) expect(h._rankingScore).toBeGreaterThanOrEqual(0.8);
    expect((await t.client.index('books').search('prince', { rankingScoreThreshold: 0.9 })).hits).toEqual([]);
  });

  it('report the rules the time budget left out as skipped, which lowers the score', async () => {
    const index = t.client.index('degraded');
    await index.addDocuments(dataset('nested')).waitTask();
    await index.updateSettings({ searchCutoffMs: 0 }).waitTask();
    const r = await index.search('b', { attributesToRetrieve: ['id'], showRankingScoreDetails: true, showRankingScore: true });
    expect(r.hits.length).toBeGreaterThan(0);
    for (const h of r.hits) {
      expect(h._rankingScoreDetails).toEqual({ skipped: { order: 0 } });
      expect(h._rankingScore).toBe(0);
    }
  });
});

describe('hybrid search', () => {
  beforeAll(async () => {
    await write(t, 'PATCH', '/indexes/vec/settings', { embedders: { default: { source: 'userProvided', dimensions: 2 } } });
    await write(t, 'POST', '/indexes/vec/documents', [
      { title: 'Shazam!', desc: 'a Captain Marvel ersatz', id: '1', _vectors: { default: [1.0, 3.0] } },
      { title: 'Captain Planet', desc: "He's not part of the Marvel Cinematic Universe", id: '2', _vectors: { default: [1.0, 2.0] } },
      { title: 'Captain Marvel', desc: 'a Shazam ersatz', id: '3', _vectors: { default: [2.0, 3.0] } },
    ]);
  });

  it('mixes keyword and semantic hits by semanticRatio as the reference does', async () => {
    const search = async (semanticRatio: number) => {
      const r = await call(t, 'POST', '/indexes/vec/search', { q: 'Captain', vector: [1, 1], hybrid: { semanticRatio, embedder: 'default' }, showRankingScore: true });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return { hits: r.body['hits'].map((h: any) => [h.id, h._rankingScore]), semanticHitCount: r.body['semanticHitCount'] };
    };
    const low = await search(0.2);
    expect(low.hits.map(([id]: [string]) => id)).toEqual(['2', '3', '1']);
    expect(low.semanticHitCount).toBe(0);
    const half = await search(0.5);
    expect(half.hits.map(([id]: [string]) => id)).toEqual(['3', '2', '1']);
    // Keyword score, then semantic similarities, in single precision as the reference computes them.
    expect(half.hits[1][1]).toBeCloseTo(0.9848484848484848, 14);
    expect(half.hits[0][1]).toBeCloseTo(0.990290343761444, 14);
    expect(half.hits[2][1]).toBeCloseTo(0.9472135901451112, 14);
    expect(half.semanticHitCount).toBe(2);
    const high = await search(0.8);
    expect(high.hits.map(([id]: [string]) => id)).toEqual(['3', '2', '1']);
    expect(high.semanticHitCount).toBe(3);
    expect(high.hits[1][1]).toBe(0.974341630935669);
  });
});

describe('attributesToSearchOn', () => {
  const nested = [
    {
      details: { title: 'Shazam!', desc: 'a Captain Marvel ersatz', weaknesses: ['magic', 'requires transformation'], outfit: { has_cape: true, colors: { primary: 'red', secondary: 'gold' } } },
      id: '1',
    },
    { details: { title: 'Captain Planet', desc: "He's not part of the Marvel Cinematic Universe", blue_skin: true, outfit: { has_cape: false } }, id: '2' },
    { details: { title: 'Captain Marvel', desc: 'a Shazam ersatz', weaknesses: ['magic', 'power instability'], outfit: { has_cape: false } }, id: '3' },
  ];
  beforeAll(async () => {
    await t.client.index('nested-on').addDocuments(nested).waitTask();
    await t.client.index('nested-set').addDocuments(nested).waitTask();
    await t.client.index('nested-set').updateSearchableAttributes(['details.title']).waitTask();
    await t.client.index('restrict').addDocuments([
      { title: 'Captain Marvel', desc: 'a Shazam ersatz', footer: 'The story of Captain Marvel', id: '1' },
      { title: 'The Avengers', desc: 'Captain Marvel is far from the earth', footer: 'A super hero team', id: '2' },
    ]).waitTask();
  });
  const count = async (uid: string, q: string, on: string[], extra = {}) => (await t.client.index(uid).search(q, { attributesToSearchOn: on, ...extra })).hits.length;

  it('understands `*.title` and `details.*` patterns over nested fields', async () => {
    expect(await count('nested-on', 'Captain Marvel', ['*.title'])).toBe(2);
    expect(await count('nested-on', 'Captain Marvel', ['details.*'])).toBe(3);
    expect(await count('nested-on', 'gold', ['details.*'])).toBe(1);
    expect(await count('nested-on', 'true', ['details.*'])).toBe(2);
    expect(await count('nested-set', 'Captain Marvel', ['details.*'])).toBe(2);
    expect(await count('nested-on', 'Captain Mar', ['*.title'])).toBe(2);
    expect(await count('nested-on', 'mag', ['details.*'])).toBe(2);
    expect(await count('nested-on', 'Captain Marvel', ['*.title'], { matchingStrategy: 'all' })).toBe(1);
  });

  it('ignores patterns matching nothing without searchable attributes set, and refuses them otherwise', async () => {
    expect(await count('nested-on', 'Captain Marvel', ['unknown.*', '*.unknown'])).toBe(0);
    expect(await count('nested-on', 'Captain Marvel', ['unknown.*', '*.unknown', '*.title'])).toBe(2);
    const r = await call(t, 'POST', '/indexes/nested-set/search', { q: 'x', attributesToSearchOn: ['*.unknown'] });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      message: 'Index `nested-set`: Attribute `*.unknown` is not searchable. Available searchable attributes are: `details.title`.',
      code: 'invalid_search_attributes_to_search_on',
      type: 'invalid_request',
      link: 'https://docs.meilisearch.com/errors#invalid_search_attributes_to_search_on',
    });
    // Searchable fields the displayed attributes hide stay unnamed.
    const hidden = t.client.index('nested-hidden');
    await hidden.addDocuments(nested).waitTask();
    await hidden.updateSettings({ searchableAttributes: ['details.title', 'details.desc'], displayedAttributes: ['id', 'details.title'] }).waitTask();
    const h = await call(t, 'POST', '/indexes/nested-hidden/search', { q: 'x', attributesToSearchOn: ['details.outfit'] });
    expect(h.body['message']).toBe('Index `nested-hidden`: Attribute `details.outfit` is not searchable. Available searchable attributes are: `details.title, <..hidden-attributes>`.');
    expect(await count('nested-hidden', 'ersatz', ['*.desc'])).toBe(2);
  });

  it('takes `*.title` in searchableAttributes as a name, as the reference does, not as a pattern', async () => {
    const idx = t.client.index('nested-literal');
    await idx.addDocuments(nested).waitTask();
    await idx.updateSearchableAttributes(['*.title']).waitTask();
    expect((await idx.search('Captain Marvel')).hits).toEqual([]);
    await idx.updateSearchableAttributes(['details.title', '*.title']).waitTask();
    expect((await idx.search('Captain Marvel')).hits.length).toBe(2);
  });

  it('keeps the order of searchableAttributes, whatever order it lists', async () => {
    const order = async (uid: string, on: string[]) => ids((await t.client.index(uid).search('Captain Marvel', { attributesToSearchOn: on, attributesToRetrieve: ['id'] })).hits);
    expect(await order('nested-on', ['*.desc', '*.title'])).toEqual(['3', '1', '2']);
    expect(await order('nested-on', ['details.*'])).toEqual(['3', '1', '2']);
    // As in the reference, the fields listed pick the candidates; the ranking reads every
    // searchable field: document 1's title is exactly the query.
    expect(await order('restrict', ['desc', 'footer'])).toEqual(['1', '2']);
    const two = t.client.index('two-fields');
    await two.addDocuments([{ id: 'x', a: 'captain', b: 'none' }, { id: 'y', a: 'none', b: 'captain' }]).waitTask();
    await two.updateSearchableAttributes(['b', 'a']).waitTask();
    for (const on of [['a', 'b'], ['b', 'a']]) {
      const r = await two.search('captain', { attributesToSearchOn: on, showRankingScoreDetails: true });
      expect(ids(r.hits)).toEqual(['y', 'x']);
      expect(r.hits.map((h) => (h._rankingScoreDetails!['attribute'] as unknown as Record<string, number>)['attributeRankingOrderScore'])).toEqual([1, 0.5]);
    }
  });
});

describe('phrases under proximityPrecision byAttribute', () => {
  it('match the documents holding the phrase words in one attribute, as the reference resolves them', async () => {
    const idx = t.client.index('phrase-attr');
    await idx.addDocuments([
      { id: 1, a: 'the quick brown fox' },
      { id: 2, a: 'quick', b: 'brown' },
      { id: 3, a: 'brown is quick' },
      { id: 4, a: 'quick things', b: 'are brown', c: 'quick and brown' },
      { id: 5, a: 'quick' },
    ]).waitTask();
    const found = async (q: string) => ((await idx.search(q, { attributesToRetrieve: ['id'] })).hits.map((h) => h['id']) as number[]).sort();
    expect(await found('"quick brown"')).toEqual([1]);
    expect(await found('"brown quick"')).toEqual([]);
    await idx.updateSettings({ proximityPrecision: 'byAttribute' }).waitTask();
    expect(await found('"quick brown"')).toEqual([1, 3, 4]);
    expect(await found('"brown quick"')).toEqual([1, 3, 4]);
    expect(await found('"quick brown fox"')).toEqual([1]);
    // Split words are phrases too.
    expect(await found('quickbrown')).toEqual([1, 3, 4]);
    expect(await found('quick -"brown quick"')).toEqual([2, 5]);
  });
});

describe('IS NULL on a nested path', () => {
  it('matches a null below an object, in search and in the documents route, as the reference does', async () => {
    const docs = [{ id: 1, a: { b: null } }, { id: 2, a: { b: 3 } }, { id: 3, a: null }, { id: 4 }, { id: 5, a: [{ b: null }] }, { id: 6, a: { b: [] } }, { id: 7, a: { c: 1 } }];
    for (const filterable of [['a'], ['a.b'], [{ attributePatterns: ['a.*'] }]]) {
      const uid = `null-${filterable.length}-${typeof filterable[0] === 'string' ? filterable[0].replace('.', '-') : 'pattern'}`;
      await write(t, 'PATCH', `/indexes/${uid}/settings`, { filterableAttributes: filterable });
      await write(t, 'POST', `/indexes/${uid}/documents`, docs);
      const found = async (filter: string) => {
        const s = await call(t, 'POST', `/indexes/${uid}/search`, { filter, attributesToRetrieve: ['id'] });
        const d = await call(t, 'POST', `/indexes/${uid}/documents/fetch`, { filter, fields: ['id'] });
        const ids = s.body['hits'].map((h: { id: number }) => h.id);
        expect(d.body['results'].map((h: { id: number }) => h.id)).toEqual(ids);
        return ids;
      };
      // A null inside an array is no null value for the reference: only one on the path itself.
      expect(await found('a.b IS NULL')).toEqual([1]);
      expect(await found('a.b IS NOT NULL')).toEqual([2, 3, 4, 5, 6, 7]);
      expect(await found('a.b IS EMPTY')).toEqual([6]);
      expect(await found('a.b EXISTS')).toEqual([1, 2, 5, 6]);
    }
  });
});

describe('performance details', () => {
  const duration = /^\d+\.\d\d(s|ms|µs|ns)$/;
  const steps = (details: Record<string, string>) => {
    for (const v of Object.values(details)) expect(v).toMatch(duration);
    return Object.keys(details);
  };
  beforeAll(async () => {
    await write(t, 'PATCH', '/indexes/perf/settings', { filterableAttributes: ['genre'] });
    await write(t, 'POST', '/indexes/perf/documents', books);
  });

  it('time the steps of a search, POST and GET, as the reference names them', async () => {
    const r = await call(t, 'POST', '/indexes/perf/search', { q: 'prince', showPerformanceDetails: true });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).at(-1)).toBe('performanceDetails');
    expect(steps(r.body['performanceDetails'])).toEqual(['search > tokenize', 'search > resolve universe', 'search > keyword search', 'search > format', 'search']);
    const all = await call(t, 'POST', '/indexes/perf/search', { q: '', filter: 'genre = fantasy', facets: ['genre'], showPerformanceDetails: true });
    expect(steps(all.body['performanceDetails'])).toEqual(['search > filter', 'search > placeholder search', 'search > format', 'search > facet distribution', 'search']);
    const get = await call(t, 'GET', '/indexes/perf/search?q=hobbit&showPerformanceDetails=true');
    expect(get.body['hits'].map((h: { id: number }) => h.id)).toEqual([1344]);
    expect(steps(get.body['performanceDetails'])).toContain('search > keyword search');
    expect((await call(t, 'POST', '/indexes/perf/search', { q: 'prince' })).body).not.toHaveProperty('performanceDetails');
    expect((await call(t, 'POST', '/indexes/perf/search', { q: 'prince', showPerformanceDetails: false })).body).not.toHaveProperty('performanceDetails');
    const bad = await call(t, 'POST', '/indexes/perf/search', { showPerformanceDetails: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body['code']).toBe('invalid_search_show_performance_details');
  });

  it('time each query of a multi-search, and a federated search as a whole', async () => {
    const multi = await call(t, 'POST', '/multi-search', { queries: [{ indexUid: 'perf', q: 'prince', showPerformanceDetails: true }, { indexUid: 'perf', q: 'prince' }] });
    expect(multi.status).toBe(200);
    expect(steps(multi.body['results'][0]['performanceDetails'])).toContain('search');
    expect(multi.body['results'][1]).not.toHaveProperty('performanceDetails');
    const fed = await call(t, 'POST', '/multi-search', {
      federation: { showPerformanceDetails: true, facetsByIndex: { perf: ['genre'] } },
      queries: [{ indexUid: 'perf', q: 'prince' }, { indexUid: 'perf', q: 'hobbit' }],
    });
    expect(fed.status).toBe(200);
    expect(Object.keys(fed.body).at(-1)).toBe('performanceDetails');
    // The queries' own steps add up under one name each.
    expect(steps(fed.body['performanceDetails'])).toEqual([
      'search > tokenize', 'search > resolve universe', 'search > keyword search', 'search > format',
      'search > federation > merge results', 'search > federation > merge facets', 'search > federation', 'search',
    ]);
    expect((await call(t, 'POST', '/multi-search', { federation: {}, queries: [{ indexUid: 'perf', q: 'x' }] })).body).not.toHaveProperty('performanceDetails');
    // Similar documents: one step, named as the reference names it.
    const similar = await call(t, 'POST', '/indexes/vec/similar', { id: '1', embedder: 'default', showPerformanceDetails: true });
    expect(similar.status, JSON.stringify(similar.body)).toBe(200);
    expect(steps(similar.body['performanceDetails'])).toEqual(['similar']);
  });

  it('refuse the parameter on a federated query and a non-boolean, with the reference messages', async () => {
    const perQuery = await call(t, 'POST', '/multi-search', { federation: {}, queries: [{ indexUid: 'perf', q: 'glass', showPerformanceDetails: true }] });
    expect(perQuery.status).toBe(400);
    expect(perQuery.body).toEqual({
      message: 'Inside `.queries[0]`: Using `.showPerformanceDetails` is not allowed in federated queries.\n - Hint: remove `showPerformanceDetails` from query #0 or remove `federation` from the request',
      code: 'invalid_multi_search_query_show_performance_details',
      type: 'invalid_request',
      link: 'https://docs.meilisearch.com/errors#invalid_multi_search_query_show_performance_details',
    });
    const notBool = await call(t, 'POST', '/multi-search', { federation: { showPerformanceDetails: 'true' }, queries: [{ indexUid: 'perf', q: 'glass' }] });
    expect(notBool.status).toBe(400);
    expect(notBool.body).toMatchObject({
      message: 'Invalid value type at `.federation.showPerformanceDetails`: expected a boolean, but found a string: `"true"`',
      code: 'invalid_multi_search_query_show_performance_details',
    });
  });

  it('leave a progress trace on each finished batch', async () => {
    const task = await t.client.index('perf').addDocuments([{ id: 7, title: 'Dune' }]).waitTask();
    const batch = await call(t, 'GET', `/batches/${task.batchUid}`);
    const trace = batch.body['stats']['progressTrace'] as Record<string, string>;
    expect(steps(trace)).toEqual(['processing tasks > retrieving payloads', 'processing tasks > indexing', 'processing tasks', 'writing tasks to disk']);
    const list = await call(t, 'GET', '/batches?limit=3');
    for (const b of list.body['results']) expect(b['stats']).toHaveProperty('progressTrace');
    const settings = await t.client.index('perf').updateSettings({ sortableAttributes: ['id'] }).waitTask();
    expect(Object.keys((await call(t, 'GET', `/batches/${settings.batchUid}`)).body['stats']['progressTrace'])).toEqual(['processing tasks > indexing', 'processing tasks', 'writing tasks to disk']);
  });
});

describe('filterable attribute patterns over nested fields', () => {
  // The reference's own cases: the first rule a field matches decides, a parent is not its children.
  it('take the first rule matching `doggos.*`-like patterns, with the reference messages', async () => {
    const run = async (uid: string, rules: unknown[], filter: string) => {
      await write(t, 'PATCH', `/indexes/${uid}/settings`, { filterableAttributes: rules });
      await write(t, 'POST', `/indexes/${uid}/documents`, dataset('nested'));
      return call(t, 'POST', `/indexes/${uid}/search`, { filter, attributesToRetrieve: ['id'] });
    };
    const off = { facetSearch: false, filter: { equality: false, comparison: false } };
    const byPrefix = [{ attributePatterns: ['doggos.a*'], features: off }, { attributePatterns: ['doggos.*'] }];
    const byParent = [{ attributePatterns: ['doggos'], features: off }, { attributePatterns: ['doggos.*'] }];
    expect((await run('fp-1', byPrefix, 'doggos.name = bobby')).body['hits']).toEqual([{ id: 852 }]);
    expect((await run('fp-2', byParent, 'doggos.name = bobby')).body['hits']).toEqual([{ id: 852 }]);
    const age = await run('fp-3', byPrefix, 'doggos.age > 2');
    expect(age.status).toBe(400);
    expect(age.body['message']).toBe('Index `fp-3`: Attribute `doggos.age` is not filterable. Available filterable attribute patterns are: `doggos.*`.\n1:11 doggos.age > 2');
    const parent = await run('fp-4', byParent, 'doggos EXISTS');
    expect(parent.body['message']).toBe('Index `fp-4`: Attribute `doggos` is not filterable. Available filterable attribute patterns are: `doggos.*`.\n1:7 doggos EXISTS');
    expect(parent.body['code']).toBe('invalid_search_filter');
  });
});
