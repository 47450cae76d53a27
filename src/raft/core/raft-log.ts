// The log as one sequence: stable entries in Storage followed by unstable ones
// held here until persisted, with the commit and apply cursors.

import { RaftInvariantError, isStorageError } from './errors.js';
import { limitSize, type Storage } from './storage.js';
import { Unstable } from './unstable.js';
import type { Entry, Snapshot } from './types.js';

export class RaftLog {
  readonly storage: Storage;
  readonly unstable: Unstable;
  /** Highest index known to be stored durably on a quorum. */
  committed: number;
  /** Highest index handed to the application (and acknowledged by advance()). */
  applied: number;
  /** Upper bound on the bytes of committed entries handed out in one Ready. */
  readonly maxApplyBytes: number;

  constructor(storage: Storage, maxApplyBytes: number) {
    this.storage = storage;
    this.maxApplyBytes = maxApplyBytes;
    const first = storage.firstIndex();
    this.unstable = new Unstable(storage.lastIndex() + 1);
    this.committed = first - 1;
    this.applied = first - 1;
  }

  firstIndex(): number {
    return this.unstable.maybeFirstIndex() ?? this.storage.firstIndex();
  }

  lastIndex(): number {
    return this.unstable.maybeLastIndex() ?? this.storage.lastIndex();
  }

  lastTerm(): number {
    const t = this.term(this.lastIndex());
    if (t === undefined) throw new RaftInvariantError(`no term for last index ${this.lastIndex()}`);
    return t;
  }

  /**
   * Term of entry i, or undefined when it is compacted (i < firstIndex() - 1)
   * or not in the log.
   */
  term(i: number): number | undefined {
    const dummyIndex = this.firstIndex() - 1;
    if (i < dummyIndex || i > this.lastIndex()) return undefined;
    const t = this.unstable.maybeTerm(i);
    if (t !== undefined) return t;
    try {
      return this.storage.term(i);
    } catch (e) {
      if (isStorageError(e, 'compacted') || isStorageError(e, 'unavailable')) return undefined;
      throw e;
    }
  }

  matchTerm(i: number, t: number): boolean {
    return this.term(i) === t;
  }

  /**
   * Last index durably stored locally (entries shadowed by unstable ones are
   * stale and do not count). A leader counts itself towards a quorum only up
   * to here, so "committed" always means durable on a majority.
   */
  persistedLastIndex(): number {
    if (this.unstable.snapshot) return 0;
    if (this.unstable.entries.length > 0) return this.unstable.offset - 1;
    return this.storage.lastIndex();
  }

  /**
   * AppendEntries from a leader: if our log has (prevIndex, prevTerm), append
   * what is new, truncating a conflicting uncommitted tail, and advance commit
   * up to what the message vouches for. Returns the last index now known to
   * match the leader, or undefined when the log does not match at prevIndex.
   */
  maybeAppend(prevIndex: number, prevTerm: number, committed: number, ents: Entry[]): number | undefined {
    if (!this.matchTerm(prevIndex, prevTerm)) return undefined;
    const lastNew = prevIndex + ents.length;
    const ci = this.findConflict(ents);
    if (ci !== 0) {
      if (ci <= this.committed) {
        throw new RaftInvariantError(`entry ${ci} conflicts with committed entry (committed ${this.committed})`);
      }
      this.append(ents.slice(ci - (prevIndex + 1)));
    }
    // Entries past lastNew are not vouched for by this message: they may be a
    // stale tail from an older leader, so they must not be committed here.
    this.commitTo(Math.min(committed, lastNew));
    return lastNew;
  }

  append(ents: Entry[]): number {
    if (ents.length === 0) return this.lastIndex();
    const after = ents[0]!.index - 1;
    if (after < this.committed) {
      throw new RaftInvariantError(`append after ${after} is below committed ${this.committed}`);
    }
    this.unstable.truncateAndAppend(ents);
    return this.lastIndex();
  }

  /** Index of the first entry whose term differs from ours (or that we lack); 0 if none. */
  findConflict(ents: Entry[]): number {
    for (const e of ents) {
      if (!this.matchTerm(e.index, e.term)) return e.index;
    }
    return 0;
  }

