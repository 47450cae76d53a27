import { nextBatch } from '../tasks/autobatcher.js';
import type { Executor } from '../tasks/executor.js';
import type { TaskQueue } from '../tasks/task-queue.js';
import type { Replicator } from './replicator.js';

/**
 * Decides batches. Only the leader does it, and it puts each decision in the log, so that
 * every node processes the same tasks in the same batches. A new batch is decided once the
 * leader has processed the previous one, so tasks arriving meanwhile are batched together.
 */
export class Scheduler {
  private proposing = false;

  constructor(
    private readonly replicator: Replicator,
    private readonly queue: TaskQueue,
    private readonly executor: Executor,
    private readonly onError: (e: unknown) => void,
  ) {}

  poke(): void {
    if (this.queue.pending.length > 0) this.executor.kick();
    if (this.proposing || !this.replicator.isLeader()) return;
    if (this.queue.pending.length > 0 || this.executor.busy) return;
    const plan = nextBatch(this.queue.queue());
    if (!plan) return;
    this.proposing = true;
    this.replicator
      .propose({ kind: 'batch', startedAt: Date.now(), taskUids: plan.taskUids, reason: plan.reason })
      .then(
        () => {
          this.proposing = false;
          this.poke();
        },
        (e) => {
          this.proposing = false;
          this.onError(e);
          // Leadership may have moved: the new leader schedules; retry later if we still lead.
          setTimeout(() => this.poke(), 200).unref();
        },
      );
  }
}
