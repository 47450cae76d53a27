import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYLOADS } from '../../src/tasks/task-queue.js';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { apiError } from '../helpers/api-error.js';

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t.close();
});

describe('GET /tasks/{uid}/documents', () => {
  it('needs the getTaskDocumentsRoute experimental feature', async () => {
    const task = await t.client.index('docs').addDocuments([{ id: 1 }]).waitTask();
    expect(await apiError(t.client.tasks.getTaskDocuments(task.uid))).toMatchObject({
      status: 400,
      code: 'feature_not_enabled',
      message:
        'Getting the documents of an enqueued task requires enabling the `get task documents route` experimental feature. See https://github.com/orgs/meilisearch/discussions/808',
    });
    await t.client.updateExperimentalFeatures({ getTaskDocumentsRoute: true });
  });

  it('streams the documents a task received, as NDJSON, after the task ran', async () => {
    const docs = [
      { id: 1, title: 'Carol', tags: ['a', 'b'], nested: { x: 1 } },
      { id: 'two', title: 'Ëlise' },
    ];
    const task = await t.client.index('docs').addDocuments(docs).waitTask();
    expect(task.status).toBe('succeeded');
    expect(await t.client.tasks.getTaskDocuments(task.uid)).toEqual(docs);
    const r = await fetch(`${t.url}/tasks/${task.uid}/documents`);
    expect(r.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(await r.text()).toBe(docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
  });

  it('shows CSV and NDJSON payloads as the documents they were parsed into', async () => {
    const csv = await fetch(`${t.url}/indexes/docs/documents`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: 'id,price:number,title\n7,12.5,lamp\n',
    });
    const { taskUid } = (await csv.json()) as { taskUid: number };
    await t.client.tasks.waitForTask(taskUid);
    expect(await t.client.tasks.getTaskDocuments(taskUid)).toEqual([{ id: '7', price: 12.5, title: 'lamp' }]);
  });

  it('streams a large payload whole', async () => {
    const docs = Array.from({ length: 2000 }, (_, i) => ({ id: i, text: `document number ${i}` }));
    const task = await t.client.index('big').addDocuments(docs).waitTask();
    const got = await t.client.tasks.getTaskDocuments(task.uid);
    expect(got.length).toBe(2000);
    expect(got[1999]).toEqual(docs[1999]);
  });

  it('keeps the documents of a task that was canceled or failed', async () => {
    await t.client.tasks.waitForTasks([]);
    await t.node.ctx.executor.halt();
    let uid: number;
    try {
      // The first addition's batch may be decided before the cancelation arrives; the second waits behind it.
      await t.client.index('slow').addDocuments([{ id: 1 }]);
      uid = (await t.client.index('slow').addDocuments([{ id: 2, kept: true }])).taskUid;
      const cancel = await t.client.tasks.cancelTasks({ uids: [uid] });
      t.node.ctx.executor.resume();
      await t.client.tasks.waitForTask(cancel.taskUid);
    } finally {
      t.node.ctx.executor.resume();
    }
    expect((await t.client.tasks.getTask(uid)).status).toBe('canceled');
    expect(await t.client.tasks.getTaskDocuments(uid)).toEqual([{ id: 2, kept: true }]);
    const failed = await t.client.index('docs').addDocuments([{ title: 'no id' }]).waitTask();
    expect(failed.status).toBe('failed');
    expect(await t.client.tasks.getTaskDocuments(failed.uid)).toEqual([{ title: 'no id' }]);
  });

  it('answers task_file_not_found for a task without documents, task_not_found once the task is deleted', async () => {
    const created = await t.client.createIndex('plain').waitTask();
    expect(await apiError(t.client.tasks.getTaskDocuments(created.uid))).toMatchObject({
      status: 404,
      code: 'task_file_not_found',
      message: `Task \`${created.uid}\` does not contain any documents. Only \`documentAdditionOrUpdate\` tasks contain documents`,
    });
    const added = await t.client.index('plain').addDocuments([{ id: 1 }]).waitTask();
    await t.client.tasks.deleteTasks({ uids: [added.uid] }).waitTask();
    expect(await apiError(t.client.tasks.getTaskDocuments(added.uid))).toMatchObject({ status: 404, code: 'task_not_found' });
    // The payload went with the task.
    const left = await t.node.ctx.engine.store.get(PAYLOADS.key(added.uid));
    expect(left).toBeFalsy();
  });

  it('refuses a uid that is not a number and a task that does not exist', async () => {
    const bad = await fetch(`${t.url}/tasks/abc/documents`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_task_uids' });
    expect(await apiError(t.client.tasks.getTaskDocuments(99_999))).toMatchObject({ status: 404, code: 'task_not_found', message: 'Task `99999` not found.' });
  });
});
