// Tasks whose work happens outside the log, between two batches (see `TaskOutcome`): a network
// topology change moving documents, an export. Their first batch leaves them processing; this
// cluster's Raft leader then does the work (HTTP to other instances, which no other node may
// repeat) and proposes the batch that ends them. A new leader finds them still processing and
// does the work again: both kinds are safe to repeat.

import type { Engine } from '../engine/engine.js';
import type { ResumeOutcome } from '../engine/apply/types.js';
import type { BatchRecord } from '../tasks/batch.js';
import type { TaskQueue } from '../tasks/task-queue.js';
import type { TaskRecord } from '../tasks/task.js';
import { errorBody } from '../errors/api-error.js';
import { Abandoned, RemoteWriter } from './remote-writer.js';
import { moveDocuments } from './document-mover.js';
import { exportIndexes } from './exporter.js';

export interface ContinuationOptions {
  engine: Engine;
  queue: TaskQueue;
  isLeader(): boolean;
  /** Proposes the batch that ends the task. */
  resume(taskUid: number, outcome: ResumeOutcome): Promise<void>;
  log: { warn(obj: unknown, msg?: string): void };
  /** How long a remote may refuse moved documents because it has not applied their network version: default 5 min. */
  versionWaitMs?: number;
  /** How long a task on a remote (an import, its own change) may stay unfinished while waited for: default 1 h. */
  taskWaitMs?: number;
}

/** What a worker gets. */
export interface WorkerContext {
  engine: Engine;
  queue: TaskQueue;
  writer: RemoteWriter;
  /** How long to wait for something that should come soon (a task's network being recorded). */
  shortWaitMs: number;
  /** Waits, or gives up the work when this node stops leading. */
  pause(ms: number): Promise<void>;
}

const RECHECK_MS = 5_000;

const WORKERS: Record<string, (ctx: WorkerContext, t: TaskRecord) => Promise<ResumeOutcome>> = {
  networkTopologyChange: moveDocuments,
  export: exportIndexes,
};

export class TaskContinuations {
  private running: number | null = null;
  private closed = false;
  private readonly ctx: WorkerContext;

  /** Looks again now and then: a task whose end could not be proposed (a failed proposal) is tried again. */
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly o: ContinuationOptions) {
    this.timer = setInterval(() => this.roleChanged(), RECHECK_MS);
    this.timer.unref();
    const leading = () => !this.closed && o.isLeader();
    this.ctx = {
      engine: o.engine,
      queue: o.queue,
      writer: new RemoteWriter(leading, { versionWaitMs: o.versionWaitMs ?? 300_000, taskWaitMs: o.taskWaitMs ?? 3_600_000 }),
      shortWaitMs: 120_000,
      async pause(ms) {
        await new Promise((r) => setTimeout(r, ms));
        if (!leading()) throw new Abandoned();
      },
    };
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
  }

  /** A batch was processed: it may have left a task processing. */
  batchProcessed(b: BatchRecord): void {
    for (const uid of b.taskUids) {
      const t = this.o.queue.tasks.get(uid);
      if (t && this.waiting(t)) return this.start(t);
    }
  }

  /** This node may lead now: a task left processing under an earlier leader is this one's to end. */
  roleChanged(): void {
    if (this.closed || !this.o.isLeader() || this.running !== null) return;
    for (const t of this.o.queue.tasks.values()) if (this.waiting(t)) return this.start(t);
  }

  private waiting(t: TaskRecord): boolean {
    if (!(t.type in WORKERS) || t.status !== 'processing' || t.continuation === undefined) return false;
    return !this.o.queue.pending.some((p) => p.taskUids.includes(t.uid));
  }

  private start(t: TaskRecord): void {
    if (this.closed || this.running !== null || !this.o.isLeader()) return;
    this.running = t.uid;
    void this.run(t).finally(() => {
      this.running = null;
      // One at a time: another may have been left waiting meanwhile.
      this.roleChanged();
    });
  }

  private async run(t: TaskRecord): Promise<void> {
    let outcome: ResumeOutcome;
    try {
      outcome = await WORKERS[t.type]!(this.ctx, t);
    } catch (e) {
      if (e instanceof Abandoned || this.closed) return;
      outcome = { sent: false, error: errorBody('internal', e instanceof Error ? e.message : String(e)) };
    }
    if (outcome.error) this.o.log.warn({ taskUid: t.uid, type: t.type, error: outcome.error }, 'a task could not do its work with other instances');
    try {
      await this.o.resume(t.uid, outcome);
    } catch (e) {
      // Not leading any more: the next leader does the work again and ends the task.
      this.o.log.warn({ taskUid: t.uid, err: e }, 'could not end a task left processing');
    }
  }
}
