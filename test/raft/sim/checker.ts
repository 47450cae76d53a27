// Global safety invariants, checked as the simulation goes:
// - election safety: at most one leader per term;
// - log matching: an (index, term) pair names one entry, with one predecessor term;
// - committed entries never change, in any node's log or state machine;
// - leader completeness: a leader holds every entry committed in an earlier term;
// - state machine safety: no two nodes apply different entries at one index,
//   and snapshots carry the same state as applying the log would.

import type { Entry, NodeId, SnapshotMeta, Storage } from '../../../src/raft/core/index.js';

export class SafetyViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SafetyViolation';
  }
}

export function fingerprint(e: Entry): string {
  return `${e.term}/${e.type}/${Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength).toString('latin1')}`;
}

/** FNV-1a over the previous hash and the entry's fingerprint: a state digest. */
export function chainHash(prev: number, fp: string): number {
  let h = (prev ^ 0x811c9dc5) >>> 0;
  for (let i = 0; i < fp.length; i++) {
    h ^= fp.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

interface CommittedEntry {
  fp: string;
  term: number;
  /** Term of the node that reported the commit: at or above the term that committed it. */
  seenTerm: number;
}

export class Checker {
  private leaders = new Map<number, NodeId>();
  private logEntries = new Map<string, { fp: string; prevTerm: number }>();
  private committed = new Map<number, CommittedEntry>();
  maxCommitted = 0;
  private appliedAt = new Map<number, string>();
  private hashAt = new Map<number, number>();
  /** Client values applied somewhere: acknowledged, so they must never be lost. */
  readonly acked = new Set<string>();

  fail(message: string): never {
    throw new SafetyViolation(message);
  }

  checkRole(id: NodeId, role: string, term: number): void {
    if (role !== 'leader') return;
    const prev = this.leaders.get(term);
    if (prev === undefined) this.leaders.set(term, id);
    else if (prev !== id) this.fail(`election safety: ${prev} and ${id} both lead term ${term}`);
  }

  /** Entries just written to `id`'s durable log. */
  checkAppended(id: NodeId, storage: Storage, entries: Entry[]): void {
    for (const e of entries) {
      const fp = fingerprint(e);
      // The predecessor's term, unknown (-1) right after a compaction boundary.
      const prevTerm = e.index - 1 >= storage.firstIndex() - 1 ? storage.term(e.index - 1) : -1;
      const key = `${e.index}:${e.term}`;
      const seen = this.logEntries.get(key);
      if (seen === undefined) {
        this.logEntries.set(key, { fp, prevTerm });
      } else {
        if (seen.fp !== fp) this.fail(`log matching: ${id} holds ${fp} at ${key}, elsewhere ${seen.fp}`);
        if (seen.prevTerm === -1) seen.prevTerm = prevTerm;
        else if (prevTerm !== -1 && prevTerm !== seen.prevTerm) {
          this.fail(`log matching: at ${key} ${id} follows term ${prevTerm}, elsewhere term ${seen.prevTerm}`);
        }
      }
    }
  }

  /**
   * Before `entries` replace part of `id`'s durable log: a committed entry it
   * holds must never be replaced. (A stale node may still take a stale
   * leader's entry at an index committed elsewhere: it never held that one.)
   */
  checkOverwrite(id: NodeId, storage: Storage, entries: Entry[]): void {
    if (entries.length === 0) return;
    const lo = Math.max(entries[0]!.index, storage.firstIndex());
    const hi = Math.min(entries[entries.length - 1]!.index, storage.lastIndex());
    if (hi < lo) return;
    const old = storage.entries(lo, hi + 1, Infinity);
    for (const o of old) {
      const c = this.committed.get(o.index);
      const e = entries[o.index - entries[0]!.index]!;
      if (c && c.fp === fingerprint(o) && fingerprint(e) !== c.fp) {
        this.fail(`committed entry ${o.index} (${c.fp}) overwritten on ${id} by ${fingerprint(e)}`);
      }
    }
  }

  /** `id` (at `term`) reports commit index `commit`; it had reported `from` before. */
  recordCommit(id: NodeId, storage: Storage, from: number, commit: number, term: number): void {
    const lo = Math.max(from + 1, storage.firstIndex());
    if (commit < lo) return;
    if (commit > storage.lastIndex()) this.fail(`${id} commits ${commit} beyond its durable log ${storage.lastIndex()}`);
    for (const e of storage.entries(lo, commit + 1, Infinity)) {
      const fp = fingerprint(e);
      const c = this.committed.get(e.index);
      if (c === undefined) this.committed.set(e.index, { fp, term: e.term, seenTerm: term });
      else if (c.fp !== fp) this.fail(`commit safety: ${id} commits ${fp} at ${e.index}, elsewhere ${c.fp}`);
    }
    this.maxCommitted = Math.max(this.maxCommitted, commit);
  }

  /**
   * A leader at `term` must hold every entry committed in an earlier term.
   * Checks indexes after `verified` (its log only grows while it leads);
   * returns the new verified index.
   */
  checkLeaderCompleteness(id: NodeId, term: number, storage: Storage, verified: number): number {
    const lo = Math.max(verified + 1, storage.firstIndex());
    const hi = this.maxCommitted;
    if (hi < lo) return Math.max(verified, Math.min(hi, storage.lastIndex()));
    const last = storage.lastIndex();
    const ents = last >= lo ? storage.entries(lo, Math.min(hi, last) + 1, Infinity) : [];
    for (let i = lo; i <= hi; i++) {
      const c = this.committed.get(i);
      if (c === undefined || c.seenTerm >= term) continue;
      const e = ents[i - lo];
      if (e === undefined) this.fail(`leader completeness: leader ${id} (term ${term}) lacks committed entry ${i}`);
      if (fingerprint(e) !== c.fp) {
        this.fail(`leader completeness: leader ${id} (term ${term}) holds ${fingerprint(e)} at committed ${i} (${c.fp})`);
      }
    }
    return Math.min(hi, last);
  }

  /** `id` applied `e`, its state digest becoming `hash`. */
  checkApply(id: NodeId, e: Entry, hash: number): void {
    const fp = fingerprint(e);
    const prev = this.appliedAt.get(e.index);
    if (prev === undefined) this.appliedAt.set(e.index, fp);
    else if (prev !== fp) this.fail(`state machine safety: ${id} applies ${fp} at ${e.index}, elsewhere ${prev}`);
    const c = this.committed.get(e.index);
    if (c && c.fp !== fp) this.fail(`${id} applies ${fp} at ${e.index} but ${c.fp} was committed there`);
    this.checkHash(id, e.index, hash);
  }

  /** `id` restored a snapshot whose state digest is `hash`. */
  checkSnapshot(id: NodeId, meta: SnapshotMeta, hash: number): void {
    const c = this.committed.get(meta.index);
    if (c && c.term !== meta.term) this.fail(`${id} restores a snapshot at ${meta.index}/${meta.term}, committed term ${c.term}`);
    this.checkHash(id, meta.index, hash);
  }

  private checkHash(id: NodeId, index: number, hash: number): void {
    const prev = this.hashAt.get(index);
    if (prev === undefined) this.hashAt.set(index, hash);
    else if (prev !== hash) this.fail(`state machine safety: ${id} has a different state at ${index}`);
  }

  ackedValues(): string[] {
    return [...this.acked];
  }
}
