import type { TaskRecord, TaskType } from './task.js';

export interface BatchPlan {
  taskUids: number[];
  /** Why the batch stopped where it did, shown as `batchStrategy`. */
  reason: string;
}

export interface BatchLimits {
  maxTasks: number;
  maxPayloadBytes: number;
}

export const DEFAULT_LIMITS: BatchLimits = { maxTasks: 10_000, maxPayloadBytes: 256 * 1024 * 1024 };

const DOCUMENT_OPS: ReadonlySet<TaskType> = new Set<TaskType>(['documentAdditionOrUpdate', 'documentDeletion']);

function payloadOf(t: TaskRecord): number {
  return (t.params.op === 'documents' && t.payloadBytes) || 0;
}

/** Two document tasks can share a batch unless they ask for different primary keys. */
function documentCompatible(first: TaskRecord, next: TaskRecord): boolean {
  if (!DOCUMENT_OPS.has(next.type)) return false;
  const pk = (t: TaskRecord) => (t.params.op === 'documents' ? t.params.primaryKey : null);
  const a = pk(first);
  const b = pk(next);
  return a === null || b === null || a === b;
}

function createsIndex(t: TaskRecord): boolean {
  const p = t.params;
  return !((p.op === 'documents' || p.op === 'settings') && p.createIndex === false);
}

/**
 * Chooses the next batch among enqueued tasks (in uid order). A pure function: the leader
 * runs it and puts its answer in the log, so every node processes the same batches.
 * Cancelations go first, then task deletions, snapshots and dumps; otherwise the oldest task
 * is extended with the consecutive tasks of the same index that can be processed with it.
 */
export function nextBatch(queue: readonly TaskRecord[], limits: BatchLimits = DEFAULT_LIMITS): BatchPlan | null {
  if (queue.length === 0) return null;
  for (const type of ['taskCancelation', 'taskDeletion'] as const) {
    const all = queue.filter((t) => t.type === type);
    if (all.length > 0) {
      return { taskUids: all.slice(0, limits.maxTasks).map((t) => t.uid), reason: `batched all enqueued ${type} tasks` };
    }
  }
  for (const type of ['snapshotCreation', 'dumpCreation'] as const) {
    const first = queue.find((t) => t.type === type);
    if (first) return { taskUids: [first.uid], reason: `a ${type} task is processed alone` };
  }
  const first = queue[0]!;
  if (first.indexUid === null || !['documentAdditionOrUpdate', 'documentDeletion', 'settingsUpdate'].includes(first.type)) {
    return { taskUids: [first.uid], reason: `a task of type \`${first.type}\` is processed alone` };
  }
  const uids = [first.uid];
  let bytes = payloadOf(first);
  for (let i = 1; i < queue.length; i++) {
    const t = queue[i]!;
    if (t.indexUid !== first.indexUid) {
      return { taskUids: uids, reason: `batch stopped at a task of another index (\`${t.indexUid ?? 'none'}\`)` };
    }
    const compatible = first.type === 'settingsUpdate' ? t.type === 'settingsUpdate' : documentCompatible(first, t);
    if (!compatible) {
      return { taskUids: uids, reason: `batch stopped at a task of type \`${t.type}\` that cannot be batched with \`${first.type}\`` };
    }
    if (createsIndex(t) !== createsIndex(first)) {
      return { taskUids: uids, reason: 'batch stopped at a task whose requester has other rights on index creation' };
    }
    if (t.params.op === 'deleteFilter') {
      // A filter is evaluated on the index as it is published, so it starts a batch of its own.
      return { taskUids: uids, reason: 'batch stopped before a deletion by filter' };
    }
    if (uids.length >= limits.maxTasks) return { taskUids: uids, reason: `batch reached ${limits.maxTasks} tasks` };
    const b = payloadOf(t);
    if (bytes + b > limits.maxPayloadBytes && uids.length > 0) {
      return { taskUids: uids, reason: 'batch reached the payload size limit' };
    }
    bytes += b;
    uids.push(t.uid);
  }
  return { taskUids: uids, reason: 'batched all enqueued tasks' };
}
