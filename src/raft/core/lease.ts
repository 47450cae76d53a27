// Follower read leases: a follower that holds one serves a read from its own log,
// without a read index round trip to the leader. The promise a lease carries: while
// it lasts, nothing commits that the follower's log does not hold. So a read that
// waits until the follower has applied its whole log as of when the read began
// reflects every entry committed before then (the read's "read index" is the
// follower's last index).
//
// - The follower tags each heartbeat reply (`seq`) and remembers when it left. The
//   leader grants on a later heartbeat, naming the tag; the follower's lease runs
//   `followerLeaseMs` on its own clock from when that reply left, which is before the
//   leader decided, so the follower's lease ends before the leader's view of it.
// - The leader grants only to a voter whose log holds all of its own, and counts a
//   lease as lasting LEASE_MARGIN times longer on its clock (rates of clocks differ a
//   little). While a lease may last, the commit index does not pass that follower's
//   match (leaseCommitBound).
// - A follower drops its lease when its term changes (it voted, or heard of a newer
//   leader). A new leader does not know which leases its predecessor granted: for one
//   lease period it treats every voter as leased. With at most three voters, a
//   predecessor cannot grant past the new leader's election: the two members of the
//   new leader's majority other than itself include the old leader (which stepped
//   down when it voted) or the lease holder (which dropped its lease when it voted).
//   With more voters that no longer holds, so leases are granted only with three or
//   fewer voters, and not while a membership change is pending.
// - A member removed from the configuration may still hold a lease: commits wait for
//   its lease to end (ProgressTracker.departedLeases).
// - Nodes may be configured with different lengths (a rolling change of `--read-lease`).
//   Each heartbeat carries the leader's length: a follower's lease lasts no longer than
//   the leader counts it, and a new leader's every-voter period lasts as long as the
//   longest length any leader told it of, even with its own leases off.
// - A follower may decline leases (RawNode.wantLeases): its replies then carry no tag, the
//   leader stops renewing, and what it holds runs out. Holding the leader's commits back
//   until a busy follower has written them would slow every write while it indexes.
//
// Clocks are read, never trusted across machines: each side times only its own
// intervals. A follower whose thread stalled reads its clock when the read arrives
// and finds its lease expired.

import type { Progress } from './progress.js';
import type { Raft } from './raft.js';
import { NONE, type NodeId } from './types.js';

/** How much longer the leader counts a lease than the follower: covers clock rates apart by 20%. */
export const LEASE_MARGIN = 1.25;

/** Replies remembered for a grant to name: a grant names a recent one. */
const SENT_KEPT = 32;

/** The follower's side: its replies' tags and its current lease. */
export class FollowerLease {
  private until = -Infinity;
  private seq: number;
  private readonly sent = new Map<number, number>();

  constructor(rand: () => number) {
    // Tags differ between incarnations, so a grant sent to an earlier one names no reply of this one.
    this.seq = Math.floor(rand() * 2 ** 40);
  }

  /** The term changed, or the node stopped following: whatever was granted no longer holds. */
  clear(): void {
    this.until = -Infinity;
    this.sent.clear();
  }

  /** A tag for a heartbeat reply leaving now. */
  tag(now: number): number {
    const seq = ++this.seq;
    this.sent.set(seq, now);
    if (this.sent.size > SENT_KEPT) this.sent.delete(this.sent.keys().next().value!);
    return seq;
  }

  /** The leader granted a lease on the reply tagged `seq`. */
  granted(seq: number, ms: number): void {
    const at = this.sent.get(seq);
    if (at !== undefined) this.until = Math.max(this.until, at + ms);
  }

  holds(now: number): boolean {
    return now < this.until;
  }
}

export function leasesOn(r: Raft): boolean {
  return r.cfg.followerLeaseMs > 0;
}

/** On the leader, sending a heartbeat to `id`: the tag it grants a lease on, or 0. */
export function grantLease(r: Raft, id: NodeId, pr: Progress): number {
  if (!leasesOn(r) || pr.leaseSeq === 0 || !r.tracker.isVoter(id) || r.tracker.voters.size > 3) return 0;
  if (pr.match < r.log.lastIndex() || r.pendingConfIndex > r.log.applied || r.leadTransferee !== NONE) return 0;
  pr.leaseUntil = r.cfg.clock() + r.cfg.followerLeaseMs * LEASE_MARGIN;
  return pr.leaseSeq;
}

/**
 * How long after taking office a leader counts every voter as leased: the longest lease a
 * predecessor may have granted, its own length or a longer one a leader told it of (nodes
 * configured differently, as during a rolling change of `--read-lease`).
 */
function inheritedLeaseMs(r: Raft): number {
  return Math.max(r.cfg.followerLeaseMs, r.heardLeaseMs) * LEASE_MARGIN;
}

/** On the leader: the highest index the commit index may reach without breaking a lease. */
export function leaseCommitBound(r: Raft): number {
  const inherited = inheritedLeaseMs(r);
  if (inherited === 0) return Infinity;
  const now = r.cfg.clock();
  const everyone = now < r.leaderSince + inherited;
  let bound = Infinity;
  // Learners too: one may be a voter demoted while it held a lease.
  for (const [id, pr] of r.tracker.progress) {
    if (id !== r.id && (everyone || now < pr.leaseUntil)) bound = Math.min(bound, pr.match);
  }
  const departed = r.tracker.departedLeases;
  if (departed.length > 0) {
    r.tracker.departedLeases = departed.filter((d) => now < d.until);
    for (const d of r.tracker.departedLeases) bound = Math.min(bound, d.match);
  }
  return bound;
}

/** Whether a lease may be holding the commit index back, so that its end must be watched for. */
export function leaseMayHoldCommit(r: Raft): boolean {
  return inheritedLeaseMs(r) > 0 && r.log.committed < r.tracker.committed();
}
