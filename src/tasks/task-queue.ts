import { KeySpace, decodeUint, encodeUint } from '../store/keys.js';
import type { KvReader, WriteBatch } from '../store/kv.js';
import type { BatchRecord } from './batch.js';
import type { TaskRecord } from './task.js';

export const TASKS = new KeySpace('tk');
export const PAYLOADS = new KeySpace('tp');
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
      // A task caught processing by a crash goes back to waiting: its batch will run again.
      if (t.status === 'processing') t.status = 'enqueued';
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
