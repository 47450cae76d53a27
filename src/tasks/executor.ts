import { EventEmitter } from 'node:events';
import { errorBody } from '../errors/api-error.js';
import { processBatch } from '../engine/apply/apply-batch.js';
import { BatchAborted, type BatchTask, type ProcessedBatch } from '../engine/apply/types.js';
import type { Doc } from '../engine/documents/primary-key.js';
import { decodePayloadInTurns, payloadHasExactIntegers } from '../engine/documents/document-json.js';
import { Yielder } from '../util/yielder.js';
import type { Engine } from '../engine/engine.js';
import type { KvStore, WriteBatch } from '../store/kv.js';
import { summarizeBatch, type BatchRecord } from './batch.js';
import { DECIDED_FINISH, PAYLOADS, PENDING, type PendingBatch, type TaskQueue } from './task-queue.js';
import { isFinished, isIndexOperation, type TaskRecord } from './task.js';
import { matchesTask, parseTaskFilter } from './task-filter.js';
import { queryFromOriginalFilter } from './state-machine.js';
import { detached } from '../util/request-context.js';
import { formatDuration, StepTrace } from '../util/step-trace.js';
import type { ErrorBody } from '../errors/api-error.js';

/** Longest stretch a long loop of the executor runs before it lets the event loop turn. */
const TURN_MS = 20;

export interface ExecutorEvents {
  /** A batch finished: its tasks reached a final status. */
  batch: [BatchRecord];
  /** Nothing left to process. */
  idle: [];
}


/** What a dump or snapshot task ended with; `finishedAt` is the one written into the file. */
export interface BackupResult {
  status: 'succeeded' | 'failed';
  details: Record<string, unknown> | null;
  error: ErrorBody | null;
  finishedAt: number;
}

/** Writes dumps and snapshots (`src/backup/`). */
export interface BackupRunner {
  run(task: TaskRecord, batch: PendingBatch, shouldStop: () => boolean): Promise<BackupResult>;
}

export interface Logger {
  error(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
}

/**
 * Processes decided batches one after the other, in the order the log decided them. Each batch
 * ends in one atomic write holding the index changes and the tasks' outcomes; a crash before
 * it leaves the batch pending, and it runs again at start.
 */
export class Executor extends EventEmitter<ExecutorEvents> {
  private running = false;
  /** The batch being processed, for `isIndexing` and `processing` statuses. */
  current: PendingBatch | null = null;

  constructor(
    private readonly store: KvStore,
    private readonly queue: TaskQueue,
    private readonly engine: Engine,
    private readonly log: Logger,
    private readonly backups?: BackupRunner,
  ) {
    super();
  }

  private halted = false;

  /** Stops after the batch in progress (if any), e.g. to install a snapshot underneath. */
  async halt(): Promise<void> {
    this.halted = true;
    while (this.running) await new Promise((r) => setTimeout(r, 5));
  }

  resume(): void {
    this.halted = false;
    this.kick();
  }

  kick(): void {
    if (this.running || this.halted) return;
    this.running = true;
    // Batches hold many clients' tasks: their log lines belong to no single request.
    detached(() => setImmediate(() => void this.loop()));
  }

  get busy(): boolean {
    return this.running;
  }

  private async loop(): Promise<void> {
    try {
      while (this.queue.pending.length > 0 && !this.halted) {
        const pb = this.queue.pending[0]!;
        this.current = pb;
        const record = await this.execute(pb);
        if (record === null) break;
        this.queue.pending.shift();
        this.current = null;
        this.emit('batch', record);
      }
    } catch (e) {
      // Storage failed under us: stop here rather than let this node's state drift from the log.
      this.log.error({ err: e }, 'batch processing failed; the node must restart');
      process.exitCode = 70;
      setImmediate(() => process.exit(70));
      return;
    } finally {
      this.running = false;
      this.current = null;
    }
    this.emit('idle');
  }

