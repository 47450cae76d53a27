import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nextBatch } from '../../src/tasks/autobatcher.js';
import { decodeCommand, encodeCommand, type Command } from '../../src/tasks/command.js';
import { TaskQueue } from '../../src/tasks/task-queue.js';
import { shardOf } from '../../src/engine/network/shards.js';
import { stringifyJson } from '../../src/util/exact-json.js';
import type { TaskSpec } from '../../src/tasks/task.js';
import { deletionCommand, TaskNode } from '../helpers/task-node.js';

/**
 * The state machine and executor driven by hand, command by command, as a log would: what a
 * node does depends only on the order of the commands, never on timing.
 */
let node: TaskNode;

beforeEach(async () => {
  node = await TaskNode.open('trine-log-order-');
});

afterEach(async () => {
  await node.close();
});

function apply(cmd: Command) {
  return node.apply(cmd);
}

function addDocs(indexUid: string, docs: object[]): Command {
  const payload = Buffer.from(JSON.stringify(docs));
  const spec: TaskSpec = {
    type: 'documentAdditionOrUpdate',
    indexUid,
    details: { receivedDocuments: docs.length, indexedDocuments: null },
    params: { op: 'documents', method: 'replace', primaryKey: null },
    payloadBytes: payload.length,
  };
  return { kind: 'enqueue', enqueuedAt: Date.now(), spec, payload };
}

function cancel(query: string): Command {
  return {
    kind: 'enqueue',
    enqueuedAt: Date.now(),
    spec: { type: 'taskCancelation', indexUid: null, details: { matchedTasks: null, canceledTasks: null, originalFilter: query }, params: { op: 'cancel', query } },
  };
}

async function decideAndRun(): Promise<void> {
  const plan = nextBatch(node.queue.queue());
  if (!plan) return;
  await apply({ kind: 'batch', startedAt: Date.now(), taskUids: plan.taskUids, reason: plan.reason });
  await node.run();
}

describe('tasks applied in log order', () => {
  it('cancels the tasks a cancelation matched at registration and that have not run', async () => {
    await apply(addDocs('movies', [{ id: 1 }]));
    await decideAndRun();
    await apply(addDocs('movies', [{ id: 2 }]));
    await apply(addDocs('movies', [{ id: 3 }]));
    await apply(cancel('?statuses=enqueued'));
    // Registered after the cancelation: never matched, whatever the timing.
    await apply(addDocs('movies', [{ id: 4 }]));
    await decideAndRun(); // the cancelation has priority
    await decideAndRun(); // then the rest
    const status = (uid: number) => node.queue.get(uid)!.status;
    expect(status(0)).toBe('succeeded');
    expect(status(1)).toBe('canceled');
    expect(status(2)).toBe('canceled');
    expect(node.queue.get(1)!.canceledBy).toBe(3);
    expect(node.queue.get(3)!.details).toMatchObject({ matchedTasks: 2, canceledTasks: 2, originalFilter: '?statuses=enqueued' });
    expect(status(4)).toBe('succeeded');
  });

  it('batches consecutive tasks of one index and stops at another index', async () => {
    await apply(addDocs('a', [{ id: 1 }]));
    await apply(addDocs('a', [{ id: 2 }]));
    await apply(addDocs('a', [{ id: 3 }]));
    await apply(addDocs('b', [{ id: 1 }]));
    await decideAndRun();
    expect([0, 1, 2].map((u) => node.queue.get(u)!.batchUid)).toEqual([0, 0, 0]);
    expect(node.queue.get(3)!.status).toBe('enqueued');
    await decideAndRun();
    expect(node.queue.get(3)!.batchUid).toBe(1);
    const b = node.queue.batches.get(0)!;
    expect(b.stats).toMatchObject({ totalNbTasks: 3, status: { succeeded: 3 }, indexUids: { a: 3 } });
  });

  it('ignores a batch decision for tasks another decision already took', async () => {
    await apply(addDocs('a', [{ id: 1 }]));
    await apply({ kind: 'batch', startedAt: Date.now(), taskUids: [0], reason: 'first' });
    const dup = await apply({ kind: 'batch', startedAt: Date.now(), taskUids: [0], reason: 'again' });
    expect(dup).toEqual({ kind: 'batch', batchUid: null });
    expect(node.queue.pending).toHaveLength(1);
  });

  it('comes back after a restart with decided batches still to run', async () => {
    await apply(addDocs('a', [{ id: 1 }]));
    await apply({ kind: 'batch', startedAt: Date.now(), taskUids: [0], reason: 'decided' });
    const reloaded = new TaskQueue();
    await reloaded.load(node.store);
    expect(reloaded.pending.map((p) => p.taskUids)).toEqual([[0]]);
    expect(reloaded.get(0)!.status).toBe('enqueued');
    expect(reloaded.appliedIndex).toBe(node.index);
  });
});

