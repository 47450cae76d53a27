import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { dataset } from '../fixtures/index.js';

const movies = dataset<Record<string, any>>('movies');

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  await t.client.index('movies').addDocuments(movies).waitTask();
  await t.client.index('configured').addDocuments(movies).waitTask();
  await t.client
    .index('configured')
    .updateSettings({ searchableAttributes: ['title', 'id'], sortableAttributes: ['id'], filterableAttributes: ['color', 'title'] })
    .waitTask();
});
afterAll(async () => {
  await t.close();
});

async function post(uid: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${t.url}/indexes/${uid}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

async function get(uid: string, query: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${t.url}/indexes/${uid}/search?${query}`);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

function expectError(r: { status: number; body: Record<string, unknown> }, code: string, message: string): void {
  expect(r.body).toEqual({ message, code, type: 'invalid_request', link: `https://docs.meilisearch.com/errors#${code}` });
  expect(r.status).toBe(400);
}

describe('parameter types', () => {
  it('names the field and its code in the body form', async () => {
    expectError(await post('movies', { q: ['doggo'] }), 'invalid_search_q', 'Invalid value type at `.q`: expected a string, but found an array: `["doggo"]`');
    expectError(await post('movies', { limit: 'doggo' }), 'invalid_search_limit', 'Invalid value type at `.limit`: expected a positive integer, but found a string: `"doggo"`');
    expectError(await post('movies', { offset: -1 }), 'invalid_search_offset', 'Invalid value type at `.offset`: expected a positive integer, but found a negative integer: `-1`');
    expectError(await post('movies', { attributesToRetrieve: 'doggo' }), 'invalid_search_attributes_to_retrieve', 'Invalid value type at `.attributesToRetrieve`: expected an array, but found a string: `"doggo"`');
    expectError(await post('movies', { showMatchesPosition: 'doggo' }), 'invalid_search_show_matches_position', 'Invalid value type at `.showMatchesPosition`: expected a boolean, but found a string: `"doggo"`');
    expectError(await post('movies', { matchingStrategy: 'doggo' }), 'invalid_search_matching_strategy', 'Unknown value `doggo` at `.matchingStrategy`: expected one of `last`, `all`, `frequency`');
    expectError(await post('movies', { rankingScoreThreshold: 42 }), 'invalid_search_ranking_score_threshold', 'Invalid value at `.rankingScoreThreshold`: the value of `rankingScoreThreshold` is invalid, expected a float between `0.0` and `1.0`.');
    expectError(await post('movies', { highlightPreTag: ['doggo'] }), 'invalid_search_highlight_pre_tag', 'Invalid value type at `.highlightPreTag`: expected a string, but found an array: `["doggo"]`');
    expectError(await post('movies', { cropLength: 'doggo' }), 'invalid_search_crop_length', 'Invalid value type at `.cropLength`: expected a positive integer, but found a string: `"doggo"`');
    expectError(await post('movies', { distinct: true }), 'invalid_search_distinct', 'Invalid value type at `.distinct`: expected a string, but found a boolean: `true`');
  });

  it('names the parameter in the query-string form', async () => {
    expectError(await get('movies', 'limit=doggo'), 'invalid_search_limit', 'Invalid value in parameter `limit`: could not parse `doggo` as a positive integer');
    expectError(await get('movies', 'showRankingScore=doggo'), 'invalid_search_show_ranking_score', 'Invalid value in parameter `showRankingScore`: could not parse `doggo` as a boolean, expected either `true` or `false`');
    expectError(await get('movies', 'matchingStrategy=doggo'), 'invalid_search_matching_strategy', 'Unknown value `doggo` for parameter `matchingStrategy`: expected one of `last`, `all`, `frequency`');
  });

  it('refuses unknown parameters', async () => {
    const r = await post('movies', { marin: 'hello' });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('bad_request');
    expect(r.body['message']).toMatch(/^Unknown field `marin`: expected one of `q`, /);
    const g = await get('movies', 'marin=hello');
    expect(g.body['code']).toBe('bad_request');
  });

  it('refuses unknown locales', async () => {
    const r = await post('movies', { locales: ['xx'] });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('invalid_search_locales');
    expect((await post('movies', { q: 'glass', locales: ['fra', 'en'] })).status).toBe(200);
  });
});

describe('parameters that depend on the settings', () => {
  it('refuses to sort on non-sortable attributes, and without `sort` in the ranking rules', async () => {
    expectError(await post('movies', { sort: ['title'] }), 'invalid_search_sort', 'Invalid syntax for the sort parameter: expected expression ending by `:asc` or `:desc`, found `title`.');
    expectError(await post('configured', { sort: ['title:asc'] }), 'invalid_search_sort', 'Index `configured`: Attribute `title` is not sortable. Available sortable attributes are: `id`.');
    expectError(await post('movies', { sort: ['title:asc'] }), 'invalid_search_sort', 'Index `movies`: Attribute `title` is not sortable. This index does not have configured sortable attributes.');
    expectError(await post('configured', { sort: ['_geoDistance:asc'] }), 'invalid_search_sort', '`_geoDistance` is a reserved keyword and thus can\'t be used as a sort expression.');
    await t.client.index('norules').addDocuments(movies).waitTask();
    await t.client.index('norules').updateSettings({ sortableAttributes: ['title'], rankingRules: ['proximity', 'exactness'] }).waitTask();
    expectError(await post('norules', { sort: ['title:asc'] }), 'invalid_search_sort', 'Index `norules`: You must specify where `sort` is listed in the rankingRules setting to use the sort parameter at search time.');
  });

  it('refuses distinct on non-filterable attributes, leaves such facets out', async () => {
    expectError(
      await post('movies', { distinct: 'doggo.truc' }),
      'invalid_search_distinct',
      'Index `movies`: Attribute `doggo.truc` is not filterable and thus, cannot be used as distinct attribute. This index does not have configured filterable attributes.',
    );
    // The spec: facets on attributes that are not filterable are accepted and left out.
    const r = await post('movies', { facets: ['doggo'] });
    expect(r.status).toBe(200);
    expect(r.body['facetDistribution']).toEqual({});
  });

  it('refuses filters on non-filterable attributes', async () => {
    const r = await post('movies', { filter: 'title = Glass' });
    expect(r.status).toBe(400);
    expect(r.body['code']).toBe('invalid_search_filter');
    expect(r.body['message']).toMatch(/^Index `movies`: Attribute `title` is not filterable\. This index does not have configured filterable attributes\./);
    expectError(await post('movies', { filter: true }), 'invalid_search_filter', 'Invalid syntax for the filter parameter: `expected String, Array, found: true`.');
  });

  it('restricts attributesToSearchOn to searchable attributes', async () => {
    expectError(
      await post('configured', { q: 'captain', attributesToSearchOn: ['unknown'] }),
      'invalid_search_attributes_to_search_on',
      'Index `configured`: Attribute `unknown` is not searchable. Available searchable attributes are: `title, id`.',
    );
    expect((await post('movies', { q: 'captain', attributesToSearchOn: ['unknown'] })).status).toBe(200);
  });

  it('filters, distincts and sorts once the attributes are configured', async () => {
    const r = await post('configured', { q: '', filter: 'color = red', sort: ['id:asc'], facets: ['color'] });
    expect(r.status).toBe(200);
    expect((r.body['hits'] as Record<string, unknown>[]).map((h) => h['id'])).toEqual(['166428', '450465', '522681']);
    expect(r.body['facetDistribution']).toMatchObject({ color: { red: 3 } });
    const d = await post('configured', { q: '', distinct: 'color' });
    expect(d.status).toBe(200);
  });
});
