import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SearchRuleUpdatePayload } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { apiError } from '../helpers/api-error.js';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  const movies = t.client.index('movies');
  await movies.updateSettings({ filterableAttributes: ['kind', 'series', 'color'] }).waitTask();
  await movies
    .addDocuments(
      [
        { id: 'local', title: 'Batman Returns', kind: 'keep', series: 'batman', color: 'red' },
        { id: 'remote', title: 'Batman', kind: 'keep', series: 'batman', color: 'blue' },
        { id: 'matrix', title: 'The Matrix', kind: 'keep', series: 'matrix', color: 'green' },
        { id: 'hidden', title: 'Batman Returns Again', kind: 'drop', series: 'other', color: 'black' },
        { id: 'forever', title: 'Batman Forever', kind: 'keep', series: 'forever', color: 'red' },
      ],
      { primaryKey: 'id' },
    )
    .waitTask();
  await t.client.index('books').addDocuments([{ id: 'matrix', title: 'Batman book' }, { id: 'b2', title: 'Batman comics' }], { primaryKey: 'id' }).waitTask();
});
afterAll(async () => {
  await t.close();
});

async function setRule(uid: string, rule: SearchRuleUpdatePayload) {
  const task = await t.client.updateDynamicSearchRule(uid, rule).waitTask();
  expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
  return task;
}

const pin = (id: string, position: number, indexUid?: string) => ({ selector: { ...(indexUid ? { indexUid } : {}), id }, action: { type: 'pin' as const, position } });
const ids = (hits: Record<string, unknown>[]) => hits.map((h) => h['id']);

