import type { NodeId } from '../raft/core/index.js';

/** What the reports need from the node. */
export interface ProcessingSources {
  readonly nodeId: NodeId;
  isLeader(): boolean;
  leaderId(): NodeId | null;
  /** The members other than this node (voters and learners): those that serve reads. */
  others(): NodeId[];
  /** When each peer was last heard from (monotonic ms). */
  lastHeard(id: NodeId): number | undefined;
  /** The first batch uid this node has not processed yet. */
  nextUnprocessed(): number;
  /** Sends this node's report to the leader. */
  send(leader: NodeId, nextBatchUid: number): Promise<void>;
  /** A member's report arrived (the leader may now settle batches). */
  onReport(): void;
}

export interface ProcessingBounds {
  /** A member silent for longer is out of touch: it is not waited for. */
  contactMs: number;
  /** A batch the leader finished this long ago is settled even if a member in touch still lacks it. */
  maxWaitMs: number;
}

/**
 * Completion visible everywhere (see docs/cluster-reads.md). Members report to the leader how
 * far they have processed the decided batches; the leader lets a batch's finish into the log
 * (which is what lets any node report its tasks finished) once every member in touch has
 * processed it, or after `maxWaitMs`: a member that slow lags beyond the health check's bound
 * and leaves the balancer's rotation. Reads stay consistent either way (they wait for what
 * the log says is finished); this only spares them the wait in the usual case.
 */
export class ProcessingReports {
  /** The leader's view: each member's first unprocessed batch. Reset when leadership changes. */
  private readonly next = new Map<NodeId, number>();
  private sending = false;
  private again = false;

  constructor(
    private readonly s: ProcessingSources,
    private readonly bounds: ProcessingBounds,
  ) {}

  /** This node processed a batch, or has a new leader: tell the leader (one report in flight at a time). */
  report(): void {
    if (this.s.isLeader()) return;
    if (this.sending) {
      this.again = true;
      return;
    }
    const leader = this.s.leaderId();
    if (!leader || leader === this.s.nodeId) return;
    this.sending = true;
    this.s
      .send(leader, this.s.nextUnprocessed())
      .catch(() => {
        // The leader is gone or busy: the next batch, or the next leader, brings a new report.
      })
      .finally(() => {
        this.sending = false;
        if (this.again) {
          this.again = false;
          this.report();
        }
      });
  }

  /** On the leader: a member's report. */
  received(from: NodeId, nextBatchUid: number): void {
    if (nextBatchUid <= (this.next.get(from) ?? -1)) return;
    this.next.set(from, nextBatchUid);
    this.s.onReport();
  }

  /** Leadership changed: reports made to an earlier leader say nothing here. */
  reset(): void {
    this.next.clear();
  }

  /**
   * On the leader: whether batch `uid`, which it finished at `finishedAt` (epoch ms), may be
   * settled now; otherwise the number of milliseconds after which it may be anyway.
   */
  waitFor(uid: number, finishedAt: number, now = Date.now()): number {
    const left = this.bounds.maxWaitMs - (now - finishedAt);
    if (left <= 0) return 0;
    const clock = performance.now();
    for (const id of this.s.others()) {
      const heard = this.s.lastHeard(id);
      if (heard === undefined || clock - heard > this.bounds.contactMs) continue;
      if ((this.next.get(id) ?? -1) <= uid) return left;
    }
    return 0;
  }
}
