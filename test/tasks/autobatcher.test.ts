import { describe, expect, it } from 'vitest';
import { nextBatch } from '../../src/tasks/autobatcher.js';
import type { TaskParams, TaskRecord, TaskType } from '../../src/tasks/task.js';

// The autobatcher is a pure function of the enqueued tasks: a table of queues and the batch
// each must give. A queue is written as `type@index[:detail]` items, uids in order.

function task(uid: number, spec: string): TaskRecord {
  const [head, detail] = spec.split(':') as [string, string | undefined];
  const [kind, index] = head.split('@') as [string, string | undefined];
  const indexUid = index ?? null;
  const types: Record<string, [TaskType, TaskParams]> = {
    add: ['documentAdditionOrUpdate', { op: 'documents', method: 'replace', primaryKey: null }],
    update: ['documentAdditionOrUpdate', { op: 'documents', method: 'update', primaryKey: null }],
    del: ['documentDeletion', { op: 'deleteIds', ids: ['1'] }],
    delFilter: ['documentDeletion', { op: 'deleteFilter', filter: 'a = 1' }],
    clear: ['documentDeletion', { op: 'clear' }],
    settings: ['settingsUpdate', { op: 'settings', settings: {} }],
    create: ['indexCreation', { op: 'createIndex', primaryKey: null }],
    drop: ['indexDeletion', { op: 'deleteIndex' }],
    swap: ['indexSwap', { op: 'swap', swaps: [] }],
    cancel: ['taskCancelation', { op: 'cancel', query: '?uids=0' }],
    deleteTasks: ['taskDeletion', { op: 'deleteTasks', query: '?uids=0' }],
    dump: ['dumpCreation', { op: 'dump' }],
    snapshot: ['snapshotCreation', { op: 'snapshot' }],
  };
  const [type, base] = types[kind]!;
  let params: TaskParams = base;
  let payloadBytes: number | undefined;
  if (detail?.startsWith('pk=') && params.op === 'documents') params = { ...params, primaryKey: detail.slice(3) };
  if (detail === 'noCreate' && (params.op === 'documents' || params.op === 'settings')) params = { ...params, createIndex: false };
  if (detail?.startsWith('bytes=')) payloadBytes = Number(detail.slice(6));
  return {
    uid,
    batchUid: null,
    indexUid: type === 'indexSwap' || type === 'taskCancelation' || type === 'taskDeletion' || type === 'dumpCreation' || type === 'snapshotCreation' ? null : indexUid,
    status: 'enqueued',
    type,
    canceledBy: null,
    details: null,
    error: null,
    enqueuedAt: uid,
    startedAt: null,
    finishedAt: null,
    params,
    ...(payloadBytes !== undefined ? { payloadBytes } : {}),
  } as TaskRecord;
}

const queue = (...specs: string[]) => specs.map((s, i) => task(i, s));

const cases: { name: string; queue: string[]; limits?: { maxTasks: number; maxPayloadBytes: number }; batch: number[]; reason: string }[] = [
  { name: 'additions to one index go together', queue: ['add@a', 'add@a', 'update@a'], batch: [0, 1, 2], reason: 'batched all enqueued tasks' },
  { name: 'deletions by id and clears join additions', queue: ['add@a', 'del@a', 'clear@a', 'add@a'], batch: [0, 1, 2, 3], reason: 'batched all enqueued tasks' },
  { name: 'a batch stops at another index', queue: ['add@a', 'add@b', 'add@a'], batch: [0], reason: 'batch stopped at a task of another index (`b`)' },
  { name: 'settings go with settings only', queue: ['settings@a', 'settings@a', 'add@a'], batch: [0, 1], reason: 'batch stopped at a task of type `documentAdditionOrUpdate` that cannot be batched with `settingsUpdate`' },
  { name: 'documents do not take settings', queue: ['add@a', 'settings@a'], batch: [0], reason: 'batch stopped at a task of type `settingsUpdate` that cannot be batched with `documentAdditionOrUpdate`' },
  { name: 'different primary keys do not mix', queue: ['add@a:pk=id', 'add@a:pk=sku'], batch: [0], reason: 'batch stopped at a task of type `documentAdditionOrUpdate` that cannot be batched with `documentAdditionOrUpdate`' },
  { name: 'an absent primary key goes with any', queue: ['add@a:pk=id', 'add@a', 'add@a:pk=id'], batch: [0, 1, 2], reason: 'batched all enqueued tasks' },
  { name: 'a deletion by filter starts its own batch', queue: ['add@a', 'delFilter@a', 'add@a'], batch: [0], reason: 'batch stopped before a deletion by filter' },
  { name: 'a deletion by filter leads a batch', queue: ['delFilter@a', 'add@a'], batch: [0, 1], reason: 'batched all enqueued tasks' },
  { name: 'tasks that may not create the index are apart', queue: ['add@a', 'add@a:noCreate'], batch: [0], reason: 'batch stopped at a task whose requester has other rights on index creation' },
  { name: 'index creation is alone', queue: ['create@a', 'add@a'], batch: [0], reason: 'a task of type `indexCreation` is processed alone' },
  { name: 'index deletion is alone', queue: ['drop@a', 'drop@a'], batch: [0], reason: 'a task of type `indexDeletion` is processed alone' },
  { name: 'a swap is alone', queue: ['swap', 'add@a'], batch: [0], reason: 'a task of type `indexSwap` is processed alone' },
  { name: 'cancelations come first, all of them', queue: ['add@a', 'cancel', 'add@b', 'cancel', 'deleteTasks'], batch: [1, 3], reason: 'batched all enqueued taskCancelation tasks' },
  { name: 'task deletions before everything else', queue: ['add@a', 'dump', 'deleteTasks', 'deleteTasks'], batch: [2, 3], reason: 'batched all enqueued taskDeletion tasks' },
  { name: 'snapshots before dumps, alone', queue: ['add@a', 'dump', 'snapshot'], batch: [2], reason: 'a snapshotCreation task is processed alone' },
  { name: 'a dump before other work, alone', queue: ['add@a', 'dump', 'dump'], batch: [1], reason: 'a dumpCreation task is processed alone' },
  { name: 'the task count limit', queue: ['add@a', 'add@a', 'add@a'], limits: { maxTasks: 2, maxPayloadBytes: 1e9 }, batch: [0, 1], reason: 'batch reached 2 tasks' },
  { name: 'the payload limit', queue: ['add@a:bytes=60', 'add@a:bytes=50', 'add@a:bytes=1'], limits: { maxTasks: 100, maxPayloadBytes: 100 }, batch: [0], reason: 'batch reached the payload size limit' },
  { name: 'one task over the payload limit still runs', queue: ['add@a:bytes=500'], limits: { maxTasks: 100, maxPayloadBytes: 100 }, batch: [0], reason: 'batched all enqueued tasks' },
];

describe('nextBatch', () => {
  it('has nothing to do for an empty queue', () => {
    expect(nextBatch([])).toBeNull();
  });

  for (const c of cases) {
    it(c.name, () => {
      expect(nextBatch(queue(...c.queue), c.limits)).toEqual({ taskUids: c.batch, reason: c.reason });
    });
  }
});
