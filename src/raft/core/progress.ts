// The leader's view of one follower: how much of the log it is known to hold
// (match), what to send next (next), and how to send it (state).
//
// - probe: we do not know where the follower's log ends; send one append at a
//   time and wait for the answer (or a heartbeat response) before the next.
// - replicate: the follower is in step; stream appends optimistically, bounded
//   by a window of in-flight messages.
// - snapshot: the follower needs entries we compacted; a snapshot is on its
//   way and nothing else is sent until it is reported done or failed.

export type ProgressState = 'probe' | 'replicate' | 'snapshot';

/** A bounded FIFO of the last index of each append message still in flight. */
export class Inflights {
  private readonly buf: number[] = [];
  private start = 0;
  readonly size: number;

  constructor(size: number) {
    this.size = size;
  }

  get count(): number {
    return this.buf.length - this.start;
  }

  full(): boolean {
    return this.count >= this.size;
  }

  add(lastIndex: number): void {
    if (this.full()) throw new Error('inflights: add to a full window');
    this.buf.push(lastIndex);
  }

  /** Frees every message whose last index is <= `to` (acknowledged). */
  freeLE(to: number): void {
    while (this.start < this.buf.length && this.buf[this.start]! <= to) this.start++;
    this.compact();
  }

  freeFirstOne(): void {
    if (this.start < this.buf.length) this.start++;
    this.compact();
  }

  reset(): void {
    this.buf.length = 0;
    this.start = 0;
  }

  private compact(): void {
    if (this.start === this.buf.length) {
      this.reset();
    } else if (this.start > 64 && this.start * 2 > this.buf.length) {
      this.buf.splice(0, this.start);
      this.start = 0;
    }
  }
}

export class Progress {
  match = 0;
  next: number;
  state: ProgressState = 'probe';
  /** In snapshot state: the index of the snapshot being sent. */
  pendingSnapshot = 0;
  /** Heard from since the last check-quorum round (the leader counts itself). */
  recentActive = false;
  /** In probe state: one append is outstanding; wait before sending another. */
  probeSent = false;
  /** The tag of the follower's latest heartbeat reply in this term (0: none), which a lease may name. */
  leaseSeq = 0;
  /** Leader's clock: until then the follower may hold a read lease this leader granted (see lease.ts). */
  leaseUntil = -Infinity;
  isLearner: boolean;
  readonly inflights: Inflights;

  constructor(next: number, maxInflight: number, isLearner: boolean) {
    this.next = next;
    this.isLearner = isLearner;
    this.inflights = new Inflights(maxInflight);
  }

  private resetState(state: ProgressState): void {
    this.probeSent = false;
    this.pendingSnapshot = 0;
    this.state = state;
    this.inflights.reset();
  }

  becomeProbe(): void {
    // After a snapshot, resume right after it: the follower holds at least that
    // much if the snapshot was applied, and a reject corrects us otherwise.
    if (this.state === 'snapshot') {
      const pending = this.pendingSnapshot;
      this.resetState('probe');
      this.next = Math.max(this.match + 1, pending + 1);
    } else {
      this.resetState('probe');
      this.next = this.match + 1;
    }
  }

  becomeReplicate(): void {
    this.resetState('replicate');
    this.next = this.match + 1;
  }

  becomeSnapshot(snapshotIndex: number): void {
    this.resetState('snapshot');
    this.pendingSnapshot = snapshotIndex;
  }

  /** An append up to n was acknowledged. Returns false if it tells us nothing new. */
  maybeUpdate(n: number): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      updated = true;
      this.probeSent = false;
    }
    this.next = Math.max(this.next, n + 1);
    return updated;
  }

  /** Entries up to n were sent optimistically (replicate state). */
  optimisticUpdate(n: number): void {
    this.next = n + 1;
  }

  /**
   * The follower rejected an append at `rejected`, hinting that its log may
   * match ours up to `matchHint`. Returns false for a stale rejection.
   */
  maybeDecrTo(rejected: number, matchHint: number): boolean {
    if (this.state === 'replicate') {
      // Rejections below match come from reordered old messages.
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    // In probe state only the answer to the outstanding probe counts.
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, matchHint + 1), this.match + 1);
    this.probeSent = false;
    return true;
  }

  /** Whether sending more appends must wait. */
  isPaused(): boolean {
    switch (this.state) {
      case 'probe':
        return this.probeSent;
      case 'replicate':
        return this.inflights.full();
      case 'snapshot':
        return true;
    }
  }
}
