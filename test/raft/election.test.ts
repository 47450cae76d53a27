// Leader election (Raft §5.2, §9.6 pre-vote, §6.2 check-quorum / leader lease).

import { describe, expect, it } from 'vitest';
import { MemoryStorage, RawNode, mulberry32, type Message } from '../../src/raft/core/index.js';
import { TestCluster } from './helpers.js';

describe('election', () => {
  it('a single node elects itself after an election timeout and commits its no-op', () => {
    const c = new TestCluster(['n1'], { electionTick: 10 });
    c.tick('n1', 19);
    const s = c.node('n1').status();
    expect(s.role).toBe('leader');
    expect(s.term).toBe(2);
    // Bootstrap entry (1) + the leader's no-op (2), committed once persisted.
    expect(s.commit).toBe(2);
  });

  it('a freshly bootstrapped single node can campaign at once', () => {
    const storage = new MemoryStorage();
    const rn = new RawNode({ id: 'solo', storage });
    rn.bootstrap(['solo']);
    rn.campaign();
    expect(rn.status().role).toBe('leader');
  });

  it('elects exactly one leader and every node learns it', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    expect(c.roles()).toEqual({ n1: 'leader', n2: 'follower', n3: 'follower' });
    for (const n of c.nodes.values()) {
      expect(n.status().lead).toBe('n1');
      expect(n.status().term).toBe(2);
      expect(n.status().commit).toBe(4);
    }
  });

  it('draws election timeouts in [electionTick, 2 * electionTick)', () => {
    const seen = new Set<number>();
    for (let seed = 0; seed < 60; seed++) {
      const storage = new MemoryStorage();
      const rn = new RawNode({ id: 'a', storage, electionTick: 10, rand: mulberry32(seed), preVote: false });
      rn.bootstrap(['a', 'b', 'c']);
      // Nobody campaigns with membership changes committed but unapplied.
      rn.ready();
      rn.advance();
      let ticks = 0;
      while (rn.status().role === 'follower') {
        rn.tick();
        ticks++;
        expect(ticks).toBeLessThan(20);
      }
      expect(ticks).toBeGreaterThanOrEqual(10);
      seen.add(ticks);
    }
    // Randomized, not a constant.
    expect(seen.size).toBeGreaterThan(5);
  });

  it('a follower does not campaign while it hears from the leader', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    for (let i = 0; i < 100; i++) c.tickAll();
    expect(c.leader()).toBe('n1');
    expect(c.node('n2').status().term).toBe(2);
  });

  it('grants at most one vote per term, and only to an up-to-date log', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { preVote: false, checkQuorum: false });
    const n3 = c.node('n3');
    const vote = (from: string, lastIndex: number, lastTerm: number): Message => ({
      type: 'vote', from, to: 'n3', term: 5, lastIndex, lastTerm, transfer: false,
    });
    n3.rn.step(vote('n1', 3, 1));
    n3.rn.step(vote('n2', 3, 1));
    const msgs = n3.rn.ready().messages;
    n3.rn.advance();
    expect(msgs.map((m) => [m.to, m.type === 'voteResp' && m.reject])).toEqual([
      ['n1', false],
      ['n2', true],
    ]);
    // A log that is behind (lower last term) is refused even in a fresh term.
    n3.rn.step({ type: 'vote', from: 'n2', to: 'n3', term: 6, lastIndex: 10, lastTerm: 0, transfer: false });
    const rd = n3.rn.ready();
    n3.rn.advance();
    expect(rd.messages).toMatchObject([{ type: 'voteResp', to: 'n2', reject: true, term: 6 }]);
    // Voting persists the vote before the reply goes out.
    expect(n3.readies.length).toBeGreaterThan(0);
  });

  it('persists the vote in the same Ready that carries the reply', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { preVote: false });
    const n2 = c.node('n2');
    n2.rn.step({ type: 'vote', from: 'n1', to: 'n2', term: 2, lastIndex: 3, lastTerm: 1, transfer: false });
    const rd = n2.rn.ready();
    expect(rd.hardState).toMatchObject({ term: 2, vote: 'n1' });
    expect(rd.mustSync).toBe(true);
    expect(rd.messages).toMatchObject([{ type: 'voteResp', reject: false }]);
    n2.rn.advance();
  });

  it('keeps a single leader per term when candidates split the vote', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const c = new TestCluster(['n1', 'n2', 'n3', 'n4'], { preVote: false }, seed);
      c.node('n1').rn.campaign();
      c.node('n2').rn.campaign();
      c.stabilize();
      const leadersByTerm = new Map<number, Set<string>>();
      for (let round = 0; round < 60 && c.leader() === undefined; round++) c.tickAll();
      for (const n of c.nodes.values()) {
        const s = n.status();
        if (s.role !== 'leader') continue;
        const set = leadersByTerm.get(s.term) ?? new Set();
        set.add(s.id);
        leadersByTerm.set(s.term, set);
      }
      for (const set of leadersByTerm.values()) expect(set.size).toBe(1);
      expect(c.leader()).toBeDefined();
    }
  });

  it('a candidate that hears from a leader of its term becomes its follower', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { preVote: false });
    c.campaign('n1');
    const n2 = c.node('n2');
    c.isolate('n2');
    n2.rn.campaign(); // term 3, alone
    c.stabilize();
    expect(n2.status().role).toBe('candidate');
    n2.rn.step({ type: 'app', from: 'n3', to: 'n2', term: 3, prevIndex: 4, prevTerm: 2, entries: [], commit: 4 });
    expect(n2.status()).toMatchObject({ role: 'follower', lead: 'n3', term: 3 });
  });
});

