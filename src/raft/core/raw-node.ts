// The driver's handle on the core, modelled on etcd's RawNode. The driver
// calls tick() on a timer, step() for every message received, and then, while
// hasReady(), takes a Ready and in this order:
//   1. persists `snapshot`, `entries` and `hardState` (fsync when mustSync),
//      writing entries so they replace any stored tail from their first index;
//   2. sends `messages` (never before step 1: votes and acknowledgements
//      promise that what they vouch for is durable);
//   3. applies `snapshot` (if any) and then `committedEntries` in order;
//   4. calls advance().
// Membership changes take effect when their entries are acknowledged by
// advance() (see conf-change.ts for why that is safe); the driver needs to do
// nothing for them but may read confState() afterwards.

import { resolveConfig, type RaftConfig, type ResolvedConfig } from './config.js';
import { decodeConfChange, encodeConfChange } from './conf-change.js';
import { RaftInvariantError } from './errors.js';
import type { ProgressState } from './progress.js';
import type { ReadState } from './read-only.js';
import { Raft } from './raft.js';
import { propose, proposeConfChange, reportSnapshot, reportUnreachable, transferLeadership } from './raft-propose.js';
import {
  NONE,
  hardStateEqual,
  isEmptyHardState,
  type ConfChange,
  type ConfState,
  type Entry,
  type HardState,
  type Message,
  type NodeId,
  type Role,
  type Snapshot,
  type SoftState,
} from './types.js';

export interface Ready {
  /** Present when leader or role changed since the previous Ready. */
  softState?: SoftState;
  /** Present when term, vote or commit changed: persist it. */
  hardState?: HardState;
  /** Entries to persist (replacing any stored entries from their first index on). */
  entries: Entry[];
  /** A snapshot from the leader to persist and to restore the state machine from. */
  snapshot?: Snapshot;
  /** Committed entries to apply, in order, after the snapshot if any. */
  committedEntries: Entry[];
  /** Messages to send once the above is persisted. */
  messages: Message[];
  /** Read indexes for this node's read requests (nothing to persist). */
  readStates: ReadState[];
  /** Whether persisting needs an fsync (entries, term or vote changed; commit alone does not). */
  mustSync: boolean;
}

export interface PeerProgress {
  match: number;
  next: number;
  state: ProgressState;
  isLearner: boolean;
  recentActive: boolean;
  pendingSnapshot: number;
  inflight: number;
}

export interface Status {
  id: NodeId;
  role: Role;
  term: number;
  vote: NodeId;
  lead: NodeId;
  commit: number;
  applied: number;
  firstIndex: number;
  lastIndex: number;
  leadTransferee: NodeId;
  confState: ConfState;
  /** The leader's view of every member (itself included); empty on other roles. */
  progress: Record<NodeId, PeerProgress>;
}

/** What the driver should snapshot and how far it may then compact the log. */
export interface SnapshotPlan {
  /** Snapshot the applied state at this index (the core's applied index). */
  index: number;
  /** Membership to record with it. */
  confState: ConfState;
  /** Compact the log up to here after the snapshot is stored (keeps a margin for slow followers). */
  compactTo: number;
}

export class RawNode {
  private readonly raft: Raft;
  private readonly cfg: ResolvedConfig;
  private prevSoft: SoftState;
  private prevHard: HardState;
  /** The Ready handed out and not yet advanced. */
  private pending: Ready | undefined;

  constructor(config: RaftConfig) {
    this.cfg = resolveConfig(config);
    this.raft = new Raft(this.cfg);
    this.prevSoft = this.raft.softState();
    this.prevHard = this.raft.hardState();
  }

  get id(): NodeId {
    return this.raft.id;
  }

  /**
   * Starts a brand-new cluster on an empty storage: one committed membership
   * entry per initial voter at term 1, identical on every initial member, so
   * that a node joining later learns the full history from the log.
   */
  bootstrap(voters: NodeId[]): void {
    const r = this.raft;
    const storage = this.cfg.storage;
    if (storage.lastIndex() !== 0 || r.log.lastIndex() !== 0 || !isEmptyHardState(storage.initialState().hardState)) {
      throw new Error('bootstrap needs an empty storage');
    }
    if (voters.length === 0) throw new Error('bootstrap needs at least one voter');
    r.becomeFollower(1, NONE);
    const ents: Entry[] = [...new Set(voters)].map((nodeId, i) => ({
      index: i + 1,
      term: 1,
      type: 'confChange',
      data: encodeConfChange({ type: 'addVoter', nodeId }),
    }));
    r.log.append(ents);
    r.log.committed = ents.length;
    // In force at once; applying the entries again later changes nothing.
    for (const e of ents) r.applyConfChange(decodeConfChange(e.data));
    r.confInForce = ents.length;
  }

