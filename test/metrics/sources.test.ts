// The event-driven parts of the metrics, fed by hand: what a batch, a role change or a leader's
// progress table turns into. Real nodes rarely produce these moments on demand (a cancelation
// that catches tasks, an election lost to a pre-vote, a lagging follower).

import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/metrics.js';
import { connectRaft, connectSoftState, connectTasks } from '../../src/metrics/sources.js';
import type { SoftState, Status } from '../../src/raft/core/index.js';
import type { BatchRecord } from '../../src/tasks/batch.js';
import type { Executor } from '../../src/tasks/executor.js';
import { TaskQueue } from '../../src/tasks/task-queue.js';
import type { TaskRecord, TaskStatus, TaskType } from '../../src/tasks/task.js';
import { parseExposition, valueOf } from './helpers.js';

async function samples(m: Metrics) {
  return parseExposition((await m.expose()).body);
}

function task(uid: number, type: TaskType, status: TaskStatus, extra: Partial<TaskRecord> = {}): TaskRecord {
  return {
    uid,
    batchUid: 0,
    indexUid: 'books',
    status,
    type,
    canceledBy: null,
    details: null,
    error: null,
    enqueuedAt: 1_000,
    startedAt: 3_000,
    finishedAt: 7_000,
    params: { op: 'clear' },
    ...extra,
  };
}

function batch(uid: number, taskUids: number[]): BatchRecord {
  return { uid, taskUids, startedAt: 3_000, finishedAt: 7_000, reason: 'test', stats: null, details: {} };
}

describe('task metrics', () => {
  function setup(indexes: Set<string>) {
    const m = new Metrics('n1');
    m.indexExists = (uid) => indexes.has(uid);
    const queue = new TaskQueue();
    const executor = new EventEmitter() as unknown as Executor;
    connectTasks(m, queue, executor);
    const add = (t: TaskRecord) => queue.tasks.set(t.uid, t);
    return { m, queue, executor, add };
  }

  it('counts a cancelation and the tasks it canceled, which are not in its batch', async () => {
    const { m, executor, add } = setup(new Set(['books']));
    add(task(0, 'documentAdditionOrUpdate', 'canceled', { canceledBy: 3, startedAt: null }));
    add(task(1, 'documentAdditionOrUpdate', 'canceled', { canceledBy: 3, startedAt: null }));
    // Matched but already done when the cancelation ran: not canceled by it.
    add(task(2, 'documentAdditionOrUpdate', 'succeeded'));
    add(task(3, 'taskCancelation', 'succeeded', { indexUid: null, matched: [0, 1, 2] }));
    executor.emit('batch', batch(0, [3]));
    const s = await samples(m);
    expect(valueOf(s, 'trine_tasks_finished_total', { type: 'taskCancelation', status: 'succeeded' })).toBe(1);
    expect(valueOf(s, 'trine_tasks_finished_total', { type: 'documentAdditionOrUpdate', status: 'canceled' })).toBe(2);
    expect(valueOf(s, 'trine_tasks_finished_total', { type: 'documentAdditionOrUpdate', status: 'succeeded' })).toBeUndefined();
    // Canceled tasks never ran: they have no duration.
    expect(valueOf(s, 'trine_task_duration_seconds_count', { type: 'documentAdditionOrUpdate' })).toBeUndefined();
  });

  it('times tasks from their batch and counts documents of succeeded tasks only', async () => {
    const { m, executor, add } = setup(new Set(['books']));
    add(task(0, 'documentAdditionOrUpdate', 'succeeded', { details: { receivedDocuments: 3, indexedDocuments: 3 } }));
    add(task(1, 'documentAdditionOrUpdate', 'failed', { details: { receivedDocuments: 2, indexedDocuments: 0 } }));
    add(task(2, 'documentDeletion', 'succeeded', { details: { providedIds: 2, deletedDocuments: 1 } }));
    executor.emit('batch', batch(0, [0, 1, 2]));
    const s = await samples(m);
    expect(valueOf(s, 'trine_documents_indexed_total', { index: 'books' })).toBe(3);
    expect(valueOf(s, 'trine_documents_deleted_total', { index: 'books' })).toBe(1);
    expect(valueOf(s, 'trine_task_duration_seconds_sum', { type: 'documentAdditionOrUpdate' })).toBe(8);
    expect(valueOf(s, 'trine_task_wait_seconds_sum', { type: 'documentDeletion' })).toBe(2);
    expect(valueOf(s, 'trine_batch_duration_seconds_sum')).toBe(4);
    expect(valueOf(s, 'trine_tasks_finished_total', { type: 'documentAdditionOrUpdate', status: 'failed' })).toBe(1);
  });

  it('keeps index labels to existing indexes and drops them when the index goes', async () => {
    const indexes = new Set(['books']);
    const { m, executor, add } = setup(indexes);
    add(task(0, 'documentAdditionOrUpdate', 'succeeded', { details: { indexedDocuments: 2 } }));
    add(task(1, 'documentAdditionOrUpdate', 'succeeded', { indexUid: 'gone', details: { indexedDocuments: 5 } }));
    executor.emit('batch', batch(0, [0, 1]));
    m.observeSearch('books', 0.002);
    let s = await samples(m);
    expect(valueOf(s, 'trine_documents_indexed_total', { index: 'books' })).toBe(2);
    expect(s.some((x) => x.labels.index === 'gone')).toBe(false);
    expect(valueOf(s, 'trine_search_duration_seconds_count', { index: 'books' })).toBe(1);
    indexes.delete('books');
    executor.emit('batch', batch(1, []));
    s = await samples(m);
    expect(s.some((x) => x.labels.index === 'books')).toBe(false);
  });
});

