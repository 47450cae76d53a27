import { nextBatch } from '../tasks/autobatcher.js';
import type { Command } from '../tasks/command.js';
import type { Executor } from '../tasks/executor.js';
import type { TaskQueue } from '../tasks/task-queue.js';
import { isFinished } from '../tasks/task.js';
import type { Replicator } from './replicator.js';

export interface QueueLimit {
  /** Tasks kept before the oldest finished ones are deleted. */
  maxTasks: number;
  warn(msg: string, fields: Record<string, unknown>): void;
  info(msg: string, fields: Record<string, unknown>): void;
}

/** How often the leader may say that a full queue holds nothing it can delete. */
const FULL_WARNING_MS = 60_000;

/**
 * Decides batches. Only the leader does it, and it puts each decision in the log, so that
 * every node processes the same tasks in the same batches. A new batch is decided once the
 * leader has processed the previous one, so tasks arriving meanwhile are batched together.
 */
export class Scheduler {
  private proposing = false;
  /** No task has a lower uid (they were deleted): where the search for the oldest starts. */
  private lowestUid = 0;
  private warnedAt = -Infinity;
  /** A poke planned for when a held finish may be settled anyway. */
  private holdTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly replicator: Replicator,
    private readonly queue: TaskQueue,
    private readonly executor: Executor,
    private readonly onError: (e: unknown) => void,
    private readonly limit: QueueLimit | null = null,
  ) {}

  poke(): void {
    if (this.queue.pending.length > 0) this.executor.kick();
    if (this.proposing || !this.replicator.isLeader()) return;
    // This node's finish times of the batches it processed go with the next decision, or alone.
    const finished = this.settled();
    if (this.queue.pending.length > 0 || this.executor.busy) {
      // Busy with the next batch: the members that caught up need not wait for its end.
      if (finished.length > 0) this.propose({ kind: 'batch', startedAt: Date.now(), taskUids: [], reason: 'finish times', finished });
      return;
    }
    const deletion = this.autoDeletion();
    if (deletion) return this.propose(deletion);
    const plan = nextBatch(this.queue.queue());
    if (!plan && finished.length === 0) return;
    this.propose({
      kind: 'batch',
      startedAt: Date.now(),
      taskUids: plan?.taskUids ?? [],
      reason: plan?.reason ?? 'finish times',
      ...(finished.length > 0 ? { finished } : {}),
    });
  }

  /**
   * The finished batches whose finish may go into the log now, oldest first: those that every
   * member in touch has processed too (see ProcessingReports). When one must wait, a poke is
   * planned for when it may be settled anyway.
   */
  private settled(): [number, number][] {
    const out: [number, number][] = [];
    for (const [uid, at] of [...this.queue.undecided].sort((a, b) => a[0] - b[0])) {
      const wait = this.replicator.settleDelay(uid, at);
      if (wait > 0) {
        if (!this.holdTimer) {
          this.holdTimer = setTimeout(() => {
            this.holdTimer = null;
            this.poke();
          }, wait);
          this.holdTimer.unref();
        }
        break;
      }
      out.push([uid, at]);
    }
    return out;
  }

  /**
   * As the reference does, a queue holding `maxTasks` tasks or more gets a task deletion of
   * its oldest tenth, finished ones only: it goes through the log like any task, so every
   * node deletes the same tasks. None while one is waiting, nor when none of them is finished.
   */
  private autoDeletion(): Command | null {
    const limit = this.limit;
    const q = this.queue;
    if (!limit || q.tasks.size < limit.maxTasks) return null;
    const waiting = [...q.unbatched, ...q.pending.flatMap((p) => p.taskUids)];
    if (waiting.some((u) => q.tasks.get(u)?.type === 'taskDeletion')) return null;
    const oldest = Math.max(1, Math.ceil(limit.maxTasks / 10));
    let seen = 0;
    let finished = 0;
    let latest = -Infinity;
    for (let u = this.lowestUid; u < q.nextTaskUid && seen < oldest; u++) {
      const t = q.tasks.get(u);
      if (!t) {
        if (seen === 0) this.lowestUid = u + 1;
        continue;
      }
      seen++;
      if (!isFinished(t.status)) continue;
      finished++;
      latest = Math.max(latest, t.enqueuedAt);
    }
    if (finished === 0) {
      if (Date.now() - this.warnedAt > FULL_WARNING_MS) {
        this.warnedAt = Date.now();
        limit.warn('the task queue is full and none of its oldest tasks has finished: nothing can be deleted yet', { tasks: q.tasks.size, maxTasks: limit.maxTasks });
      }
      return null;
    }
    const query = `?statuses=succeeded,failed,canceled&beforeEnqueuedAt=${new Date(latest + 1).toISOString()}`;
    limit.info('the task queue is full: deleting its oldest finished tasks', { tasks: q.tasks.size, maxTasks: limit.maxTasks, finished });
    return {
      kind: 'enqueue',
      enqueuedAt: Date.now(),
      spec: {
        type: 'taskDeletion',
        indexUid: null,
        details: { matchedTasks: null, deletedTasks: null, originalFilter: query },
        params: { op: 'deleteTasks', query },
      },
    };
  }

  private propose(cmd: Command): void {
    this.proposing = true;
    this.replicator
      .propose(cmd)
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
