// The driver's contract with RawNode (Ready / advance, stepping while a Ready
// is being persisted, status), and the leader's bookkeeping per follower.

import { describe, expect, it } from 'vitest';
import { MemoryStorage, RawNode, mulberry32, type Entry } from '../../src/raft/core/index.js';
import { Inflights, Progress } from '../../src/raft/core/progress.js';
import { ProgressTracker } from '../../src/raft/core/tracker.js';
import { TestCluster, bytes } from './helpers.js';

function follower(): { rn: RawNode; storage: MemoryStorage } {
  const storage = new MemoryStorage();
  const rn = new RawNode({ id: 'b', storage, rand: mulberry32(1) });
  rn.bootstrap(['a', 'b', 'c']);
  const rd = rn.ready();
  storage.append(rd.entries);
  storage.setHardState(rd.hardState!);
  rn.advance();
  return { rn, storage };
}

function e(index: number, term: number): Entry {
  return { index, term, type: 'normal', data: bytes(`${index}/${term}`) };
}

describe('RawNode contract', () => {
  it('insists on ready() then advance()', () => {
    const { rn } = follower();
    expect(() => rn.advance()).toThrow(/without a Ready/);
    rn.step({ type: 'heartbeat', from: 'a', to: 'b', term: 2, commit: 0, ctx: 0, lease: 0, leaseMs: 0 });
    rn.ready();
    expect(rn.hasReady()).toBe(false);
    expect(() => rn.ready()).toThrow(/before advance/);
    rn.advance();
    expect(rn.readyIfAny()).toBeUndefined();
  });

  it('ignores a message addressed to another node', () => {
    const { rn } = follower();
    rn.step({ type: 'heartbeat', from: 'a', to: 'c', term: 7, commit: 0, ctx: 0, lease: 0, leaseMs: 0 });
    expect(rn.status().term).toBe(1);
  });

  it('keeps stepping while a Ready is persisted; replaced entries come back in the next Ready', () => {
    const { rn, storage } = follower();
    rn.step({ type: 'app', from: 'a', to: 'b', term: 2, prevIndex: 3, prevTerm: 1, entries: [e(4, 2), e(5, 2)], commit: 3 });
    const first = rn.ready();
    expect(first.entries.map((x) => x.index)).toEqual([4, 5]);
    // While the driver writes 4..5, a new leader replaces 5.
    rn.step({ type: 'app', from: 'c', to: 'b', term: 3, prevIndex: 4, prevTerm: 2, entries: [e(5, 3)], commit: 3 });
    storage.append(first.entries);
    storage.setHardState(first.hardState!);
    rn.advance();
    const second = rn.ready();
    // (4 may be written again: harmless, it is the same entry.)
    expect(second.entries[second.entries.length - 1]).toEqual(e(5, 3));
    // The ack for the replacement goes out only with the Ready that persists it.
    expect(second.messages).toMatchObject([{ type: 'appResp', to: 'c', index: 5, reject: false }]);
    expect(first.messages.every((m) => m.to === 'a')).toBe(true);
    storage.append(second.entries);
    rn.advance();
    expect(storage.term(5)).toBe(3);
  });

  it('marks what needs an fsync', () => {
    const { rn, storage } = follower();
    rn.step({ type: 'app', from: 'a', to: 'b', term: 2, prevIndex: 3, prevTerm: 1, entries: [], commit: 3 });
    const rd = rn.ready();
    expect(rd.mustSync).toBe(true); // the term changed
    rn.advance();
    rn.step({ type: 'app', from: 'a', to: 'b', term: 2, prevIndex: 3, prevTerm: 1, entries: [e(4, 2)], commit: 3 });
    const withEntries = rn.ready();
    expect(withEntries.mustSync).toBe(true);
    storage.append(withEntries.entries);
    rn.advance();
    rn.step({ type: 'heartbeat', from: 'a', to: 'b', term: 2, commit: 4, ctx: 0, lease: 0, leaseMs: 0 });
    const commitOnly = rn.ready();
    expect(commitOnly.hardState?.commit).toBe(4);
    expect(commitOnly.mustSync).toBe(false);
    rn.advance();
  });

  it('reports the leader\'s view of every peer for lag metrics', () => {
    const c = new TestCluster(['n1', 'n2', 'n3']);
    c.campaign('n1');
    c.isolate('n3');
    c.propose('n1', 'a');
    const st = c.node('n1').status();
    expect(st).toMatchObject({ id: 'n1', role: 'leader', lead: 'n1', term: 2, commit: 5, applied: 5, lastIndex: 5 });
    expect(st.progress.n1).toMatchObject({ match: 5, state: 'replicate' });
    expect(st.progress.n2).toMatchObject({ match: 5, next: 6, state: 'replicate', isLearner: false });
    expect(st.progress.n3!.match).toBe(4);
    expect(c.node('n2').status().progress).toEqual({});
  });

  it('validates its configuration', () => {
    const storage = new MemoryStorage();
    expect(() => new RawNode({ id: '', storage })).toThrow(/id/);
    expect(() => new RawNode({ id: 'a', storage, electionTick: 2, heartbeatTick: 2 })).toThrow(/electionTick/);
    expect(() => new RawNode({ id: 'a', storage, applied: 3 })).toThrow(/applied/);
    const rn = new RawNode({ id: 'a', storage });
    rn.bootstrap(['a']);
    expect(() => rn.bootstrap(['a'])).toThrow(/empty/);
  });
});