describe('raft metrics', () => {
  it('counts elections this node ran and leaders it saw, even when a Ready skips the candidate state', async () => {
    const m = new Metrics('n1');
    const driver = new EventEmitter();
    connectSoftState(m, driver as unknown as { on(e: 'softState', fn: (s: SoftState) => void): unknown });
    const step = (role: SoftState['role'], lead = '') => driver.emit('softState', { role, lead });
    step('preCandidate');
    step('candidate');
    step('leader', 'n1'); // election 1, won
    step('follower', 'n2'); // deposed: a new leader
    step('preCandidate');
    step('follower', 'n2'); // pre-vote lost: no election, same leader
    step('preCandidate');
    step('leader', 'n1'); // candidate and leader within one Ready: election 2
    step('follower', '');
    step('candidate'); // election 3, lost
    step('follower', 'n3');
    const s = await samples(m);
    expect(valueOf(s, 'trine_raft_elections_total')).toBe(3);
    expect(valueOf(s, 'trine_raft_leader_changes_total')).toBe(4);
  });

  it('exports per-follower lag on the leader and none on a follower', async () => {
    const m = new Metrics('n1');
    let status: Status | null = null;
    connectRaft(m, { status: () => status, appliedIndex: () => 40 });
    expect((await samples(m)).some((x) => x.name === 'trine_raft_term')).toBe(true);
    const base = {
      id: 'n1',
      term: 7,
      vote: 'n1',
      lead: 'n1',
      commit: 42,
      applied: 42,
      firstIndex: 1,
      lastIndex: 50,
      leadTransferee: '',
      confState: { voters: ['n1', 'n2', 'n3'], learners: ['n4'] },
    };
    const pr = (match: number) => ({ match, next: match + 1, state: 'replicate', isLearner: false, recentActive: true, pendingSnapshot: 0, inflight: 0 });
    status = { ...base, role: 'leader', progress: { n1: pr(50), n2: pr(45), n3: pr(10), n4: pr(50) } } as unknown as Status;
    let s = await samples(m);
    expect(valueOf(s, 'trine_raft_role', { role: 'leader' })).toBe(1);
    expect(valueOf(s, 'trine_raft_term')).toBe(7);
    expect(valueOf(s, 'trine_raft_commit_index')).toBe(42);
    expect(valueOf(s, 'trine_raft_applied_index')).toBe(40);
    expect(valueOf(s, 'trine_raft_last_index')).toBe(50);
    expect(s.filter((x) => x.name === 'trine_raft_replication_lag_entries').map((x) => [x.labels.peer, x.value])).toEqual([
      ['n2', 5],
      ['n3', 40],
      ['n4', 0],
    ]);
    status = { ...base, id: 'n4', role: 'follower', lead: 'n1', progress: {} } as unknown as Status;
    s = await samples(m);
    expect(valueOf(s, 'trine_raft_role', { role: 'learner' })).toBe(1);
    expect(valueOf(s, 'trine_raft_role', { role: 'leader' })).toBe(0);
    expect(s.some((x) => x.name === 'trine_raft_replication_lag_entries')).toBe(false);
  });

  it('turns transport calls into gRPC, AppendEntries and snapshot metrics', async () => {
    const m = new Metrics('n1');
    m.observeGrpcCall('Send', 'OK', 0.003);
    m.observeGrpcCall('Send', 'UNAVAILABLE', 0.5);
    m.observeGrpcCall('InstallSnapshot', 'OK', 2);
    m.observeGrpcCall('InstallSnapshot', 'DEADLINE_EXCEEDED', 5);
    const s = await samples(m);
    expect(valueOf(s, 'trine_grpc_client_calls_total', { method: 'Send', code: 'UNAVAILABLE' })).toBe(1);
    expect(valueOf(s, 'trine_grpc_client_call_duration_seconds_count', { method: 'InstallSnapshot' })).toBe(2);
    expect(valueOf(s, 'trine_raft_append_entries_duration_seconds_count')).toBe(2);
    expect(valueOf(s, 'trine_raft_snapshots_sent_total', { result: 'ok' })).toBe(1);
    expect(valueOf(s, 'trine_raft_snapshots_sent_total', { result: 'failed' })).toBe(1);
  });
});
