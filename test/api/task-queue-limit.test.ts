import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';

/**
 * The task list is bounded as in the reference: once it holds `--task-queue-limit` tasks, a
 * task deletion of the oldest tenth (finished ones only) is enqueued on its own.
 */
const LIMIT = 20;
let t: TestNode;

beforeAll(async () => {
  t = await startTestNode(['--task-queue-limit', String(LIMIT)]);
});

afterAll(async () => {
  await t.close();
});

async function until<T>(what: string, fn: () => Promise<T | null>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the task queue limit', () => {
  it('deletes the oldest finished tasks once the queue is full, and keeps the recent ones', async () => {
    const index = t.client.index('bounded');
    const uids: number[] = [];
    for (let k = 0; k < LIMIT + 5; k++) uids.push((await index.addDocuments([{ id: k }]).waitTask()).uid);
    const deletions = await until('the automatic deletions to run', async () => {
      const all = await t.client.tasks.getTasks({ limit: 1000 });
      if (all.results.some((x) => x.status === 'enqueued' || x.status === 'processing')) return null;
      if (all.total > LIMIT) return null;
      return all.results.filter((x) => x.type === 'taskDeletion');
    });
    expect(deletions.length).toBeGreaterThan(0);
    for (const d of deletions) {
      expect(d.status).toBe('succeeded');
      expect(d.details?.originalFilter).toMatch(/^\?statuses=succeeded,failed,canceled&beforeEnqueuedAt=\d{4}-\d\d-\d\dT[\d:.]+Z$/);
      expect(d.details?.deletedTasks).toBeGreaterThan(0);
    }
    // The oldest went first; the latest additions and every document are still there.
    await expect(t.client.tasks.getTask(uids[0]!)).rejects.toMatchObject({ cause: { code: 'task_not_found' } });
    expect((await t.client.tasks.getTask(uids.at(-1)!)).status).toBe('succeeded');
    expect((await index.getDocuments({ limit: 100 })).total).toBe(LIMIT + 5);
  });
});
