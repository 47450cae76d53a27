// Kept search data (pair costs, scans) carried to the state after a batch, each entry noting
// the documents the batch changed, which it computes again on first use.

import { CARRY, type BatchDelta, type CarriedMemo, type IndexState } from '../fulltext/index-state.js';
import { unionSorted } from '../fulltext/postings.js';
import type { Yielder } from '../../util/yielder.js';

/**
 * Documents batches changed that a carried entry can wait to recompute: past them (and past
 * the documents recomputing it whole would read) it is dropped.
 */
const MAX_PENDING = 4096;

export interface PendingEntry {
  /** Documents batches changed since the entry was computed, ascending; null when none. */
  pending: Uint32Array | null;
  /** Read by a search of this state (entries no search read are not carried further). */
  used: boolean;
  /**
   * Documents computing the entry again whole would read, when not its own documents: a pair's
   * kept costs hold only the documents where the two words are close, but are joined from
   * both words' whole lists.
   */
  reads?: number;
}

/**
 * Entries a state keeps (by key), within a budget of `capacity` documents over all of them
 * (0 keeps none). Carried to the state after a batch: the entries a search read, each noting
 * the documents the batch changed.
 */
export class PendingTable<E extends PendingEntry & { docs: Uint32Array }> implements CarriedMemo {
  entries = new Map<string, E>();
  /** Documents held over all entries. */
  docs = 0;
  /** The documents the batch that made this state changed (null for the first state): every carried entry waits for them. */
  touched: Uint32Array | null = null;

  constructor(readonly capacity: number) {}

  async [CARRY](delta: BatchDelta, _next: IndexState, yielder: Yielder): Promise<PendingTable<E>> {
    const out = new PendingTable<E>(this.capacity);
    out.touched = touchedBy(delta);
    out.entries = await carryPending(this.entries, out.touched, yielder);
    for (const e of out.entries.values()) out.docs += e.docs.length;
    return out;
  }
}

/**
 * The entries a search read while their state was published, each with the documents the
 * batch added, replaced or deleted joined to those it was waiting for.
 */
function touchedBy(delta: BatchDelta): Uint32Array {
  return unionSorted(delta.removed, delta.segment.docs);
}

async function carryPending<E extends PendingEntry & { docs: Uint32Array }>(entries: Map<string, E>, touched: Uint32Array, yielder: Yielder): Promise<Map<string, E>> {
  const out = new Map<string, E>();
  let n = 0;
  for (const [key, e] of entries) {
    if ((++n & 255) === 0) await yielder.maybe();
    if (!e.used) continue;
    const pending = e.pending === null ? touched : unionSorted(e.pending, touched);
    if (pending.length > MAX_PENDING && pending.length > (e.reads ?? e.docs.length)) continue;
    out.set(key, { ...e, pending: pending.length > 0 ? pending : null, used: false });
  }
  return out;
}
