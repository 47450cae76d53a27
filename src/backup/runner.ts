import { basename, join, resolve } from 'node:path';
import type { Options } from '../config/options.js';
import type { Engine } from '../engine/engine.js';
import { errorBody, type ErrorBody } from '../errors/api-error.js';
import type { KvStore } from '../store/kv.js';
import type { BackupResult, BackupRunner } from '../tasks/executor.js';
import { BatchAborted } from '../engine/apply/types.js';
import type { PendingBatch, TaskQueue } from '../tasks/task-queue.js';
import type { TaskRecord, TaskSpec } from '../tasks/task.js';
import { dumpUidAt } from './dump-format.js';
import { DumpInterrupted, writeDump } from './dump-writer.js';
import { BackupOutcomes, type OutcomeOp } from './outcomes.js';
import { writeSnapshotFile } from './snapshot-file.js';

export interface BackupLogger {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

export interface BackupDeps {
  options: Options;
  store: KvStore;
  engine: Engine;
  queue: TaskQueue;
  outcomes: BackupOutcomes;
  /** Proposes a config command through the log (the node's `ctx.configure`). */
  configure(name: string, op: unknown): Promise<unknown>;
  log: BackupLogger;
}

/** Where this node writes the snapshot: one file per database, replaced by each new snapshot. */
export function snapshotPath(options: Options): string {
  return join(options.snapshotDir, `${basename(resolve(options.dbPath))}.snapshot`);
}

export function dumpPath(options: Options, dumpUid: string): string {
  return join(options.dumpDir, `${dumpUid}.dump`);
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Carries out dumpCreation and snapshotCreation tasks for the executor. Every node that
 * processes the task writes its own copy into its own `--dump-dir` / `--snapshot-dir` (the
 * dump's name comes from the batch's start time, which is in the log, so it is the same
 * everywhere); the outcome is the first one reported through the log (see `outcomes.ts`).
 */
export class Backups implements BackupRunner {
  constructor(private readonly d: BackupDeps) {}

  async run(task: TaskRecord, batch: PendingBatch, shouldStop: () => boolean): Promise<BackupResult> {
    const { options } = this.d;
    let local: ErrorBody | null = null;
    let finishedAt: number;
    const dumpUid = dumpUidAt(batch.startedAt);
    try {
      if (task.type === 'dumpCreation') {
        const path = dumpPath(options, dumpUid);
        finishedAt = await writeDump(this.d.store, this.d.engine, this.d.queue, {
          path,
          dumpUid,
          nodeId: options.nodeId,
          task,
          batch,
          shouldStop,
        });
        this.d.log.info({ taskUid: task.uid, path }, 'dump written');
      } else {
        const path = snapshotPath(options);
        finishedAt = await writeSnapshotFile(this.d.store, path, { nodeId: options.nodeId, taskUid: task.uid, batch });
        this.d.log.info({ taskUid: task.uid, path }, 'snapshot written');
      }
    } catch (e) {
      if (e instanceof DumpInterrupted) throw new BatchAborted(e.message);
      finishedAt = Date.now();
      this.d.log.error({ err: e, taskUid: task.uid }, `could not write the ${task.type === 'dumpCreation' ? 'dump' : 'snapshot'}`);
      local =
        task.type === 'dumpCreation'
          ? errorBody('dump_process_failed', `Node \`${options.nodeId}\` could not write the dump \`${dumpUid}\`: ${describe(e)}.`)
          : errorBody(
              'io_error',
              `Node \`${options.nodeId}\` could not write the snapshot: ${describe(e)}. This error generally happens when you have no space left on device or when your database doesn't have read or write right.`,
            );
    }
    const error = await this.decide(task.uid, local, shouldStop);
    if (error === null && local !== null) {
      this.d.log.warn({ taskUid: task.uid }, 'another node wrote its copy first: the task succeeded although this node has no copy');
    }
    const details = task.type === 'dumpCreation' ? { ...task.details, dumpUid: error === null ? dumpUid : null } : task.details;
    return { status: error === null ? 'succeeded' : 'failed', details, error, finishedAt };
  }

  /** The outcome recorded in the log, after proposing this node's own if none is yet. */
  private async decide(taskUid: number, local: ErrorBody | null, shouldStop: () => boolean): Promise<ErrorBody | null> {
    const op: OutcomeOp = { taskUid, error: local, nodeId: this.d.options.nodeId };
    for (let attempt = 0; ; attempt++) {
      const known = this.d.outcomes.get(taskUid);
      if (known !== undefined) return known;
      if (shouldStop()) throw new BatchAborted('the node is stopping');
      try {
        return (await untilStopped(this.d.configure(BackupOutcomes.COMMAND, op), shouldStop)) as ErrorBody | null;
      } catch (e) {
        if (e instanceof BatchAborted) throw e;
        // No quorum right now: the outcome cannot be decided without one, so wait for it.
        this.d.log.warn({ err: e, taskUid }, 'could not record the outcome of a backup task yet; retrying');
        await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** attempt)));
      }
    }
  }
}

/** `p`, unless `shouldStop()` turns true first (checked every 100 ms). */
function untilStopped<T>(p: Promise<T>, shouldStop: () => boolean): Promise<T> {
  return new Promise((resolvePromise, reject) => {
    const timer = setInterval(() => {
      if (!shouldStop()) return;
      clearInterval(timer);
      reject(new BatchAborted('the node is stopping'));
    }, 100);
    p.then(
      (v) => (clearInterval(timer), resolvePromise(v)),
      (e) => (clearInterval(timer), reject(e)),
    );
  });
}

/** The task `POST /snapshots` enqueues, and `--schedule-snapshot` too. */
export function snapshotTask(): TaskSpec {
  return { type: 'snapshotCreation', indexUid: null, details: null, params: { op: 'snapshot' } };
}

/**
 * Enqueues a snapshot every `seconds`. Only the leader does, so that a cluster takes one
 * snapshot per period (every node then writes its own copy). Returns the stopper.
 */
export function scheduleSnapshots(
  seconds: number,
  deps: { isLeader(): boolean; enqueue(spec: TaskSpec): Promise<unknown>; log: BackupLogger },
): () => void {
  const timer = setInterval(() => {
    if (!deps.isLeader()) return;
    deps.enqueue(snapshotTask()).catch((e) => deps.log.warn({ err: e }, 'could not enqueue the scheduled snapshot'));
  }, seconds * 1000);
  timer.unref();
  return () => clearInterval(timer);
}
