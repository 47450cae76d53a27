// Log replication and commitment (Raft §5.3, §5.4): log matching, leader
// completeness, commit only by current-term majority (figure 8), fast
// backtracking, byte-bounded batches and the in-flight window.

import { describe, expect, it } from 'vitest';
import { ProposalError, type Entry, type Message } from '../../src/raft/core/index.js';
import { TestCluster, bytes, text, type TestNode } from './helpers.js';

function logOf(n: TestNode): Entry[] {
  const s = n.storage;
  return s.entries(s.firstIndex(), s.lastIndex() + 1, Infinity);
}

function termsOf(n: TestNode): number[] {
  return logOf(n).map((e) => e.term);
}

describe('replication', () => {
  it('replicates, commits and applies proposals in order on every node', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    for (let i = 0; i < 5; i++) c.propose('n1', `v${i}`);
    for (const n of c.nodes.values()) {
      expect(n.applied).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
      expect(n.status().commit).toBe(9);
    }
  });

  it('refuses proposals on a follower and names the leader', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    let err: unknown;
    try {
      c.node('n2').rn.propose(bytes('x'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProposalError);
    expect(err).toMatchObject({ code: 'notLeader', leaderHint: 'n1' });
  });

  it('commits only after the entry is persisted: a lone leader needs advance() first', () => {
    const c = new TestCluster(['n1']);
    c.campaign('n1');
    const n1 = c.node('n1');
    const { index } = n1.rn.propose(bytes('a'));
    const rd = n1.rn.ready();
    expect(rd.entries.map((e) => e.index)).toEqual([index]);
    expect(rd.committedEntries).toEqual([]);
    expect(n1.status().commit).toBe(index - 1);
    n1.handleReady(rd);
    expect(n1.status().commit).toBe(index);
    const next = n1.rn.ready();
    expect(next.committedEntries.map((e) => text(e.data))).toEqual(['a']);
    n1.handleReady(next);
  });

  it('does not commit without a majority, and does once one follower answers', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.isolate('n1');
    const { index } = c.propose('n1', 'x');
    expect(c.node('n1').status().commit).toBe(index - 1);
    c.heal();
    c.partition('n1', 'n3');
    c.tick('n1');
    expect(c.node('n1').status().commit).toBe(index);
    expect(c.node('n2').applied).toEqual(['x']);
  });

  it('overwrites a deposed leader\'s uncommitted entries (log matching)', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { checkQuorum: false });
    c.campaign('n1');
    c.propose('n1', 'committed');
    c.isolate('n1');
    c.propose('n1', 'lost-1');
    c.propose('n1', 'lost-2');
    c.campaign('n2');
    c.propose('n2', 'kept');
    c.heal();
    c.tickAll(2);
    const logs = [...c.nodes.values()].map((n) => logOf(n).map((e) => `${e.index}/${e.term}/${text(e.data)}`));
    expect(logs[0]).toEqual(logs[1]);
    expect(logs[1]).toEqual(logs[2]);
    for (const n of c.nodes.values()) expect(n.applied).toEqual(['committed', 'kept']);
  });

  it('a new leader holds every committed entry (leader completeness)', () => {
    const c = new TestCluster(['n1', 'n2', 'n3', 'n4', 'n5'], { checkQuorum: false });
    c.campaign('n1');
    // Reach only n2 and n3: still a majority.
    c.partition('n1', 'n4');
    c.partition('n1', 'n5');
    const { index } = c.propose('n1', 'x');
    expect(c.node('n1').status().commit).toBe(index);
    expect(c.node('n4').storage.lastIndex()).toBeLessThan(index);
    c.heal();
    c.isolate('n1');
    // n4 and n5 lack the entry: they cannot win, whoever campaigns first.
    c.campaign('n4');
    expect(c.node('n4').status().role).not.toBe('leader');
    c.campaign('n2');
    expect(c.node('n2').status().role).toBe('leader');
    c.tick('n2');
    for (const id of ['n2', 'n3', 'n4', 'n5']) expect(c.node(id).applied).toEqual(['x']);
  });
});

