// Log compaction and InstallSnapshot (Raft §7).

import { describe, expect, it } from 'vitest';
import { MemoryStorage, RawNode, type Message, type SnapshotMessage } from '../../src/raft/core/index.js';
import { TestCluster, bytes } from './helpers.js';

function snapshotsTo(msgs: Message[], to: string): SnapshotMessage[] {
  return msgs.filter((m): m is SnapshotMessage => m.type === 'snapshot' && m.to === to);
}

describe('snapshots', () => {
  it('sends a snapshot to a follower that needs compacted entries, then resumes from the log', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.isolate('n3');
    for (let i = 0; i < 10; i++) c.propose('n1', `v${i}`);
    const n1 = c.node('n1');
    n1.snapshot();
    const snapIndex = n1.storage.snapshotMeta().index;
    expect(n1.storage.firstIndex()).toBe(snapIndex + 1);
    c.propose('n1', 'after');
    c.heal();
    c.delivered = [];
    c.tick('n1');
    const snaps = snapshotsTo(c.delivered, 'n3');
    expect(snaps).toHaveLength(1);
    expect(snaps[0]!.snapshot.meta).toEqual({
      index: snapIndex,
      term: 2,
      confState: { voters: ['n1', 'n2', 'n3'], learners: [] },
    });
    const n3 = c.node('n3');
    expect(n3.readies.some((rd) => rd.snapshot?.meta.index === snapIndex)).toBe(true);
    expect(n3.applied).toEqual([...Array.from({ length: 10 }, (_, i) => `v${i}`), 'after']);
    expect(n3.storage.firstIndex()).toBe(snapIndex + 1);
    expect(n1.status().progress.n3).toMatchObject({ state: 'replicate', match: n1.status().lastIndex });
  });

  it('waits in snapshot state until the transport reports, and retries after a failure', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.isolate('n3');
    for (let i = 0; i < 5; i++) c.propose('n1', `v${i}`);
    c.node('n1').snapshot();
    c.heal();
    // The stream fails: the message never arrives.
    c.drop((m) => m.type === 'snapshot');
    c.tick('n1');
    const n1 = c.node('n1');
    expect(n1.status().progress.n3!.state).toBe('snapshot');
    c.delivered = [];
    c.tick('n1', 3);
    expect(c.delivered.filter((m) => m.type === 'snapshot' || (m.type === 'app' && m.to === 'n3'))).toEqual([]);
    n1.rn.reportSnapshot('n3', false);
    expect(n1.status().progress.n3).toMatchObject({ state: 'probe', pendingSnapshot: 0 });
    c.heal();
    c.tick('n1', 2);
    expect(c.node('n3').applied).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
    expect(n1.status().progress.n3!.state).toBe('replicate');
  });

  it('a follower ignores a snapshot it already covers and fast-forwards on a matching one', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.propose('n1', 'a');
    const n2 = c.node('n2');
    const commit = n2.status().commit;
    const confState = { voters: ['n1', 'n2', 'n3'], learners: [] };
    const snap = (index: number, term: number): Message => ({
      type: 'snapshot', from: 'n1', to: 'n2', term: 2,
      snapshot: { meta: { index, term, confState }, data: new Uint8Array(0) },
    });
    n2.rn.step(snap(commit - 1, 2));
    let rd = n2.rn.ready();
    expect(rd.snapshot).toBeUndefined();
    expect(rd.messages).toMatchObject([{ type: 'appResp', index: commit, reject: false }]);
    n2.handleReady(rd);
    // n2 gets an entry but never hears that it committed...
    const { index } = c.node('n1').rn.propose(bytes('b'));
    c.drop((m) => m.to === 'n2' && (m.type === 'heartbeat' || (m.type === 'app' && m.commit >= index)));
    c.stabilize();
    expect(n2.storage.lastIndex()).toBe(index);
    expect(n2.status().commit).toBe(index - 1);
    // ... until a snapshot at that very entry tells it.
    n2.rn.step(snap(index, 2));
    rd = n2.rn.ready();
    expect(rd.snapshot).toBeUndefined();
    expect(rd.hardState?.commit).toBe(index);
    n2.handleReady(rd);
  });

  it('says when a snapshot is due and how far to compact', () => {
    const c = new TestCluster(['n1'], { snapshotThreshold: 8, compactionMargin: 3 });
    c.campaign('n1');
    const n1 = c.node('n1');
    for (let i = 0; i < 4; i++) c.propose('n1', `v${i}`);
    expect(n1.rn.snapshotDue()).toBeUndefined();
    for (let i = 4; i < 8; i++) c.propose('n1', `v${i}`);
    const plan = n1.rn.snapshotDue();
    expect(plan).toEqual({ index: 10, confState: { voters: ['n1'], learners: [] }, compactTo: 7 });
    n1.storage.createSnapshot(plan!.index, plan!.confState, bytes('state'));
    n1.storage.compact(plan!.compactTo);
    expect(n1.rn.snapshotDue()).toBeUndefined();
    expect(n1.storage.firstIndex()).toBe(8);
  });

  it('restarts from a snapshot plus the log after it', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    for (let i = 0; i < 6; i++) c.propose('n1', `v${i}`);
    const n2 = c.node('n2');
    n2.snapshot();
    c.propose('n1', 'v6');
    const before = n2.status();
    // Restart with the state machine rebuilt from the snapshot only.
    n2.applied = JSON.parse(new TextDecoder().decode(n2.storage.snapshot()!.data)) as string[];
    n2.appliedIndex = n2.storage.snapshotMeta().index;
    n2.restart();
    c.stabilize();
    const after = n2.status();
    expect(after).toMatchObject({ term: before.term, commit: before.commit, lastIndex: before.lastIndex });
    expect(n2.applied).toEqual(['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6']);
  });

  it('refuses to compact past the latest snapshot', () => {
    const s = new MemoryStorage({ confState: { voters: ['a'], learners: [] } });
    s.append([
      { index: 1, term: 1, type: 'normal', data: new Uint8Array(0) },
      { index: 2, term: 1, type: 'normal', data: new Uint8Array(0) },
    ]);
    expect(() => s.compact(2)).toThrow(/snapshot/);
    s.createSnapshot(1, { voters: ['a'], learners: [] });
    s.compact(1);
    expect(s.firstIndex()).toBe(2);
    expect(s.term(1)).toBe(1);
    const rn = new RawNode({ id: 'a', storage: s });
    expect(rn.status().firstIndex).toBe(2);
  });
});
