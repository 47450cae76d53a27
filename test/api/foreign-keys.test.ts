import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { apiError } from '../helpers/api-error.js';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  await t.client.index('actors').addDocuments([{ id: 1, name: 'Ada', agent: 'secret' }, { id: 2, name: 'Bob', agent: 'secret' }], { primaryKey: 'id' }).waitTask();
  await t.client.index('actors').updateDisplayedAttributes(['id', 'name']).waitTask();
  await t.client.index('studios').addDocuments([{ id: 's1', label: 'Studio One' }], { primaryKey: 'id' }).waitTask();
  await t.client
    .index('movies')
    .addDocuments(
      [
        { id: 10, title: 'Dune', actors: [1, 2, 99], info: { studio: 's1' } },
        { id: 11, title: 'Arrival', actors: 2, info: { studio: 'nope' }, notes: [1] },
      ],
      { primaryKey: 'id' },
    )
    .waitTask();
});
afterAll(async () => {
  await t.close();
});

const ADA = { id: 1, name: 'Ada' };
const BOB = { id: 2, name: 'Bob' };

describe('the foreignKeys setting', () => {
  it('needs the foreignKeys experimental feature, and is not listed without it', async () => {
    expect(await apiError(t.client.index('movies').updateForeignKeys([{ foreignIndexUid: 'actors', fieldName: 'actors' }]))).toMatchObject({
      status: 400,
      code: 'feature_not_enabled',
      message: 'setting `foreignKeys` in the index settings requires enabling the `foreign_keys` experimental feature. See https://github.com/orgs/meilisearch/discussions/873',
    });
    expect('foreignKeys' in (await t.client.index('movies').getSettings())).toBe(false);
    await t.client.updateExperimentalFeatures({ foreignKeys: true });
  });

  it('is set, read, listed after sortableAttributes and reset', async () => {
    const movies = t.client.index('movies');
    expect(await movies.getForeignKeys()).toEqual([]);
    const keys = [
      { foreignIndexUid: 'actors', fieldName: 'actors' },
      { foreignIndexUid: 'studios', fieldName: 'info.studio' },
    ];
    const task = await movies.updateForeignKeys(keys).waitTask();
    expect(task).toMatchObject({ status: 'succeeded', details: { foreignKeys: keys } });
    expect(await movies.getForeignKeys()).toEqual(keys);
    const settings = Object.keys(await movies.getSettings());
    expect(settings.indexOf('foreignKeys')).toBe(settings.indexOf('sortableAttributes') + 1);
    await movies.resetForeignKeys().waitTask();
    expect(await movies.getForeignKeys()).toEqual([]);
    await movies.updateSettings({ foreignKeys: keys }).waitTask();
    expect(await movies.getForeignKeys()).toEqual(keys);
  });

  it('refuses malformed foreign keys', async () => {
    const cases: [unknown, string][] = [
      [{ foreignIndexUid: 'actors' }, 'Invalid value type: expected an array, but found an object: `{"foreignIndexUid":"actors"}`'],
      [[{ foreignIndexUid: 'actors' }], 'Missing field `fieldName` inside `[0]`'],
      [[{ foreignIndexUid: 'bad uid', fieldName: 'a' }], 'Invalid value at `[0].foreignIndexUid`: `bad uid` is not a valid index uid.'],
      [[{ foreignIndexUid: 'a', fieldName: 'x' }, { foreignIndexUid: 'b', fieldName: 'x' }], 'Invalid value at `[1].fieldName`: `x` already has a foreign key: a field refers to one index'],
      [[{ foreignIndexUid: 'a', fieldName: 'x', extra: 1 }], 'Unknown field `extra` inside `[0]`: expected one of `foreignIndexUid`, `fieldName`'],
    ];
    for (const [body, message] of cases) {
      const r = await fetch(`${t.url}/indexes/movies/settings/foreign-keys`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(r.status, JSON.stringify(body)).toBe(400);
      const e = (await r.json()) as { code: string; message: string };
      expect(e.code).toBe('invalid_settings_foreign_keys');
      expect(e.message).toContain(message);
    }
  });
});

describe('hydration of foreign keys', () => {
  it('shows the referenced documents (as their index displays them) in search hits and their _formatted', async () => {
    const r = await t.client.index('movies').search('dune', { attributesToHighlight: ['title'] });
    expect(r.hits[0]).toMatchObject({ id: 10, title: 'Dune', actors: [ADA, BOB, {}], info: { studio: { id: 's1', label: 'Studio One' } } });
    expect((r.hits[0]!['_formatted'] as Record<string, unknown>)['actors']).toEqual([ADA, BOB, {}]);
    expect((r.hits[0]!['_formatted'] as Record<string, unknown>)['title']).toBe('<em>Dune</em>');
    const single = await t.client.index('movies').search('arrival');
    expect(single.hits[0]).toMatchObject({ actors: BOB, info: { studio: {} }, notes: [1] });
  });

  it('shows them in document fetches', async () => {
    const movies = t.client.index('movies');
    expect(await movies.getDocument(10)).toMatchObject({ actors: [ADA, BOB, {}] });
    const list = await movies.getDocuments({ fields: ['id', 'actors'] });
    expect(list.results).toEqual([
      { id: 10, actors: [ADA, BOB, {}] },
      { id: 11, actors: BOB },
    ]);
    const fetched = await movies.getDocuments({ ids: [11] } as never);
    expect(fetched.results[0]).toMatchObject({ actors: BOB });
  });

  it('shows them in multi-search and federated search', async () => {
    const multi = await t.client.multiSearch({ queries: [{ indexUid: 'movies', q: 'dune' }] });
    expect(multi.results[0]!.hits[0]).toMatchObject({ actors: [ADA, BOB, {}] });
    const fed = await t.client.multiSearch({ federation: {}, queries: [{ indexUid: 'movies', q: 'dune' }, { indexUid: 'actors', q: 'ada' }] });
    expect(fed.hits.find((h) => h['id'] === 10)).toMatchObject({ actors: [ADA, BOB, {}] });
    expect(fed.hits.find((h) => h['name'] === 'Ada')).toEqual({ id: 1, name: 'Ada', _federation: expect.any(Object) });
  });

  it('answers index_not_found when the foreign index is missing, and shows plain ids once the feature is off', async () => {
    await t.client.index('movies').updateForeignKeys([{ foreignIndexUid: 'ghosts', fieldName: 'actors' }]).waitTask();
    expect(await apiError(t.client.index('movies').search('dune'))).toMatchObject({ status: 404, code: 'index_not_found', message: 'Index `ghosts` not found.' });
    await t.client.updateExperimentalFeatures({ foreignKeys: false });
    expect((await t.client.index('movies').search('dune')).hits[0]).toMatchObject({ actors: [1, 2, 99] });
    await t.client.updateExperimentalFeatures({ foreignKeys: true });
  });
});
