import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeilisearchApiError, type Index } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { dataset } from '../fixtures/index.js';

let t: TestNode;
let products: Index;
let nested: Index;
let geo: Index;

beforeAll(async () => {
  t = await startTestNode();
  products = t.client.index('products');
  nested = t.client.index('nested');
  geo = t.client.index('geo');
  await products.updateSettings({ filterableAttributes: ['color', 'brand', 'id', 'product_id'], sortableAttributes: ['brand', 'id', 'mixed'] }).waitTask();
  const mixed = [3, 'b', undefined, 'A', 10, undefined, 2.5, 'a', undefined, 1, 'Z', 7, undefined, 'c'];
  await products.addDocuments(dataset('products').map((d, i) => (mixed[i] === undefined ? d : { ...d, mixed: mixed[i] })), { primaryKey: 'id' }).waitTask();
  await nested.updateFilterableAttributes(['doggos', 'cattos']).waitTask();
  await nested.addDocuments(dataset('nested')).waitTask();
  await geo.updateSettings({ filterableAttributes: ['_geo', 'type'], sortableAttributes: ['_geo', 'rating'] }).waitTask();
  await geo.addDocuments(dataset('geo')).waitTask();
});
afterAll(async () => {
  await t.close();
});

const ids = (hits: Record<string, unknown>[]) => hits.map((h) => h['id']);

async function apiError(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof MeilisearchApiError) return { code: e.cause!.code, message: e.cause!.message };
    throw e;
  }
  throw new Error('the request succeeded');
}

