import { ApiError } from '../errors/api-error.js';
import type { TaskQueue } from '../tasks/task-queue.js';
import type { Replicator } from './replicator.js';

export type ReadConsistency = 'consistent' | 'stale';

/** How a consistent read learnt what to reflect: its follower's lease, or the leader's read index. */
export const READ_PATHS = ['lease', 'read_index'] as const;
export type ReadPath = (typeof READ_PATHS)[number];

/** What a consistent read waits on. */
export interface ReadSources {
  readonly nodeId: string;
  readonly replicator: Pick<Replicator, 'readIndex' | 'leaseRead' | 'term' | 'alone' | 'waitUntil'>;
  readonly queue: TaskQueue;
  /** A read waited (whatever the outcome), for metrics: under a lease or for a read index. */
  observe?(outcome: 'ok' | 'timeout', seconds: number, via: ReadPath): void;
}

/**
 * Read-your-writes on every node (see docs/cluster-reads.md). A read waits until this node
 * reflects everything any node may have reported: it learns the leader's commit index (a read
 * index, confirmed by a quorum), applies the log up to it, then finishes every batch whose
 * finish the log already holds. Reads arriving together share one read index. A follower
 * holding a read lease needs no read index: it applies its own log as of the read's start.
 */
export class ConsistentReads {
  constructor(
    private readonly s: ReadSources,
    readonly mode: ReadConsistency,
    readonly timeoutMs: number,
  ) {}

  /**
   * Resolves once a read here is consistent (unless `mode`, or the node's default, is stale);
   * throws a 503 `consistent_read_timeout` past the bound.
   */
  async ready(mode: ReadConsistency = this.mode): Promise<void> {
    if (mode === 'stale' || this.s.replicator.alone()) return;
    const started = performance.now();
    const path: { via: ReadPath } = { via: 'read_index' };
    const reason = await this.wait(started + this.timeoutMs, path);
    const seconds = (performance.now() - started) / 1000;
    this.s.observe?.(reason === null ? 'ok' : 'timeout', seconds, path.via);
    if (reason === null) return;
    throw new ApiError(
      'consistent_read_timeout',
      `Node \`${this.s.nodeId}\` could not answer consistently within ${this.timeoutMs} ms: ${reason}. Retry in a moment (another node may answer), or start the nodes with \`--read-consistency stale\` to read whatever a node holds.`,
    );
  }

  /** Null once consistent; otherwise why not, before `deadline`. */
  private async wait(deadline: number, path: { via: ReadPath }): Promise<string | null> {
    const left = () => Math.max(1, deadline - performance.now());
    const q = this.s.queue;
    const r = this.s.replicator;
    const leased = await this.leased(left);
    if (leased !== null) path.via = 'lease';
    const index = leased ?? (await r.readIndex(left()));
    if (index === null) return 'no leader confirmed its commit index (the cluster has no leader now, or this node cannot reach it)';
    if (!(await r.waitUntil(() => q.appliedIndex >= index, left()))) {
      return `it has applied the log up to ${q.appliedIndex} of the ${index} entries it must reflect`;
    }
    const due = q.latestDueBatch();
    if (due !== undefined && !(await r.waitUntil(() => q.processedThrough(due), left()))) {
      return `it is still processing batch ${q.pending[0]?.uid ?? due}, which the leader has finished`;
    }
    return null;
  }

  /**
   * Under a read lease: the lease's index once applied, else null. Entries past the commit
   * index normally commit within a round trip; if the term changes first (they may never), or
   * they take longer than a lease lasts, the read asks for a read index after all.
   */
  private async leased(left: () => number): Promise<number | null> {
    const r = this.s.replicator;
    const lease = r.leaseRead();
    if (lease === null) return null;
    const q = this.s.queue;
    const applied = () => q.appliedIndex >= lease.index;
    const ok = await r.waitUntil(() => applied() || r.term() !== lease.term, Math.min(left(), LEASE_WAIT_MS));
    return ok && applied() ? lease.index : null;
  }
}

/** How long a leased read waits for its own log to commit before asking the leader instead. */
const LEASE_WAIT_MS = 1_000;