describe('cancelations and deletions on nodes at different points of their work', () => {
  const nodes: TaskNode[] = [];

  async function makeNode(): Promise<TaskNode> {
    const n = await TaskNode.open('trine-log-pace-');
    nodes.push(n);
    return n;
  }

  afterEach(async () => {
    for (const n of nodes.splice(0)) await n.close();
  });

  const applyOn = (n: TaskNode, cmd: Command) => n.apply(cmd);
  const runOn = (n: TaskNode) => n.run();
  const deletion = (query: string): Command => deletionCommand(query, 1);
  const view = (n: TaskNode) => [...n.queue.tasks.values()].map((t) => ({ uid: t.uid, status: t.status, canceledBy: t.canceledBy, details: t.details }));

  it('match by status when they run, so a node that had finished a batch and one that had not end the same', async () => {
    const [ahead, behind] = [await makeNode(), await makeNode()];
    const log: Command[] = [
      addDocs('movies', [{ id: 1 }]),
      { kind: 'batch', startedAt: 1, taskUids: [0], reason: 'first' },
      addDocs('movies', [{ id: 2 }]),
      deletion('?statuses=succeeded'),
      cancel('?statuses=enqueued,processing&types=documentAdditionOrUpdate'),
    ];
    for (const cmd of log.slice(0, 2)) for (const n of [ahead, behind]) await applyOn(n, cmd);
    // One node has processed batch 0 before the deletion and cancelation reach it, the other after.
    await runOn(ahead);
    for (const cmd of log.slice(2)) for (const n of [ahead, behind]) await applyOn(n, cmd);
    await runOn(behind);
    for (const cmd of [
      { kind: 'batch', startedAt: 2, taskUids: [3], reason: 'cancelation' },
      { kind: 'batch', startedAt: 3, taskUids: [2], reason: 'deletion' },
    ] satisfies Command[]) {
      for (const n of [ahead, behind]) {
        await applyOn(n, cmd);
        await runOn(n);
      }
    }
    expect(view(behind)).toEqual(view(ahead));
    expect(ahead.queue.get(0)).toBeUndefined();
    expect(ahead.queue.get(1)).toMatchObject({ status: 'canceled', canceledBy: 3 });
    expect(ahead.queue.get(2)!.details).toMatchObject({ matchedTasks: 1, deletedTasks: 1 });
    expect(ahead.queue.get(3)!.details).toMatchObject({ matchedTasks: 1, canceledTasks: 1 });
  });

  it('take the finish time the log decides, whether they had finished the batch or not', async () => {
    const [ahead, behind] = [await makeNode(), await makeNode()];
    for (const cmd of [addDocs('movies', [{ id: 1 }]), { kind: 'batch', startedAt: 1, taskUids: [0], reason: 'first' }] satisfies Command[]) {
      for (const n of [ahead, behind]) await applyOn(n, cmd);
    }
    await runOn(ahead);
    const own = ahead.queue.get(0)!.finishedAt!;
    expect(ahead.queue.undecided.get(0)).toBe(own);
    // The leader's time goes with its next decision; the node behind gets it before it finishes.
    const decision: Command = { kind: 'batch', startedAt: 2, taskUids: [], reason: 'finish times', finished: [[0, own + 5]] };
    for (const n of [ahead, behind]) await applyOn(n, decision);
    await runOn(behind);
    for (const n of [ahead, behind]) {
      expect(n.queue.get(0)!.finishedAt).toBe(own + 5);
      expect(n.queue.batches.get(0)).toMatchObject({ finishedAt: own + 5 });
      expect(n.queue.batches.get(0)!.decided).toBeUndefined();
      expect(n.queue.undecided.size).toBe(0);
      expect(n.queue.decidedFinish.size).toBe(0);
    }
    // And it stays so after a restart.
    const reloaded = new TaskQueue();
    await reloaded.load(behind.store);
    expect(reloaded.get(0)!.finishedAt).toBe(own + 5);
    expect(reloaded.undecided.size + reloaded.decidedFinish.size).toBe(0);
  });

  it('gives two nodes applying one log the same documents, big integers to the digit', async () => {
    const other = await TaskNode.open('trine-log-order-other-');
    try {
      // The payload as the route writes it and the log carries it: raw bytes, parsed by each node.
      const text = '[{"id": 18446744073709551615, "n": -9223372036854775808}, {"id": 9007199254740993}, {"id": 9007199254740992, "n": 12345678901234567890}]';
      const payload = Buffer.from(text);
      const add = (indexUid: string, exactIntegers: boolean): Command => ({
        kind: 'enqueue',
        enqueuedAt: 1,
        spec: {
          type: 'documentAdditionOrUpdate',
          indexUid,
          details: { receivedDocuments: 3, indexedDocuments: null },
          params: { op: 'documents', method: 'replace', primaryKey: null, ...(exactIntegers ? { exactIntegers: true as const } : {}) },
          payloadBytes: payload.length,
        },
        payload,
      });
      const shown: string[] = [];
      for (const n of [node, other]) {
        await n.apply(decodeCommand(await encodeCommand(add('big', true))));
        // A payload whose task does not say it holds big integers (one logged before they were
        // kept) reads as plain JSON, as it did then: 2^53 + 1 rounds to 2^53, not an id.
        await n.apply(decodeCommand(await encodeCommand(add('older', false))));
        await n.apply({ kind: 'batch', startedAt: 2, taskUids: [0], reason: 'test' });
        await n.apply({ kind: 'batch', startedAt: 3, taskUids: [1], reason: 'test' });
        await n.run();
        expect(n.queue.get(0)!.status).toBe('succeeded');
        expect(n.queue.get(1)!.error?.code).toBe('invalid_document_id');
        const docs: unknown[] = [];
        for await (const [, d] of n.engine.allDocuments(n.engine.getIndex('big'))) docs.push(d);
        shown.push(stringifyJson(docs));
      }
      expect(shown[0]).toBe('[{"id":18446744073709551615,"n":-9223372036854775808},{"id":9007199254740993},{"id":9007199254740992,"n":12345678901234567890}]');
      expect(shown[1]).toBe(shown[0]);
    } finally {
      await other.close();
    }
  });

  it('ends a network topology change in a second batch, once, on a node that applied the whole log before running it', async () => {
    const other = await TaskNode.open('trine-log-order-');
    try {
      const remotes = { a: { url: 'http://127.0.0.1:1', searchApiKey: null, writeApiKey: null }, b: { url: 'http://127.0.0.1:2', searchApiKey: null, writeApiKey: null } };
      const network = { self: 'a', leader: 'a', remotes, shards: { s1: { remotes: ['a'] }, s2: { remotes: ['b'] } }, version: '01900000-0000-7000-8000-000000000001' };
      const change: Command = {
        kind: 'enqueue',
        enqueuedAt: 5,
        spec: { type: 'networkTopologyChange', indexUid: null, details: { movedDocuments: 0, message: 'Waiting' }, params: { op: 'network', network } },
      };
      const docs = Array.from({ length: 40 }, (_, i) => ({ id: i }));
      const log: Command[] = [
        addDocs('movies', docs),
        { kind: 'batch', startedAt: 1, taskUids: [0], reason: 'test' },
        change,
        { kind: 'batch', startedAt: 2, taskUids: [1], reason: 'test' },
        { kind: 'resume', taskUid: 1, startedAt: 3, outcome: { sent: true, error: null } },
        // A second leader that did not see the first end it sends its own: it ends nothing.
        { kind: 'resume', taskUid: 1, startedAt: 4, outcome: { sent: false, error: { message: 'late', code: 'remote_timeout', type: 'system', link: '' } } },
      ];
      // This node runs each batch as it is decided; the other applies the whole log first.
      await apply(log[0]!);
      await apply(log[1]!);
      await node.run();
      await apply(log[2]!);
      await apply(log[3]!);
      await node.run();
      expect(node.queue.get(1)).toMatchObject({ status: 'processing', details: { movedDocuments: 0 } });
      expect(node.queue.get(1)!.continuation).toBeDefined();
      expect(node.engine.getIndex('movies').meta.docCount).toBe(40);
      await apply(log[4]!);
      await apply(log[5]!);
      await node.run();
      for (const cmd of log) await other.apply(decodeCommand(await encodeCommand(cmd)));
      await other.run();
      const kept = docs.filter((d) => shardOf(['s1', 's2'], String(d.id)) === 's1').length;
      for (const n of [node, other]) {
        const t = n.queue.get(1)!;
        expect(t).toMatchObject({ status: 'succeeded', error: null, batchUid: 2, details: { movedDocuments: 40 - kept, message: 'Finished' } });
        expect(t.continuation).toBeUndefined();
        expect(n.engine.getIndex('movies').meta.docCount).toBe(kept);
        expect(n.queue.batches.get(2)!.taskUids).toEqual([1]);
        expect(n.queue.batches.get(3)!.taskUids).toEqual([]);
      }
      // What each wrote reads back the same after a restart.
      const reloaded = new TaskQueue();
      await reloaded.load(other.store);
      expect(reloaded.get(1)).toMatchObject({ status: 'succeeded', batchUid: 2 });
      expect(reloaded.unbatched.size).toBe(0);
    } finally {
      await other.close();
    }
  });
});
