import { KeySpace, decodeUint, encodeUint } from '../store/keys.js';
import type { KvReader, WriteBatch } from '../store/kv.js';
import type { BatchRecord } from './batch.js';
import type { TaskNetwork, TaskRecord } from './task.js';
import type { ResumeOutcome } from '../engine/apply/types.js';

export const TASKS = new KeySpace('tk');
export const PAYLOADS = new KeySpace('tp');
/**
 * A task's `network`, kept apart from its record: the state machine notes it while the
 * executor may be writing the record of the same task from its own copy, and neither write
 * may undo the other.
 */
export const TASK_NETWORKS = new KeySpace('tn');
export const BATCHES = new KeySpace('bt');
/** Batches decided by the log but not yet processed on this node. */
export const PENDING = new KeySpace('pb');
/** Finish times the log decided for batches this node had not finished yet. */
export const DECIDED_FINISH = new KeySpace('bf');
const QUEUE_META = new KeySpace('tq');
const NEXT_TASK = QUEUE_META.key('nextTaskUid');
const NEXT_BATCH = QUEUE_META.key('nextBatchUid');
const APPLIED = QUEUE_META.key('appliedIndex');

export interface PendingBatch {
  uid: number;
  taskUids: number[];
  startedAt: number;
  reason: string;
  /** Log index of the decision (absent on batches decided before it was recorded). */
  index?: number;
  /** The batch ends a task an earlier batch left processing (see `Command` `resume`). */
  resume?: ResumeOutcome;
}

/**
 * Every task and batch of the node, in memory for listing and filtering, and their keys in
 * the store. Only the state machine and the executor change it.
 */
export class TaskQueue {
  readonly tasks = new Map<number, TaskRecord>();
  readonly batches = new Map<number, BatchRecord>();
  readonly pending: PendingBatch[] = [];
  /** Enqueued tasks no decided batch holds yet, in uid order. */
  readonly unbatched = new Set<number>();
  /**
   * Each node finishes a batch on its own clock; the leader then puts its finish time in the
   * log and every node takes it, so task lists read the same everywhere. Decided times for
   * batches not finished here yet wait in `decidedFinish`; batches finished here whose time
   * is not decided yet wait in `undecided` (the leader proposes those, with its own times).
   */
  readonly decidedFinish = new Map<number, number>();
  readonly undecided = new Map<number, number>();
  nextTaskUid = 0;
  nextBatchUid = 0;
  appliedIndex = 0;

  async load(reader: KvReader): Promise<void> {
    this.tasks.clear();
    this.batches.clear();
    this.pending.length = 0;
    this.unbatched.clear();
    const num = async (k: Buffer) => {
      const b = await reader.get(k);
      return b ? decodeUint(b) : 0;
    };
    this.nextTaskUid = await num(NEXT_TASK);
    this.nextBatchUid = await num(NEXT_BATCH);
    this.appliedIndex = await num(APPLIED);
    for await (const { value } of reader.scan({ prefix: TASKS.prefix })) {
      const t = JSON.parse(value.toString()) as TaskRecord;
      this.tasks.set(t.uid, t);
    }
    for await (const { key, value } of reader.scan({ prefix: TASK_NETWORKS.prefix })) {
      const t = this.tasks.get(decodeUint(TASK_NETWORKS.strip(key)));
      if (t) t.network = JSON.parse(value.toString()) as TaskNetwork;
    }
    this.decidedFinish.clear();
    this.undecided.clear();
    for await (const { value } of reader.scan({ prefix: BATCHES.prefix })) {
      const b = JSON.parse(value.toString()) as BatchRecord;
      this.batches.set(b.uid, b);
      if (b.decided === false && b.finishedAt !== null) this.undecided.set(b.uid, b.finishedAt);
    }
    for await (const { key, value } of reader.scan({ prefix: DECIDED_FINISH.prefix })) {
      this.decidedFinish.set(decodeUint(DECIDED_FINISH.strip(key)), decodeUint(value));
    }
    for await (const { value } of reader.scan({ prefix: PENDING.prefix })) {
      this.pending.push(JSON.parse(value.toString()) as PendingBatch);
    }
    const inPending = new Set(this.pending.flatMap((p) => p.taskUids));
    for (const t of this.tasks.values()) {
      // A task caught processing by a crash goes back to waiting: its batch will run again. One
      // that its first batch left processing on purpose stays so, until a batch ends it.
      if (t.status === 'processing' && t.continuation === undefined) t.status = 'enqueued';
      if (t.status === 'enqueued' && !inPending.has(t.uid)) this.unbatched.add(t.uid);
    }
  }

  writeCounters(wb: WriteBatch): void {
    wb.put(NEXT_TASK, encodeUint(this.nextTaskUid));
    wb.put(NEXT_BATCH, encodeUint(this.nextBatchUid));
    wb.put(APPLIED, encodeUint(this.appliedIndex));
  }