describe('dynamic search rules routes', () => {
  it('need the dynamicSearchRules experimental feature', async () => {
    expect(await apiError(t.client.getDynamicSearchRules())).toMatchObject({
      status: 400,
      code: 'feature_not_enabled',
      message: 'Using the `/dynamic-search-rules` routes requires enabling the `dynamic search rules` experimental feature. See https://github.com/orgs/meilisearch/discussions/884',
    });
    await t.client.updateExperimentalFeatures({ dynamicSearchRules: true });
  });

  it('create, change, list, read and delete rules through tasks', async () => {
    const created = await setRule('black-friday', {
      description: 'Black Friday products',
      precedence: 10,
      conditions: { query: { words: 'black friday' }, time: { start: '2025-11-28T00:00:00Z', end: '2099-11-28T23:59:59Z' } },
      actions: [pin('123', 1, 'products')],
    });
    expect(created).toMatchObject({ type: 'dsrUpdate', indexUid: null, details: { rule: 'black-friday', updatedRules: 1 } });
    const rule = await t.client.getDynamicSearchRule('black-friday');
    expect(rule).toEqual({
      uid: 'black-friday',
      description: 'Black Friday products',
      precedence: 10,
      active: true,
      conditions: { query: { words: 'black friday' }, time: { start: '2025-11-28T00:00:00Z', end: '2099-11-28T23:59:59Z' } },
      actions: [pin('123', 1, 'products')],
      lastUpdatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    await setRule('black-friday', { description: null, active: false });
    const changed = await t.client.getDynamicSearchRule('black-friday');
    expect(changed).toMatchObject({ uid: 'black-friday', precedence: 10, active: false, actions: [pin('123', 1, 'products')] });
    expect('description' in changed).toBe(false);
    await setRule('cyber-monday', { actions: [pin('9', 0)] });
    await setRule('zzz', { description: 'Monday deals', actions: [pin('8', 0)] });

    const all = await t.client.getDynamicSearchRules();
    expect(all).toMatchObject({ offset: 0, limit: 20, total: 3 });
    expect(all.results.map((r) => r.uid)).toEqual(['black-friday', 'cyber-monday', 'zzz']);
    expect((await t.client.getDynamicSearchRules({ offset: 1, limit: 1 })).results.map((r) => r.uid)).toEqual(['cyber-monday']);
    expect((await t.client.getDynamicSearchRules({ filter: { active: false } })).results.map((r) => r.uid)).toEqual(['black-friday']);
    expect((await t.client.getDynamicSearchRules({ filter: { query: 'monday' } })).results.map((r) => r.uid)).toEqual(['cyber-monday', 'zzz']);
    expect((await t.client.getDynamicSearchRules({ filter: { query: 'FRIDAY', active: false } })).total).toBe(1);

    const del = await t.client.deleteDynamicSearchRule('zzz').waitTask();
    expect(del).toMatchObject({ status: 'succeeded', type: 'dsrUpdate', details: { rule: 'zzz', deletedRules: 1 } });
    expect(await apiError(t.client.getDynamicSearchRule('zzz'))).toMatchObject({ status: 404, code: 'dynamic_search_rule_not_found', message: 'Dynamic search rule `zzz` not found.' });
    const missing = await t.client.deleteDynamicSearchRule('zzz').waitTask();
    expect(missing).toMatchObject({ status: 'failed', error: { code: 'dynamic_search_rule_not_found' } });
    const noActions = await t.client.updateDynamicSearchRule('new-rule', { description: 'x' }).waitTask();
    expect(noActions).toMatchObject({ status: 'failed', error: { code: 'invalid_dynamic_search_rule_actions' } });

    const cleared = await t.client.deleteAllDynamicSearchRules().waitTask();
    expect(cleared).toMatchObject({ status: 'succeeded', type: 'dsrClear', details: { deletedRules: 2 } });
    expect((await t.client.getDynamicSearchRules()).total).toBe(0);
  });

  it('refuses malformed rules at once, with the field-specific code', async () => {
    const cases: [string, unknown, string, string][] = [
      ['r', { conditions: { query: { isEmpty: true, words: 'x' } } }, 'invalid_dynamic_search_rule_conditions', 'Invalid value at `.conditions.query`: either `isEmpty` or `words` can be used, not all at once'],
      ['r', { conditions: { query: {} } }, 'invalid_dynamic_search_rule_conditions', 'Invalid value at `.conditions.query`: at least `isEmpty` or `words` must be used'],
      ['r', { conditions: { time: { start: '2026-01-02T00:00:00Z', end: '2026-01-01T00:00:00Z' } } }, 'invalid_dynamic_search_rule_conditions', 'Invalid value at `.conditions.time`: `end` (`2026-01-01T00:00:00Z`) should be later than `start` (`2026-01-02T00:00:00Z`)'],
      ['r', { conditions: { time: { start: 'tomorrow' } } }, 'invalid_dynamic_search_rule_conditions', 'Invalid value at `.conditions.time.start`: `tomorrow` is not a valid RFC 3339 date-time'],
      ['r', { conditions: { scope: 'query' } }, 'invalid_dynamic_search_rule_conditions', 'Unknown field `scope` inside `.conditions`: expected one of `query`, `time`'],
      ['r', { actions: [{ selector: { id: 'a' }, action: { type: 'boost', position: 1 } }] }, 'invalid_dynamic_search_rule_actions', 'Unknown value `boost` at `.actions[0].action.type`: expected one of `pin`'],
      ['r', { actions: [{ selector: { id: 'a' }, action: { type: 'pin', position: -1 } }] }, 'invalid_dynamic_search_rule_actions', 'Invalid value type at `.actions[0].action.position`: expected a positive integer, but found a negative integer: `-1`'],
      ['r', { actions: [{ selector: {}, action: { type: 'pin', position: 1 } }] }, 'invalid_dynamic_search_rule_actions', 'Missing field `id` inside `.actions[0].selector`'],
      ['r', { precedence: 'high' }, 'invalid_dynamic_search_rule_priority', 'Invalid value type at `.precedence`: expected a positive integer, but found a string: `"high"`'],
      ['r', { active: 1 }, 'invalid_dynamic_search_rule_active', 'Invalid value type at `.active`: expected a boolean, but found a positive integer: `1`'],
      ['r', { priority: 1 }, 'bad_request', 'Unknown field `priority`: expected one of `description`, `precedence`, `active`, `conditions`, `actions`'],
      ['bad uid!', { actions: [] }, 'invalid_dynamic_search_rule_uid', '`bad uid!` is not a valid dynamic search rule uid.'],
    ];
    for (const [uid, body, code, message] of cases) {
      const e = await apiError(t.client.updateDynamicSearchRule(encodeURIComponent(uid), body as never));
      expect(e, JSON.stringify(body)).toMatchObject({ status: 400, code });
      expect(e.message).toContain(message);
    }
  });
});

describe('dynamic search rules in searches', () => {
  afterEach(async () => {
    await t.client.deleteAllDynamicSearchRules().waitTask();
  });

  it('pin documents at positions when the query contains the rule words', async () => {
    await setRule('returns', { conditions: { query: { words: 'returns' } }, actions: [pin('remote', 0)] });
    const r = await t.client.index('movies').search('Batman Returns', { filter: 'kind = keep' });
    expect(ids(r.hits)).toEqual(['remote', 'local', 'forever']);
    const other = await t.client.index('movies').search('Batman', { filter: 'kind = keep' });
    expect(other.hits[0]!['id']).not.toBe('remote');
    await t.client.deleteAllDynamicSearchRules().waitTask();
  });

  it('show pinned documents the filter allows, matching the query or not, and count them', async () => {
    await setRule('miss', { conditions: { query: { words: 'returns' } }, actions: [pin('matrix', 0), pin('hidden', 1)] });
    const all = { filter: 'kind = keep', matchingStrategy: 'all' } as const;
    const r = await t.client.index('movies').search('Batman Returns', { ...all, facets: ['color'] });
    expect(ids(r.hits)).toEqual(['matrix', 'local']);
    expect(r.estimatedTotalHits).toBe(2);
    expect(r.facetDistribution).toEqual({ color: { green: 1, red: 1 } });
    const page2 = await t.client.index('movies').search('Batman Returns', { ...all, page: 2, hitsPerPage: 1 });
    expect(ids(page2.hits)).toEqual(['local']);
    expect(page2).toMatchObject({ totalHits: 2, totalPages: 2 });
    const details = await t.client.index('movies').search('Batman Returns', { ...all, showRankingScoreDetails: true });
    expect(details.hits[0]!['_rankingScoreDetails']).toEqual({ pin: { order: 0, position: 0 } });
    await t.client.deleteAllDynamicSearchRules().waitTask();
  });

  it('take a pinned document out of the organic results, and its distinct value with it', async () => {
    await setRule('dedupe', { actions: [pin('remote', 0)] });
    const r = await t.client.index('movies').search('Batman', { distinct: 'series' });
    expect(ids(r.hits)[0]).toBe('remote');
    expect(ids(r.hits).sort()).toEqual(['forever', 'hidden', 'remote']);
    const plain = await t.client.index('movies').search('Batman');
    expect(ids(plain.hits).filter((x) => x === 'remote')).toEqual(['remote']);
    expect(plain.hits[0]!['id']).toBe('remote');
    await t.client.deleteAllDynamicSearchRules().waitTask();
  });

  it('move pins past the end of the organic results up behind them, and page through them', async () => {
    await setRule('late', { actions: [pin('matrix', 10), pin('hidden', 20)] });
    const r = await t.client.index('movies').search('Batman Returns', { limit: 10 });
    expect(ids(r.hits)).toEqual(['local', 'remote', 'forever', 'matrix', 'hidden']);
    expect(r.estimatedTotalHits).toBe(5);
    const window = await t.client.index('movies').search('Batman Returns', { offset: 3, limit: 2 });
    expect(ids(window.hits)).toEqual(['matrix', 'hidden']);
    await t.client.deleteAllDynamicSearchRules().waitTask();
  });

  it('order pins by precedence, for one document and for one position', async () => {
    await setRule('a-low', { precedence: 5, actions: [pin('matrix', 2), pin('forever', 0)] });
    await setRule('b-high', { precedence: 1, actions: [pin('matrix', 0)] });
    await setRule('c-none', { actions: [pin('local', 0)] });
    const r = await t.client.index('movies').search('', { filter: 'kind = keep' });
    // matrix: precedence 1 wins (position 0); forever at 0 next (5); local (no precedence) after.
    expect(ids(r.hits)).toEqual(['matrix', 'forever', 'local', 'remote']);
    await t.client.deleteAllDynamicSearchRules().waitTask();
  });

  it('skip inactive rules, rules whose conditions fail, and everything once the feature is off', async () => {
    await setRule('off', { active: false, actions: [pin('matrix', 0)] });
    await setRule('empty-only', { conditions: { query: { isEmpty: true } }, actions: [pin('forever', 0)] });
    await setRule('later', { conditions: { time: { start: '2099-01-01T00:00:00Z' } }, actions: [pin('hidden', 0)] });
    await setRule('other-index', { actions: [pin('b2', 0, 'books')] });
    expect((await t.client.index('movies').search('Batman')).hits[0]!['id']).not.toBe('forever');
    expect((await t.client.index('movies').search('')).hits[0]!['id']).toBe('forever');
    expect((await t.client.index('movies').search('', { filter: 'kind = drop' })).hits.map((h) => h['id'])).toEqual(['hidden']);
    expect((await t.client.index('books').search('Batman')).hits[0]!['id']).toBe('b2');
    await t.client.updateExperimentalFeatures({ dynamicSearchRules: false });
    expect((await t.client.index('movies').search('')).hits[0]!['id']).toBe('local');
    await t.client.updateExperimentalFeatures({ dynamicSearchRules: true });
    await t.client.deleteAllDynamicSearchRules().waitTask();
  });

  it('apply to hybrid searches too', async () => {
    const vec = t.client.index('vec');
    await vec.updateSettings({ filterableAttributes: ['kind'], embedders: { default: { source: 'userProvided', dimensions: 2 } } }).waitTask();
    await vec
      .addDocuments([
        { id: 'organic-match', title: 'Batman Returns', kind: 'keep', _vectors: { default: [1, 1] } },
        { id: 'pinned-query-miss', title: 'The Matrix', kind: 'keep', _vectors: { default: [-1, -1] } },
        { id: 'filtered-pin', title: 'Batman Returns', kind: 'drop', _vectors: { default: [1, 1] } },
      ])
      .waitTask();
    await setRule('hybrid', { conditions: { query: { words: 'returns' } }, actions: [pin('pinned-query-miss', 0), pin('filtered-pin', 1)] });
    const r = await vec.search('Batman Returns', { filter: 'kind = keep', vector: [1, 1], hybrid: { embedder: 'default', semanticRatio: 0.5 } });
    expect(ids(r.hits)).toEqual(['pinned-query-miss', 'organic-match']);
  });

  it('apply in multi-search and at positions of the federated list', async () => {
    await setRule('fed', { conditions: { query: { words: 'batman' } }, actions: [pin('matrix', 0, 'movies'), pin('matrix', 1, 'books')] });
    const multi = await t.client.multiSearch({ queries: [{ indexUid: 'movies', q: 'batman' }, { indexUid: 'books', q: 'batman' }] });
    expect(multi.results[0]!.hits[0]!['id']).toBe('matrix');
    expect(ids(multi.results[1]!.hits)).toEqual(['b2', 'matrix']);
    const fed = await t.client.multiSearch({
      federation: { limit: 4 },
      queries: [{ indexUid: 'movies', q: 'batman' }, { indexUid: 'books', q: 'batman' }],
    });
    expect(fed.hits[0]).toMatchObject({ id: 'matrix', title: 'The Matrix', _federation: { indexUid: 'movies', queriesPosition: 0 } });
    expect(fed.hits[1]).toMatchObject({ id: 'matrix', title: 'Batman book', _federation: { indexUid: 'books', queriesPosition: 1 } });
    expect(fed.hits.filter((h) => h['id'] === 'matrix').length).toBe(2);
    // movies: 4 organic + the pin; books: 1 organic (its pinned document left them) + the pin.
    expect(fed.estimatedTotalHits).toBe(7);
    await t.client.deleteAllDynamicSearchRules().waitTask();
  });
});
