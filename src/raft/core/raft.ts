// The Raft state machine proper: terms, roles, elections and the rules every
// message goes through before the role-specific handlers (raft-leader.ts,
// raft-follower.ts) see it. Modelled on etcd's raft.go.
//
// Persistence contract (see raw-node.ts): everything this produces is staged
// in memory; the driver persists entries and hard state from a Ready before
// sending its messages. A leader counts itself towards a quorum only for
// entries it has persisted (onPersisted), so a commit index is never ahead of
// what a majority holds durably.

import { applyConfChange, decodeConfChange } from './conf-change.js';
import type { ResolvedConfig } from './config.js';
import { RaftInvariantError } from './errors.js';
import { FollowerLease } from './lease.js';
import { RaftLog } from './raft-log.js';
import { bcastAppend, leaderReadIndex, maybeCommit, maybeSendAppend, sendTimeoutNow, stepLeader, tickHeartbeat } from './raft-leader.js';
import { ReadOnly, type ReadState } from './read-only.js';
import { stepCandidate, stepFollower } from './raft-follower.js';
import { ProgressTracker } from './tracker.js';
import {
  NONE,
  isEmptyHardState,
  type ConfChange,
  type ConfState,
  type Entry,
  type EntryType,
  type HardState,
  type Message,
  type NodeId,
  type PreVoteMessage,
  type Role,
  type SoftState,
  type VoteMessage,
} from './types.js';

type CampaignKind = 'preElection' | 'election' | 'transfer';

/** Page size when scanning committed entries for membership changes. */
const SCAN_BYTES = 4 * 1024 * 1024;

export class Raft {
  readonly id: NodeId;
  readonly cfg: ResolvedConfig;
  readonly log: RaftLog;
  readonly tracker: ProgressTracker;
  term = 0;
  vote: NodeId = NONE;
  lead: NodeId = NONE;
  role: Role = 'follower';
  isLearner = false;
  /** Outgoing messages, handed to the driver by the next Ready. */
  msgs: Message[] = [];
  /** Read indexes obtained for this node's read requests, handed out by the next Ready. */
  readStates: ReadState[] = [];
  /** The leader's read requests awaiting a quorum's confirmation. */
  readonly readOnly = new ReadOnly();
  /** Voter this leader is handing leadership to; proposals wait meanwhile. */
  leadTransferee: NodeId = NONE;
  /** Index of the latest membership change this leader appended (or its last index at election). */
  pendingConfIndex = 0;
  /**
   * Membership changes up to here are in force even if not yet applied
   * (bootstrap puts its initial members in force at once).
   */
  confInForce = 0;
  /** Payload bytes appended by this leader and not yet applied. */
  uncommittedSize = 0;
  electionElapsed = 0;
  heartbeatElapsed = 0;
  randomizedElectionTimeout = 0;
  /** As a follower: the read lease its leader granted, if any (lease.ts). */
  readonly lease: FollowerLease;
  /** As a follower: whether to take leases now (the application may decline them while busy). */
  leaseWanted = true;
  /** As a leader: when it took office (clock), for the leases its predecessor may have granted. */
  leaderSince = -Infinity;
  /** The longest lease length a leader told this node of (ms): how long a predecessor's leases may last. */
  heardLeaseMs = 0;

  constructor(cfg: ResolvedConfig) {
    this.id = cfg.id;
    this.cfg = cfg;
    this.log = new RaftLog(cfg.storage, cfg.maxCommittedSizePerReady);
    this.tracker = new ProgressTracker(cfg.maxInflightMsgs);
    this.lease = new FollowerLease(cfg.rand);
    const { hardState, confState } = cfg.storage.initialState();
    this.tracker.setConfState(confState, this.log.lastIndex() + 1);
    if (!isEmptyHardState(hardState)) this.loadState(hardState);
    const snapIndex = this.log.firstIndex() - 1;
    const applied = cfg.applied ?? snapIndex;
    if (applied > snapIndex) {
      if (applied > this.log.committed) {
        throw new RaftInvariantError(`applied ${applied} is beyond the stored commit ${this.log.committed}`);
      }
      // The application's state already includes these entries, so their
      // membership changes are in force too, but only the log remembers them.
      this.forEachEntry(snapIndex + 1, applied + 1, (e) => {
        if (e.type === 'confChange') this.applyConfChange(decodeConfChange(e.data));
      });
      this.log.appliedTo(applied);
    }
    this.isLearner = this.tracker.learners.has(this.id);
    this.becomeFollower(this.term, NONE);
  }

