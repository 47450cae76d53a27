// The read side of the durable log, as the core sees it. Reads are synchronous
// because the core is a pure state machine; the driver keeps a MemoryStorage in
// step with the durable store (it appends what each Ready persisted) so that
// these reads never touch the disk.

import { StorageError, RaftInvariantError } from './errors.js';
import {
  cloneConfState,
  emptyHardState,
  entrySize,
  type ConfState,
  type Entry,
  type HardState,
  type Snapshot,
  type SnapshotMeta,
} from './types.js';

export interface InitialState {
  hardState: HardState;
  /** Membership as of the storage's snapshot (firstIndex() - 1). */
  confState: ConfState;
}

export interface Storage {
  /** Hard state and the membership as of the snapshot. */
  initialState(): InitialState;
  /**
   * Entries in [lo, hi), at least one if any is in range, then stopping before
   * the total size would exceed maxBytes. Throws StorageError 'compacted' when
   * lo < firstIndex() and 'unavailable' when hi > lastIndex() + 1.
   */
  entries(lo: number, hi: number, maxBytes: number): Entry[];
  /**
   * Term of entry i, for i in [firstIndex() - 1, lastIndex()]; the lower bound
   * is the snapshot's own index. Throws 'compacted' / 'unavailable' outside.
   */
  term(i: number): number;
  /** Index of the first entry still held (snapshot index + 1). */
  firstIndex(): number;
  /** Index of the last entry held, or the snapshot index when none is. */
  lastIndex(): number;
  /** Metadata of the most recent snapshot; cheap, always available. */
  snapshotMeta(): SnapshotMeta;
  /**
   * The most recent snapshot to send to a follower, or null when it is
   * temporarily unavailable (the leader will retry on a later heartbeat).
   */
  snapshot(): Snapshot | null;
}

/** Keeps only entries whose cumulative size stays within maxBytes, but at least one. */
export function limitSize(ents: Entry[], maxBytes: number): Entry[] {
  if (ents.length === 0) return ents;
  let size = entrySize(ents[0]!);
  let n = 1;
  for (; n < ents.length; n++) {
    size += entrySize(ents[n]!);
    if (size > maxBytes) break;
  }
  return n === ents.length ? ents : ents.slice(0, n);
}

export interface MemoryStorageOptions {
  /** Membership for a storage that starts empty (tests, or a replica restored by hand). */
  confState?: ConfState;
}

/**
 * In-memory Storage. `ents[0]` is a dummy entry holding the snapshot's index and
 * term, so term(firstIndex() - 1) needs no special case.
 */
export class MemoryStorage implements Storage {
  private hard: HardState = emptyHardState();
  private snap: Snapshot;
  private ents: Entry[];

  constructor(opts: MemoryStorageOptions = {}) {
    const confState = opts.confState ? cloneConfState(opts.confState) : { voters: [], learners: [] };
    this.snap = { meta: { index: 0, term: 0, confState }, data: new Uint8Array(0) };
    this.ents = [dummy(0, 0)];
  }

  initialState(): InitialState {
    return { hardState: { ...this.hard }, confState: cloneConfState(this.snap.meta.confState) };
  }

  hardState(): HardState {
    return { ...this.hard };
  }

  setHardState(hs: HardState): void {
    this.hard = { ...hs };
  }

  entries(lo: number, hi: number, maxBytes: number): Entry[] {
    const offset = this.ents[0]!.index;
    if (lo <= offset) {
      throw new StorageError('compacted', `entries(${lo}): compacted up to ${offset}`);
    }
    if (hi > this.lastIndex() + 1) {
      throw new StorageError('unavailable', `entries(${lo}, ${hi}): last index is ${this.lastIndex()}`);
    }
    if (lo >= hi) return [];
    // Find the cut before copying: a far-behind follower asks for the whole log.
    const start = lo - offset;
    const end = hi - offset;
    let size = 0;
    let j = start;
    for (; j < end; j++) {
      size += entrySize(this.ents[j]!);
      if (size > maxBytes && j > start) break;
    }
    return this.ents.slice(start, j);
  }

  term(i: number): number {
    const offset = this.ents[0]!.index;
    if (i < offset) throw new StorageError('compacted', `term(${i}): compacted up to ${offset}`);
    if (i - offset >= this.ents.length) {
      throw new StorageError('unavailable', `term(${i}): last index is ${this.lastIndex()}`);
    }
    return this.ents[i - offset]!.term;
  }

  firstIndex(): number {
    return this.ents[0]!.index + 1;
  }

  lastIndex(): number {
    return this.ents[0]!.index + this.ents.length - 1;
  }

  snapshotMeta(): SnapshotMeta {
    return this.snap.meta;
  }

  snapshot(): Snapshot | null {
    return this.snap;
  }

  /**
   * Replaces the whole content with a snapshot received from the leader.
   * Throws 'snapshotOutOfDate' if it is not newer than the one held.
   */
  applySnapshot(s: Snapshot): void {
    if (s.meta.index <= this.snap.meta.index) {
      throw new StorageError(
        'snapshotOutOfDate',
        `snapshot at ${s.meta.index} is not newer than ${this.snap.meta.index}`,
      );
    }
    this.snap = { meta: { ...s.meta, confState: cloneConfState(s.meta.confState) }, data: s.data };
    this.ents = [dummy(s.meta.index, s.meta.term)];
  }

  /**
   * Records a snapshot of the applied state at `index` (which must be held in
   * the log and not older than the current snapshot). Does not compact.
   */
  createSnapshot(index: number, confState: ConfState, data: Uint8Array = new Uint8Array(0)): Snapshot {
    if (index <= this.snap.meta.index) {
      throw new StorageError('snapshotOutOfDate', `snapshot at ${index} is not newer than ${this.snap.meta.index}`);
    }
    if (index > this.lastIndex()) {
      throw new RaftInvariantError(`createSnapshot(${index}) is beyond last index ${this.lastIndex()}`);
    }
    const term = this.term(index);
    this.snap = { meta: { index, term, confState: cloneConfState(confState) }, data };
    return this.snap;
  }

  /**
   * Drops entries up to and including `index`. Only indexes covered by the
   * current snapshot may go: otherwise a follower that needs them could be
   * caught up neither from the log nor from the snapshot.
   */
  compact(index: number): void {
    const offset = this.ents[0]!.index;
    if (index <= offset) return;
    if (index > this.snap.meta.index) {
      throw new RaftInvariantError(
        `compact(${index}) is beyond the snapshot at ${this.snap.meta.index}; create a snapshot first`,
      );
    }
    const i = index - offset;
    const kept = this.ents.slice(i);
    kept[0] = dummy(this.ents[i]!.index, this.ents[i]!.term);
    this.ents = kept;
  }

  /**
   * Appends entries, replacing any held entries from the first new index on
   * (a new leader may overwrite an uncommitted tail). Entries already
   * compacted are skipped.
   */
  append(entries: Entry[]): void {
    if (entries.length === 0) return;
    const first = this.firstIndex();
    const last = entries[entries.length - 1]!.index;
    if (last < first) return;
    let ents = entries;
    if (first > ents[0]!.index) ents = ents.slice(first - ents[0]!.index);
    const offset = ents[0]!.index - this.ents[0]!.index;
    if (offset > this.ents.length) {
      throw new RaftInvariantError(
        `append at ${ents[0]!.index} leaves a gap after last index ${this.lastIndex()}`,
      );
    }
    this.ents = this.ents.slice(0, offset).concat(ents);
  }
}

function dummy(index: number, term: number): Entry {
  return { index, term, type: 'normal', data: new Uint8Array(0) };
}
