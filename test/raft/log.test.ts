// The log's building blocks: MemoryStorage, the unstable tail and RaftLog,
// including the corner cases a simulation reaches only by luck.

import { describe, expect, it } from 'vitest';
import { MemoryStorage, StorageError, limitSize, type Entry, type Snapshot } from '../../src/raft/core/index.js';
import { RaftLog } from '../../src/raft/core/raft-log.js';
import { Unstable } from '../../src/raft/core/unstable.js';

function ent(index: number, term: number, data = ''): Entry {
  return { index, term, type: 'normal', data: new TextEncoder().encode(data) };
}

function ents(from: number, terms: number[]): Entry[] {
  return terms.map((t, i) => ent(from + i, t));
}

const cs = { voters: ['a'], learners: [] };

function snap(index: number, term: number): Snapshot {
  return { meta: { index, term, confState: cs }, data: new Uint8Array(0) };
}

describe('MemoryStorage', () => {
  it('serves entries and terms within bounds and says why otherwise', () => {
    const s = new MemoryStorage();
    s.append(ents(1, [1, 1, 2, 3]));
    expect(s.firstIndex()).toBe(1);
    expect(s.lastIndex()).toBe(4);
    expect(s.term(0)).toBe(0);
    expect(s.term(3)).toBe(2);
    expect(s.entries(2, 4, Infinity).map((e) => e.index)).toEqual([2, 3]);
    expect(() => s.term(5)).toThrow(expect.objectContaining({ code: 'unavailable' }));
    expect(() => s.entries(2, 6, Infinity)).toThrow(expect.objectContaining({ code: 'unavailable' }));
    s.createSnapshot(2, cs);
    s.compact(2);
    expect(s.firstIndex()).toBe(3);
    expect(s.term(2)).toBe(1);
    expect(() => s.term(1)).toThrow(StorageError);
    expect(() => s.entries(2, 3, Infinity)).toThrow(expect.objectContaining({ code: 'compacted' }));
  });

  it('replaces a conflicting tail, skips compacted entries and refuses gaps', () => {
    const s = new MemoryStorage();
    s.append(ents(1, [1, 1, 1, 1]));
    s.append(ents(3, [2]));
    expect(s.lastIndex()).toBe(3);
    expect(s.term(3)).toBe(2);
    s.createSnapshot(2, cs);
    s.compact(2);
    s.append(ents(1, [1, 1, 2, 2]));
    expect(s.firstIndex()).toBe(3);
    expect(s.lastIndex()).toBe(4);
    expect(() => s.append(ents(7, [2]))).toThrow(/gap/);
  });

  it('bounds entries by bytes but always returns at least one', () => {
    const s = new MemoryStorage();
    s.append([ent(1, 1, 'x'.repeat(100)), ent(2, 1, 'y'), ent(3, 1, 'z')]);
    expect(s.entries(1, 4, 10)).toHaveLength(1);
    expect(s.entries(2, 4, 50)).toHaveLength(2);
    expect(limitSize([ent(1, 1, 'abc')], 0)).toHaveLength(1);
  });

  it('installs only newer snapshots', () => {
    const s = new MemoryStorage();
    s.applySnapshot(snap(5, 2));
    expect([s.firstIndex(), s.lastIndex(), s.term(5)]).toEqual([6, 5, 2]);
    expect(() => s.applySnapshot(snap(5, 2))).toThrow(expect.objectContaining({ code: 'snapshotOutOfDate' }));
    expect(s.initialState().confState).toEqual(cs);
  });
});

describe('Unstable', () => {
  it('keeps entries replaced after the Ready that carried the old ones', () => {
    const u = new Unstable(1);
    u.truncateAndAppend(ents(1, [1, 1, 1]));
    // A Ready hands out 1..3 (term 1); meanwhile a new leader replaces 2..3.
    u.truncateAndAppend(ents(2, [2, 2]));
    u.stableTo(3, 1);
    expect(u.offset).toBe(1);
    expect(u.entries.map((e) => e.term)).toEqual([1, 2, 2]);
    u.stableTo(3, 2);
    expect(u.offset).toBe(4);
    expect(u.entries).toEqual([]);
  });

  it('appends, replaces everything, or truncates in the middle', () => {
    const u = new Unstable(5);
    u.truncateAndAppend(ents(5, [1, 1]));
    u.truncateAndAppend(ents(7, [1]));
    expect(u.entries.map((e) => e.index)).toEqual([5, 6, 7]);
    u.truncateAndAppend(ents(6, [2]));
    expect(u.entries.map((e) => `${e.index}/${e.term}`)).toEqual(['5/1', '6/2']);
    u.truncateAndAppend(ents(3, [3]));
    expect(u.offset).toBe(3);
    expect(u.entries.map((e) => `${e.index}/${e.term}`)).toEqual(['3/3']);
  });

  it('answers for a pending snapshot until it is persisted', () => {
    const u = new Unstable(1);
    u.restore(snap(10, 4));
    expect([u.maybeFirstIndex(), u.maybeLastIndex(), u.maybeTerm(10), u.maybeTerm(9)]).toEqual([11, 10, 4, undefined]);
    u.stableSnapTo(9);
    expect(u.snapshot).toBeDefined();
    u.stableSnapTo(10);
    expect(u.snapshot).toBeUndefined();
  });
});

