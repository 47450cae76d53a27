// One simulated server: a durable part that survives crashes (its
// MemoryStorage, standing for the fsynced log, and its applied state, standing
// for the state machine's atomic write of results plus applied index) and a
// volatile RawNode that a crash throws away, with everything it had not yet
// handed to the driver through ready().

import {
  MemoryStorage,
  RawNode,
  mulberry32,
  type Entry,
  type Message,
  type NodeId,
  type RaftConfig,
  type Ready,
} from '../../../src/raft/core/index.js';
import { chainHash, fingerprint, type Checker } from './checker.js';

/** Role and term of a node at the moment it handed out a Ready. */
export interface ReadyView {
  role: string;
  term: number;
}

export type SimRaftOptions = Partial<Omit<RaftConfig, 'id' | 'storage' | 'rand' | 'applied'>>;

const dec = new TextDecoder();

interface SmImage {
  index: number;
  hash: number;
  values: string[];
}

export class SimNode {
  readonly id: NodeId;
  storage: MemoryStorage;
  rn: RawNode | undefined;
  /** Bumped at every crash so that stale events (ticks, reports) are ignored. */
  incarnation = 0;
  /** Removed from the cluster and stopped for good (until re-added). */
  decommissioned = false;
  /** Bumped when the server is added back, so a pending decommission of the old membership is void. */
  memberEpoch = 0;
  readyScheduled = false;
  /** Async driver: the Ready taken and not yet persisted (lost in a crash). */
  outstanding: { rd: Ready; view: ReadyView } | undefined;
  // Durable state machine.
  appliedIndex = 0;
  hash = 0;
  values: string[] = [];
  // Checker bookkeeping.
  commitReported = 0;
  verifiedTerm = -1;
  verifiedUpTo = 0;
  private readonly opts: SimRaftOptions;
  private readonly seed: number;

  constructor(
    id: NodeId,
    opts: SimRaftOptions,
    seed: number,
    /** This node's own clock (virtual, drifting as its ticks do), for read leases. */
    private readonly clock: () => number,
  ) {
    this.id = id;
    this.opts = opts;
    this.seed = seed;
    this.storage = new MemoryStorage();
  }

  get up(): boolean {
    return this.rn !== undefined;
  }

  start(bootstrapVoters?: NodeId[]): void {
    this.incarnation++;
    this.rn = new RawNode({
      id: this.id,
      storage: this.storage,
      applied: this.appliedIndex,
      rand: mulberry32(this.seed * 7919 + this.incarnation),
      clock: this.clock,
      ...this.opts,
    });
    if (bootstrapVoters) this.rn.bootstrap(bootstrapVoters);
  }

  /** Loses the RawNode and everything it had not persisted. */
  crash(): void {
    this.rn = undefined;
    this.incarnation++;
    this.readyScheduled = false;
    this.outstanding = undefined;
  }

  /**
   * Handles one Ready in the driver's order: persist, (maybe crash right
   * there), send, apply, advance, then snapshot and compact if due.
   * `atReady` is the node's role and term when the Ready was taken: its
   * durable log now equals its whole log at that moment.
   * Returns the messages to send, or undefined if it crashed after persisting.
   */
  handleReady(rd: Ready, atReady: ReadyView, checker: Checker, crashAfterPersist: boolean): Message[] | undefined {
    const rn = this.rn!;
    if (rd.snapshot) {
      this.storage.applySnapshot(rd.snapshot);
      const img = JSON.parse(dec.decode(rd.snapshot.data)) as SmImage;
      if (img.index !== rd.snapshot.meta.index) checker.fail(`${this.id}: snapshot data at ${img.index} labelled ${rd.snapshot.meta.index}`);
      this.appliedIndex = img.index;
      this.hash = img.hash;
      this.values = img.values.slice();
      checker.checkSnapshot(this.id, rd.snapshot.meta, img.hash);
    }
    checker.checkOverwrite(this.id, this.storage, rd.entries);
    this.storage.append(rd.entries);
    if (rd.hardState) this.storage.setHardState(rd.hardState);
    checker.checkAppended(this.id, this.storage, rd.entries);
    if (crashAfterPersist) {
      this.crash();
      return undefined;
    }
    for (const e of rd.committedEntries) this.apply(e, checker);
    rn.advance();
    this.afterAdvance(rn, atReady, checker);
    return rd.messages;
  }

  private apply(e: Entry, checker: Checker): void {
    if (e.index !== this.appliedIndex + 1) checker.fail(`${this.id} applies ${e.index} after ${this.appliedIndex}`);
    this.appliedIndex = e.index;
    this.hash = chainHash(this.hash, fingerprint(e));
    if (e.type === 'normal' && e.data.length > 0) {
      const v = dec.decode(e.data);
      this.values.push(v);
      checker.acked.add(v);
    }
    checker.checkApply(this.id, e, this.hash);
  }

  private afterAdvance(rn: RawNode, atReady: ReadyView, checker: Checker): void {
    // What is durable is consistent: the stored commit never passes the stored log.
    const hs = this.storage.hardState();
    if (hs.commit > this.commitReported) {
      checker.recordCommit(this.id, this.storage, this.commitReported, hs.commit, hs.term);
      this.commitReported = hs.commit;
    }
    if (atReady.role === 'leader') {
      if (this.verifiedTerm !== atReady.term) {
        this.verifiedTerm = atReady.term;
        this.verifiedUpTo = 0;
      }
      this.verifiedUpTo = checker.checkLeaderCompleteness(this.id, atReady.term, this.storage, this.verifiedUpTo);
    }
    const plan = rn.snapshotDue();
    if (plan) {
      if (plan.index !== this.appliedIndex) checker.fail(`${this.id}: snapshot plan at ${plan.index}, applied ${this.appliedIndex}`);
      const img: SmImage = { index: this.appliedIndex, hash: this.hash, values: this.values };
      this.storage.createSnapshot(plan.index, plan.confState, new TextEncoder().encode(JSON.stringify(img)));
      this.storage.compact(plan.compactTo);
    }
  }
}
