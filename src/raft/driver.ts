import { EventEmitter } from 'node:events';
import type { KvStore } from '../store/kv.js';
import {
  RawNode,
  type ConfChange,
  type Entry,
  type Message,
  type NodeId,
  type ReadState,
  type Ready,
  type Snapshot,
  type SoftState,
  type Status,
} from './core/index.js';
import type { RaftLogStore } from './log-store.js';
import { detached } from '../util/request-context.js';

/** How the driver reaches other nodes. */
export interface RaftTransport {
  send(messages: Message[]): void;
}

/** What the driver needs from the state machine it replicates. */
export interface RaftApplier {
  /** Applies committed entries in order (conf changes included, to record the applied index). */
  apply(entries: Entry[]): Promise<void>;
  /** Replaces the applied state with a snapshot received from the leader. */
  installSnapshot(snapshot: Snapshot): Promise<void>;
}

/** Log retained by a node that is the only member (see maybeCompact). */
const ALONE_LOG_BYTES = 16 * 1024 * 1024;

export interface DriverOptions {
  tickMs: number;
  /** Snapshot and compact when the retained log holds more than this many bytes. */
  maxLogBytes: number;
}

export interface DriverEvents {
  softState: [SoftState];
  applied: [number];
  /** The answer to a `readIndex(ctx)`. */
  readState: [ReadState];
  error: [unknown];
}

/** Who this node heard from lately: the health check's view of the cluster (monotonic ms). */
export interface Contact {
  /** When each peer's last message arrived. */
  lastHeard: ReadonlyMap<NodeId, number>;
  /** The last leader that sent entries or a heartbeat, its term, and when. */
  leader: { id: NodeId; term: number; at: number } | null;
  /** The highest commit index a leader of `leader.term` announced (appends carry it whole). */
  leaderCommit: number;
}

/**
 * The only asynchronous part of Raft: ticks the core, persists what each Ready asks (fsync
 * before any message that depends on it leaves), sends messages, applies committed entries,
 * and snapshots/compacts the log when it grows.
 */
export class RaftDriver extends EventEmitter<DriverEvents> {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private scheduled = false;
  private stopped = false;
  soft: SoftState = { lead: '', role: 'follower' };
  readonly contact: Contact & { lastHeard: Map<NodeId, number> } = { lastHeard: new Map(), leader: null, leaderCommit: 0 };

  constructor(
    readonly node: RawNode,
    private readonly store: KvStore,
    private readonly log: RaftLogStore,
    private readonly transport: RaftTransport,
    private readonly applier: RaftApplier,
    private readonly opts: DriverOptions,
  ) {
    super();
  }

  start(): void {
    this.timer = setInterval(() => {
      this.node.tick();
      this.schedule();
    }, this.opts.tickMs);
    this.schedule();
  }

  /**
   * While a Ready is being written (a large append's fsync, applying a batch of entries), what
   * depends on no write leaves at once instead of waiting for the loop (see RawNode.takeUrgent).
   */
  private schedule(): void {
    if (this.running && !this.stopped) {
      const { messages, readStates } = this.node.takeUrgent();
      if (messages.length > 0) this.transport.send(messages);
      for (const s of readStates) this.emit('readState', s);
    }
    this.scheduleLoop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    while (this.running) await new Promise((r) => setTimeout(r, 5));
  }

  get id(): NodeId {
    return this.node.id;
  }

  isLeader(): boolean {
    return this.soft.role === 'leader';
  }

  status(): Status {
    return this.node.status();
  }

  step(m: Message): void {
    if (this.stopped) return;
    this.noteContact(m);
    try {
      this.node.step(m);
    } catch (e) {
      this.emit('error', e);
    }
    this.schedule();
  }

  private noteContact(m: Message): void {
    const now = performance.now();
    const c = this.contact;
    c.lastHeard.set(m.from, now);
    if (m.type !== 'app' && m.type !== 'heartbeat' && m.type !== 'snapshot') return;
    if (c.leader && m.term < c.leader.term) return;
    if (!c.leader || m.term > c.leader.term) c.leaderCommit = 0;
    c.leader = { id: m.from, term: m.term, at: now };
    // A heartbeat's commit is capped at what the follower holds; an append's is the leader's own.
    if (m.type === 'app') c.leaderCommit = Math.max(c.leaderCommit, m.commit);
  }