  taskKey(uid: number): Buffer {
    return TASKS.key(uid);
  }

  writeTask(wb: WriteBatch, t: TaskRecord): void {
    wb.put(TASKS.key(t.uid), JSON.stringify(t));
  }

  writeTaskNetwork(wb: WriteBatch, uid: number, network: TaskNetwork): void {
    wb.put(TASK_NETWORKS.key(uid), JSON.stringify(network));
  }

  /** Every key of a deleted task (its payload is the caller's). */
  deleteTask(wb: WriteBatch, uid: number): void {
    wb.del(TASKS.key(uid));
    wb.del(TASK_NETWORKS.key(uid));
  }

  writeBatch(wb: WriteBatch, b: BatchRecord): void {
    wb.put(BATCHES.key(b.uid), JSON.stringify(b));
  }

  /**
   * The log decided batch `uid`'s finish time: its record and tasks take it if the batch is
   * finished here, else it is kept for when it finishes.
   */
  decideFinish(uid: number, finishedAt: number, wb: WriteBatch): void {
    const b = this.batches.get(uid);
    if (!b) {
      if (this.decidedFinish.has(uid)) return;
      this.decidedFinish.set(uid, finishedAt);
      wb.put(DECIDED_FINISH.key(uid), encodeUint(finishedAt));
      return;
    }
    // Already decided, or finished before decisions existed.
    if (b.decided !== false) return;
    this.stampFinish(b, finishedAt, wb);
  }

  /** Gives a finished batch, its tasks and the tasks its cancelations canceled the decided finish time. */
  stampFinish(b: BatchRecord, finishedAt: number, wb: WriteBatch): void {
    b.finishedAt = finishedAt;
    delete b.decided;
    this.writeBatch(wb, b);
    this.undecided.delete(b.uid);
    const own = new Set(b.taskUids);
    const stamp = (t: TaskRecord) => {
      if (t.finishedAt === finishedAt || t.finishedAt === null) return;
      t.finishedAt = finishedAt;
      this.writeTask(wb, t);
    };
    for (const u of b.taskUids) {
      const t = this.tasks.get(u);
      if (t) stamp(t);
    }
    if (b.taskUids.some((u) => this.tasks.get(u)?.type === 'taskCancelation')) {
      for (const t of this.tasks.values()) if (t.canceledBy !== null && own.has(t.canceledBy)) stamp(t);
    }
  }

  /**
   * Whether clients may be told how a finished batch ended. Only once the log holds its finish
   * time: that entry follows the leader's own processing of the batch, so a read elsewhere that
   * catches up with the log knows to wait for the batch too (see `docs/cluster-reads.md`).
   */
  isSettled(batchUid: number | null): boolean {
    return batchUid === null || !this.undecided.has(batchUid);
  }

  /**
   * A task as clients see it: one that this node finished but whose finish the log has not
   * settled yet still shows as processing (and one that such a batch canceled, as enqueued).
   */
  reported(t: TaskRecord): TaskRecord {
    if (t.status === 'canceled' && t.canceledBy !== null) {
      if (this.isSettled(this.tasks.get(t.canceledBy)?.batchUid ?? null)) return t;
      return { ...t, status: 'enqueued', canceledBy: null, finishedAt: null };
    }
    if (t.status === 'enqueued' || t.status === 'processing' || this.isSettled(t.batchUid)) return t;
    return { ...t, status: 'processing', error: null, finishedAt: null };
  }

  /**
   * The newest batch whose finish the log decided and that this node has yet to process:
   * another node may have reported its tasks finished, so a read here must wait for it.
   */
  latestDueBatch(): number | undefined {
    let due: number | undefined;
    for (const uid of this.decidedFinish.keys()) if (due === undefined || uid > due) due = uid;
    return due;
  }

  /** Whether every batch up to `batchUid` is processed here. */
  processedThrough(batchUid: number): boolean {
    const next = this.pending[0];
    return next === undefined || next.uid > batchUid;
  }

  /**
   * The log index up to which this node reflects everything clients may have been told: its
   * applied index, or just before the decision of the oldest batch it still owes.
   */
  reflectedIndex(): number {
    let reflected = this.appliedIndex;
    for (const pb of this.pending) {
      if (!this.decidedFinish.has(pb.uid)) continue;
      if (pb.index !== undefined) reflected = Math.min(reflected, pb.index - 1);
      break;
    }
    return reflected;
  }

  /** Enqueued tasks not yet in a batch, oldest first. */
  queue(): TaskRecord[] {
    return [...this.unbatched].sort((a, b) => a - b).map((u) => this.tasks.get(u)!);
  }

  get(uid: number): TaskRecord | undefined {
    return this.tasks.get(uid);
  }

  isIdle(): boolean {
    return this.pending.length === 0 && this.unbatched.size === 0;
  }
}
