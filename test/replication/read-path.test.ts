// The pieces of the read path that decide without I/O: the read index batching, the
// balancer's health check, and when the leader lets a batch's finish into the log.

import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type { ReadState } from '../../src/raft/core/index.js';
import type { Contact } from '../../src/raft/driver.js';
import { ReadIndexer } from '../../src/replication/read-index.js';
import { ProcessingReports } from '../../src/replication/processing-reports.js';
import { ReplicaHealth, type HealthSources } from '../../src/replication/replica-health.js';

class FakeDriver extends EventEmitter<{ readState: [ReadState] }> {
  asked: number[] = [];
  readIndex(ctx: number): void {
    this.asked.push(ctx);
  }
  answer(ctx: number, index: number): void {
    this.emit('readState', { ctx, index });
  }
}

describe('read index batching', () => {
  it('asks once for the reads that arrive together, and once more for those that came meanwhile', async () => {
    const d = new FakeDriver();
    const r = new ReadIndexer(d, 10_000);
    const first = [r.readIndex(1000), r.readIndex(1000)];
    await new Promise((resolve) => setImmediate(resolve));
    expect(d.asked).toEqual([1]);
    const later = r.readIndex(1000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(d.asked).toEqual([1]);
    d.answer(1, 7);
    expect(await Promise.all(first)).toEqual([7, 7]);
    // The read that arrived after the first request left needs a request of its own.
    expect(d.asked).toEqual([1, 2]);
    d.answer(2, 9);
    expect(await later).toBe(9);
    r.close();
  });

  it('asks again when no answer comes, and still takes a late answer to the first request', async () => {
    vi.useFakeTimers();
    try {
      const d = new FakeDriver();
      const r = new ReadIndexer(d, 300);
      const early = r.readIndex(5000);
      vi.advanceTimersByTime(1);
      expect(d.asked).toEqual([1]);
      vi.advanceTimersByTime(300);
      expect(d.asked).toEqual([1, 2]);
      const late = r.readIndex(5000);
      vi.advanceTimersByTime(301);
      expect(d.asked).toEqual([1, 2, 3]);
      // The answer to request 1 holds for the read that was waiting then, not for the later one.
      d.answer(1, 4);
      expect(await early).toBe(4);
      d.answer(3, 5);
      expect(await late).toBe(5);
      r.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('gives up after the bound of the read', async () => {
    vi.useFakeTimers();
    try {
      const d = new FakeDriver();
      const r = new ReadIndexer(d, 100);
      const read = r.readIndex(250);
      vi.advanceTimersByTime(260);
      expect(await read).toBeNull();
      r.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

function health(over: Partial<HealthSources> & { commit?: number; applied?: number; role?: 'leader' | 'follower' | 'preCandidate'; lead?: string } = {}) {
  const contact: Contact & { lastHeard: Map<string, number> } = { lastHeard: new Map(), leader: null, leaderCommit: 0 };
  const st = { commit: over.commit ?? 10, applied: over.applied ?? 10, role: over.role ?? 'follower', lead: over.lead ?? 'n1' };
  const src: HealthSources = {
    nodeId: 'n2',
    raft: () => ({ role: st.role, lead: st.lead, commit: st.commit, confState: { voters: ['n1', 'n2', 'n3'], learners: [] } }),
    contact,
    appliedIndex: () => st.applied,
    reflectedIndex: () => st.applied,
    dueBatches: () => [],
    removed: () => false,
    ...over,
  };
  return { h: new ReplicaHealth(src, { maxLagEntries: 100, maxLagMs: 3000, contactMs: 1500 }), contact, st };
}

describe('the balancer health check', () => {
  it('is ready while the leader is heard from and the node keeps up', () => {
    const { h, contact } = health();
    contact.leader = { id: 'n1', term: 2, at: 1000 };
    expect(h.readiness(1500, 0)).toEqual({ ready: true, lag: { entries: 0, ms: 0 } });
  });

  it('fails once the leader is silent for longer than the bound, or when no leader is known', () => {
    const { h, contact, st } = health();
    contact.leader = { id: 'n1', term: 2, at: 1000 };
    const r = h.readiness(2600, 0);
    expect(r.ready).toBe(false);
    expect(!r.ready && r.reason).toMatch(/has not heard from leader `n1` for 1\.6 s: it cannot reach a quorum/);
    st.role = 'preCandidate';
    st.lead = '';
    const none = h.readiness(2600, 0);
    expect(!none.ready && none.reason).toMatch(/knows no leader/);
  });

  it('fails on a leader that hears from no majority', () => {
    const { h, contact } = health({ nodeId: 'n1', role: 'leader', lead: 'n1' });
    contact.lastHeard.set('n2', 100);
    contact.lastHeard.set('n3', 1000);
    expect(h.readiness(1200, 0).ready).toBe(true);
    const r = h.readiness(2700, 0);
    expect(!r.ready && r.reason).toMatch(/heard from only 1 of the 3 voters/);
  });

  it('measures lag in entries and in time, and fails beyond either bound', () => {
    const { h, contact, st } = health({ applied: 10 });
    contact.leader = { id: 'n1', term: 2, at: 0 };
    contact.leaderCommit = 50;
    h.sample(0);
    contact.leader.at = 3500;
    expect(h.readiness(3500, 0)).toMatchObject({ ready: false, lag: { entries: 40, ms: 3500 } });
    st.applied = 50;
    expect(h.readiness(3600, 0)).toEqual({ ready: true, lag: { entries: 0, ms: 0 } });
    contact.leaderCommit = 400;
    const r = h.readiness(3700, 0);
    expect(!r.ready && r.reason).toMatch(/350 log entries behind the leader \(bound: 100/);
  });

  it('counts the time since the leader finished a batch this node has yet to process', () => {
    const { h, contact } = health({ dueBatches: () => [10_000] });
    contact.leader = { id: 'n1', term: 2, at: 0 };
    const r = h.readiness(100, 14_000);
    expect(r.lag.ms).toBe(4000);
    expect(!r.ready && r.reason).toMatch(/4000 ms behind the leader/);
  });
});

describe('settling a batch once the members have it', () => {
  function reports() {
    const heard = new Map<string, number>();
    const onReport = vi.fn();
    const p = new ProcessingReports(
      {
        nodeId: 'n1',
        isLeader: () => true,
        leaderId: () => 'n1',
        others: () => ['n2', 'n3'],
        lastHeard: (id) => heard.get(id),
        nextUnprocessed: () => 0,
        send: async () => {},
        onReport,
      },
      { contactMs: 1500, maxWaitMs: 3000 },
    );
    return { p, heard, onReport };
  }

  it('waits for every member in touch, and for no other', () => {
    const { p, heard, onReport } = reports();
    const now = performance.now();
    heard.set('n2', now);
    heard.set('n3', now - 10_000); // out of touch
    expect(p.waitFor(4, 1_000, 1_500)).toBe(2500);
    p.received('n2', 5);
    expect(onReport).toHaveBeenCalledTimes(1);
    expect(p.waitFor(4, 1_000, 1_500)).toBe(0);
    expect(p.waitFor(5, 1_000, 1_500)).toBe(2500);
  });

  it('settles anyway once the leader finished it long enough ago', () => {
    const { p, heard } = reports();
    heard.set('n2', performance.now());
    expect(p.waitFor(4, 1_000, 4_000)).toBe(0);
  });

  it('forgets the reports made to an earlier leader', () => {
    const { p, heard } = reports();
    heard.set('n2', performance.now());
    p.received('n2', 9);
    p.reset();
    expect(p.waitFor(4, 1_000, 1_100)).toBeGreaterThan(0);
  });
});