  /** Processes one batch; null when it was aborted and stays pending. */
  private async execute(pb: PendingBatch): Promise<BatchRecord | null> {
    const q = this.queue;
    // A batch that ends a task left processing takes it as it is (a second one finds it ended).
    const live = pb.resume
      ? pb.taskUids.map((u) => q.tasks.get(u)).filter((t): t is TaskRecord => !!t && t.status === 'processing' && t.continuation !== undefined)
      : pb.taskUids.map((u) => q.tasks.get(u)).filter((t): t is TaskRecord => !!t && t.status === 'enqueued');
    for (const t of live) {
      if (pb.resume) continue;
      t.status = 'processing';
      t.startedAt = pb.startedAt;
    }
    // Outcomes are worked out on copies and shown only once the batch is committed and its
    // index changes published: a client that sees `succeeded` can read what the task wrote.
    const staged = new Map<number, TaskRecord>(live.map((t) => [t.uid, { ...t }]));
    const tasks = [...staged.values()];
    const stage = (u: number): TaskRecord | undefined => {
      let t = staged.get(u);
      if (!t) {
        const l = q.tasks.get(u);
        if (!l) return undefined;
        t = { ...l };
        staged.set(u, t);
      }
      return t;
    };
    let deleted: ReadonlySet<number> = new Set();
    const resetLive = () => {
      if (pb.resume) return;
      for (const t of live) {
        t.status = 'enqueued';
        t.startedAt = null;
      }
    };
    const wb = this.store.batch();
    let publish: () => void = () => {};
    let backupFinishedAt: number | null = null;
    const trace = new StepTrace('processing tasks');
    if (tasks.length > 0) {
      const type = tasks[0]!.type;
      if (type === 'taskCancelation') {
        trace.step('canceling tasks');
        this.cancel(tasks, stage, (u) => staged.get(u) ?? q.tasks.get(u));
      } else if (type === 'taskDeletion') {
        trace.step('deleting tasks');
        deleted = await this.deleteTasks(tasks, wb);
      } else if (type === 'dumpCreation' || type === 'snapshotCreation') {
        trace.step(type === 'dumpCreation' ? 'creating the dump' : 'creating the snapshot');
        try {
          backupFinishedAt = await this.runBackup(tasks[0]!, pb);
        } catch (e) {
          if (!(e instanceof BatchAborted)) throw e;
          resetLive();
          return null;
        }
      } else {
        try {
          publish = await this.runEngine(tasks, wb, trace, pb);
        } catch (e) {
          // Stopped while waiting on something outside (embeddings from the leader).
          if (!(e instanceof BatchAborted)) throw e;
          resetLive();
          return null;
        }
      }
    }
    const progressTrace = trace.finish();
    const writing = performance.now();
    // A finish time the log already decided (this node is behind the leader) is taken as is.
    const decided = q.decidedFinish.get(pb.uid);
    const finishedAt = decided ?? backupFinishedAt ?? Math.max(Date.now(), pb.startedAt);
    const own = new Set(pb.taskUids);
    for (const t of tasks) {
      if (pb.resume) t.batchUid = pb.uid;
      // Left processing on purpose: it goes on outside the log, and a later batch ends it.
      if (t.status === 'processing' && t.continuation !== undefined && !pb.resume) continue;
      if (t.status === 'processing') t.status = 'succeeded';
      delete t.continuation;
      t.finishedAt = finishedAt;
    }
    // Tasks a cancelation of this batch canceled finish with it (their time is set only here).
    for (const t of staged.values()) if (t.status === 'canceled' && t.canceledBy !== null && own.has(t.canceledBy)) t.finishedAt = finishedAt;
    for (const t of staged.values()) if (!deleted.has(t.uid)) q.writeTask(wb, t);
    const record: BatchRecord = {
      uid: pb.uid,
      // A batch that found its task already ended holds nothing.
      taskUids: pb.resume ? live.map((t) => t.uid) : pb.taskUids,
      startedAt: pb.startedAt,
      finishedAt,
      reason: pb.reason,
      stats: null,
      details: {},
      ...(decided === undefined ? { decided: false as const } : {}),
    };
    summarizeBatch(record, tasks);
    progressTrace['writing tasks to disk'] = formatDuration(performance.now() - writing);
    record.stats!.progressTrace = progressTrace;
    q.writeBatch(wb, record);
    wb.del(PENDING.key(pb.uid));
    if (decided !== undefined) wb.del(DECIDED_FINISH.key(pb.uid));
    await wb.commit();
    publish();
    for (const t of staged.values()) {
      const l = q.tasks.get(t.uid);
      if (!l) continue;
      Object.assign(l, t);
      if (!('continuation' in t)) delete l.continuation;
      if (t.status === 'canceled') q.unbatched.delete(t.uid);
    }
    for (const u of deleted) q.tasks.delete(u);
    q.batches.set(record.uid, record);
    if (decided !== undefined) q.decidedFinish.delete(pb.uid);
    else {
      const late = q.decidedFinish.get(pb.uid);
      if (late === undefined) q.undecided.set(pb.uid, finishedAt);
      else {
        // Decided while this batch was being committed.
        const fix = this.store.batch();
        q.stampFinish(record, late, fix);
        fix.del(DECIDED_FINISH.key(pb.uid));
        await fix.commit();
        q.decidedFinish.delete(pb.uid);
      }
    }
    return record;
  }

  /** Dumps and snapshots run alone in their batch (see the autobatcher). */
  private async runBackup(t: TaskRecord, pb: PendingBatch): Promise<number> {
    if (!this.backups) {
      t.status = 'failed';
      t.error = errorBody('internal', 'This node was started without dump and snapshot support.');
      return Math.max(Date.now(), pb.startedAt);
    }
    const r = await this.backups.run(t, pb, () => this.halted);
    t.status = r.status;
    t.details = r.details;
    t.error = r.error;
    return Math.max(r.finishedAt, pb.startedAt);
  }

