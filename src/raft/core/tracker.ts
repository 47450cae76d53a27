// Membership plus the leader's per-peer progress, and the quorum arithmetic:
// commit index by majority, vote tallies, and whether a quorum is recently active.

import { Progress } from './progress.js';
import type { ConfState, NodeId } from './types.js';

export type VoteResult = 'won' | 'lost' | 'pending';

export class ProgressTracker {
  voters = new Set<NodeId>();
  learners = new Set<NodeId>();
  readonly progress = new Map<NodeId, Progress>();
  private votes = new Map<NodeId, boolean>();
  readonly maxInflight: number;
  /**
   * Read leases of members removed from the configuration, which may still serve reads until
   * `until` (leader's clock) from what they held, `match`: commits wait for them (lease.ts).
   */
  departedLeases: { until: number; match: number }[] = [];

  constructor(maxInflight: number) {
    this.maxInflight = maxInflight;
  }

  confState(): ConfState {
    return { voters: [...this.voters].sort(), learners: [...this.learners].sort() };
  }

  isVoter(id: NodeId): boolean {
    return this.voters.has(id);
  }

  isMember(id: NodeId): boolean {
    return this.voters.has(id) || this.learners.has(id);
  }

  /** Voters in a stable order, so message order (and so simulations) are deterministic. */
  sortedVoters(): NodeId[] {
    return [...this.voters].sort();
  }

  /** Every tracked peer (voters and learners) in a stable order. */
  sortedIds(): NodeId[] {
    return [...this.progress.keys()].sort();
  }

  /**
   * Replaces the membership, keeping the progress of peers that stay and
   * creating fresh progress (starting at nextIndex) for peers that join.
   */
  setConfState(cs: ConfState, nextIndex: number): void {
    this.voters = new Set(cs.voters);
    this.learners = new Set(cs.learners);
    for (const [id, pr] of [...this.progress]) {
      if (this.isMember(id)) continue;
      if (pr.leaseUntil > -Infinity) this.departedLeases.push({ until: pr.leaseUntil, match: pr.match });
      this.progress.delete(id);
    }
    for (const id of [...cs.voters, ...cs.learners]) {
      const existing = this.progress.get(id);
      if (existing) {
        existing.isLearner = this.learners.has(id);
        continue;
      }
      const pr = new Progress(nextIndex, this.maxInflight, this.learners.has(id));
      // A new peer gets one full check-quorum round before it counts as silent.
      pr.recentActive = true;
      this.progress.set(id, pr);
    }
    for (const id of [...this.votes.keys()]) {
      if (!this.voters.has(id)) this.votes.delete(id);
    }
  }

  /**
   * Forgets what the previous term learned about peers: everyone restarts in
   * probe state at `next`; `self` is known to hold `selfMatch`.
   */
  resetProgress(next: number, self: NodeId, selfMatch: number): void {
    this.departedLeases = [];
    for (const [id, old] of this.progress) {
      const pr = new Progress(next, this.maxInflight, old.isLearner);
      if (id === self) pr.match = selfMatch;
      this.progress.set(id, pr);
    }
  }

  /** The largest index held by a majority of voters (by match); 0 without voters. Leases may hold commits lower (lease.ts). */
  committed(): number {
    const n = this.voters.size;
    if (n === 0) return 0;
    const matches: number[] = [];
    for (const id of this.voters) matches.push(this.progress.get(id)?.match ?? 0);
    matches.sort((a, b) => b - a);
    return matches[Math.floor(n / 2)]!;
  }

  /** Whether a majority of voters were heard from recently (`self` always counts). */
  quorumActive(self: NodeId): boolean {
    let active = 0;
    for (const id of this.voters) {
      if (id === self || this.progress.get(id)?.recentActive) active++;
    }
    return active > Math.floor(this.voters.size / 2);
  }

  resetVotes(): void {
    this.votes.clear();
  }

  /** Records the first answer from each voter; later duplicates are ignored. */
  recordVote(id: NodeId, granted: boolean): void {
    if (!this.votes.has(id)) this.votes.set(id, granted);
  }

  tallyVotes(): { granted: number; rejected: number; result: VoteResult } {
    let granted = 0;
    let rejected = 0;
    for (const id of this.voters) {
      const v = this.votes.get(id);
      if (v === true) granted++;
      else if (v === false) rejected++;
    }
    const q = Math.floor(this.voters.size / 2) + 1;
    let result: VoteResult = 'pending';
    if (granted >= q) result = 'won';
    else if (this.voters.size - rejected < q) result = 'lost';
    return { granted, rejected, result };
  }
}
