import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskQueue } from '../../src/tasks/task-queue.js';
import type { TaskRecord } from '../../src/tasks/task.js';
import { deletionCommand, TaskNode } from '../helpers/task-node.js';

/**
 * A queue at its limit deletes about a tenth of a million tasks in one batch, on every node at
 * once: the work must grow linearly with the tasks, and the event loop (which also answers
 * searches and Raft heartbeats) must keep turning while it runs.
 */
const TASKS = 200_000;
// Generous: a deletion that compares every task with every other takes minutes here.
const MAX_STALL_MS = 1_500;

let node: TaskNode;

function finishedTask(uid: number): TaskRecord {
  return {
    uid,
    batchUid: uid,
    indexUid: `index-${uid % 7}`,
    status: uid % 10 === 0 ? 'failed' : 'succeeded',
    type: 'documentAdditionOrUpdate',
    canceledBy: null,
    details: { receivedDocuments: 1, indexedDocuments: 1 },
    error: null,
    enqueuedAt: 1_700_000_000_000 + uid,
    startedAt: 1_700_000_000_000 + uid,
    finishedAt: 1_700_000_000_001 + uid,
    params: { op: 'documents', method: 'replace', primaryKey: null },
  };
}

beforeAll(async () => {
  node = await TaskNode.open('trine-task-deletion-');
  const { store, queue } = node;
  // Finished tasks written as the executor leaves them, without running 200k batches.
  for (let from = 0; from < TASKS; from += 20_000) {
    const wb = store.batch();
    for (let uid = from; uid < Math.min(TASKS, from + 20_000); uid++) {
      const t = finishedTask(uid);
      queue.tasks.set(uid, t);
      queue.writeTask(wb, t);
    }
    await wb.commit();
  }
  queue.nextTaskUid = TASKS;
  queue.nextBatchUid = TASKS;
});

afterAll(async () => {
  await node?.close();
});

/** Registers and runs one deletion as the log would; returns the longest event-loop stall seen. */
async function runDeletion(query: string): Promise<{ stallMs: number; task: TaskRecord }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const r = await node.apply(deletionCommand(query));
  if (r.kind !== 'task') throw new Error('not registered');
  await node.apply({ kind: 'batch', startedAt: Date.now(), taskUids: [r.task.uid], reason: 'deletion' });
  await node.run();
  h.disable();
  return { stallMs: h.max / 1e6, task: node.queue.get(r.task.uid)! };
}

describe('deleting hundreds of thousands of tasks', () => {
  it('deletes 100,000 tasks named by uid without stalling the event loop', async () => {
    const uids = Array.from({ length: 100_000 }, (_, i) => 2 * i);
    const { stallMs, task } = await runDeletion(`?uids=${uids.join(',')}`);
    expect(task.status).toBe('succeeded');
    expect(task.details).toMatchObject({ matchedTasks: 100_000, deletedTasks: 100_000 });
    expect(node.queue.get(0)).toBeUndefined();
    expect(node.queue.get(1)).toBeDefined();
    expect(stallMs).toBeLessThan(MAX_STALL_MS);
  });

  it('deletes the other 100,000 by status and date, as the automatic deletion asks', async () => {
    const before = new Date(1_700_000_000_000 + TASKS).toISOString();
    const { stallMs, task } = await runDeletion(`?statuses=succeeded,failed,canceled&beforeEnqueuedAt=${before}`);
    expect(task.details).toMatchObject({ matchedTasks: 100_000, deletedTasks: 100_000 });
    for (let uid = 0; uid < TASKS; uid += 9_999) expect(node.queue.get(uid)).toBeUndefined();
    // Gone from the store too: a restart does not bring them back.
    const reloaded = new TaskQueue();
    await reloaded.load(node.store);
    expect([...reloaded.tasks.keys()].filter((u) => u < TASKS)).toEqual([]);
    expect(stallMs).toBeLessThan(MAX_STALL_MS);
  });
});
