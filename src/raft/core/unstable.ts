// The part of the log that has not been persisted yet: entries (and possibly a
// snapshot received from the leader) that the next Ready hands to the driver.
// Once the driver has persisted them and calls advance(), they move to storage.

import { RaftInvariantError } from './errors.js';
import type { Entry, Snapshot } from './types.js';

export class Unstable {
  /** A snapshot being installed; persisted by the driver before any entry after it. */
  snapshot: Snapshot | undefined;
  entries: Entry[] = [];
  /** Index of entries[0]; also the first index not known to be in storage. */
  offset: number;

  constructor(offset: number) {
    this.offset = offset;
  }

  /** First index, if it is decided by a pending snapshot. */
  maybeFirstIndex(): number | undefined {
    return this.snapshot ? this.snapshot.meta.index + 1 : undefined;
  }

  maybeLastIndex(): number | undefined {
    if (this.entries.length > 0) return this.offset + this.entries.length - 1;
    return this.snapshot ? this.snapshot.meta.index : undefined;
  }

  maybeTerm(i: number): number | undefined {
    if (i < this.offset) {
      if (this.snapshot && this.snapshot.meta.index === i) return this.snapshot.meta.term;
      return undefined;
    }
    const last = this.maybeLastIndex();
    if (last === undefined || i > last) return undefined;
    return this.entries[i - this.offset]!.term;
  }

  /**
   * The driver persisted everything up to (i, t). The term check matters: if
   * the tail was replaced since the Ready was taken, those new entries are
   * still unpersisted and must stay here.
   */
  stableTo(i: number, t: number): void {
    const gt = this.maybeTerm(i);
    if (gt === undefined) return;
    if (gt === t && i >= this.offset) {
      this.entries = this.entries.slice(i + 1 - this.offset);
      this.offset = i + 1;
    }
  }

  stableSnapTo(i: number): void {
    if (this.snapshot && this.snapshot.meta.index === i) this.snapshot = undefined;
  }

  restore(s: Snapshot): void {
    this.offset = s.meta.index + 1;
    this.entries = [];
    this.snapshot = s;
  }

  truncateAndAppend(ents: Entry[]): void {
    if (ents.length === 0) return;
    const after = ents[0]!.index;
    if (after === this.offset + this.entries.length) {
      this.entries = this.entries.concat(ents);
    } else if (after <= this.offset) {
      // Replaces everything unstable (and shadows storage from `after` on).
      this.offset = after;
      this.entries = ents.slice();
    } else {
      this.entries = this.slice(this.offset, after).concat(ents);
    }
  }

  slice(lo: number, hi: number): Entry[] {
    const upper = this.offset + this.entries.length;
    if (lo > hi || lo < this.offset || hi > upper) {
      throw new RaftInvariantError(`unstable.slice[${lo},${hi}) out of bounds [${this.offset},${upper})`);
    }
    return this.entries.slice(lo - this.offset, hi - this.offset);
  }
}
