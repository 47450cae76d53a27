// What followers and (pre-)candidates do: accept appends, heartbeats and
// snapshots from the leader of their term, count votes, and start an election
// at once when the leader hands over with timeoutNow.

import type { Raft } from './raft.js';
import {
  NONE,
  type AppendMessage,
  type HeartbeatMessage,
  type Message,
  type Snapshot,
  type SnapshotMessage,
} from './types.js';

export function stepFollower(r: Raft, m: Message): void {
  switch (m.type) {
    case 'app':
      r.electionElapsed = 0;
      r.lead = m.from;
      handleAppend(r, m);
      return;
    case 'heartbeat':
      r.electionElapsed = 0;
      r.lead = m.from;
      handleHeartbeat(r, m);
      return;
    case 'snapshot':
      r.electionElapsed = 0;
      r.lead = m.from;
      handleSnapshot(r, m);
      return;
    case 'timeoutNow':
      r.hup(true);
      return;
    case 'readIndexResp':
      r.readStates.push({ index: m.index, ctx: m.ctx });
      return;
    default:
      return;
  }
}

export function stepCandidate(r: Raft, m: Message): void {
  switch (m.type) {
    case 'app':
      // A leader of our term exists (for a pre-candidate: of its current term).
      r.becomeFollower(m.term, m.from);
      handleAppend(r, m);
      return;
    case 'heartbeat':
      r.becomeFollower(m.term, m.from);
      handleHeartbeat(r, m);
      return;
    case 'snapshot':
      r.becomeFollower(m.term, m.from);
      handleSnapshot(r, m);
      return;
    case 'preVoteResp':
    case 'voteResp': {
      // Replies to the other kind of election are stale.
      if ((m.type === 'preVoteResp') !== (r.role === 'preCandidate')) return;
      r.tracker.recordVote(m.from, !m.reject);
      const { result } = r.tracker.tallyVotes();
      if (result === 'won') {
        if (r.role === 'preCandidate') r.campaign('election');
        else r.becomeLeader();
      } else if (result === 'lost') {
        r.becomeFollower(r.term, NONE);
      }
      return;
    }
    default:
      return;
  }
}

function handleAppend(r: Raft, m: AppendMessage): void {
  const reply = (index: number, reject: boolean, rejectHint: number, hintTerm: number) =>
    r.send({ type: 'appResp', from: r.id, to: m.from, term: r.term, index, reject, rejectHint, hintTerm });
  if (m.prevIndex < r.log.committed) {
    // Old or duplicated message: everything up to our commit matches anyway.
    reply(r.log.committed, false, 0, 0);
    return;
  }
  const last = r.log.maybeAppend(m.prevIndex, m.prevTerm, m.commit, m.entries);
  if (last !== undefined) {
    reply(last, false, 0, 0);
    return;
  }
  // Point the leader at the last entry that can possibly match: the largest
  // index at or below prevIndex whose term is not above prevTerm.
  const hint = r.log.findConflictByTerm(Math.min(m.prevIndex, r.log.lastIndex()), m.prevTerm);
  reply(m.prevIndex, true, hint.index, hint.term);
}

function handleHeartbeat(r: Raft, m: HeartbeatMessage): void {
  r.log.commitTo(m.commit);
  if (m.leaseMs > r.heardLeaseMs) r.heardLeaseMs = m.leaseMs;
  const leases = r.cfg.followerLeaseMs > 0 && r.role === 'follower' && r.leaseWanted;
  // The leader counts its own length: a follower configured longer holds the leader's.
  if (leases && m.lease > 0) r.lease.granted(m.lease, m.leaseMs > 0 ? Math.min(m.leaseMs, r.cfg.followerLeaseMs) : r.cfg.followerLeaseMs);
  const seq = leases ? r.lease.tag(r.cfg.clock()) : 0;
  r.send({ type: 'heartbeatResp', from: r.id, to: m.from, term: r.term, ctx: m.ctx, seq });
}

function handleSnapshot(r: Raft, m: SnapshotMessage): void {
  const restored = restore(r, m.snapshot);
  const index = restored ? r.log.lastIndex() : r.log.committed;
  r.send({ type: 'appResp', from: r.id, to: m.from, term: r.term, index, reject: false, rejectHint: 0, hintTerm: 0 });
}

/** Installs a snapshot from the leader. Returns false when it brings nothing new. */
function restore(r: Raft, s: Snapshot): boolean {
  if (s.meta.index <= r.log.committed) return false;
  if (r.role !== 'follower') {
    // Only a leader's follower may receive one; be defensive anyway.
    r.becomeFollower(r.term + 1, NONE);
    return false;
  }
  if (r.log.matchTerm(s.meta.index, s.meta.term)) {
    // We already hold that entry: the snapshot only tells us it is committed.
    r.log.commitTo(s.meta.index);
    return false;
  }
  r.log.restore(s);
  // The configuration as of the snapshot index; later changes arrive as
  // entries. A node absent from it (added after the snapshot was taken) stays
  // a non-member until it applies its own addition.
  r.switchToConfig(s.meta.confState);
  return true;
}
