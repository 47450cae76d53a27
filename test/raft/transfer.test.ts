// Leadership transfer (Raft thesis §3.10): catch the target up, then
// timeoutNow; proposals wait meanwhile; an unfinished transfer is abandoned.

import { describe, expect, it } from 'vitest';
import { ProposalError } from '../../src/raft/core/index.js';
import { TestCluster, bytes } from './helpers.js';

describe('leadership transfer', () => {
  it('hands over to an up-to-date follower at once, through the leader lease', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.propose('n1', 'a');
    c.delivered = [];
    c.node('n1').rn.transferLeadership('n2');
    c.stabilize();
    expect(c.delivered.find((m) => m.type === 'timeoutNow')).toMatchObject({ from: 'n1', to: 'n2', term: 2 });
    expect(c.roles()).toEqual({ n1: 'follower', n2: 'leader', n3: 'follower' });
    expect(c.node('n2').status().term).toBe(3);
    c.propose('n2', 'b');
    for (const n of c.nodes.values()) expect(n.applied).toEqual(['a', 'b']);
  });

  it('first brings a lagging target up to date', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.partition('n1', 'n3');
    for (let i = 0; i < 5; i++) c.propose('n1', `v${i}`);
    c.heal();
    c.delivered = [];
    c.node('n1').rn.transferLeadership('n3');
    c.stabilize();
    const order = c.delivered.filter((m) => m.to === 'n3' && (m.type === 'app' || m.type === 'timeoutNow')).map((m) => m.type);
    expect(order[0]).toBe('app');
    expect(order[order.length - 1]).toBe('timeoutNow');
    expect(c.leader()).toBe('n3');
    expect(c.node('n3').applied).toHaveLength(5);
  });

  it('refuses proposals while the transfer is pending', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.isolate('n3');
    c.node('n1').rn.transferLeadership('n3');
    let err: unknown;
    try {
      c.node('n1').rn.propose(bytes('x'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProposalError);
    expect(err).toMatchObject({ code: 'transferInProgress', leaderHint: 'n3' });
    expect(c.node('n1').status().leadTransferee).toBe('n3');
  });

  it('abandons a transfer that does not finish within an election timeout', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { electionTick: 10 });
    c.campaign('n1');
    c.isolate('n3');
    c.node('n1').rn.transferLeadership('n3');
    c.tick('n1', 9);
    expect(c.node('n1').status().leadTransferee).toBe('n3');
    c.tick('n1', 1);
    expect(c.node('n1').status()).toMatchObject({ role: 'leader', leadTransferee: '' });
    c.propose('n1', 'ok');
    expect(c.node('n2').applied).toEqual(['ok']);
  });

  it('rejects a learner, an unknown node, and a request made to a follower', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    expect(() => c.node('n1').rn.transferLeadership('n9')).toThrow(expect.objectContaining({ code: 'invalidTransferee' }));
    expect(() => c.node('n2').rn.transferLeadership('n3')).toThrow(expect.objectContaining({ code: 'notLeader', leaderHint: 'n1' }));
    c.node('n1').rn.transferLeadership('n1');
    expect(c.node('n1').status().leadTransferee).toBe('');
  });

  it('a transfer to a node the leader cannot reach leaves the leader in place afterwards', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.drop((m) => m.type === 'timeoutNow');
    c.node('n1').rn.transferLeadership('n2');
    c.stabilize();
    c.heal();
    c.tickAll(12);
    expect(c.leader()).toBe('n1');
    expect(c.node('n1').status().term).toBe(2);
  });
});
