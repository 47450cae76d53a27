import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t.close();
});

async function get(path: string) {
  const r = await fetch(t.url + path);
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

describe('tasks and batches', () => {
  it('numbers tasks from 0 and lists them newest first with filters and pagination', async () => {
    const c = t.client;
    await c.createIndex('a', { primaryKey: 'id' }).waitTask();
    await c.index('a').addDocuments([{ id: 1 }]).waitTask();
    await c.index('b').addDocuments([{ id: 1 }]).waitTask();
    const failed = await c.createIndex('a').waitTask();
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({
      message: 'Index `a` already exists.',
      code: 'index_already_exists',
      type: 'invalid_request',
      link: 'https://docs.meilisearch.com/errors#index_already_exists',
    });

    const all = await c.tasks.getTasks();
    expect(all.results.map((x) => x.uid)).toEqual([3, 2, 1, 0]);
    expect(all.total).toBe(4);
    const byIndex = await c.tasks.getTasks({ indexUids: ['a'] });
    expect(byIndex.results.map((x) => x.uid)).toEqual([3, 1, 0]);
    const byType = await c.tasks.getTasks({ types: ['documentAdditionOrUpdate'] });
    expect(byType.results.map((x) => x.uid)).toEqual([2, 1]);
    const byStatus = await c.tasks.getTasks({ statuses: ['failed'] });
    expect(byStatus.results.map((x) => x.uid)).toEqual([3]);
    const page = await c.tasks.getTasks({ limit: 2 });
    expect(page.results.map((x) => x.uid)).toEqual([3, 2]);
    expect(page.next).toBe(1);
    const page2 = await c.tasks.getTasks({ limit: 2, from: page.next! });
    expect(page2.results.map((x) => x.uid)).toEqual([1, 0]);
    expect(page2.next).toBeNull();
    const rev = await get('/tasks?reverse=true&limit=3');
    expect(rev.body['results'].map((x: any) => x.uid)).toEqual([0, 1, 2]);
    expect(rev.body['next']).toBe(3);
    const uids = await get('/tasks?uids=0,2');
    expect(uids.body['total']).toBe(2);

    const first = await c.tasks.getTask(0);
    expect(Object.keys(first)).toEqual([
      'uid', 'batchUid', 'indexUid', 'status', 'type', 'canceledBy', 'details', 'error', 'duration', 'enqueuedAt', 'startedAt', 'finishedAt',
    ]);
    expect(first.duration).toMatch(/^PT\d+(\.\d+)?S$/);
  });

  it('filters by dates with exclusive bounds', async () => {
    const task = await get('/tasks/1');
    const at = task.body['enqueuedAt'] as string;
    const after = await get(`/tasks?afterEnqueuedAt=${encodeURIComponent(at)}`);
    expect(after.body['results'].every((x: any) => x.uid > 1)).toBe(true);
    const before = await get(`/tasks?beforeEnqueuedAt=${encodeURIComponent(at)}`);
    expect(before.body['results'].every((x: any) => x.uid < 1)).toBe(true);
    const tomorrow = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
    expect((await get(`/tasks?afterEnqueuedAt=${tomorrow}`)).body['total']).toBe(0);
    const bad = await get('/tasks?afterEnqueuedAt=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body['code']).toBe('invalid_task_after_enqueued_at');
  });

  it('answers bad task queries with the reference codes', async () => {
    expect((await get('/tasks?limit=abc')).body['code']).toBe('invalid_task_limit');
    expect((await get('/tasks?from=-1')).body['code']).toBe('invalid_task_from');
    expect((await get('/tasks?reverse=yes')).body['code']).toBe('invalid_task_reverse');
    expect((await get('/tasks?types=nope')).body['code']).toBe('invalid_task_types');
    expect((await get('/tasks?statuses=done')).body['code']).toBe('invalid_task_statuses');
    expect((await get('/tasks?uids=x')).body['code']).toBe('invalid_task_uids');
    expect((await get('/tasks?indexUids=a%20b')).body['code']).toBe('invalid_index_uid');
    const unknown = await get('/tasks?foo=1');
    expect(unknown.body['code']).toBe('bad_request');
    expect(unknown.body['message']).toMatch(/^Unknown parameter `foo`: expected one of `limit`, `from`/);
    const missing = await get('/tasks/999');
    expect(missing.status).toBe(404);
    expect(missing.body['message']).toBe('Task `999` not found.');
    expect((await get('/tasks/abc')).body['code']).toBe('invalid_task_uids');
  });

  it('refuses cancelation and deletion without filters', async () => {
    const r = await fetch(t.url + '/tasks/cancel', { method: 'POST' });
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).code).toBe('missing_task_filters');
    const d = await fetch(t.url + '/tasks', { method: 'DELETE' });
    expect(((await d.json()) as any).code).toBe('missing_task_filters');
  });

  it('deletes finished tasks and records what it matched', async () => {
    const c = t.client;
    const del = await c.tasks.deleteTasks({ uids: [3] }).waitTask();
    expect(del.type).toBe('taskDeletion');
    expect(del.details).toMatchObject({ matchedTasks: 1, deletedTasks: 1, originalFilter: '?uids=3' });
    const err = await get('/tasks/3');
    expect(err.status).toBe(404);
  });

  it('cancels tasks still waiting, and only those', async () => {
    const c = t.client;
    // A large first batch keeps the executor busy while the next tasks wait unbatched.
    const big = Array.from({ length: 60_000 }, (_, i) => ({ id: i, text: `document number ${i} with some words` }));
    const first = await c.index('cancel').addDocuments(big);
    const waiting = await Promise.all([0, 1, 2, 3, 4].map((i) => c.index('cancel').addDocuments([{ id: 100_000 + i }])));
    // Behind a large batch: waits as long as a loaded machine needs.
    const long = { timeout: 60_000 };
    const cancel = await c.tasks.cancelTasks({ indexUids: ['cancel'], statuses: ['enqueued', 'processing'] }).waitTask(long);
    expect(cancel.type).toBe('taskCancelation');
    await c.tasks.waitForTask(first.taskUid, long);
    const outcomes = await Promise.all(waiting.map((w) => c.tasks.waitForTask(w.taskUid, long)));
    const canceled = outcomes.filter((o) => o.status === 'canceled');
    // How many were still waiting depends on timing; test/tasks/log-order.test.ts pins the rule itself.
    expect(cancel.details?.canceledTasks).toBe(canceled.length);
    for (const o of canceled) expect(o.canceledBy).toBe(cancel.uid);
    for (const o of outcomes) expect(['canceled', 'succeeded']).toContain(o.status);
    const finished = await c.tasks.getTasks({ canceledBy: [cancel.uid] });
    expect(finished.total).toBe(canceled.length);
  });

  it('groups consecutive compatible tasks in batches and lists batches', async () => {
    const c = t.client;
    const index = c.index('batched');
    await index.addDocuments(Array.from({ length: 40_000 }, (_, i) => ({ id: i })));
    const small = [];
    for (let i = 0; i < 4; i++) small.push(await index.addDocuments([{ id: 50_000 + i }]));
    const done = await Promise.all(small.map((s) => c.tasks.waitForTask(s.taskUid, { timeout: 60_000 })));
    // Which tasks share a batch depends on timing; test/tasks/log-order.test.ts pins the rule.
    const batchUids = new Set(done.map((d) => d.batchUid));
    for (const uid of batchUids) {
      const batch = await c.batches.getBatch(uid!);
      const members = done.filter((d) => d.batchUid === uid);
      expect(batch.stats.totalNbTasks).toBeGreaterThanOrEqual(members.length);
      expect(batch.stats.types).toHaveProperty('documentAdditionOrUpdate');
      expect(batch.stats.indexUids).toHaveProperty('batched');
    }
    const list = await get('/batches?limit=2');
    expect(list.body['results']).toHaveLength(2);
    expect(list.body['results'][0].uid).toBeGreaterThan(list.body['results'][1].uid);
    expect((await get('/batches/99999')).body['code']).toBe('batch_not_found');
  });
});