  /** Asks for a read index; the answer comes as a `readState` event tagged `ctx` (none without a leader). */
  readIndex(ctx: number): void {
    if (this.stopped) return;
    this.node.readIndex(ctx);
    this.schedule();
  }

  propose(data: Uint8Array): { index: number; term: number } {
    const r = this.node.propose(data);
    this.schedule();
    return r;
  }

  proposeConfChange(cc: ConfChange): { index: number; term: number } {
    const r = this.node.proposeConfChange(cc);
    this.schedule();
    return r;
  }

  transferLeadership(to: NodeId): void {
    this.node.transferLeadership(to);
    this.schedule();
  }

  campaign(): void {
    this.node.campaign();
    this.schedule();
  }

  reportUnreachable(id: NodeId): void {
    this.node.reportUnreachable(id);
  }

  reportSnapshot(id: NodeId, ok: boolean): void {
    this.node.reportSnapshot(id, ok);
    this.schedule();
  }

  private scheduleLoop(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    // The loop serves no request, even when a request's proposal is what woke it up.
    detached(() =>
      setImmediate(() => {
        this.scheduled = false;
        void this.loop();
      }),
    );
  }

  private async loop(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (!this.stopped && this.node.hasReady()) {
        await this.handle(this.node.ready());
        this.node.advance();
      }
      if (!this.stopped) await this.maybeCompact();
    } catch (e) {
      this.emit('error', e);
    } finally {
      this.running = false;
    }
    if (!this.stopped && this.node.hasReady()) this.schedule();
  }

  private async handle(rd: Ready): Promise<void> {
    if (rd.softState) {
      this.soft = rd.softState;
      this.emit('softState', rd.softState);
    }
    // A read index needs nothing persisted: the reader waits until it has applied up to it.
    for (const s of rd.readStates) this.emit('readState', s);
    if (rd.snapshot) await this.applier.installSnapshot(rd.snapshot);
    let messages = rd.messages;
    if (rd.entries.length > 0 || rd.hardState) {
      // A leader's appends and heartbeats vouch for nothing on its own disk: they leave while it
      // writes, so that its fsync and its followers' overlap (Raft thesis, 10.2.1); the leader
      // counts itself towards a commit only once its write is done (advance). Replies and votes
      // vouch for what this node stored, and nothing leaves before a new term or vote is durable.
      const durable = this.log.memory.hardState();
      const sameTermAndVote = !rd.hardState || (rd.hardState.term === durable.term && rd.hardState.vote === durable.vote);
      if (sameTermAndVote && !rd.snapshot && messages.length > 0) {
        const early = messages.filter((m) => m.type === 'app' || m.type === 'heartbeat');
        if (early.length > 0) {
          this.transport.send(early);
          messages = messages.filter((m) => m.type !== 'app' && m.type !== 'heartbeat');
        }
      }
      const wb = this.store.batch();
      this.log.stage(wb, rd.entries, rd.hardState);
      await wb.commit({ sync: rd.mustSync });
      this.log.commitStaged(rd.entries, rd.hardState);
    }
    if (messages.length > 0) this.transport.send(messages);
    if (rd.committedEntries.length > 0) {
      await this.applier.apply(rd.committedEntries);
      this.emit('applied', rd.committedEntries[rd.committedEntries.length - 1]!.index);
    }
  }

  private async maybeCompact(): Promise<void> {
    const plan = this.node.snapshotDue();
    if (plan) {
      await this.log.snapshotAndCompact(plan.index, plan.confState, plan.compactTo);
      return;
    }
    // A node alone has no one to send its log to: it keeps a little of it, not up to
    // maxLogBytes, which it would hold in memory and read back at every start.
    const held = this.log.heldBytes;
    if (held > this.opts.maxLogBytes || (held > ALONE_LOG_BYTES && this.alone())) {
      const st = this.node.status();
      if (st.applied > this.log.memory.snapshotMeta().index) {
        await this.log.snapshotAndCompact(st.applied, this.node.confState(), st.applied);
      }
    }
  }

  /** Whether this node is the only member (no voter or learner to send entries to). */
  private alone(): boolean {
    const cs = this.node.confState();
    return cs.learners.length === 0 && cs.voters.length === 1 && cs.voters[0] === this.node.id;
  }
}