  tick(): void {
    this.raft.tick();
  }

  /** Starts an election now instead of waiting for the timeout. */
  campaign(): void {
    this.raft.hup(false);
  }

  /** Feeds a message received from a peer. Messages for another node are ignored. */
  step(m: Message): void {
    if (m.to !== this.raft.id) return;
    this.raft.step(m);
  }

  /**
   * Appends a client entry. Throws ProposalError ('notLeader',
   * 'transferInProgress', 'tooManyUncommitted', 'removed'). The returned
   * position lets the caller recognise its entry among committed entries: if
   * another entry shows up there, the proposal was lost.
   */
  propose(data: Uint8Array): { index: number; term: number } {
    return propose(this.raft, 'normal', data);
  }

  /**
   * Appends a membership change. Besides propose()'s errors, throws
   * 'confChangePending' while an earlier change is unapplied (or the leader
   * has not yet applied its first entry), 'invalidConfChange', and
   * 'learnerNotCaughtUp' when promoting a lagging learner.
   */
  proposeConfChange(cc: ConfChange): { index: number; term: number } {
    return proposeConfChange(this.raft, cc);
  }

  /**
   * Hands leadership to `to` once it has caught up; proposals are refused
   * until the transfer succeeds or is abandoned after an election timeout.
   */
  transferLeadership(to: NodeId): void {
    transferLeadership(this.raft, to);
  }

  /** The transport could not reach `id`: stop streaming to it optimistically. */
  reportUnreachable(id: NodeId): void {
    reportUnreachable(this.raft, id);
  }

  /** The transport finished (ok) or gave up (!ok) sending a snapshot to `id`. */
  reportSnapshot(id: NodeId, ok: boolean): void {
    reportSnapshot(this.raft, id, ok);
  }

  /**
   * Asks for a read index (see read-only.ts): once this node has applied up to the
   * index of the ReadState tagged `ctx`, a read reflects every entry committed before
   * the request. No answer comes without a leader: ask again after a while.
   */
  readIndex(ctx: number): void {
    this.raft.readIndex(ctx);
  }

  /**
   * With a follower read lease (lease.ts): the index to apply up to before serving a read
   * that begins now, without asking anyone, and the term it holds for (should the term change
   * first, ask for a read index instead). Null without a lease.
   */
  leaseRead(): { index: number; term: number } | null {
    return this.raft.leaseRead();
  }

  /**
   * Whether this node takes read leases from now on (default true). A leased follower holds
   * the leader's commits until it has the entries; one whose disk and thread are busy (with
   * indexing, say) would slow every write, so it may decline them meanwhile: its heartbeat
   * replies stop asking, and the lease it holds runs out.
   */
  wantLeases(wanted: boolean): void {
    this.raft.leaseWanted = wanted;
  }

  /**
   * Takes out, ahead of the next Ready, what depends on nothing being persisted: heartbeats
   * and their answers, read index requests and answers, and read states. The driver sends them
   * while it is still writing the previous Ready, so that a slow disk delays neither the
   * leader's heartbeats nor reads. (A heartbeat's answer vouches for no log entry, and a term
   * it carries before it is durable changes no vote: see read-only.ts.)
   */
  takeUrgent(): { messages: Message[]; readStates: ReadState[] } {
    const r = this.raft;
    const urgent = (m: Message) => m.type === 'heartbeat' || m.type === 'heartbeatResp' || m.type === 'readIndex' || m.type === 'readIndexResp';
    const messages = r.msgs.filter(urgent);
    if (messages.length > 0) r.msgs = r.msgs.filter((m) => !urgent(m));
    const readStates = r.readStates;
    r.readStates = [];
    // The open read round's heartbeats are leaving now.
    if (messages.some((m) => m.type === 'heartbeat')) r.readOnly.seal();
    return { messages, readStates };
  }

  /** Whether a Ready is waiting. False while one is handed out and not advanced. */
  hasReady(): boolean {
    if (this.pending) return false;
    const r = this.raft;
    const soft = r.softState();
    if (soft.lead !== this.prevSoft.lead || soft.role !== this.prevSoft.role) return true;
    const hard = r.hardState();
    if (!isEmptyHardState(hard) && !hardStateEqual(hard, this.prevHard)) return true;
    if (r.log.hasPendingSnapshot()) return true;
    if (r.msgs.length > 0 || r.readStates.length > 0 || r.log.unstable.entries.length > 0) return true;
    return r.log.hasNextCommittedEntries();
  }

