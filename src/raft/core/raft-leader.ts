// What a leader does: replicate the log to each peer at the pace its progress
// state allows, advance the commit index by majority, keep its lease with
// heartbeats and check-quorum, and hand leadership over on request.

import { RaftInvariantError } from './errors.js';
import type { Progress } from './progress.js';
import type { Raft } from './raft.js';
import { grantLease, leaseCommitBound, leaseMayHoldCommit } from './lease.js';
import { answerRead } from './read-only.js';
import { NONE, type Message, type NodeId } from './types.js';

/**
 * Sends the next append (or a snapshot if the entries are compacted) to `to`
 * unless its progress is paused. With sendIfEmpty false, only sends when there
 * are entries. Returns whether a message went out.
 */
export function maybeSendAppend(r: Raft, to: NodeId, sendIfEmpty: boolean): boolean {
  const pr = r.tracker.progress.get(to);
  if (pr === undefined || to === r.id || pr.isPaused()) return false;
  const prevIndex = pr.next - 1;
  if (prevIndex > r.log.lastIndex()) {
    throw new RaftInvariantError(`progress of ${to} is past the leader's log: next ${pr.next}, last ${r.log.lastIndex()}`);
  }
  const prevTerm = r.log.term(prevIndex);
  const entries = prevTerm === undefined ? undefined : r.log.entries(pr.next, r.cfg.maxSizePerMsg);
  if (prevTerm === undefined || entries === undefined) return sendSnapshot(r, to, pr);
  if (entries.length === 0 && !sendIfEmpty) return false;
  r.send({ type: 'app', from: r.id, to, term: r.term, prevIndex, prevTerm, entries, commit: r.log.committed });
  if (entries.length > 0) {
    const last = entries[entries.length - 1]!.index;
    if (pr.state === 'replicate') {
      pr.optimisticUpdate(last);
      pr.inflights.add(last);
    } else if (pr.state === 'probe') {
      pr.probeSent = true;
    }
  }
  return true;
}

function sendSnapshot(r: Raft, to: NodeId, pr: Progress): boolean {
  // A peer we have not heard from lately may be down: don't stream a whole
  // snapshot into the void; its next heartbeat response will revive it.
  if (!pr.recentActive) return false;
  const snap = r.log.snapshot();
  if (snap === null) return false;
  if (snap.meta.index === 0) {
    throw new RaftInvariantError(`entries needed by ${to} are compacted but there is no snapshot`);
  }
  pr.becomeSnapshot(snap.meta.index);
  r.send({ type: 'snapshot', from: r.id, to, term: r.term, snapshot: snap });
  return true;
}

export function bcastAppend(r: Raft): void {
  for (const id of r.tracker.sortedIds()) {
    if (id !== r.id) maybeSendAppend(r, id, true);
  }
}

function bcastHeartbeat(r: Raft, ctx = r.readOnly.pendingId()): void {
  for (const [id, pr] of [...r.tracker.progress].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (id === r.id) continue;
    // Never tell a follower to commit past what it is known to hold.
    const commit = Math.min(pr.match, r.log.committed);
    r.send({ type: 'heartbeat', from: r.id, to: id, term: r.term, commit, ctx, lease: grantLease(r, id, pr), leaseMs: r.cfg.followerLeaseMs });
  }
}

export function maybeCommit(r: Raft): boolean {
  // Only an entry of the current term commits by counting replicas (figure 8);
  // earlier ones follow it.
  if (!r.log.maybeCommit(Math.min(r.tracker.committed(), leaseCommitBound(r)), r.term)) return false;
  for (const req of r.readOnly.takeWaiting()) leaderReadIndex(r, req.from, req.ctx);
  return true;
}

/**
 * A read request reached the leader (from itself or a follower). Its commit index is
 * the read index once a quorum confirms, with a heartbeat sent after the request
 * arrived, that no newer leader exists. Until the leader has committed an entry of
 * its own term its commit index may be behind its predecessor's: requests wait.
 */