describe('search filters, facets, sort and geo through the official client', () => {
  it('filters with every operator, the array form and nested fields', async () => {
    const search = async (filter: string | (string | string[])[]) => ids((await products.search('', { filter, limit: 50, sort: ['id:asc'] })).hits);
    expect(await search('color = BLUE')).toEqual([3, 5, 11]);
    expect(await search('id 3 TO 5 AND color != blue')).toEqual([4]);
    expect(await search('brand IN [gap, nike] AND NOT color IN [red]')).toEqual([5, 9, 11]);
    expect(await search(['id > 10', ['color = black', 'color = "stone wash"']])).toEqual([13, 14]);
    expect(await search('product_id EXISTS AND id < 3 AND product_id IS NOT NULL')).toEqual([1, 2]);
    const r = await nested.search('', { filter: 'doggos.age >= 5 AND cattos = gomez' });
    expect(ids(r.hits)).toEqual([951]);
  });

  it('answers syntax errors plainly and evaluation errors with the index name', async () => {
    expect(await apiError(products.search('', { filter: 'color = blue XOR id = 1' }))).toEqual({
      code: 'invalid_search_filter',
      message: 'Found unexpected characters at the end of the filter: `XOR id = 1`. You probably forgot an `OR` or an `AND` rule.\n14:24 color = blue XOR id = 1',
    });
    expect(await apiError(products.search('', { filter: 'description = x' }))).toEqual({
      code: 'invalid_search_filter',
      message:
        'Index `products`: Attribute `description` is not filterable. Available filterable attribute patterns are: `brand`, `color`, `id`, `product_id`.\n1:12 description = x',
    });
    expect(await apiError(products.search('', { filter: 'color CONTAINS bl' }))).toMatchObject({ code: 'feature_not_enabled' });
  });

  it('returns facet distributions and numeric stats in alpha or count order', async () => {
    const r = await products.search('', { facets: ['brand', 'id'], filter: 'color = blue OR color = black' });
    expect(r.facetDistribution).toEqual({
      brand: { Adidas: 1, Gap: 1, 'Lee Jeans': 2, "Levi's": 1, Nike: 1 },
      id: { 2: 1, 3: 1, 5: 1, 6: 1, 11: 1, 13: 1 },
    });
    expect(r.facetStats).toEqual({ id: { min: 2, max: 13 } });
    await products.updateFaceting({ sortFacetValuesBy: { brand: 'count' }, maxValuesPerFacet: 2 }).waitTask();
    const c = await products.search('', { facets: ['brand'] });
    expect(Object.entries(c.facetDistribution!['brand']!)).toEqual([['Gap', 3], ['Lee Jeans', 3]]);
    await products.resetFaceting().waitTask();
    const all = await products.search('nothing matches this', { facets: ['*'] });
    expect(all.facetDistribution).toEqual({});
    // The spec: attributes that are not filterable are left out of the distribution, silently.
    const mixed = await products.search('', { facets: ['description', 'brand'] });
    expect(Object.keys(mixed.facetDistribution!)).toEqual(['brand']);
    expect((await products.search('', { facets: ['description'] })).facetDistribution).toEqual({});
  });

  it('sorts on several criteria, numbers before strings, missing values last', async () => {
    const bySort = async (sort: string[]) => ids((await products.search('', { sort, limit: 20 })).hits);
    expect(await bySort(['mixed:asc'])).toEqual([10, 7, 1, 12, 5, 4, 8, 2, 14, 11, 3, 6, 9, 13]);
    expect(await bySort(['mixed:desc'])).toEqual([5, 12, 1, 7, 10, 11, 14, 2, 4, 8, 3, 6, 9, 13]);
    expect(await bySort(['brand:desc', 'id:asc'])).toEqual([8, 4, 5, 12, 13, 14, 1, 2, 3, 9, 10, 11, 6, 7]);
    expect(await apiError(products.search('', { sort: ['color:asc'] }))).toEqual({
      code: 'invalid_search_sort',
      message: 'Index `products`: Attribute `color` is not sortable. Available sortable attributes are: `brand, id, mixed`.',
    });
    expect(await apiError(products.search('', { sort: ['id'] }))).toEqual({
      code: 'invalid_search_sort',
      message: 'Invalid syntax for the sort parameter: expected expression ending by `:asc` or `:desc`, found `id`.',
    });
  });

  it('sorts by distance with _geoDistance in hits and score details, and filters by radius', async () => {
    const r = await geo.search('', { sort: ['_geoPoint(45.4, 9.1):asc'], showRankingScoreDetails: true });
    expect(ids(r.hits)).toEqual([2, 1, 3]);
    expect(r.hits[0]!['_geoDistance']).toBe(11478);
    expect(r.hits[2]!['_geoDistance']).toBeUndefined();
    expect(r.hits[0]!['_rankingScoreDetails']).toEqual({
      '_geoPoint(45.4, 9.1):asc': { order: 0, value: { lat: 45.4777599, lng: 9.1967508 }, distance: 11478.019 },
    });
    const near = await geo.search('', { filter: '_geoRadius(34.05, -118.24, 5000)', sort: ['_geoPoint(34.05, -118.24):desc', 'rating:asc'] });
    expect(ids(near.hits)).toEqual([1]);
    expect(await apiError(geo.search('', { sort: ['_geoPoint(91, 0):asc'] }))).toEqual({
      code: 'invalid_search_sort',
      message: 'Bad latitude `91`. Latitude must be contained between -90 and 90 degrees.',
    });
  });

  it('keeps one hit per value of a filterable distinct attribute', async () => {
    const r = await products.search('', { distinct: 'product_id', sort: ['id:asc'] });
    expect(ids(r.hits)).toEqual([1, 4, 6, 8, 9, 12]);
    expect(await apiError(products.search('', { distinct: 'description' }))).toEqual({
      code: 'invalid_search_distinct',
      message:
        'Index `products`: Attribute `description` is not filterable and thus, cannot be used as distinct attribute. Available filterable attributes patterns are: `brand, color, id, product_id`.',
    });
  });

  it('refuses a malformed _geo once _geo is filterable, for new documents and for documents already stored', async () => {
    const places = t.client.index('geo-checks');
    await places.updateFilterableAttributes(['_geo']).waitTask();
    const bad = await places.addDocuments([{ id: 1, _geo: { lat: 1, lng: 2 } }, { id: 2, _geo: 'paris' }], { primaryKey: 'id' }).waitTask();
    expect(bad.status).toBe('failed');
    expect(bad.error?.code).toBe('invalid_document_geo_field');
    expect(bad.error?.message).toContain('`"2"`');
    expect((await places.getDocuments()).total).toBe(0);

    // Stored while `_geo` was not filterable: the settings change that makes it so fails.
    const later = t.client.index('geo-later');
    await later.addDocuments([{ id: 1, _geo: { lat: 1, lng: 2 } }, { id: 2, _geo: { lat: 'north', lng: 2 } }], { primaryKey: 'id' }).waitTask();
    const change = await later.updateSettings({ filterableAttributes: ['_geo', 'id'] }).waitTask();
    expect(change.status).toBe('failed');
    expect(change.error?.code).toBe('invalid_document_geo_field');
    expect(change.error?.message).toMatch(/^Index `geo-later`: .*`"2"`/);
    expect(await later.getFilterableAttributes()).toEqual([]);
    // Fixed documents let the same change through.
    await later.updateDocuments([{ id: 2, _geo: { lat: 3, lng: 4 } }]).waitTask();
    expect((await later.updateSettings({ filterableAttributes: ['_geo', 'id'] }).waitTask()).status).toBe('succeeded');
    const near = await later.search('', { filter: '_geoRadius(3, 4, 1000)' });
    expect(near.hits.map((h) => h['id'])).toEqual([2]);
  });
});
