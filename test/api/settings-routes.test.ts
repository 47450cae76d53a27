import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Index } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';

let t: TestNode;
let index: Index;
beforeAll(async () => {
  t = await startTestNode();
  index = t.client.index('routes');
  await t.client.createIndex('routes').waitTask();
});
afterAll(async () => {
  await t.close();
});

function errorBody(code: string, message: string) {
  return { message, code, type: 'invalid_request', link: `https://docs.meilisearch.com/errors#${code}` };
}

async function call(method: string, path: string, body?: unknown) {
  const r = await fetch(t.url + path, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

interface Case {
  route: string;
  /** The client's method suffix (`getX`/`updateX`/`resetX`), when the client has one. */
  client: string;
  verb: 'PUT' | 'PATCH';
  defaultValue: unknown;
  value: unknown;
  /** What GET returns after the update, when it differs from `value`. */
  stored?: unknown;
  /** The task's `details` value, when it differs from `stored` (objects echo what was sent). */
  details?: unknown;
  invalid: unknown;
  error: [code: string, message: string];
}

const TYPO_DEFAULT = {
  enabled: true,
  minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 },
  disableOnWords: [],
  disableOnAttributes: [],
  disableOnNumbers: false,
};

const CASES: Case[] = [
  {
    route: 'displayed-attributes',
    client: 'DisplayedAttributes',
    verb: 'PUT',
    defaultValue: ['*'],
    value: ['title', 'id'],
    invalid: 'title',
    error: ['invalid_settings_displayed_attributes', 'Invalid value type: expected an array, but found a string: `"title"`'],
  },
  {
    route: 'searchable-attributes',
    client: 'SearchableAttributes',
    verb: 'PUT',
    defaultValue: ['*'],
    value: ['title', 'overview'],
    invalid: [1],
    error: ['invalid_settings_searchable_attributes', 'Invalid value type at `[0]`: expected a string, but found a positive integer: `1`'],
  },
  {
    route: 'filterable-attributes',
    client: 'FilterableAttributes',
    verb: 'PUT',
    defaultValue: [],
    value: ['genre', { attributePatterns: ['price*'], features: { filter: { comparison: true } } }],
    stored: ['genre', { attributePatterns: ['price*'], features: { facetSearch: false, filter: { equality: true, comparison: true } } }],
    invalid: [{ attributePatterns: ['a'], features: { facetSearch: 'yes' } }],
    error: ['invalid_settings_filterable_attributes', 'Invalid value type at `[0].features.facetSearch`: expected a boolean, but found a string: `"yes"`'],
  },
  {
    route: 'sortable-attributes',
    client: 'SortableAttributes',
    verb: 'PUT',
    defaultValue: [],
    value: ['price', 'genre', 'price'],
    stored: ['genre', 'price'],
    invalid: {},
    error: ['invalid_settings_sortable_attributes', 'Invalid value type: expected an array, but found an object: `{}`'],
  },
  {
    route: 'ranking-rules',
    client: 'RankingRules',
    verb: 'PUT',
    defaultValue: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness'],
    value: ['words', 'typo', 'attributeRank', 'sort', 'wordPosition', 'price:desc', 'a:b:asc'],
    invalid: ['words', 'releaseDate:up'],
    error: [
      'invalid_settings_ranking_rules',
      'Invalid value at `[1]`: `releaseDate:up` ranking rule is invalid. Valid ranking rules are words, typo, sort, proximity, attribute, exactness and custom ranking rules.',
    ],
  },
  {
    route: 'stop-words',
    client: 'StopWords',
    verb: 'PUT',
    defaultValue: [],
    value: ['the', 'a', 'of'],
    stored: ['a', 'of', 'the'],
    invalid: [null],
    error: ['invalid_settings_stop_words', 'Invalid value type at `[0]`: expected a string, but found null'],
  },
  {
    route: 'non-separator-tokens',
    client: 'NonSeparatorTokens',
    verb: 'PUT',
    defaultValue: [],
    value: ['@', '#'],
    stored: ['#', '@'],
    invalid: 'x',
    error: ['invalid_settings_non_separator_tokens', 'Invalid value type: expected an array, but found a string: `"x"`'],
  },
  {
    route: 'separator-tokens',
    client: 'SeparatorTokens',
    verb: 'PUT',
    defaultValue: [],
    value: ['|', '&'],
    stored: ['&', '|'],
    invalid: 1,
    error: ['invalid_settings_separator_tokens', 'Invalid value type: expected an array, but found a positive integer: `1`'],
  },
  {
    route: 'dictionary',
    client: 'Dictionary',
    verb: 'PUT',
    defaultValue: [],
    value: ['J. R. R.', 'W. E. B.'],
    invalid: true,
    error: ['invalid_settings_dictionary', 'Invalid value type: expected an array, but found a boolean: `true`'],
  },
  {
    route: 'synonyms',
    client: 'Synonyms',
    verb: 'PUT',
    defaultValue: {},
    value: { wolverine: ['logan', 'xmen'], logan: ['wolverine'] },
    invalid: { a: 'b' },
    error: ['invalid_settings_synonyms', 'Invalid value type at `.a`: expected an array, but found a string: `"b"`'],
  },
  {
    route: 'distinct-attribute',
    client: 'DistinctAttribute',
    verb: 'PUT',
    defaultValue: null,
    value: 'sku',
    invalid: ['sku'],
    error: ['invalid_settings_distinct_attribute', 'Invalid value type: expected a string, but found an array: `["sku"]`'],
  },
  {
    route: 'proximity-precision',
    client: 'ProximityPrecision',
    verb: 'PUT',
    defaultValue: 'byWord',
    value: 'byAttribute',
    invalid: 'byWords',
    error: ['invalid_settings_proximity_precision', 'Unknown value `byWords`: did you mean `byWord`? expected one of `byWord`, `byAttribute`'],
  },
  {
    route: 'typo-tolerance',
    client: 'TypoTolerance',
    verb: 'PATCH',
    defaultValue: TYPO_DEFAULT,
    value: { enabled: false, minWordSizeForTypos: { oneTypo: 3 }, disableOnWords: ['Shrek', 'abc'] },
    stored: { ...TYPO_DEFAULT, enabled: false, minWordSizeForTypos: { oneTypo: 3, twoTypos: 9 }, disableOnWords: ['Shrek', 'abc'] },
    details: { enabled: false, minWordSizeForTypos: { oneTypo: 3 }, disableOnWords: ['Shrek', 'abc'] },
    invalid: { minWordSizeForTypos: { oneTypo: 256 } },
    error: [
      'invalid_settings_typo_tolerance',
      'Invalid value at `.minWordSizeForTypos.oneTypo`: value: `256` is too large to be deserialized, maximum value authorized is `255`',
    ],
  },
  {
    route: 'faceting',
    client: 'Faceting',
    verb: 'PATCH',
    defaultValue: { maxValuesPerFacet: 100, sortFacetValuesBy: { '*': 'alpha' } },
    value: { maxValuesPerFacet: 10, sortFacetValuesBy: { genre: 'count' } },
    stored: { maxValuesPerFacet: 10, sortFacetValuesBy: { '*': 'alpha', genre: 'count' } },
    details: { maxValuesPerFacet: 10, sortFacetValuesBy: { genre: 'count' } },
    invalid: { sortFacetValuesBy: { genre: 'asc' } },
    error: ['invalid_settings_faceting', 'Unknown value `asc` at `.sortFacetValuesBy.genre`: expected one of `alpha`, `count`'],
  },
  {
    route: 'pagination',
    client: 'Pagination',
    verb: 'PATCH',
    defaultValue: { maxTotalHits: 1000 },
    value: { maxTotalHits: 50 },
    invalid: { maxTotalHits: 0 },
    error: [
      'invalid_settings_pagination',
      'Invalid value at `.maxTotalHits`: a non-zero integer value lower than `18446744073709551615` was expected, but found a zero',
    ],
  },
  {
    route: 'embedders',
    client: 'Embedders',
    verb: 'PATCH',
    defaultValue: {},
    value: { default: { source: 'userProvided', dimensions: 3 } },
    invalid: { default: { source: 'magic' } },
    error: [
      'invalid_settings_embedders',
      'Unknown value `magic` at `.default.source`: expected one of `hostedA`, `hubModel`, `localRunner`, `userProvided`, `rest`, `composite`',
    ],
  },
  {
    route: 'search-cutoff-ms',
    client: 'SearchCutoffMs',
    verb: 'PUT',
    defaultValue: null,
    value: 150,
    invalid: -1,
    error: ['invalid_settings_search_cutoff_ms', 'Invalid value type: expected a positive integer, but found a negative integer: `-1`'],
  },
  {
    route: 'localized-attributes',
    client: 'LocalizedAttributes',
    verb: 'PUT',
    defaultValue: [],
    value: [{ attributePatterns: ['*_ja'], locales: ['ja', 'cmn'] }],
    stored: [{ attributePatterns: ['*_ja'], locales: ['jpn', 'cmn'] }],
    invalid: [{ attributePatterns: ['title'], locales: ['eng', 'klingon'] }],
    error: ['invalid_settings_localized_attributes', 'Unknown value `klingon` at `[0].locales[1]`: expected one of `af`, `ak`, `am`, '],
  },
  {
    route: 'facet-search',
    client: 'FacetSearch',
    verb: 'PUT',
    defaultValue: true,
    value: false,
    invalid: 'no',
    error: ['invalid_settings_facet_search', 'Invalid value type: expected a boolean, but found a string: `"no"`'],
  },
  {
    route: 'prefix-search',
    client: 'PrefixSearch',
    verb: 'PUT',
    defaultValue: 'indexingTime',
    value: 'disabled',
    invalid: 'never',
    error: ['invalid_settings_prefix_search', 'Unknown value `never`: expected one of `indexingTime`, `disabled`'],
  },
];

type ClientIndex = Record<string, (...args: unknown[]) => unknown>;
const client = () => index as unknown as ClientIndex;

describe('single-setting routes', () => {
  it('answer their default on a new index', async () => {
    for (const c of CASES) {
      expect(await client()[`get${c.client}`]!(), c.route).toEqual(c.defaultValue);
      expect((await call('GET', `/indexes/routes/settings/${c.route}`)).body, c.route).toEqual(c.defaultValue);
    }
  });

  it('update with their verb and echo the value in the task details', async () => {
    const tasks = [];
    for (const c of CASES) {
      const r = await call(c.verb, `/indexes/routes/settings/${c.route}`, c.value);
      expect(r.status, c.route).toBe(202);
      expect(r.body).toMatchObject({ indexUid: 'routes', status: 'enqueued', type: 'settingsUpdate' });
      tasks.push(r.body!['taskUid'] as number);
    }
    const done = await Promise.all(tasks.map((uid) => t.client.tasks.waitForTask(uid)));
    for (const [i, c] of CASES.entries()) {
      expect(done[i]!.status, c.route).toBe('succeeded');
      const key = Object.keys(done[i]!.details ?? {})[0];
      expect(done[i]!.details, c.route).toEqual({ [key!]: c.details ?? c.stored ?? c.value });
      expect(await client()[`get${c.client}`]!(), c.route).toEqual(c.stored ?? c.value);
    }
  });

  it('refuse a wrong verb and a bad value, enqueueing nothing', async () => {
    const before = (await t.client.tasks.getTasks()).total;
    for (const c of CASES) {
      const r = await call(c.verb, `/indexes/routes/settings/${c.route}`, c.invalid);
      expect(r.status, c.route).toBe(400);
      const [code, message] = c.error;
      if (c.route === 'localized-attributes') {
        expect(r.body!['code']).toBe(code);
        expect(r.body!['message']).toMatch(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*\`cmn\`$`));
      } else expect(r.body, c.route).toEqual(errorBody(code, message));
      const other = c.verb === 'PUT' ? 'PATCH' : 'PUT';
      expect((await call(other, `/indexes/routes/settings/${c.route}`, c.value)).status, c.route).toBe(404);
    }
    expect((await t.client.tasks.getTasks()).total).toBe(before);
  });

  it('reset to their default with DELETE and with a null body', async () => {
    const half = Math.floor(CASES.length / 2);
    const tasks = [];
    for (const [i, c] of CASES.entries()) {
      const r = i < half ? await call('DELETE', `/indexes/routes/settings/${c.route}`) : await call(c.verb, `/indexes/routes/settings/${c.route}`, null);
      expect(r.status, c.route).toBe(202);
      tasks.push(r.body!['taskUid'] as number);
    }
    const done = await Promise.all(tasks.map((uid) => t.client.tasks.waitForTask(uid)));
    for (const [i, c] of CASES.entries()) {
      expect(done[i]!.status, c.route).toBe('succeeded');
      const reset = c.route === 'displayed-attributes' || c.route === 'searchable-attributes' ? ['*'] : null;
      expect(Object.values(done[i]!.details ?? {}), c.route).toEqual([reset]);
      expect((await call('GET', `/indexes/routes/settings/${c.route}`)).body, c.route).toEqual(c.defaultValue);
    }
  });

  it('answer 404 on a missing index, and create it on update', async () => {
    expect((await call('GET', '/indexes/ghost/settings/stop-words')).body).toEqual(errorBody('index_not_found', 'Index `ghost` not found.'));
    const task = await t.client.index('ghost').updateStopWords(['x']).waitTask();
    expect(task.status).toBe('succeeded');
    expect(await t.client.index('ghost').getStopWords()).toEqual(['x']);
  });

  it('accepts the reference rule names but not mixed with `attribute`', async () => {
    const r = await call('PUT', '/indexes/routes/settings/ranking-rules', ['words', 'attribute', 'wordPosition']);
    expect(r.body).toEqual(
      errorBody(
        'invalid_settings_ranking_rules',
        'Invalid value: the `attribute` ranking rule cannot be used together with `wordPosition`. Use either `attribute`, or `attributeRank` and `wordPosition`.',
      ),
    );
    const geo = await call('PUT', '/indexes/routes/settings/ranking-rules', ['_geoPoint(1, 2):asc']);
    expect(geo.body).toEqual(
      errorBody(
        'invalid_settings_ranking_rules',
        "Invalid value at `[0]`: `_geoPoint` is a reserved keyword and thus can't be used as a ranking rule. `_geoPoint` can only be used for sorting at search time",
      ),
    );
  });

  it('checks typo bounds across updates when the task runs', async () => {
    const r = await call('PATCH', '/indexes/routes/settings/typo-tolerance', { minWordSizeForTypos: { oneTypo: 10 } });
    expect(r.status).toBe(202);
    const task = await t.client.tasks.waitForTask(r.body!['taskUid'] as number);
    expect(task.status).toBe('failed');
    expect(task.error).toEqual(
      errorBody(
        'invalid_settings_typo_tolerance',
        '`minWordSizeForTypos` setting is invalid. `oneTypo` and `twoTypos` fields should be between `0` and `255`, and `twoTypos` should be greater or equals to `oneTypo` but found `oneTypo: 10` and twoTypos: 9`.',
      ),
    );
    expect(await index.getTypoTolerance()).toEqual(TYPO_DEFAULT);
  });
});
