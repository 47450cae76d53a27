import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { dataset } from '../fixtures/index.js';

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
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

/** The default settings object, fields and order as the spec lists them. */
const DEFAULTS = {
  displayedAttributes: ['*'],
  searchableAttributes: ['*'],
  filterableAttributes: [],
  sortableAttributes: [],
  rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness'],
  stopWords: [],
  nonSeparatorTokens: [],
  separatorTokens: [],
  dictionary: [],
  synonyms: {},
  distinctAttribute: null,
  typoTolerance: { enabled: true, minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 }, disableOnWords: [], disableOnAttributes: [] },
  faceting: { maxValuesPerFacet: 100, sortFacetValuesBy: { '*': 'alpha' } },
  pagination: { maxTotalHits: 1000 },
  proximityPrecision: 'byWord',
  facetSearch: true,
  prefixSearch: 'indexingTime',
  searchCutoffMs: null,
  embedders: {},
  chat: {},
  vectorStore: 'stable',
};

describe('whole settings', () => {
  it('GET lists the spec fields, in its order, with their defaults', async () => {
    await t.client.createIndex('defaults').waitTask();
    const got = await t.client.index('defaults').getSettings();
    expect(got).toEqual(DEFAULTS);
    expect(Object.keys(got)).toEqual(Object.keys(DEFAULTS));
    expect(Object.keys(got.typoTolerance!)).toEqual(['enabled', 'minWordSizeForTypos', 'disableOnWords', 'disableOnAttributes']);
  });

  it('PATCH is partial, creates the index, and its task details hold exactly what was sent', async () => {
    const index = t.client.index('patched');
    const task = await index
      .updateSettings({
        sortableAttributes: ['year', 'title'],
        displayedAttributes: ['title', '*'],
        typoTolerance: { disableOnNumbers: true },
        embedders: { manual: { source: 'userProvided', dimensions: 2 } },
      })
      .waitTask();
    expect(task.status).toBe('succeeded');
    expect(task.type).toBe('settingsUpdate');
    expect(task.details).toEqual({
      displayedAttributes: ['title', '*'],
      sortableAttributes: ['title', 'year'],
      typoTolerance: { disableOnNumbers: true },
      embedders: { manual: { source: 'userProvided', dimensions: 2 } },
    });
    expect(Object.keys(task.details!)).toEqual(['displayedAttributes', 'sortableAttributes', 'typoTolerance', 'embedders']);
    const got = await index.getSettings();
    expect(got).toEqual({
      ...DEFAULTS,
      displayedAttributes: ['*'],
      sortableAttributes: ['title', 'year'],
      typoTolerance: { ...DEFAULTS.typoTolerance, disableOnNumbers: true },
      embedders: { manual: { source: 'userProvided', dimensions: 2 } },
    });

    // A second PATCH leaves what it does not name, and null resets.
    const second = await index.updateSettings({ stopWords: ['the'], sortableAttributes: null, displayedAttributes: null }).waitTask();
    expect(second.details).toEqual({ displayedAttributes: ['*'], sortableAttributes: null, stopWords: ['the'] });
    const after = await index.getSettings();
    expect(after.sortableAttributes).toEqual([]);
    expect(after.stopWords).toEqual(['the']);
    expect(after.embedders).toEqual({ manual: { source: 'userProvided', dimensions: 2 } });
  });

  it('a PATCH with one bad field changes nothing and reports the first error in body order', async () => {
    await t.client.index('atomic').updateSettings({ rankingRules: ['words', 'typo'] }).waitTask();
    const before = await t.client.index('atomic').getSettings();
    const tasksBefore = (await t.client.tasks.getTasks()).total;

    const bad = await call('PATCH', '/indexes/atomic/settings', { stopWords: ['a'], synonyms: { x: 'y' }, rankingRules: ['nope'] });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(errorBody('invalid_settings_synonyms', 'Invalid value type at `.synonyms.x`: expected an array, but found a string: `"y"`'));
    const reversed = await call('PATCH', '/indexes/atomic/settings', { rankingRules: ['nope'], synonyms: { x: 'y' } });
    expect(reversed.body).toEqual(
      errorBody(
        'invalid_settings_ranking_rules',
        'Invalid value at `.rankingRules[0]`: `nope` ranking rule is invalid. Valid ranking rules are words, typo, sort, proximity, attribute, exactness and custom ranking rules.',
      ),
    );
    const unknown = await call('PATCH', '/indexes/atomic/settings', { stopWords: ['a'], rankingRule: [] });
    expect(unknown.body).toEqual(
      errorBody(
        'bad_request',
        'Unknown field `rankingRule`: did you mean `rankingRules`? expected one of `displayedAttributes`, `searchableAttributes`, `filterableAttributes`, `sortableAttributes`, `foreignKeys`, `rankingRules`, `stopWords`, `nonSeparatorTokens`, `separatorTokens`, `dictionary`, `synonyms`, `distinctAttribute`, `proximityPrecision`, `typoTolerance`, `faceting`, `pagination`, `embedders`, `searchCutoffMs`, `localizedAttributes`, `facetSearch`, `prefixSearch`, `chat`, `vectorStore`',
      ),
    );
    const nested = await call('PATCH', '/indexes/atomic/settings', { typoTolerance: { enable: false } });
    expect(nested.body).toEqual(
      errorBody(
        'invalid_settings_typo_tolerance',
        'Unknown field `enable` inside `.typoTolerance`: did you mean `enabled`? expected one of `enabled`, `minWordSizeForTypos`, `disableOnWords`, `disableOnAttributes`, `disableOnNumbers`',
      ),
    );
    const notObject = await call('PATCH', '/indexes/atomic/settings', ['stopWords']);
    expect(notObject.body).toEqual(errorBody('bad_request', 'Invalid value type: expected an object, but found an array: `["stopWords"]`'));

    expect((await t.client.tasks.getTasks()).total).toBe(tasksBefore);
    expect(await t.client.index('atomic').getSettings()).toEqual(before);
  });

  it('DELETE resets every setting', async () => {
    const index = t.client.index('reset');
    await index.updateSettings({ stopWords: ['a'], pagination: { maxTotalHits: 5 }, searchCutoffMs: 10, rankingRules: ['sort'] }).waitTask();
    const task = await index.resetSettings().waitTask();
    expect(task.status).toBe('succeeded');
    expect(task.details).toMatchObject({ displayedAttributes: ['*'], searchableAttributes: ['*'], stopWords: null, embedders: null, vectorStore: null });
    expect(await index.getSettings()).toEqual(DEFAULTS);
    expect(await index.getLocalizedAttributes()).toEqual([]);
  });

  it('settings before or after the documents give the same stored state', async () => {
    const settings = {
      searchableAttributes: ['name', 'about', 'address'],
      filterableAttributes: ['color', { attributePatterns: ['age'], features: { facetSearch: false, filter: { equality: true, comparison: true } } }],
      sortableAttributes: ['age', 'balance'],
      distinctAttribute: 'email',
      stopWords: ['the', 'of'],
      synonyms: { street: ['avenue'] },
      rankingRules: ['words', 'typo', 'attributeRank', 'sort', 'wordPosition', 'age:desc'],
      typoTolerance: { disableOnAttributes: ['email'] },
      proximityPrecision: 'byAttribute' as const,
      localizedAttributes: [{ attributePatterns: ['about'], locales: ['en'] }],
    };
    const people = dataset('test_set');
    const first = t.client.index('settings-first');
    await first.updateSettings(settings).waitTask();
    await first.addDocuments(people).waitTask();
    const second = t.client.index('documents-first');
    await second.addDocuments(people).waitTask();
    await second.updateSettings(settings).waitTask();

    expect(await first.getSettings()).toEqual(await second.getSettings());
    expect(await first.getLocalizedAttributes()).toEqual([{ attributePatterns: ['about'], locales: ['eng'] }]);
    expect(await second.getLocalizedAttributes()).toEqual(await first.getLocalizedAttributes());
    expect((await first.getDocuments({ limit: 1000 })).results).toEqual((await second.getDocuments({ limit: 1000 })).results);
    const stats = async (uid: string) => ({ ...(await t.client.index(uid).getStats()), isIndexing: false });
    expect(await stats('settings-first')).toEqual(await stats('documents-first'));

    // And the same answers: the settings take effect whichever came first.
    const queries = [
      { q: 'street' },
      { q: 'avenue', showRankingScore: true },
      { q: 'the lorem' },
      { q: 'cillum', filter: 'age > 30', sort: ['balance:asc'] },
      { q: '', filter: 'color = green', facets: ['color'] },
      { q: 'nostrud exercitation', attributesToHighlight: ['about'], showRankingScoreDetails: true },
    ];
    let hits = 0;
    for (const query of queries) {
      const { q, ...params } = query;
      const a = await first.search(q, params);
      const b = await second.search(q, params);
      hits += a.hits.length;
      const strip = (r: Record<string, unknown>) => ({ ...r, processingTimeMs: 0, requestUid: '' });
      expect(strip(a as never)).toEqual(strip(b as never));
    }
    expect(hits).toBeGreaterThan(10);
  });

  it('payload errors come before any settings check', async () => {
    const empty = await fetch(`${t.url}/indexes/x/settings`, { method: 'PATCH', headers: { 'content-type': 'application/json' } });
    expect(await empty.json()).toEqual(errorBody('missing_payload', 'A json payload is missing.'));
    const typed = await fetch(`${t.url}/indexes/x/settings/stop-words`, { method: 'PUT', body: '["a"]', headers: { 'content-type': 'text/plain' } });
    expect(typed.status).toBe(415);
    expect((await call('GET', '/indexes/x/settings')).body).toEqual(errorBody('index_not_found', 'Index `x` not found.'));
    expect((await call('PATCH', '/indexes/bad%20uid/settings', {})).body).toMatchObject({ code: 'invalid_index_uid' });
  });
});
