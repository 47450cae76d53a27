// Reads without log entries (Raft thesis §6.4): a read index is the leader's
// commit index, handed out only once a quorum confirmed, after the request
// arrived, that no newer leader exists.

import { describe, expect, it } from 'vitest';
import { TestCluster } from './helpers.js';

describe('read index', () => {
  it('answers the leader with its commit index once a quorum confirms', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    const { index } = c.propose('n1', 'a');
    c.delivered = [];
    c.node('n1').rn.readIndex(1);
    c.stabilize();
    expect(c.node('n1').readStates).toEqual([{ ctx: 1, index }]);
    // The confirmation is one heartbeat per peer carrying the round.
    expect(c.delivered.filter((m) => m.type === 'heartbeat').every((m) => m.type === 'heartbeat' && m.ctx > 0)).toBe(true);
  });

  it('answers a follower through the leader', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.propose('n1', 'a');
    const { index } = c.propose('n1', 'b');
    c.node('n3').rn.readIndex(42);
    c.stabilize();
    expect(c.node('n3').readStates).toEqual([{ ctx: 42, index }]);
    expect(c.node('n3').appliedIndex).toBeGreaterThanOrEqual(index);
  });

  it('answers a voter of a cluster of three at once: the leader and the asker are a quorum', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    const { index } = c.propose('n1', 'a');
    c.delivered = [];
    c.node('n2').rn.readIndex(1);
    c.stabilize();
    expect(c.node('n2').readStates).toEqual([{ ctx: 1, index }]);
    expect(c.delivered.map((m) => m.type)).toEqual(['readIndex', 'readIndexResp']);
  });

  it('needs one more confirmation in a cluster of five', () => {
    const c = new TestCluster(['n1', 'n2', 'n3', 'n4', 'n5']);
    c.campaign('n1');
    const { index } = c.propose('n1', 'a');
    c.delivered = [];
    c.node('n2').rn.readIndex(1);
    c.stabilize();
    expect(c.node('n2').readStates).toEqual([{ ctx: 1, index }]);
    expect(c.delivered.some((m) => m.type === 'heartbeat' && m.ctx > 0)).toBe(true);
  });

  it('groups the requests that arrive before the heartbeats leave into one round', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.delivered = [];
    const n1 = c.node('n1').rn;
    n1.readIndex(1);
    n1.readIndex(2);
    n1.readIndex(3);
    c.stabilize();
    expect(c.node('n1').readStates.map((s) => s.ctx)).toEqual([1, 2, 3]);
    expect(c.delivered.filter((m) => m.type === 'heartbeat')).toHaveLength(2);
  });

  it('gives a request arriving after the heartbeats left a round of its own', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.delivered = [];
    c.node('n1').rn.readIndex(1);
    c.flushReadies(); // the round's heartbeats are on their way, not yet answered
    c.node('n1').rn.readIndex(2);
    c.stabilize();
    expect(c.node('n1').readStates.map((s) => s.ctx)).toEqual([1, 2]);
    const rounds = new Set(c.delivered.flatMap((m) => (m.type === 'heartbeat' ? [m.ctx] : [])));
    expect(rounds.size).toBe(2);
  });

  it('never answers a leader cut off from the majority, which a new leader may have replaced', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.propose('n1', 'a');
    c.isolate('n1');
    c.node('n1').rn.readIndex(1);
    // The others stop hearing from n1 and elect one of them.
    let lead = c.leader();
    for (let i = 0; i < 100 && (lead === 'n1' || lead === undefined || c.node(lead).status().term === 2); i++) {
      c.tick('n2');
      c.tick('n3');
      lead = ['n2', 'n3'].find((id) => c.node(id).status().role === 'leader');
    }
    expect(['n2', 'n3']).toContain(lead);
    const { index } = c.propose(lead!, 'b');
    c.node('n1').rn.readIndex(2);
    c.stabilize();
    expect(c.node('n1').readStates).toEqual([]);
    // A follower of the new leader gets an index that covers the new write.
    const other = lead === 'n2' ? 'n3' : 'n2';
    c.node(other).rn.readIndex(3);
    c.stabilize();
    expect(c.node(other).readStates).toEqual([{ ctx: 3, index }]);
    // Back in touch, the old leader steps down; its dropped requests are asked again.
    c.heal();
    c.tickAll(3);
    expect(c.node('n1').status().role).toBe('follower');
    c.node('n1').rn.readIndex(4);
    c.stabilize();
    expect(c.node('n1').readStates).toEqual([{ ctx: 4, index }]);
  });

  it('holds requests until the new leader has committed an entry of its term', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.propose('n1', 'a');
    // n2 takes over, but nobody answers its appends yet: its commit index may be behind n1's.
    c.drop((m) => m.type === 'appResp' && m.to === 'n2');
    c.node('n1').rn.transferLeadership('n2');
    c.stabilize();
    expect(c.leader()).toBe('n2');
    c.node('n2').rn.readIndex(1);
    c.stabilize();
    expect(c.node('n2').readStates).toEqual([]);
    c.heal();
    c.tickAll(1);
    const s = c.node('n2').status();
    expect(c.node('n2').readStates).toEqual([{ ctx: 1, index: s.commit }]);
    expect(s.commit).toBeGreaterThan(2);
  });

  it('makes up for a lost round heartbeat with the next periodic one', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    let dropped = 0;
    c.drop((m) => m.type === 'heartbeat' && m.ctx > 0 && dropped++ < 2);
    c.node('n1').rn.readIndex(9);
    c.stabilize();
    expect(c.node('n1').readStates).toEqual([]);
    c.tick('n1');
    expect(c.node('n1').readStates.map((s) => s.ctx)).toEqual([9]);
  });

  it('answers a single voter at once', () => {
    const c = new TestCluster(['n1']);
    c.campaign('n1');
    const { index } = c.propose('n1', 'a');
    c.node('n1').rn.readIndex(5);
    c.stabilize();
    expect(c.node('n1').readStates).toEqual([{ ctx: 5, index }]);
  });

  it('drops a request made without a known leader', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.node('n2').rn.readIndex(1);
    c.stabilize();
    expect(c.node('n2').readStates).toEqual([]);
  });
});
