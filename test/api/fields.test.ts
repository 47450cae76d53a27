import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeilisearchApiError } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
  const index = t.client.index('recipes');
  await index
    .addDocuments(
      [
        {
          id: 1,
          title: 'Spaghetti Carbonara',
          cuisine: { type: 'Italian', region: 'Rome' },
          ingredients: [{ name: 'spaghetti' }],
          calories: 450,
          tags: ['pasta'],
          created_at: '2023-01-10',
        },
        { id: 2, title: 'Shakshuka', color: 'red' },
      ],
      { primaryKey: 'id' },
    )
    .waitTask();
  await index
    .updateSettings({
      displayedAttributes: ['id', 'title', 'cuisine', 'calories', 'tags'],
      searchableAttributes: ['title', 'cuisine.type', 'ingredients.name'],
      filterableAttributes: [
        'calories',
        { attributePatterns: ['cuisine.*'], features: { facetSearch: true, filter: { equality: true, comparison: false } } },
      ],
      sortableAttributes: ['calories', 'created_at'],
      distinctAttribute: 'cuisine.type',
      rankingRules: ['words', 'typo', 'calories:desc'],
      faceting: { sortFacetValuesBy: { '*': 'alpha', calories: 'count' } },
      localizedAttributes: [{ attributePatterns: ['title'], locales: ['eng'] }],
    })
    .waitTask();
  await t.client.createIndex('empty').waitTask();
});
afterAll(async () => {
  await t.close();
});

const NAMES = [
  'calories',
  'color',
  'created_at',
  'cuisine',
  'cuisine.region',
  'cuisine.type',
  'id',
  'ingredients',
  'ingredients.name',
  'tags',
  'title',
];

async function post(path: string, body: unknown) {
  const r = await fetch(t.url + path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe('POST /indexes/{uid}/fields', () => {
  it('lists every field path, parents of nested ones included, sorted by name', async () => {
    const r = await t.client.index('recipes').getFields({ limit: 100 });
    expect(r).toMatchObject({ offset: 0, limit: 100, total: NAMES.length });
    expect(r.results.map((f) => f.name)).toEqual(NAMES);
  });

  it('says what the settings make of each field', async () => {
    const r = await t.client.index('recipes').getFields({ limit: 100 });
    const by = Object.fromEntries(r.results.map((f) => [f.name, f]));
    expect(by['calories']).toEqual({
      name: 'calories',
      displayed: { enabled: true },
      searchable: { enabled: false },
      sortable: { enabled: true },
      distinct: { enabled: false },
      rankingRule: { enabled: true, order: 'desc' },
      filterable: { enabled: true, sortBy: 'count', facetSearch: true, equality: true, comparison: true },
      localized: { locales: [] },
    });
    expect(by['cuisine.type']).toMatchObject({
      displayed: { enabled: true }, // its parent is displayed
      searchable: { enabled: true },
      distinct: { enabled: true },
      rankingRule: { enabled: false },
      filterable: { enabled: true, sortBy: 'alpha', facetSearch: true, equality: true, comparison: false },
    });
    expect(by['cuisine']).toMatchObject({ searchable: { enabled: false }, filterable: { enabled: false } });
    expect(by['ingredients.name']).toMatchObject({ displayed: { enabled: false }, searchable: { enabled: true } });
    expect(by['title']).toMatchObject({ localized: { locales: ['eng'] } });
    expect(by['created_at']).toMatchObject({ displayed: { enabled: false }, sortable: { enabled: true } });
    expect(by['title']!.rankingRule).toEqual({ enabled: false });
  });

  it('filters on capabilities and attribute patterns, all criteria together', async () => {
    const index = t.client.index('recipes');
    const names = async (filter: Record<string, unknown>) => (await index.getFields({ filter, limit: 100 })).results.map((f) => f.name);
    expect(await names({ searchable: true })).toEqual(['cuisine.type', 'ingredients.name', 'title']);
    expect(await names({ filterable: true, sortable: false })).toEqual(['cuisine.region', 'cuisine.type']);
    expect(await names({ attributePatterns: ['cu*'] })).toEqual(['cuisine', 'cuisine.region', 'cuisine.type']);
    expect(await names({ attributePatterns: ['*.name', 'id'], displayed: false })).toEqual(['ingredients.name']);
    expect(await names({ distinct: true })).toEqual(['cuisine.type']);
    expect(await names({ rankingRule: true })).toEqual(['calories']);
    expect(await names({ displayed: true, searchable: false, filterable: false })).toEqual(['cuisine', 'id', 'tags']);
  });

  it('paginates, total counting every match', async () => {
    const r = await t.client.index('recipes').getFields({ offset: 3, limit: 2 });
    expect(r).toMatchObject({ offset: 3, limit: 2, total: NAMES.length });
    expect(r.results.map((f) => f.name)).toEqual(['cuisine', 'cuisine.region']);
    const d = await t.client.index('recipes').getFields();
    expect(d.limit).toBe(20);
  });

  it('answers an empty list for an index without documents', async () => {
    expect(await t.client.index('empty').getFields()).toEqual({ results: [], offset: 0, limit: 20, total: 0 });
  });

  it('answers 404 index_not_found for a missing index', async () => {
    const e = await t.client.index('nope').getFields().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(MeilisearchApiError);
    expect((e as MeilisearchApiError).cause).toMatchObject({ code: 'index_not_found', message: 'Index `nope` not found.' });
  });

  it('refuses bad bodies with the field-specific code', async () => {
    const cases: [unknown, string, string][] = [
      [{ limit: -1 }, 'invalid_index_limit', 'Invalid value type at `.limit`: expected a positive integer, but found a negative integer: `-1`'],
      [{ offset: 'x' }, 'invalid_index_offset', 'Invalid value type at `.offset`: expected a positive integer, but found a string: `"x"`'],
      [{ filter: 3 }, 'invalid_index_fields_filter', 'Invalid value type at `.filter`: expected an object, but found a positive integer: `3`'],
      [{ filter: { searchable: 'yes' } }, 'invalid_index_fields_filter_searchable', 'Invalid value type at `.filter.searchable`: expected a boolean, but found a string: `"yes"`'],
      [{ filter: { attributePatterns: 'x' } }, 'invalid_index_fields_filter_attribute_patterns', 'Invalid value type at `.filter.attributePatterns`: expected an array, but found a string: `"x"`'],
      [{ filter: { nope: true } }, 'bad_request', 'Unknown field `nope` inside `.filter`: expected one of `attributePatterns`, `displayed`, `searchable`, `sortable`, `distinct`, `rankingRule`, `filterable`'],
      [{ page: 1 }, 'bad_request', 'Unknown field `page`: expected one of `offset`, `limit`, `filter`'],
    ];
    for (const [body, code, message] of cases) {
      const r = await post('/indexes/recipes/fields', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toMatchObject({ code, message });
    }
  });
});

describe('GET /indexes/{uid}/fields', () => {
  it('lists the same fields, paginated by query parameters', async () => {
    const r = await fetch(`${t.url}/indexes/recipes/fields?offset=9&limit=5`);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { results: { name: string }[]; total: number };
    expect(body.total).toBe(NAMES.length);
    expect(body.results.map((f) => f.name)).toEqual(['tags', 'title']);
    const bad = await fetch(`${t.url}/indexes/recipes/fields?limit=x`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_index_limit' });
  });
});