  private loadState(hs: HardState): void {
    if (hs.commit > this.log.lastIndex()) {
      throw new RaftInvariantError(`stored commit ${hs.commit} is beyond the last index ${this.log.lastIndex()}`);
    }
    this.log.committed = Math.max(hs.commit, this.log.committed);
    this.term = hs.term;
    this.vote = hs.vote;
  }

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.log.committed };
  }

  softState(): SoftState {
    return { lead: this.lead, role: this.role };
  }

  send(m: Message): void {
    if (m.to === this.id) throw new RaftInvariantError(`message ${m.type} addressed to self`);
    this.msgs.push(m);
  }

  // ---- roles -------------------------------------------------------------

  private reset(term: number): void {
    if (this.term !== term) {
      this.term = term;
      this.vote = NONE;
    }
    this.lead = NONE;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.randomizedElectionTimeout =
      this.cfg.electionTick + Math.floor(this.cfg.rand() * this.cfg.electionTick);
    this.leadTransferee = NONE;
    this.tracker.resetVotes();
    this.tracker.resetProgress(this.log.lastIndex() + 1, this.id, this.log.persistedLastIndex());
    this.pendingConfIndex = 0;
    this.uncommittedSize = 0;
    this.readOnly.reset();
    this.lease.clear();
  }

  becomeFollower(term: number, lead: NodeId): void {
    this.reset(term);
    this.lead = lead;
    this.role = 'follower';
  }

  private becomeCandidate(): void {
    if (this.role === 'leader') throw new RaftInvariantError('leader cannot become candidate');
    this.reset(this.term + 1);
    this.vote = this.id;
    this.role = 'candidate';
  }

  private becomePreCandidate(): void {
    if (this.role === 'leader') throw new RaftInvariantError('leader cannot become pre-candidate');
    // Neither term nor vote change: a pre-election must leave no trace if it fails.
    this.tracker.resetVotes();
    this.lead = NONE;
    this.role = 'preCandidate';
  }

  becomeLeader(): void {
    if (this.role === 'follower') throw new RaftInvariantError('follower cannot become leader');
    this.reset(this.term);
    this.lead = this.id;
    this.role = 'leader';
    this.leaderSince = this.cfg.clock();
    this.tracker.progress.get(this.id)?.becomeReplicate();
    // The no-op lets entries of earlier terms commit (they never do by count).
    this.appendEntries([{ type: 'normal', data: new Uint8Array(0) }]);
    // No membership change until the no-op is applied: every earlier change
    // is then in force here, and the leader has committed in its own term
    // (the fix to the original single-server change algorithm).
    this.pendingConfIndex = this.log.lastIndex();
    bcastAppend(this);
  }

  // ---- time and elections ------------------------------------------------

  tick(): void {
    if (this.role === 'leader') tickHeartbeat(this);
    else this.tickElection();
  }

  private tickElection(): void {
    this.electionElapsed++;
    if (this.promotable() && this.electionElapsed >= this.randomizedElectionTimeout) {
      this.electionElapsed = 0;
      this.hup(false);
    }
  }

  /** Whether this node may ever campaign: a voter, not in the middle of installing a snapshot. */
  promotable(): boolean {
    const pr = this.tracker.progress.get(this.id);
    return pr !== undefined && !pr.isLearner && !this.log.hasPendingSnapshot();
  }

  hup(transfer: boolean): void {
    if (this.role === 'leader' || !this.promotable()) return;
    // Campaigning under a configuration already known to be superseded could
    // pair with a majority that does not intersect the current one.
    if (this.hasUnappliedConfChanges()) return;
    this.campaign(this.cfg.preVote && !transfer ? 'preElection' : transfer ? 'transfer' : 'election');
  }

  campaign(kind: CampaignKind): void {
    let term: number;
    if (kind === 'preElection') {
      this.becomePreCandidate();
      term = this.term + 1;
    } else {
      this.becomeCandidate();
      term = this.term;
    }
    this.tracker.recordVote(this.id, true);
    if (this.tracker.tallyVotes().result === 'won') {
      // A cluster of one wins at once.
      if (kind === 'preElection') this.campaign('election');
      else this.becomeLeader();
      return;
    }
    const lastIndex = this.log.lastIndex();
    const lastTerm = this.log.lastTerm();
    for (const to of this.tracker.sortedVoters()) {
      if (to === this.id) continue;
      if (kind === 'preElection') {
        const m: PreVoteMessage = { type: 'preVote', from: this.id, to, term, lastIndex, lastTerm };
        this.send(m);
      } else {
        const m: VoteMessage = { type: 'vote', from: this.id, to, term, lastIndex, lastTerm, transfer: kind === 'transfer' };
        this.send(m);
      }
    }
  }

  private hasUnappliedConfChanges(): boolean {
    const from = Math.max(this.log.applied, this.confInForce);
    if (from >= this.log.committed) return false;
    let found = false;
    this.forEachEntry(from + 1, this.log.committed + 1, (e) => {
      if (e.type === 'confChange') found = true;
    });
    return found;
  }

  /** Visits entries in [lo, hi) page by page; stops silently at a compacted index. */
  private forEachEntry(lo: number, hi: number, fn: (e: Entry) => void): void {
    let i = lo;
    while (i < hi) {
      const ents = this.log.slice(i, hi, SCAN_BYTES);
      if (ents === undefined || ents.length === 0) return;
      for (const e of ents) fn(e);
      i = ents[ents.length - 1]!.index + 1;
    }
  }

  // ---- messages ----------------------------------------------------------

  step(m: Message): void {
    if (m.term > this.term) {
      if (m.type === 'vote' || m.type === 'preVote') {
        const force = m.type === 'vote' && m.transfer;
        const inLease = this.cfg.checkQuorum && this.lead !== NONE && this.electionElapsed < this.cfg.electionTick;
        // Leader lease: while we hear from a live leader, a node that lost
        // touch (and so campaigns) must not depose it.
        if (!force && inLease) return;
      }
      if (m.type === 'preVote' || (m.type === 'preVoteResp' && !m.reject)) {
        // A pre-vote changes no term; a granted pre-vote reply carries the
        // future term and is counted, not obeyed.
      } else if (m.type === 'app' || m.type === 'heartbeat' || m.type === 'snapshot') {
        this.becomeFollower(m.term, m.from);
      } else {
        this.becomeFollower(m.term, NONE);
      }
    } else if (m.term < this.term) {
      if ((this.cfg.checkQuorum || this.cfg.preVote) && (m.type === 'heartbeat' || m.type === 'app')) {
        // A stale leader (e.g. back from a partition) would otherwise never
        // learn the new term: with pre-vote and check-quorum nobody disrupts it.
        this.send({ type: 'appResp', from: this.id, to: m.from, term: this.term, index: 0, reject: false, rejectHint: 0, hintTerm: 0 });
      } else if (m.type === 'preVote') {
        this.send({ type: 'preVoteResp', from: this.id, to: m.from, term: this.term, reject: true });
      }
      return;
    }

    if (m.type === 'vote' || m.type === 'preVote') {
      this.handleVoteRequest(m);
      return;
    }
    switch (this.role) {
      case 'leader':
        stepLeader(this, m);
        return;
      case 'candidate':
      case 'preCandidate':
        stepCandidate(this, m);
        return;
      case 'follower':
        stepFollower(this, m);
        return;
    }
  }

  private handleVoteRequest(m: VoteMessage | PreVoteMessage): void {
    const respType = m.type === 'vote' ? 'voteResp' : 'preVoteResp';
    const canVote =
      this.vote === m.from ||
      (this.vote === NONE && this.lead === NONE) ||
      (m.type === 'preVote' && m.term > this.term);
    if (canVote && this.log.isUpToDate(m.lastIndex, m.lastTerm)) {
      // The reply carries the election's term so the candidate can match it.
      this.send({ type: respType, from: this.id, to: m.from, term: m.term, reject: false });
      if (m.type === 'vote') {
        this.electionElapsed = 0;
        this.vote = m.from;
      }
    } else {
      this.send({ type: respType, from: this.id, to: m.from, term: this.term, reject: true });
    }
  }

  /**
   * A read request of this node's own: the leader confirms its commit index; a
   * follower asks its leader. Without a leader the request is dropped, and the
   * caller asks again later; the answer comes as a ReadState tagged `ctx`.
   */
  readIndex(ctx: number): void {
    if (this.role === 'leader') leaderReadIndex(this, this.id, ctx);
    else if (this.role === 'follower' && this.lead !== NONE) this.send({ type: 'readIndex', from: this.id, to: this.lead, term: this.term, ctx });
  }

  /**
   * A follower holding a read lease (lease.ts): once it has applied up to the returned
   * index, it may serve a read that begins now. Null without a lease: use readIndex.
   */
  leaseRead(): { index: number; term: number } | null {
    if (this.role !== 'follower' || this.lead === NONE || !this.lease.holds(this.cfg.clock())) return null;
    return { index: this.log.lastIndex(), term: this.term };
  }

  // ---- appending ---------------------------------------------------------

  appendEntries(ents: { type: EntryType; data: Uint8Array }[]): boolean {
    const li = this.log.lastIndex();
    const full: Entry[] = ents.map((e, i) => ({ index: li + 1 + i, term: this.term, type: e.type, data: e.data }));
    let size = 0;
    for (const e of full) size += e.data.byteLength;
    const max = this.cfg.maxUncommittedEntriesSize;
    // Always accept something when nothing is outstanding, so a single large
    // entry can make progress.
    if (max > 0 && this.uncommittedSize > 0 && size > 0 && this.uncommittedSize + size > max) return false;
    this.uncommittedSize += size;
    this.log.append(full);
    return true;
  }

  reduceUncommittedSize(ents: Entry[]): void {
    if (this.role !== 'leader') return;
    let size = 0;
    for (const e of ents) size += e.data.byteLength;
    this.uncommittedSize = Math.max(0, this.uncommittedSize - size);
  }

  // ---- persistence and membership ----------------------------------------

  /** Called once the driver persisted a Ready: the leader now counts itself. */
  onPersisted(): void {
    if (this.role !== 'leader') return;
    const pr = this.tracker.progress.get(this.id);
    if (pr && pr.maybeUpdate(this.log.persistedLastIndex()) && maybeCommit(this)) bcastAppend(this);
  }

  confState(): ConfState {
    return this.tracker.confState();
  }

  applyConfChange(cc: ConfChange): void {
    this.switchToConfig(applyConfChange(this.tracker.confState(), cc));
  }

  switchToConfig(cs: ConfState): void {
    const wasLeader = this.role === 'leader';
    this.tracker.setConfState(cs, this.log.lastIndex() + 1);
    const pr = this.tracker.progress.get(this.id);
    this.isLearner = pr?.isLearner ?? false;
    if (!wasLeader) return;
    if (pr === undefined || pr.isLearner) {
      this.stepDownAfterRemoval();
      return;
    }
    // A smaller quorum may commit at once; new peers need a first probe.
    if (maybeCommit(this)) bcastAppend(this);
    else for (const id of this.tracker.sortedIds()) if (id !== this.id) maybeSendAppend(this, id, false);
    if (this.leadTransferee !== NONE && !this.tracker.isVoter(this.leadTransferee)) this.leadTransferee = NONE;
  }

  /**
   * A leader that is no longer a voter hands over at once to a caught-up
   * voter, if any, instead of leaving the cluster to time out.
   */
  private stepDownAfterRemoval(): void {
    let best: NodeId = NONE;
    let bestMatch = -1;
    for (const id of this.tracker.sortedVoters()) {
      const match = this.tracker.progress.get(id)?.match ?? 0;
      if (match > bestMatch) {
        best = id;
        bestMatch = match;
      }
    }
    if (best !== NONE && bestMatch === this.log.lastIndex()) sendTimeoutNow(this, best);
    this.becomeFollower(this.term, NONE);
  }
}