describe('figure 8: entries of earlier terms do not commit by counting replicas', () => {
  // One entry per message, so a test can let an old-term entry through while
  // holding back the new leader's no-op.
  const opts = { checkQuorum: false, preVote: false, maxSizePerMsg: 1 };

  function setup(): { c: TestCluster; x: number } {
    const c = new TestCluster(['n1', 'n2', 'n3', 'n4', 'n5'], opts);
    c.campaign('n1'); // term 2
    // (a) n1 replicates x only to n2.
    for (const id of ['n3', 'n4', 'n5']) c.partition('n1', id);
    const { index: x } = c.propose('n1', 'x');
    expect(termsOf(c.node('n2'))[x - 1]).toBe(2);
    // (b) n1 crashes; n5 wins term 3 with n3 and n4, appends its no-op at x, then goes.
    c.isolate('n1');
    c.node('n1').restart();
    c.drop((m) => m.from === 'n5' && m.type === 'app');
    c.campaign('n5');
    expect(c.node('n5').status()).toMatchObject({ role: 'leader', term: 3 });
    c.heal();
    c.node('n5').restart();
    // (c) n1 is back and wins term 4 with n2 and n3; its term-4 no-op is held back.
    c.isolate('n5');
    // Hold back any append that would actually deliver a term-4 entry (one the
    // recipient's log matches); probes that will be rejected still go through.
    c.drop((m) => {
      if (m.type !== 'app' || !m.entries.some((e) => e.term === 4)) return false;
      const s = c.node(m.to).storage;
      return s.lastIndex() >= m.prevIndex && s.term(m.prevIndex) === m.prevTerm;
    });
    c.campaign('n1');
    if (c.node('n1').status().role !== 'leader') c.campaign('n1');
    expect(c.node('n1').status()).toMatchObject({ role: 'leader', term: 4 });
    return { c, x };
  }

  it('x on a majority but from term 2 is not committed, and may be overwritten', () => {
    const { c, x } = setup();
    c.tick('n1');
    const holders = ['n1', 'n2', 'n3', 'n4'].filter((id) => {
      const s = c.node(id).storage;
      return s.lastIndex() >= x && s.term(x) === 2;
    });
    expect(holders.length).toBeGreaterThanOrEqual(3);
    for (const n of c.nodes.values()) expect(n.status().commit).toBeLessThan(x);
    // (d) n1 fails; n5 wins (last term 3 beats 2) and replaces x everywhere.
    c.heal();
    c.isolate('n1');
    c.node('n1').restart();
    // Term 4 is taken (everyone voted for n1), so n5 wins term 5.
    c.campaign('n5');
    if (c.node('n5').status().role !== 'leader') c.campaign('n5');
    expect(c.node('n5').status()).toMatchObject({ role: 'leader', term: 5 });
    c.tick('n5');
    for (const id of ['n2', 'n3', 'n4', 'n5']) {
      expect(c.node(id).storage.term(x)).toBe(3);
      expect(c.node(id).status().commit).toBeGreaterThanOrEqual(x);
      expect(c.node(id).applied).toEqual([]);
    }
  });

  it('once an entry of the leader\'s term reaches a majority, x commits with it', () => {
    const { c, x } = setup();
    c.heal();
    c.isolate('n5');
    c.tick('n1');
    expect(c.node('n1').status().commit).toBeGreaterThan(x);
    // (e) now n5 can never win: a majority's last term is 4.
    c.heal();
    c.isolate('n1');
    c.node('n1').restart();
    c.campaign('n5');
    expect(c.node('n5').status().role).not.toBe('leader');
    for (const id of ['n1', 'n2', 'n3']) expect(c.node(id).applied).toEqual(['x']);
  });
});

describe('flow control', () => {
  it('backtracks a long divergent follower log in a few round trips', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { checkQuorum: false });
    c.campaign('n1');
    c.isolate('n1');
    // 50 uncommitted term-2 entries on the old leader.
    for (let i = 0; i < 50; i++) c.node('n1').rn.propose(bytes(`old${i}`));
    c.stabilize();
    c.campaign('n2');
    for (let i = 0; i < 30; i++) c.node('n2').rn.propose(bytes(`new${i}`));
    c.stabilize();
    c.heal();
    c.delivered = [];
    c.tick('n2');
    const rejects = c.delivered.filter((m) => m.type === 'appResp' && m.from === 'n1' && m.reject);
    expect(rejects.length).toBeLessThanOrEqual(2);
    expect(c.node('n1').applied).toEqual(c.node('n2').applied);
    expect(c.node('n1').applied).toHaveLength(30);
  });

  it('bounds each append by maxSizePerMsg (but sends at least one entry)', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { maxSizePerMsg: 300 });
    c.campaign('n1');
    c.partition('n1', 'n2');
    for (let i = 0; i < 10; i++) c.propose('n1', 'x'.repeat(100));
    c.node('n1').rn.propose(bytes('y'.repeat(1000)));
    c.stabilize();
    c.heal();
    c.delivered = [];
    c.tick('n1');
    const apps = c.delivered.filter((m): m is Extract<Message, { type: 'app' }> => m.type === 'app' && m.to === 'n2');
    expect(apps.some((m) => m.entries.length > 0)).toBe(true);
    for (const m of apps) {
      const size = m.entries.reduce((s, e) => s + e.data.byteLength + 24, 0);
      expect(size <= 300 || m.entries.length === 1).toBe(true);
    }
    expect(c.node('n2').applied).toHaveLength(11);
  });

  it('caps appends in flight to a follower that stops answering', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { maxInflightMsgs: 2 });
    c.campaign('n1');
    expect(c.node('n1').status().progress.n2!.state).toBe('replicate');
    c.drop((m) => m.from === 'n2');
    c.delivered = [];
    for (let i = 0; i < 6; i++) c.propose('n1', `v${i}`);
    const withEntries = c.delivered.filter((m) => m.type === 'app' && m.to === 'n2' && m.entries.length > 0);
    expect(withEntries).toHaveLength(2);
    expect(c.node('n1').status().progress.n2!.inflight).toBe(2);
    // The quorum (n1, n3) is unaffected.
    expect(c.node('n3').applied).toHaveLength(6);
  });

  it('refuses proposals beyond maxUncommittedEntriesSize', () => {
    const c = new TestCluster(['n1', 'n2', 'n3'], { maxUncommittedEntriesSize: 250 });
    c.campaign('n1');
    c.isolate('n1');
    c.propose('n1', 'a'.repeat(200));
    expect(() => c.propose('n1', 'b'.repeat(100))).toThrow(expect.objectContaining({ code: 'tooManyUncommitted' }));
    c.heal();
    c.tick('n1');
    // Once applied, room is freed.
    c.propose('n1', 'c'.repeat(100));
    expect(c.node('n2').applied).toHaveLength(2);
  });

  it('a follower that lost appends is moved back to probe and caught up', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.drop((m) => m.to === 'n3' && m.type === 'app');
    for (let i = 0; i < 3; i++) c.propose('n1', `v${i}`);
    c.heal();
    c.node('n1').rn.reportUnreachable('n3');
    expect(c.node('n1').status().progress.n3!.state).toBe('probe');
    c.tick('n1');
    expect(c.node('n3').applied).toEqual(['v0', 'v1', 'v2']);
    expect(c.node('n1').status().progress.n3).toMatchObject({ state: 'replicate', match: 7 });
  });
});