describe('RaftLog', () => {
  function log(terms: number[], maxApplyBytes = Infinity): RaftLog {
    const s = new MemoryStorage();
    s.append(ents(1, terms));
    return new RaftLog(s, maxApplyBytes);
  }

  it('appends only after a matching (prevIndex, prevTerm)', () => {
    const l = log([1, 1, 2]);
    expect(l.maybeAppend(3, 1, 0, ents(4, [3]))).toBeUndefined();
    expect(l.maybeAppend(4, 2, 0, [])).toBeUndefined();
    expect(l.maybeAppend(3, 2, 0, ents(4, [3]))).toBe(4);
    expect(l.lastIndex()).toBe(4);
  });

  it('truncates a conflicting uncommitted tail but never a committed entry', () => {
    const l = log([1, 1, 2, 2]);
    expect(l.maybeAppend(2, 1, 2, ents(3, [3]))).toBe(3);
    expect([l.lastIndex(), l.term(3), l.committed]).toEqual([3, 3, 2]);
    expect(() => l.maybeAppend(1, 1, 0, ents(2, [4]))).toThrow(/committed/);
  });

  it('commits no further than the message vouches for, whatever the leader commit', () => {
    const l = log([1, 1, 1, 1, 1]);
    // Entries 4..5 may be a stale tail: the leader only vouched for 1..3.
    expect(l.maybeAppend(2, 1, 5, ents(3, [1]))).toBe(3);
    expect(l.committed).toBe(3);
  });

  it('finds where a divergent log may still match, a term at a time', () => {
    const l = log([1, 1, 1, 4, 4, 5, 5, 6]);
    expect(l.findConflictByTerm(8, 6)).toEqual({ index: 8, term: 6 });
    expect(l.findConflictByTerm(8, 5)).toEqual({ index: 7, term: 5 });
    expect(l.findConflictByTerm(8, 3)).toEqual({ index: 3, term: 1 });
    expect(l.findConflictByTerm(8, 0)).toEqual({ index: 0, term: 0 });
  });

  it('reads across storage and unstable entries, bounded by bytes', () => {
    const l = log([1, 1]);
    l.append([ent(3, 2, 'x'.repeat(10)), ent(4, 2, 'y'.repeat(10))]);
    expect(l.slice(1, 5, Infinity)!.map((e) => e.index)).toEqual([1, 2, 3, 4]);
    expect(l.slice(2, 5, 24 + 24 + 34)!.map((e) => e.index)).toEqual([2, 3]);
    expect(l.persistedLastIndex()).toBe(2);
    expect(l.entries(5, Infinity)).toEqual([]);
  });

  it('says compacted instead of throwing when entries are gone', () => {
    const s = new MemoryStorage();
    s.append(ents(1, [1, 1, 1, 1]));
    s.createSnapshot(3, cs);
    s.compact(3);
    const l = new RaftLog(s, Infinity);
    expect(l.term(2)).toBeUndefined();
    expect(l.term(3)).toBe(1);
    expect(l.slice(2, 5, Infinity)).toBeUndefined();
  });

  it('hands out committed entries in bounded batches, none while a snapshot is pending', () => {
    const l = log([1, 1, 1, 1], 24 * 2);
    l.commitTo(4);
    expect(l.nextCommittedEntries().map((e) => e.index)).toEqual([1, 2]);
    l.appliedTo(2);
    expect(l.nextCommittedEntries().map((e) => e.index)).toEqual([3, 4]);
    l.restore(snap(9, 2));
    expect(l.hasNextCommittedEntries()).toBe(false);
    expect(l.committed).toBe(9);
  });

  it('commits by count only an entry of the given term', () => {
    const l = log([1, 2, 2]);
    expect(l.maybeCommit(2, 3)).toBe(false);
    expect(l.maybeCommit(2, 2)).toBe(true);
    expect(l.committed).toBe(2);
  });

  it('compares logs by last term, then by length', () => {
    const l = log([1, 2, 2]);
    expect(l.isUpToDate(1, 3)).toBe(true);
    expect(l.isUpToDate(3, 2)).toBe(true);
    expect(l.isUpToDate(2, 2)).toBe(false);
    expect(l.isUpToDate(9, 1)).toBe(false);
  });
});
