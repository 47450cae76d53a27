import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestNode, type TestNode } from '../helpers/node.js';
import { until } from '../helpers/api-error.js';

// `POST /export` from `a` to `b`, two real instances: indexes matched by a pattern are created on
// `b` with `a`'s primary key and settings, and the documents their filter keeps are sent.
const KEY_A = 'export-a-master-key-0123456789';
const KEY_B = 'export-b-master-key-0123456789';
let a: TestNode;
let b: TestNode;

const MOVIES = Array.from({ length: 120 }, (_, i) => ({ id: i, title: `movie ${i} ${'long text '.repeat(5)}`, genre: i % 3 === 0 ? 'drama' : 'comedy' }));
const BOOKS = Array.from({ length: 10 }, (_, i) => ({ isbn: `b${i}`, title: `book ${i}` }));

async function call(node: TestNode, key: string, method: string, path: string, body?: unknown) {
  const r = await fetch(node.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  return { status: r.status, body: (text ? JSON.parse(text) : null) as Record<string, any> };
}

const exportFromA = (body: unknown) => call(a, KEY_A, 'POST', '/export', body);

/** Every task `b` has is done (the export does not wait for the remote's tasks). */
async function settled(node: TestNode): Promise<void> {
  await until(
    () => node.client.tasks.getTasks({ statuses: ['enqueued', 'processing'] }),
    (r) => r.results.length === 0,
  );
}

beforeAll(async () => {
  [a, b] = await Promise.all([startTestNode(['--master-key', KEY_A]), startTestNode(['--master-key', KEY_B])]);
  await a.client.index('movies').updateSettings({ filterableAttributes: ['genre'], searchableAttributes: ['title'], rankingRules: ['words', 'typo', 'exactness'] }).waitTask();
  await a.client.index('movies').addDocuments(MOVIES, { primaryKey: 'id' }).waitTask();
  await a.client.index('books').addDocuments(BOOKS, { primaryKey: 'isbn' }).waitTask();
  await a.client.index('books').updateSettings({ stopWords: ['the'] }).waitTask();
  await a.client.index('other').addDocuments([{ id: 1 }]).waitTask();
  await b.client.index('books').updateSettings({ stopWords: ['a'] }).waitTask();
  await b.client.index('books').addDocuments([{ isbn: 'kept', title: 'only on b' }], { primaryKey: 'isbn' }).waitTask();
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

describe('POST /export', () => {
  it('sends the matched indexes, creating missing ones with their primary key and settings', async () => {
    const r = await exportFromA({ url: b.url, apiKey: KEY_B, payloadSize: '1KiB', indexes: { movies: { filter: 'genre = drama' }, 'bo*': {} } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ taskUid: expect.any(Number), indexUid: null, status: 'enqueued', type: 'export' });
    const enqueued = (await a.client.tasks.getTask(r.body['taskUid'])) as unknown as Record<string, any>;
    expect(enqueued['details']).toEqual({ url: b.url, apiKey: 'exporXXXXXX...', payloadSize: '1 KiB', indexes: { movies: { filter: 'genre = drama', overrideSettings: false }, 'bo*': { filter: null, overrideSettings: false } } });

    const task = (await a.client.tasks.waitForTask(r.body['taskUid'])) as unknown as Record<string, any>;
    const dramas = MOVIES.filter((m) => m.genre === 'drama');
    expect(task).toMatchObject({ status: 'succeeded', error: null, type: 'export' });
    // Once done, the details name each index sent, with what its pattern asked and how many documents it matched.
    expect(task['details']).toEqual({
      url: b.url,
      apiKey: 'exporXXXXXX...',
      payloadSize: '1 KiB',
      indexes: { books: { filter: null, overrideSettings: false, matchedDocuments: 10 }, movies: { filter: 'genre = drama', overrideSettings: false, matchedDocuments: dramas.length } },
    });

    await settled(b);
    const movies = b.client.index('movies');
    expect((await movies.getRawInfo()).primaryKey).toBe('id');
    expect(await movies.getFilterableAttributes()).toEqual(['genre']);
    expect(await movies.getSearchableAttributes()).toEqual(['title']);
    expect(await movies.getRankingRules()).toEqual(['words', 'typo', 'exactness']);
    const got = await movies.getDocuments({ limit: 1000 });
    expect(got.total).toBe(dramas.length);
    expect(got.results.sort((x, y) => (x['id'] as number) - (y['id'] as number))).toEqual(dramas);
    // 1 KiB payloads: the documents went in several requests, each a task on b.
    const additions = await b.client.tasks.getTasks({ indexUids: ['movies'], types: ['documentAdditionOrUpdate'] });
    expect(additions.results.length).toBeGreaterThan(2);
    expect(additions.results.every((t) => t.status === 'succeeded')).toBe(true);
    // An index b had keeps its settings (no overrideSettings) and its own documents.
    expect(await b.client.index('books').getStopWords()).toEqual(['a']);
    expect((await b.client.index('books').getDocuments({ limit: 100 })).total).toBe(11);
    // Not matched by any pattern: not sent.
    expect((await call(b, KEY_B, 'GET', '/indexes/other')).status).toBe(404);
  });

  it('replaces the settings of an existing index with overrideSettings', async () => {
    const r = await exportFromA({ url: b.url, apiKey: KEY_B, indexes: { books: { overrideSettings: true } } });
    const task = (await a.client.tasks.waitForTask(r.body['taskUid'])) as unknown as Record<string, any>;
    expect(task).toMatchObject({ status: 'succeeded', details: { indexes: { books: { filter: null, overrideSettings: true, matchedDocuments: 10 } } } });
    expect(task['details']).not.toHaveProperty('payloadSize');
    await settled(b);
    expect(await b.client.index('books').getStopWords()).toEqual(['the']);
  });

  it('sends every index when no pattern is given, with their embeddings', async () => {
    const vec = a.client.index('vec');
    await vec.updateEmbedders({ manual: { source: 'userProvided', dimensions: 2 } }).waitTask();
    await vec.addDocuments([{ id: 1, _vectors: { manual: [0.5, 0.25] } }, { id: 2, _vectors: { manual: [1, 0] } }]).waitTask();
    const r = await exportFromA({ url: b.url, apiKey: KEY_B });
    const task = (await a.client.tasks.waitForTask(r.body['taskUid'])) as unknown as Record<string, any>;
    expect(task).toMatchObject({ status: 'succeeded' });
    expect(Object.keys(task['details']['indexes'])).toEqual(['books', 'movies', 'other', 'vec']);
    await settled(b);
    const docs = await b.client.index('vec').getDocuments({ retrieveVectors: true });
    const byId = Object.fromEntries(docs.results.map((d) => [d['id'], d['_vectors']]));
    expect(byId[1]).toEqual({ manual: { embeddings: [[0.5, 0.25]], regenerate: false } });
    expect(byId[2]).toEqual({ manual: { embeddings: [[1, 0]], regenerate: false } });
  });

  it('fails the task with the remote error, or when the remote cannot be reached', async () => {
    const refused = await exportFromA({ url: b.url, apiKey: 'wrong-key' });
    const t1 = (await a.client.tasks.waitForTask(refused.body['taskUid'])) as unknown as Record<string, any>;
    // The remote's own error, as the reference reports it.
    expect(t1).toMatchObject({ status: 'failed', error: { code: 'invalid_api_key', type: 'auth' } });

    const closed = await exportFromA({ url: `http://127.0.0.1:${await freePort()}` });
    const t2 = (await a.client.tasks.waitForTask(closed.body['taskUid'], { timeout: 20_000 })) as unknown as Record<string, any>;
    expect(t2).toMatchObject({ status: 'failed', error: { code: 'remote_could_not_send_request', type: 'system' } });
    expect(t2['error']['message']).toMatch(/^could not reach remote `http:\/\/127\.0\.0\.1:\d+`/);

    // A filter on an attribute the index does not filter by fails when the task runs.
    const unfilterable = await exportFromA({ url: b.url, apiKey: KEY_B, indexes: { movies: { filter: 'title = x' } } });
    expect(unfilterable.status).toBe(200);
    const t3 = (await a.client.tasks.waitForTask(unfilterable.body['taskUid'])) as unknown as Record<string, any>;
    expect(t3).toMatchObject({ status: 'failed', error: { code: 'invalid_export_index_filter', type: 'invalid_request' } });
  });

  it('refuses bad requests with the reference codes', async () => {
    const bad = async (body: unknown) => (await exportFromA(body)).body;
    expect(await bad({})).toMatchObject({ code: 'invalid_export_url', type: 'invalid_request' });
    expect(await bad({ url: 'not a url' })).toMatchObject({ code: 'invalid_export_url', message: expect.stringMatching(/`not a url` is not an absolute http or https URL/) });
    expect(await bad({ url: 3 })).toMatchObject({ code: 'invalid_export_url' });
    expect(await bad({ url: b.url, apiKey: 3 })).toMatchObject({ code: 'invalid_export_api_key' });
    expect(await bad({ url: b.url, payloadSize: 'lots' })).toMatchObject({ code: 'invalid_export_payload_size', message: expect.stringMatching(/"24MiB"/) });
    expect(await bad({ url: b.url, payloadSize: true })).toMatchObject({ code: 'invalid_export_payload_size' });
    expect(await bad({ url: b.url, indexes: { 'bad pattern!': {} } })).toMatchObject({ code: 'invalid_export_indexes_patterns' });
    expect(await bad({ url: b.url, indexes: { movies: { filter: 'genre = (' } } })).toMatchObject({ code: 'invalid_export_index_filter' });
    expect(await bad({ url: b.url, indexes: { movies: { overrideSettings: 'yes' } } })).toMatchObject({ code: 'invalid_export_index_override_settings' });
    expect(await bad({ url: b.url, other: 1 })).toMatchObject({ code: 'bad_request' });
    // The `export` action is needed.
    const search = (await a.client.createKey({ actions: ['search'], indexes: ['*'], expiresAt: null })).key;
    expect((await call(a, search, 'POST', '/export', { url: b.url })).status).toBe(403);
    const exporter = (await a.client.createKey({ actions: ['export'], indexes: ['*'], expiresAt: null })).key;
    expect((await call(a, exporter, 'POST', '/export', { url: `http://127.0.0.1:${await freePort()}`, indexes: { none: {} } })).status).toBe(200);
  });
});