describe('pre-vote', () => {
  it('an isolated node does not inflate its term, and rejoining does not disrupt the leader', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.isolate('n3');
    for (let i = 0; i < 100; i++) c.tickAll();
    expect(c.node('n3').status().term).toBe(2);
    expect(c.node('n3').status().role).toBe('preCandidate');
    c.heal();
    for (let i = 0; i < 5; i++) c.tickAll();
    expect(c.leader()).toBe('n1');
    expect(c.node('n1').status().term).toBe(2);
    expect(c.node('n3').status()).toMatchObject({ role: 'follower', lead: 'n1' });
  });

  it('without pre-vote the same isolation bumps terms and deposes the leader', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { preVote: false });
    c.campaign('n1');
    c.isolate('n3');
    for (let i = 0; i < 50; i++) c.tickAll();
    expect(c.node('n3').status().term).toBeGreaterThan(2);
    c.heal();
    for (let i = 0; i < 40; i++) c.tickAll();
    // Someone else leads now, at a higher term.
    expect(c.node('n1').status().term).toBeGreaterThan(2);
  });

  it('a pre-vote changes neither the term nor the vote of the voter', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    const n2 = c.node('n2');
    n2.rn.step({ type: 'preVote', from: 'n1', to: 'n2', term: 2, lastIndex: 3, lastTerm: 1 });
    const rd = n2.rn.ready();
    n2.rn.advance();
    expect(rd.hardState).toBeUndefined();
    expect(rd.messages).toMatchObject([{ type: 'preVoteResp', term: 2, reject: false }]);
    expect(n2.status()).toMatchObject({ term: 1, vote: '' });
  });
});

describe('check-quorum and leader lease', () => {
  it('a leader cut off from the majority steps down; the majority elects a new one', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.isolate('n1');
    // Peers heard from during the current round still count for it, so the
    // step-down comes within two election timeouts.
    for (let i = 0; i < 19; i++) c.tick('n1');
    expect(c.node('n1').status().role).toBe('leader');
    c.tick('n1');
    expect(c.node('n1').status().role).toBe('follower');
    for (let i = 0; i < 40; i++) {
      c.tick('n2');
      c.tick('n3');
    }
    const newLeader = c.leader();
    expect(['n2', 'n3']).toContain(newLeader);
    c.heal();
    c.tickAll(3);
    expect(c.node('n1').status().lead).toBe(newLeader);
  });

  it('followers in lease ignore a vote request from a disruptive node', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { preVote: false });
    c.campaign('n1');
    c.node('n2').rn.step({ type: 'vote', from: 'n3', to: 'n2', term: 9, lastIndex: 100, lastTerm: 9, transfer: false });
    expect(c.node('n2').status()).toMatchObject({ term: 2, lead: 'n1', vote: 'n1' });
    // A transfer campaign is allowed through the lease.
    c.node('n2').rn.step({ type: 'vote', from: 'n3', to: 'n2', term: 9, lastIndex: 100, lastTerm: 9, transfer: true });
    expect(c.node('n2').status()).toMatchObject({ term: 9, vote: 'n3' });
  });

  it('a stale leader learns the new term from a follower and steps down', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { checkQuorum: false });
    c.campaign('n1');
    c.isolate('n1');
    c.campaign('n2');
    expect(c.node('n2').status()).toMatchObject({ role: 'leader', term: 3 });
    expect(c.node('n1').status()).toMatchObject({ role: 'leader', term: 2 });
    c.heal();
    c.tick('n1');
    expect(c.node('n1').status()).toMatchObject({ role: 'follower', term: 3 });
  });
});