  /**
   * The largest index <= `index` whose term is <= `term`, with that term; used
   * on both sides of a rejected append to skip a whole divergent term at once.
   * When the term is unknown (compacted), returns (index, 0).
   */
  findConflictByTerm(index: number, term: number): { index: number; term: number } {
    for (let i = index; i > 0; i--) {
      const t = this.term(i);
      if (t === undefined) return { index: i, term: 0 };
      if (t <= term) return { index: i, term: t };
    }
    return { index: 0, term: 0 };
  }

  commitTo(c: number): void {
    if (c <= this.committed) return;
    if (c > this.lastIndex()) {
      throw new RaftInvariantError(`commit ${c} is beyond last index ${this.lastIndex()}`);
    }
    this.committed = c;
  }

  /** Commit up to `maxIndex` only if that entry is from `term` (the leader's own term). */
  maybeCommit(maxIndex: number, term: number): boolean {
    if (maxIndex > this.committed && this.term(maxIndex) === term) {
      this.commitTo(maxIndex);
      return true;
    }
    return false;
  }

  appliedTo(i: number): void {
    if (i === 0) return;
    if (i > this.committed || i < this.applied) {
      throw new RaftInvariantError(`applied ${i} outside [${this.applied}, ${this.committed}]`);
    }
    this.applied = i;
  }

  isUpToDate(lastIndex: number, lastTerm: number): boolean {
    const ourTerm = this.lastTerm();
    return lastTerm > ourTerm || (lastTerm === ourTerm && lastIndex >= this.lastIndex());
  }

  hasPendingSnapshot(): boolean {
    return this.unstable.snapshot !== undefined;
  }

  snapshot(): Snapshot | null {
    return this.unstable.snapshot ?? this.storage.snapshot();
  }

  restore(s: Snapshot): void {
    this.committed = s.meta.index;
    this.unstable.restore(s);
  }

  unstableEntries(): Entry[] {
    return this.unstable.entries.slice();
  }

  /** Whether committed entries wait to be applied (never while a snapshot is being installed). */
  hasNextCommittedEntries(): boolean {
    if (this.hasPendingSnapshot()) return false;
    return this.committed > Math.max(this.applied, this.firstIndex() - 1);
  }

  nextCommittedEntries(): Entry[] {
    if (!this.hasNextCommittedEntries()) return [];
    const lo = Math.max(this.applied + 1, this.firstIndex());
    return this.slice(lo, this.committed + 1, this.maxApplyBytes) ?? [];
  }

  /** Entries from i on, at most maxBytes (but at least one); undefined when compacted. */
  entries(i: number, maxBytes: number): Entry[] | undefined {
    if (i > this.lastIndex()) return [];
    return this.slice(i, this.lastIndex() + 1, maxBytes);
  }

  /**
   * Entries in [lo, hi) bounded by maxBytes, reading storage below the unstable
   * offset and the unstable part above it. Undefined when lo is compacted.
   */
  slice(lo: number, hi: number, maxBytes: number): Entry[] | undefined {
    if (lo > hi) throw new RaftInvariantError(`invalid slice ${lo} > ${hi}`);
    const first = this.firstIndex();
    if (lo < first) return undefined;
    if (hi > this.lastIndex() + 1) {
      throw new RaftInvariantError(`slice[${lo},${hi}) out of bound [${first},${this.lastIndex()}]`);
    }
    if (lo === hi) return [];
    let ents: Entry[] = [];
    const offset = this.unstable.offset;
    if (lo < offset) {
      const upTo = Math.min(hi, offset);
      let stored: Entry[];
      try {
        stored = this.storage.entries(lo, upTo, maxBytes);
      } catch (e) {
        if (isStorageError(e, 'compacted')) return undefined;
        throw e;
      }
      // Storage stopped early because of the size bound: no room for more.
      if (stored.length < upTo - lo) return stored;
      ents = stored;
    }
    if (hi > offset) {
      const more = this.unstable.slice(Math.max(lo, offset), hi);
      ents = ents.length > 0 ? ents.concat(more) : more;
    }
    return limitSize(ents, maxBytes);
  }
}
