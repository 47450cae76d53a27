import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeilisearchApiError, type Index } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { dataset } from '../fixtures/index.js';

let t: TestNode;
let products: Index;

beforeAll(async () => {
  t = await startTestNode();
  products = t.client.index('products');
  await products.addDocuments(dataset('products'), { primaryKey: 'id' }).waitTask();
  await products.updateFilterableAttributes([
    'brand',
    'color',
    { attributePatterns: ['product_id'], features: { facetSearch: false, filter: { equality: true, comparison: false } } },
  ]).waitTask();
});
afterAll(async () => {
  await t.close();
});

async function apiError(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof MeilisearchApiError) return { code: e.cause!.code, message: e.cause!.message };
    throw e;
  }
  throw new Error('the request succeeded');
}

describe('facet search through the official client', () => {
  it('lists values matching a prefix, with typos, counted among the filtered documents', async () => {
    const r = await products.searchForFacetValues({ facetName: 'color', facetQuery: 'bl' });
    expect(r.facetHits).toEqual([{ value: 'Black', count: 3 }, { value: 'Blue', count: 3 }]);
    expect(r.facetQuery).toBe('bl');
    expect(typeof r.processingTimeMs).toBe('number');
    expect((await products.searchForFacetValues({ facetName: 'brand', facetQuery: 'adiads' })).facetHits).toEqual([
      { value: 'Adidas', count: 2 },
    ]);
    const filtered = await products.searchForFacetValues({ facetName: 'color', facetQuery: 'b', filter: 'brand = "lee jeans"' });
    expect(filtered.facetHits).toEqual([{ value: 'Black', count: 1 }, { value: 'Blue', count: 1 }, { value: 'Brown', count: 1 }]);
    const all = await products.searchForFacetValues({ facetName: 'brand' });
    expect(all.facetHits.map((h) => h.value)).toEqual(['Adidas', 'Gap', 'Lee Jeans', "Levi's", 'Nike', 'Puma']);
    expect(all.facetQuery).toBeNull();
  });

  it('orders by count when sortFacetValuesBy says so, up to maxValuesPerFacet', async () => {
    await products.updateFaceting({ sortFacetValuesBy: { color: 'count' }, maxValuesPerFacet: 2 }).waitTask();
    const r = await products.searchForFacetValues({ facetName: 'color' });
    expect(r.facetHits).toEqual([{ value: 'Black', count: 3 }, { value: 'Blue', count: 3 }]);
    await products.resetFaceting().waitTask();
  });

  it('refuses attributes without the facet-search feature and indexes with facet search off', async () => {
    expect(await apiError(products.searchForFacetValues({ facetName: 'product_id' }))).toEqual({
      code: 'invalid_facet_search_facet_name',
      message:
        'Attribute `product_id` is not facet-searchable. Note: this attribute matches rule #2 in filterableAttributes, but this rule does not enable facetSearch.\n' +
        'Hint: enable facetSearch in rule #2 by adding `"facetSearch": true` to the rule.\n' +
        'Hint: prepend another rule matching product_id with facetSearch: true before rule #2',
    });
    expect(await apiError(products.searchForFacetValues({ facetName: 'description' }))).toEqual({
      code: 'invalid_facet_search_facet_name',
      message:
        'Attribute `description` is not facet-searchable. Available facet-searchable attributes patterns are: `brand, color`. To make it facet-searchable add it to the `filterableAttributes` index settings.',
    });
    expect(await apiError(products.searchForFacetValues({ facetName: 'color', filter: 'color = ' }))).toMatchObject({
      code: 'invalid_search_filter',
    });
    await products.updateSettings({ facetSearch: false }).waitTask();
    expect(await apiError(products.searchForFacetValues({ facetName: 'color' }))).toEqual({
      code: 'facet_search_disabled',
      message: 'The facet search is disabled for this index',
    });
    await products.updateSettings({ facetSearch: true }).waitTask();
  });
});