describe('progress', () => {
  it('ignores stale rejections and backs off to the hint in probe state', () => {
    const pr = new Progress(11, 4, false);
    pr.match = 5;
    expect(pr.maybeDecrTo(9, 3)).toBe(false); // not the probe we sent (next - 1 = 10)
    expect(pr.maybeDecrTo(10, 7)).toBe(true);
    expect(pr.next).toBe(8);
    expect(pr.maybeDecrTo(7, 2)).toBe(true);
    expect(pr.next).toBe(6); // never below match + 1
    pr.becomeReplicate();
    expect(pr.maybeDecrTo(5, 0)).toBe(false); // below match: reordered
    expect(pr.maybeDecrTo(6, 0)).toBe(true);
    expect(pr.next).toBe(6);
  });

  it('pauses: one probe at a time, a full window, or a snapshot in flight', () => {
    const pr = new Progress(1, 2, false);
    expect(pr.isPaused()).toBe(false);
    pr.probeSent = true;
    expect(pr.isPaused()).toBe(true);
    pr.maybeUpdate(3);
    expect(pr.isPaused()).toBe(false);
    pr.becomeReplicate();
    pr.inflights.add(4);
    pr.inflights.add(5);
    expect(pr.isPaused()).toBe(true);
    pr.inflights.freeLE(4);
    expect(pr.isPaused()).toBe(false);
    pr.becomeSnapshot(20);
    expect(pr.isPaused()).toBe(true);
    pr.becomeProbe();
    expect(pr.next).toBe(21);
  });

  it('keeps a bounded FIFO of in-flight appends', () => {
    const inf = new Inflights(3);
    inf.add(1);
    inf.add(5);
    inf.add(9);
    expect(inf.full()).toBe(true);
    expect(() => inf.add(10)).toThrow();
    inf.freeLE(5);
    expect(inf.count).toBe(1);
    inf.freeFirstOne();
    expect(inf.count).toBe(0);
    for (let i = 0; i < 500; i++) {
      inf.add(i);
      inf.freeLE(i);
    }
    expect(inf.count).toBe(0);
  });

  it('counts quorums over voters only', () => {
    const t = new ProgressTracker(4);
    t.setConfState({ voters: ['a', 'b', 'c', 'd', 'e'], learners: ['l'] }, 1);
    const matches: Record<string, number> = { a: 9, b: 7, c: 5, d: 3, e: 1, l: 100 };
    for (const [id, m] of Object.entries(matches)) t.progress.get(id)!.match = m;
    expect(t.committed()).toBe(5);
    t.recordVote('a', true);
    t.recordVote('l', true);
    t.recordVote('b', true);
    expect(t.tallyVotes().result).toBe('pending');
    t.recordVote('c', false);
    t.recordVote('c', true); // first answer counts
    t.recordVote('d', false);
    expect(t.tallyVotes()).toEqual({ granted: 2, rejected: 2, result: 'pending' });
    t.recordVote('e', false);
    expect(t.tallyVotes().result).toBe('lost');
    for (const pr of t.progress.values()) pr.recentActive = false;
    t.progress.get('b')!.recentActive = true;
    t.progress.get('l')!.recentActive = true;
    expect(t.quorumActive('a')).toBe(false);
    t.progress.get('c')!.recentActive = true;
    expect(t.quorumActive('a')).toBe(true);
  });
});
