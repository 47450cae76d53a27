import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeilisearchApiError, type Index } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { readState, type NodeState } from '../helpers/cluster-state.js';

// Every route that removes data in bulk wants explicit, non-empty intent: a request that says
// nothing about what to remove is refused, and changes nothing.

let t: TestNode;
let movies: Index;

beforeAll(async () => {
  t = await startTestNode();
  movies = t.client.index('movies');
  await movies.updateFilterableAttributes(['genre', 'year']).waitTask();
  await movies
    .addDocuments([
      { id: 1, title: 'Carol', genre: 'drama', year: 2015 },
      { id: 2, title: 'Alien', genre: 'horror', year: 1979 },
      { id: 3, title: 'Heat', genre: 'crime', year: 1995 },
    ])
    .waitTask();
  await t.client.createIndex('books').waitTask();
});
afterAll(async () => {
  await t.close();
});

async function apiError(p: Promise<unknown>): Promise<{ code: string; message: string; status: number }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof MeilisearchApiError) return { code: e.cause!.code, message: e.cause!.message, status: e.response.status };
    throw e;
  }
  throw new Error('the request was accepted');
}

async function raw(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const r = await fetch(`${t.url}${path}`, {
    method,
    ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

/** The state after every task has finished. */
async function settled(): Promise<NodeState> {
  for (;;) {
    const s = await readState(t.url);
    if (s.tasks.every((x) => x['status'] !== 'enqueued' && x['status'] !== 'processing')) return s;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('destructive routes need explicit, non-empty intent', () => {
  it('refuses a deletion by filter whose filter says nothing, at any nesting, and deletes nothing', async () => {
    const before = await settled();
    const blank: unknown[] = ['', '   ', [''], [[]], [['']], ['', ''], [' ', ['']], [[], ['  ', '']], null];
    for (const filter of blank) {
      const e = await apiError(movies.deleteDocuments({ filter: filter as string }));
      expect(e, JSON.stringify(filter)).toEqual({ code: 'invalid_document_filter', message: 'Sending an empty filter is forbidden.', status: 400 });
    }
    const missing = await raw('POST', '/indexes/movies/documents/delete', {});
    expect(missing.status).toBe(400);
    expect(missing.body!['code']).toBe('missing_document_filter');
    expect(await settled()).toEqual(before);

    // A filter that says something still works, empty parts being no condition.
    await movies.deleteDocuments({ filter: ['', ['genre = horror', '']] }).waitTask();
    expect((await movies.getDocuments({ fields: ['id'] })).results.map((d) => d['id'])).toEqual([1, 3]);
    await movies.addDocuments([{ id: 2, title: 'Alien', genre: 'horror', year: 1979 }]).waitTask();
  });

  it('deletes by id only the ids given: an empty or blank list deletes nothing', async () => {
    const before = await settled();
    for (const ids of [[], [''], ['   ']]) {
      const task = await movies.deleteDocuments(ids as string[]).waitTask();
      expect(task.status).toBe('succeeded');
      expect(task.details).toMatchObject({ providedIds: ids.length, deletedDocuments: 0 });
    }
    for (const body of [null, {}, 'x', [null], [{}], [[1]], [1.5], [true]]) {
      const r = await raw('POST', '/indexes/movies/documents/delete-batch', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    const after = await settled();
    expect(after.documents).toEqual(before.documents);
  });

  it('deletes every document only on the route that says so, never from a path missing its id', async () => {
    const before = await settled();
    // What `deleteDocument('')` sends: `DELETE …/documents/` is not "delete them all".
    const e = await apiError(movies.deleteDocument(''));
    expect(e.code).toBe('missing_document_id');
    expect(e.status).toBe(400);
    // A filter given to the delete-all route is an unknown parameter, not a filter.
    const withFilter = await raw('DELETE', '/indexes/movies/documents?filter=genre%20%3D%20horror');
    expect(withFilter.status).toBe(400);
    expect(withFilter.body!['code']).toBe('bad_request');
    expect(await settled()).toEqual(before);
  });

  it('deletes and cancels tasks only with a filter', async () => {
    const before = await settled();
    for (const op of [() => t.client.tasks.deleteTasks({}), () => t.client.tasks.cancelTasks({})]) {
      const e = await apiError(op());
      expect(e.code).toBe('missing_task_filters');
      expect(e.status).toBe(400);
    }
    for (const q of ['customMetadata=x', 'limit=10', 'uids=', 'statuses=', 'indexUids=', 'types=', 'from=1']) {
      for (const [method, path] of [
        ['DELETE', '/tasks'],
        ['POST', '/tasks/cancel'],
      ] as const) {
        const r = await raw(method, `${path}?${q}`);
        expect(r.status, `${method} ${path}?${q}`).toBe(400);
        expect(r.body!['code']).toMatch(/^(missing_task_filters|bad_request|invalid_task_\w+|invalid_index_uid)$/);
      }
    }
    expect(await settled()).toEqual(before);
  });

  it('swaps only two named, distinct indexes, and never renames over an existing one', async () => {
    const before = await settled();
    for (const body of [[{}], [{ indexes: [] }], [{ indexes: ['movies'] }], [{ indexes: ['movies', 'movies'] }], [{ indexes: ['movies', ''] }], { indexes: ['movies', 'books'] }, null]) {
      const r = await raw('POST', '/swap-indexes', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    const rename = await t.client.swapIndexes([{ indexes: ['movies', 'books'], rename: true }]).waitTask();
    expect(rename.status).toBe('failed');
    expect(rename.error?.code).toBe('index_already_exists');
    const after = await settled();
    expect(after.documents).toEqual(before.documents);
    expect(after.indexes).toEqual(before.indexes);
  });

  it('deletes a key only when it is named', async () => {
    const master = await startTestNode(['--master-key', 'a-master-key-of-16-bytes']);
    try {
      const keysOf = async () => (await master.client.getKeys({ limit: 100 })).results.map((k) => k.uid).sort();
      const keys = await keysOf();
      expect(keys.length).toBeGreaterThan(0);
      for (const path of ['/keys/', '/keys', '/keys/%20', '/keys/*', '/keys/null']) {
        const r = await fetch(`${master.url}${path}`, { method: 'DELETE', headers: { authorization: 'Bearer a-master-key-of-16-bytes' } });
        expect(r.status, path).toBeGreaterThanOrEqual(400);
        expect(r.status, path).toBeLessThan(500);
      }
      expect(await keysOf()).toEqual(keys);
    } finally {
      await master.close();
    }
  });

  it('refuses an empty filter that reached the log anyway (an older dump, a replayed entry): the task fails, nothing is deleted', async () => {
    const before = await settled();
    const task = await t.node.ctx.enqueue({
      type: 'documentDeletion',
      indexUid: 'movies',
      details: { providedIds: 0, deletedDocuments: null, originalFilter: '[""]' },
      params: { op: 'deleteFilter', filter: [''] },
    });
    const done = await t.client.tasks.waitForTask(task.uid);
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'invalid_document_filter', message: 'Index `movies`: Sending an empty filter is forbidden.' });
    expect((await settled()).documents).toEqual(before.documents);
  });
});
