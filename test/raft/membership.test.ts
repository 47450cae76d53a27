// Single-server membership changes with a non-voting catch-up stage
// (Raft thesis §4): learners, promotion, removal, one change at a time.

import { describe, expect, it } from 'vitest';
import {
  MemoryStorage,
  RawNode,
  applyConfChange,
  decodeConfChange,
  encodeConfChange,
  type ConfChange,
} from '../../src/raft/core/index.js';
import { TestCluster, bytes } from './helpers.js';

function change(c: TestCluster, leader: string, cc: ConfChange): number {
  const { index } = c.node(leader).rn.proposeConfChange(cc);
  c.stabilize();
  return index;
}

describe('membership changes', () => {
  it('adds a learner that receives the log but neither votes nor campaigns', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.propose('n1', 'a');
    const n4 = c.addEmptyNode('n4');
    change(c, 'n1', { type: 'addLearner', nodeId: 'n4' });
    c.tick('n1');
    expect(n4.applied).toEqual(['a']);
    expect(n4.rn.confState()).toEqual({ voters: ['n1', 'n2', 'n3'], learners: ['n4'] });
    expect(c.node('n1').status().progress.n4).toMatchObject({ isLearner: true, state: 'replicate' });
    // Its silence does not matter to the quorum ...
    c.isolate('n4');
    c.propose('n1', 'b');
    expect(c.node('n1').status().commit).toBe(c.node('n1').status().lastIndex);
    // ... and it never campaigns, however long it waits.
    for (let i = 0; i < 50; i++) c.tick('n4');
    expect(n4.status()).toMatchObject({ role: 'follower', term: 2 });
  });

  it('promotes a learner once caught up; the quorum then includes it', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { learnerCatchUpSlack: 0 });
    c.campaign('n1');
    c.addEmptyNode('n4', { learnerCatchUpSlack: 0 });
    c.isolate('n4');
    change(c, 'n1', { type: 'addLearner', nodeId: 'n4' });
    c.propose('n1', 'a');
    expect(() => c.node('n1').rn.proposeConfChange({ type: 'addVoter', nodeId: 'n4' })).toThrow(
      expect.objectContaining({ code: 'learnerNotCaughtUp' }),
    );
    c.heal();
    c.tick('n1');
    change(c, 'n1', { type: 'addVoter', nodeId: 'n4' });
    for (const n of c.nodes.values()) {
      expect(n.rn.confState()).toEqual({ voters: ['n1', 'n2', 'n3', 'n4'], learners: [] });
    }
    // Four voters: two are no longer a quorum.
    c.isolate('n3');
    c.isolate('n4');
    const { index } = c.propose('n1', 'b');
    expect(c.node('n1').status().commit).toBe(index - 1);
    c.heal();
    c.partition('n1', 'n3');
    c.tick('n1');
    expect(c.node('n1').status().commit).toBe(index);
  });

  it('allows one pending change at a time and none before a new leader applied its first entry', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.node('n1').rn.campaign();
    // Leader now, but its no-op is not yet committed and applied.
    c.runUntil(() => c.node('n1').status().role === 'leader');
    expect(() => c.node('n1').rn.proposeConfChange({ type: 'addLearner', nodeId: 'n4' })).toThrow(
      expect.objectContaining({ code: 'confChangePending' }),
    );
    c.stabilize();
    c.isolate('n1');
    c.node('n1').rn.proposeConfChange({ type: 'addLearner', nodeId: 'n4' });
    expect(() => c.node('n1').rn.proposeConfChange({ type: 'addLearner', nodeId: 'n5' })).toThrow(
      expect.objectContaining({ code: 'confChangePending' }),
    );
    c.heal();
    c.tick('n1');
    change(c, 'n1', { type: 'addLearner', nodeId: 'n5' });
    expect(c.node('n2').rn.confState().learners).toEqual(['n4', 'n5']);
  });

  it('takes effect when applied, not when proposed', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.isolate('n1');
    c.node('n1').rn.proposeConfChange({ type: 'removeNode', nodeId: 'n3' });
    c.stabilize();
    expect(c.node('n1').rn.confState().voters).toEqual(['n1', 'n2', 'n3']);
    c.heal();
    c.tick('n1');
    for (const n of c.nodes.values()) expect(n.rn.confState().voters).toEqual(['n1', 'n2']);
  });

  it('removes a follower; the remaining pair is the quorum', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    change(c, 'n1', { type: 'removeNode', nodeId: 'n3' });
    c.isolate('n3');
    c.propose('n1', 'a');
    expect(c.node('n2').applied).toEqual(['a']);
    expect(Object.keys(c.node('n1').status().progress)).toEqual(['n1', 'n2']);
    // The removed node cannot campaign against the new configuration's majority.
    c.heal();
    for (let i = 0; i < 60; i++) c.tickAll();
    expect(c.leader()).toBe('n1');
  });

  it('a removed leader steps down and hands over to a caught-up voter', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.propose('n1', 'a');
    change(c, 'n1', { type: 'removeNode', nodeId: 'n1' });
    c.tick('n2');
    expect(c.node('n1').status().role).toBe('follower');
    const leader = c.leader();
    expect(['n2', 'n3']).toContain(leader);
    c.propose(leader!, 'b');
    expect(c.node('n2').applied).toEqual(['a', 'b']);
    expect(c.node('n3').applied).toEqual(['a', 'b']);
    expect(c.node(leader!).rn.confState().voters).toEqual(['n2', 'n3']);
  });

  it('re-adds a removed node with a fresh storage, caught up by snapshot', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    change(c, 'n1', { type: 'removeNode', nodeId: 'n3' });
    c.nodes.delete('n3');
    for (let i = 0; i < 5; i++) c.propose('n1', `v${i}`);
    c.node('n1').snapshot();
    const n3 = c.addEmptyNode('n3', { learnerCatchUpSlack: 0 });
    change(c, 'n1', { type: 'addLearner', nodeId: 'n3' });
    c.tick('n1');
    expect(n3.readies.some((rd) => rd.snapshot)).toBe(true);
    expect(n3.applied).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
    change(c, 'n1', { type: 'addVoter', nodeId: 'n3' });
    expect(n3.rn.confState()).toEqual({ voters: ['n1', 'n2', 'n3'], learners: [] });
    c.isolate('n2');
    c.propose('n1', 'with-n3');
    expect(n3.applied).toContain('with-n3');
  });

  it('rejects changes that make no sense', () => {
    const c = new TestCluster(['n1']);
    c.campaign('n1');
    const bad: ConfChange[] = [
      { type: 'removeNode', nodeId: 'n9' },
      { type: 'addVoter', nodeId: 'n1' },
      { type: 'removeNode', nodeId: 'n1' },
      { type: 'addLearner', nodeId: 'n1' },
      { type: 'addVoter', nodeId: '' },
    ];
    for (const cc of bad) {
      expect(() => c.node('n1').rn.proposeConfChange(cc)).toThrow(expect.objectContaining({ code: 'invalidConfChange' }));
    }
  });

  it('a restarted node replays membership changes between its snapshot and its applied index', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.addEmptyNode('n4');
    change(c, 'n1', { type: 'addLearner', nodeId: 'n4' });
    c.tick('n1');
    const n2 = c.node('n2');
    expect(n2.storage.snapshotMeta().index).toBe(0);
    n2.restart();
    expect(n2.rn.confState()).toEqual({ voters: ['n1', 'n2', 'n3'], learners: ['n4'] });
    expect(n2.rn.hasReady()).toBe(false);
  });

  it('does not campaign while a committed membership change waits to be applied', () => {
    const storage = new MemoryStorage();
    const rn = new RawNode({ id: 'b', storage });
    rn.bootstrap(['a', 'b', 'c']);
    let rd = rn.ready();
    storage.append(rd.entries);
    rn.advance();
    const cc = { index: 4, term: 2, type: 'confChange' as const, data: encodeConfChange({ type: 'removeNode', nodeId: 'c' }) };
    rn.step({ type: 'app', from: 'a', to: 'b', term: 2, prevIndex: 3, prevTerm: 1, entries: [cc], commit: 4 });
    rd = rn.ready();
    expect(rd.committedEntries).toEqual([cc]);
    // Not yet applied: its old configuration is known to be stale.
    rn.campaign();
    expect(rn.status().role).toBe('follower');
    storage.append(rd.entries);
    rn.advance();
    expect(rn.confState().voters).toEqual(['a', 'b']);
    rn.campaign();
    expect(rn.status().role).toBe('preCandidate');
  });

  it('encodes changes compactly and applies them purely', () => {
    const cc: ConfChange = { type: 'addLearner', nodeId: 'node-é', context: bytes('10.0.0.4:7000') };
    expect(decodeConfChange(encodeConfChange(cc))).toEqual(cc);
    expect(decodeConfChange(encodeConfChange({ type: 'removeNode', nodeId: 'x' }))).toEqual({ type: 'removeNode', nodeId: 'x' });
    const cs = { voters: ['a', 'b'], learners: ['c'] };
    expect(applyConfChange(cs, { type: 'addVoter', nodeId: 'c' })).toEqual({ voters: ['a', 'b', 'c'], learners: [] });
    expect(applyConfChange(cs, { type: 'addLearner', nodeId: 'b' })).toEqual({ voters: ['a'], learners: ['b', 'c'] });
    expect(applyConfChange(cs, { type: 'removeNode', nodeId: 'zz' })).toEqual(cs);
    expect(cs).toEqual({ voters: ['a', 'b'], learners: ['c'] });
  });
});