  readyIfAny(): Ready | undefined {
    return this.hasReady() ? this.ready() : undefined;
  }

  ready(): Ready {
    if (this.pending) throw new RaftInvariantError('ready() called again before advance()');
    const r = this.raft;
    const rd: Ready = {
      entries: r.log.unstableEntries(),
      committedEntries: r.log.nextCommittedEntries(),
      messages: r.msgs,
      readStates: r.readStates,
      mustSync: false,
    };
    r.msgs = [];
    r.readStates = [];
    // The heartbeats of the open read round leave with these messages.
    r.readOnly.seal();
    const soft = r.softState();
    if (soft.lead !== this.prevSoft.lead || soft.role !== this.prevSoft.role) {
      rd.softState = soft;
      this.prevSoft = soft;
    }
    const hard = r.hardState();
    if (!hardStateEqual(hard, this.prevHard)) {
      rd.hardState = hard;
      rd.mustSync = hard.term !== this.prevHard.term || hard.vote !== this.prevHard.vote;
      this.prevHard = hard;
    }
    if (r.log.unstable.snapshot) {
      rd.snapshot = r.log.unstable.snapshot;
      rd.mustSync = true;
    }
    if (rd.entries.length > 0) rd.mustSync = true;
    this.pending = rd;
    return rd;
  }

  /** Acknowledges that the last Ready was persisted, sent and applied. */
  advance(): void {
    const rd = this.pending;
    if (!rd) throw new RaftInvariantError('advance() without a Ready');
    this.pending = undefined;
    const r = this.raft;
    const lastEntry = rd.entries[rd.entries.length - 1];
    if (lastEntry) r.log.unstable.stableTo(lastEntry.index, lastEntry.term);
    if (rd.snapshot) r.log.unstable.stableSnapTo(rd.snapshot.meta.index);
    r.onPersisted();
    const lastApplied = rd.committedEntries[rd.committedEntries.length - 1];
    if (lastApplied) {
      for (const e of rd.committedEntries) {
        if (e.type === 'confChange') {
          r.log.appliedTo(e.index);
          r.applyConfChange(decodeConfChange(e.data));
        }
      }
      r.log.appliedTo(lastApplied.index);
      r.reduceUncommittedSize(rd.committedEntries);
    } else if (rd.snapshot && rd.snapshot.meta.index > r.log.applied) {
      r.log.appliedTo(rd.snapshot.meta.index);
    }
  }

  /** The current term (cheaper than `status()`). */
  term(): number {
    return this.raft.term;
  }

  /** The commit index (cheaper than `status()`). */
  committed(): number {
    return this.raft.log.committed;
  }

  /** Membership as of the applied index. */
  confState(): ConfState {
    return this.raft.confState();
  }

  /**
   * A snapshot is due once `snapshotThreshold` entries were applied since the
   * storage's latest one. The driver then stores a snapshot at `index` with
   * `confState` and compacts its log up to `compactTo`.
   */
  snapshotDue(): SnapshotPlan | undefined {
    const r = this.raft;
    const storage = this.cfg.storage;
    const applied = r.log.applied;
    if (r.log.hasPendingSnapshot() || applied - storage.snapshotMeta().index < this.cfg.snapshotThreshold) {
      return undefined;
    }
    const compactTo = Math.max(storage.firstIndex() - 1, applied - this.cfg.compactionMargin);
    return { index: applied, confState: r.confState(), compactTo };
  }

  status(): Status {
    const r = this.raft;
    const progress: Record<NodeId, PeerProgress> = {};
    if (r.role === 'leader') {
      for (const id of r.tracker.sortedIds()) {
        const pr = r.tracker.progress.get(id)!;
        progress[id] = {
          match: pr.match,
          next: pr.next,
          state: pr.state,
          isLearner: pr.isLearner,
          recentActive: id === r.id || pr.recentActive,
          pendingSnapshot: pr.pendingSnapshot,
          inflight: pr.inflights.count,
        };
      }
    }
    return {
      id: r.id,
      role: r.role,
      term: r.term,
      vote: r.vote,
      lead: r.lead,
      commit: r.log.committed,
      applied: r.log.applied,
      firstIndex: r.log.firstIndex(),
      lastIndex: r.log.lastIndex(),
      leadTransferee: r.leadTransferee,
      confState: r.confState(),
      progress,
    };
  }
}
