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
  await products.updateSettings({ filterableAttributes: ['color', 'brand', 'id'], sortableAttributes: ['id', 'color'] }).waitTask();
  await products.addDocuments(dataset('products'), { primaryKey: 'id' }).waitTask();
  await nested.updateFilterableAttributes(['doggos', 'cattos', 'father']).waitTask();
  await nested.addDocuments(dataset('nested')).waitTask();
  await geo.addDocuments(dataset('geo')).waitTask();
  await geo.updateFilterableAttributes(['_geo', 'rating', 'type']).waitTask();
});
afterAll(async () => {
  await t.close();
});

const ids = async (index: Index, filter: string | (string | string[])[], extra: Record<string, unknown> = {}) =>
  (await index.getDocuments({ filter, limit: 100, fields: ['id'], ...extra })).results.map((d) => d['id']);

async function apiError(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof MeilisearchApiError) return { code: e.cause!.code, message: e.cause!.message };
    throw e;
  }
  throw new Error('the request succeeded');
}

describe('document filters through the official client', () => {
  it('applies every comparison operator', async () => {
    expect(await ids(products, 'color = blue')).toEqual([3, 5, 11]);
    expect(await ids(products, 'color != blue AND brand = "Lee Jeans"')).toEqual([1, 2]);
    expect(await ids(products, 'id > 12')).toEqual([13, 14]);
    expect(await ids(products, 'id >= 12')).toEqual([12, 13, 14]);
    expect(await ids(products, 'id < 2 OR id <= 2 AND color = black')).toEqual([1, 2]);
    expect(await ids(products, 'id 4 TO 6')).toEqual([4, 5, 6]);
    expect(await ids(products, "brand IN [nike, 'LEVI\\'S']")).toEqual([4, 5, 12, 13, 14]);
    expect(await ids(products, 'brand NOT IN [nike, gap, adidas, puma] AND NOT color = black')).toEqual([1, 3, 12, 14]);
    expect(await ids(products, 'color EXISTS AND NOT color IS NULL AND color IS NOT EMPTY AND id = 8')).toEqual([8]);
    expect(await ids(products, '(color = red OR color = green) AND brand = gap')).toEqual([9, 10]);
  });

  it('accepts the array form: outer AND, inner OR', async () => {
    expect(await ids(products, ['brand = gap', ['color = red', 'color = green']])).toEqual([9, 10]);
    expect(await ids(products, [['id = 1', 'id = 2'], 'color = black'])).toEqual([2]);
  });

  it('filters nested fields and arrays, case-insensitively but keeping accents', async () => {
    expect(await ids(nested, 'doggos.age > 5')).toEqual([654, 951]);
    expect(await ids(nested, 'doggos.name = BOBBY')).toEqual([852]);
    expect(await ids(nested, 'cattos = pésti')).toEqual([852]);
    expect(await ids(nested, 'cattos = pesti')).toEqual([]);
    expect(await ids(nested, 'doggos NOT EXISTS')).toEqual([750]);
  });

  it('sorts documents by distance, also through a comma-separated query parameter', async () => {
    await geo.updateSortableAttributes(['_geo']).waitTask();
    expect(await ids(geo, '', { sort: ['_geoPoint(45.4, 9.1):asc'] })).toEqual([2, 1, 3]);
    const r = await fetch(`${t.url}/indexes/geo/documents?fields=id&sort=${encodeURIComponent('_geoPoint(34,-118):asc')}`);
    expect(((await r.json()) as { results: { id: number }[] }).results.map((d) => d.id)).toEqual([1, 2, 3]);
  });

  it('filters by geo radius and bounding box', async () => {
    expect(await ids(geo, '_geoRadius(45.472735, 9.184019, 2000)')).toEqual([2]);
    expect(await ids(geo, '_geoBoundingBox([50, 10], [30, -120])')).toEqual([1, 2]);
    expect(await ids(geo, 'NOT _geoRadius(45.472735, 9.184019, 2000) AND rating >= 9')).toEqual([1, 3]);
  });

  it('sorts documents on sortable attributes', async () => {
    expect(await ids(products, 'brand = gap', { sort: ['id:desc'] })).toEqual([11, 10, 9]);
    const r = await products.getDocuments({ sort: ['color:asc', 'id:desc'], limit: 3, offset: 1, fields: ['id'] });
    expect(r.results.map((d) => d['id'])).toEqual([6, 2, 11]);
    expect(r.total).toBe(14);
    expect(await apiError(products.getDocuments({ sort: ['brand:asc'] }))).toEqual({
      code: 'invalid_document_sort',
      message: 'Attribute `brand` is not sortable. Available sortable attributes are: `color, id`.',
    });
  });

  it('pages through documents by offset, with and without ids and filters, skipping deleted ones', async () => {
    const pages = t.client.index('pages');
    await pages.updateFilterableAttributes(['n']).waitTask();
    await pages.addDocuments(Array.from({ length: 60 }, (_, i) => ({ id: `d${i}`, n: i % 7 })), { primaryKey: 'id' }).waitTask();
    await pages.deleteDocuments(['d3', 'd10', 'd11', 'd40']).waitTask();
    const pageIds = (r: { results: Record<string, unknown>[] }) => r.results.map((d) => d['id']);
    const everything = pageIds(await pages.getDocuments({ limit: 1000, fields: ['id'] }));
    expect(everything).toHaveLength(56);
    const walk = async (extra: Record<string, unknown>, method: 'GET' | 'POST') => {
      const seen: unknown[] = [];
      const totals = new Set<number>();
      for (let offset = 0; offset < 70; offset += 9) {
        const body = { limit: 9, offset, fields: ['id'], ...extra };
        const query = new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, String(v)]));
        const res =
          method === 'GET'
            ? await fetch(`${t.url}/indexes/pages/documents?${query}`)
            : await fetch(`${t.url}/indexes/pages/documents/fetch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        const r = (await res.json()) as { results: Record<string, unknown>[]; total: number };
        seen.push(...pageIds(r));
        totals.add(r.total);
      }
      return { seen, totals: [...totals] };
    };
    expect(await walk({}, 'GET')).toEqual({ seen: everything, totals: [56] });
    expect(await walk({}, 'POST')).toEqual({ seen: everything, totals: [56] });
    const threes = everything.filter((id) => Number(String(id).slice(1)) % 7 === 3);
    expect(await walk({ filter: 'n = 3' }, 'POST')).toEqual({ seen: threes, totals: [threes.length] });
    // Ids come back in the index's order, each once; missing and deleted ones are left out.
    const asked = ['d59', 'd3', 'd17', 'd24', 'd17', 'nope', 'd45', 'd52', 'd38', 'd31'];
    const kept = everything.filter((id) => asked.includes(id as string));
    expect(await walk({ ids: asked }, 'POST')).toEqual({ seen: kept, totals: [kept.length] });
    const keptThrees = kept.filter((id) => threes.includes(id));
    expect(await walk({ ids: asked, filter: 'n = 3' }, 'POST')).toEqual({ seen: keptThrees, totals: [keptThrees.length] });
  });

  it('answers malformed filters with the reference messages and spans', async () => {
    expect(await apiError(products.getDocuments({ filter: 'color = blue XOR id = 1' }))).toEqual({
      code: 'invalid_document_filter',
      message: 'Found unexpected characters at the end of the filter: `XOR id = 1`. You probably forgot an `OR` or an `AND` rule.\n14:24 color = blue XOR id = 1',
    });
    expect(await apiError(products.getDocuments({ filter: 'description = Hoodie' }))).toEqual({
      code: 'invalid_document_filter',
      message: 'Attribute `description` is not filterable. Available filterable attribute patterns are: `brand`, `color`, `id`.\n1:12 description = Hoodie',
    });
    expect(await apiError(products.getDocuments({ filter: [['color = red', 42 as unknown as string]] }))).toEqual({
      code: 'invalid_document_filter',
      message: 'Invalid syntax for the filter parameter: `expected String, found: 42`.',
    });
  });

  it('gates CONTAINS behind the containsFilter experimental feature', async () => {
    const refused = await apiError(products.getDocuments({ filter: 'color CONTAINS ue' }));
    expect(refused).toEqual({
      code: 'feature_not_enabled',
      message:
        'Using `CONTAINS` in a filter requires enabling the `contains filter` experimental feature. See https://github.com/orgs/meilisearch/discussions/763\n7:15 color CONTAINS ue',
    });
    expect(await ids(products, 'color STARTS WITH bl')).toEqual([2, 3, 5, 6, 11, 13]);
    await t.client.updateExperimentalFeatures({ containsFilter: true });
    expect(await ids(products, 'color CONTAINS ue AND NOT color CONTAINS bl')).toEqual([]);
    expect(await ids(products, 'color CONTAINS "ee"')).toEqual([9]);
    await t.client.updateExperimentalFeatures({ containsFilter: false });
  });

  it('deletes documents by filter, refusing bad filters before or while running the task', async () => {
    const index = t.client.index('delete-by-filter');
    await index.updateFilterableAttributes(['color']).waitTask();
    await index.addDocuments(dataset('products'), { primaryKey: 'id' }).waitTask();
    const task = await index.deleteDocuments({ filter: ['color = blue OR color = black'] }).waitTask();
    expect(task.status).toBe('succeeded');
    expect(task.details).toMatchObject({ deletedDocuments: 6, originalFilter: '["color = blue OR color = black"]' });
    expect((await index.getDocuments({ limit: 100 })).total).toBe(8);
    expect(await apiError(index.deleteDocuments({ filter: 'color =' }))).toEqual({
      code: 'invalid_document_filter',
      message: 'Was expecting a value but instead got nothing.\n8:8 color =',
    });
    const failed = await index.deleteDocuments({ filter: 'brand = nike' }).waitTask();
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({
      code: 'invalid_document_filter',
      message: 'Index `delete-by-filter`: Attribute `brand` is not filterable. Available filterable attribute patterns are: `color`.\n1:6 brand = nike',
    });
  });

  it('rebuilds the facets when filterable attributes change, and keeps them across a restart', async () => {
    await products.updateFilterableAttributes([
      { attributePatterns: ['col*'], features: { facetSearch: true, filter: { equality: true, comparison: false } } },
      'id',
    ]).waitTask();
    expect(await ids(products, 'color = gray')).toEqual([8]);
    expect(await apiError(products.getDocuments({ filter: 'color > gray' }))).toMatchObject({
      code: 'invalid_document_filter',
      message: expect.stringMatching(/^Filter operator `>` is not allowed for the attribute `color`\.\n {2}- Note: allowed operators: OR, AND, NOT, =, !=, IN, IS EMPTY, IS NULL, EXISTS\./),
    });
    expect(await apiError(products.getDocuments({ filter: 'brand = nike' }))).toMatchObject({
      message: 'Attribute `brand` is not filterable. Available filterable attribute patterns are: `col*`, `id`.\n1:6 brand = nike',
    });
    const dir = t.dir;
    await t.close({ keepData: true });
    t = await startTestNode([], dir);
    products = t.client.index('products');
    expect(await ids(products, 'color = gray OR id = 1')).toEqual([1, 8]);
  });
});