describe('indexes', () => {
  it('creates, lists, updates, swaps, renames and deletes indexes', async () => {
    const c = t.client;
    await c.createIndex('i1').waitTask();
    await c.index('i1').addDocuments([{ id: 1, v: 'one' }]).waitTask();
    await c.index('i2').addDocuments([{ id: 2, v: 'two' }]).waitTask();
    const upd = await c.updateIndex('i1', { primaryKey: 'other' }).waitTask();
    expect(upd.error?.code).toBe('index_primary_key_already_exists');

    const list = await c.getIndexes({ limit: 100 });
    expect(list.results.map((i) => i.uid)).toEqual([...list.results.map((i) => i.uid)].sort());
    expect(list).toMatchObject({ offset: 0, limit: 100 });

    const swap = await c.swapIndexes([{ indexes: ['i1', 'i2'], rename: false }]).waitTask();
    expect(swap.status).toBe('succeeded');
    expect(await c.index('i1').getDocument(2)).toEqual({ id: 2, v: 'two' });
    expect(await c.index('i2').getDocument(1)).toEqual({ id: 1, v: 'one' });

    const rename = await fetch(t.url + '/swap-indexes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ indexes: ['i2', 'i3'], rename: true }]),
    });
    await c.tasks.waitForTask(((await rename.json()) as any).taskUid);
    expect(await c.index('i3').getDocument(1)).toEqual({ id: 1, v: 'one' });
    expect((await get('/indexes/i2')).status).toBe(404);

    const patchRename = await fetch(t.url + '/indexes/i3', {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uid: 'i4' }),
    });
    const pr = await c.tasks.waitForTask(((await patchRename.json()) as any).taskUid);
    expect(pr.status).toBe('succeeded');
    expect((await get('/indexes/i4')).body['uid']).toBe('i4');

    const stats = await c.index('i4').getStats();
    expect(stats).toMatchObject({ numberOfDocuments: 1, isIndexing: false, fieldDistribution: { id: 1, v: 1 } });
    const global = await c.getStats();
    expect(global.indexes['i4']).toBeDefined();
    expect(global.databaseSize).toBeGreaterThan(0);

    const del = await c.deleteIndex('i4').waitTask();
    expect(del.details).toMatchObject({ deletedDocuments: 1 });
    expect((await get('/indexes/i4')).body['code']).toBe('index_not_found');
    const missing = await c.deleteIndex('nope').waitTask();
    expect(missing.error?.code).toBe('index_not_found');
  });

  it('answers missing indexes and bad uids with the reference errors', async () => {
    const r = await get('/indexes/nope/documents');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({
      message: 'Index `nope` not found.',
      code: 'index_not_found',
      type: 'invalid_request',
      link: 'https://docs.meilisearch.com/errors#index_not_found',
    });
    expect((await get('/indexes/bad%20uid')).body['code']).toBe('invalid_index_uid');
    expect((await get('/indexes?limit=-1')).body['code']).toBe('invalid_index_limit');
    const swapMissing = await t.client.swapIndexes([{ indexes: ['zz1', 'zz2'], rename: false }]).waitTask();
    expect(swapMissing.error?.code).toBe('index_not_found');
  });
});