export function leaderReadIndex(r: Raft, from: NodeId, ctx: number): void {
  if (r.log.term(r.log.committed) !== r.term) {
    r.readOnly.wait(from, ctx);
    return;
  }
  // The leader vouches for itself, and a voter asking vouches for itself as of when it asked,
  // which is after every read it asks for began: it had not moved to a newer term by then. A
  // newer leader that committed before those reads began needed a quorum that moved to its
  // term earlier, and a quorum made of these two would intersect it. In a cluster of three
  // they are a quorum: a follower's request is answered at once.
  const vouching = 1 + (from !== r.id && r.tracker.isVoter(from) ? 1 : 0);
  if (vouching > r.tracker.voters.size / 2) {
    answerRead(r, { from, ctx }, r.log.committed);
    return;
  }
  const round = r.readOnly.add(from, ctx, r.log.committed);
  if (round > 0) bcastHeartbeat(r, round);
}

export function sendTimeoutNow(r: Raft, to: NodeId): void {
  r.send({ type: 'timeoutNow', from: r.id, to, term: r.term });
}

export function tickHeartbeat(r: Raft): void {
  r.heartbeatElapsed++;
  r.electionElapsed++;
  if (r.electionElapsed >= r.cfg.electionTick) {
    r.electionElapsed = 0;
    if (r.cfg.checkQuorum) {
      // Without a quorum of recent contact another leader may exist already:
      // stop serving as leader rather than pretend.
      if (!r.tracker.quorumActive(r.id)) {
        r.becomeFollower(r.term, NONE);
        return;
      }
      for (const [id, pr] of r.tracker.progress) if (id !== r.id) pr.recentActive = false;
    }
    // A transfer that did not finish within an election timeout is abandoned.
    if (r.leadTransferee !== NONE) r.leadTransferee = NONE;
  }
  if (r.heartbeatElapsed >= r.cfg.heartbeatTick) {
    r.heartbeatElapsed = 0;
    bcastHeartbeat(r);
  }
  // A lease that ended (a follower gone silent) may have been all that held the commit index.
  if (leaseMayHoldCommit(r) && maybeCommit(r)) bcastAppend(r);
}

export function stepLeader(r: Raft, m: Message): void {
  const pr = r.tracker.progress.get(m.from);
  if (pr === undefined) return;
  switch (m.type) {
    case 'appResp': {
      pr.recentActive = true;
      if (m.reject) {
        let nextProbe = m.rejectHint;
        // Skip the follower's whole divergent term in one round trip.
        if (m.hintTerm > 0) nextProbe = r.log.findConflictByTerm(m.rejectHint, m.hintTerm).index;
        if (pr.maybeDecrTo(m.index, nextProbe)) {
          if (pr.state === 'replicate') pr.becomeProbe();
          maybeSendAppend(r, m.from, true);
        }
        return;
      }
      const wasPaused = pr.isPaused();
      if (!pr.maybeUpdate(m.index)) return;
      if (pr.state === 'probe') {
        pr.becomeReplicate();
      } else if (pr.state === 'snapshot' && pr.match + 1 >= r.log.firstIndex()) {
        // Caught up (by this snapshot or otherwise): the log can take it from here.
        pr.becomeProbe();
        pr.becomeReplicate();
      } else if (pr.state === 'replicate') {
        pr.inflights.freeLE(m.index);
      }
      if (maybeCommit(r)) bcastAppend(r);
      else if (wasPaused) maybeSendAppend(r, m.from, true);
      while (maybeSendAppend(r, m.from, false)) {
        // Fill the window.
      }
      if (m.from === r.leadTransferee && pr.match === r.log.lastIndex()) sendTimeoutNow(r, m.from);
      return;
    }
    case 'heartbeatResp':
      pr.recentActive = true;
      pr.probeSent = false;
      // A reply without a tag declines further leases (the one it may hold runs out as timed).
      pr.leaseSeq = m.seq;
      if (m.ctx > 0) {
        for (const round of r.readOnly.ack(r.id, m.from, m.ctx, r.tracker.voters)) {
          for (const req of round.requests) answerRead(r, req, round.index);
        }
      }
      // Messages may have been lost: let one more through a full window.
      if (pr.state === 'replicate' && pr.inflights.full()) pr.inflights.freeFirstOne();
      if (pr.match < r.log.lastIndex()) maybeSendAppend(r, m.from, true);
      return;
    case 'readIndex':
      leaderReadIndex(r, m.from, m.ctx);
      return;
    default:
      return;
  }
}