  private async runEngine(tasks: TaskRecord[], wb: WriteBatch, trace: StepTrace, pb: PendingBatch): Promise<() => void> {
    const withPayload = tasks.filter((t) => t.params.op === 'documents');
    if (withPayload.length > 0) trace.step('retrieving payloads');
    const payloads = await this.store.getMany(withPayload.map((t) => PAYLOADS.key(t.uid)));
    const docsOf = new Map<number, Doc[]>();
    const turns = new Yielder();
    for (let i = 0; i < withPayload.length; i++) {
      const t = withPayload[i]!;
      const buf = payloads[i];
      // The payload stays as long as its task (`GET /tasks/{uid}/documents`); a task deletion removes it.
      // Heartbeats and searches get their turns while large payloads are parsed.
      docsOf.set(t.uid, buf ? await decodePayloadInTurns(buf, payloadHasExactIntegers(t.params), () => turns.maybe()) : []);
    }
    const input: BatchTask[] = tasks.map((t) => {
      if (!isIndexOperation(t.params)) throw new Error(`a ${t.type} task is not the engine's to apply`);
      const bt: BatchTask = { uid: t.uid, type: t.type, indexUid: t.indexUid, params: t.params, details: t.details, documents: docsOf.get(t.uid) };
      if (t.continuation !== undefined) bt.continuation = t.continuation;
      if (pb.resume) bt.resume = pb.resume;
      return bt;
    });
    let processed: ProcessedBatch;
    trace.step('indexing');
    try {
      processed = await processBatch(this.engine, input, tasks[0]!.startedAt!);
    } catch (e) {
      if (e instanceof BatchAborted) throw e;
      this.log.error({ err: e }, 'internal error while processing a batch');
      for (const t of tasks) {
        t.status = 'failed';
        t.error = errorBody('internal', e instanceof Error ? e.message : String(e));
      }
      return () => {};
    }
    for (const t of tasks) {
      const o = processed.outcomes.get(t.uid);
      if (!o) continue;
      t.status = o.status;
      t.details = o.details;
      t.error = o.error;
      if (o.status === 'processing') t.continuation = o.continuation ?? null;
    }
    await processed.write(wb);
    return () => processed.publish();
  }

  /** `peek` reads a task as this batch left it so far, without staging a copy to write. */
  private cancel(
    cancels: TaskRecord[],
    stage: (uid: number) => TaskRecord | undefined,
    peek: (uid: number) => TaskRecord | undefined,
  ): void {
    for (const c of cancels) {
      let n = 0;
      const matched = this.stillMatching(c, peek);
      for (const u of matched) {
        if (peek(u)!.status !== 'enqueued') continue;
        const t = stage(u)!;
        t.status = 'canceled';
        t.canceledBy = c.uid;
        if (t.params.op === 'documents' && t.details) t.details = { ...t.details, indexedDocuments: 0 };
        n++;
      }
      c.details = { ...c.details, matchedTasks: matched.length, canceledTasks: n };
    }
  }

  /**
   * The candidates of a cancelation or deletion that still exist and match its whole filter
   * now: every node has processed the same batches before this one, so all agree.
   */
  private stillMatching(task: TaskRecord, get: (uid: number) => TaskRecord | undefined): number[] {
    if (task.params.op !== 'cancel' && task.params.op !== 'deleteTasks') return [];
    const filter = parseTaskFilter(queryFromOriginalFilter(task.params.query));
    return (task.matched ?? []).filter((u) => {
      const t = get(u);
      return t !== undefined && matchesTask(t, filter);
    });
  }

  /**
   * Returns the uids to forget once the batch is committed. A deletion at the queue's limit
   * takes a hundred thousand tasks or more: the loop gives the event loop a turn now and then
   * (nothing else changes these tasks' statuses meanwhile: only this executor does).
   */
  private async deleteTasks(deletions: TaskRecord[], wb: WriteBatch): Promise<Set<number>> {
    const q = this.queue;
    const gone = new Set<number>();
    let slice = performance.now();
    for (const d of deletions) {
      let n = 0;
      const matched = this.stillMatching(d, (u) => q.tasks.get(u));
      for (const u of matched) {
        if (performance.now() - slice > TURN_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          slice = performance.now();
        }
        const t = q.tasks.get(u)!;
        if (!isFinished(t.status) || gone.has(u)) continue;
        gone.add(u);
        wb.del(PAYLOADS.key(u));
        q.deleteTask(wb, u);
        n++;
      }
      d.details = { ...d.details, matchedTasks: matched.length, deletedTasks: n };
    }
    return gone;
  }
}
