import { isoDuration, rfc3339 } from '../util/time.js';
import { taskView, type TaskRecord } from './task.js';
import type { TaskQueue } from './task-queue.js';

export interface BatchRecord {
  uid: number;
  taskUids: number[];
  startedAt: number;
  finishedAt: number | null;
  reason: string;
  /** Filled in when the batch finishes. */
  stats: {
    totalNbTasks: number;
    status: Record<string, number>;
    types: Record<string, number>;
    indexUids: Record<string, number>;
  } | null;
  details: Record<string, unknown>;
  /**
   * False while `finishedAt` is this node's own clock, before the log decided it (see
   * `TaskQueue.decidedFinish`); absent once decided, and on batches from before decisions.
   */
  decided?: false;
}

function count<T>(items: T[], key: (t: T) => string | null): Record<string, number> {
  const out: Record<string, number> = {};
  for (const it of items) {
    const k = key(it);
    if (k !== null) out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** Statistics and accumulated details of a batch from its tasks as they are now. */
export function summarizeBatch(b: BatchRecord, tasks: TaskRecord[]): void {
  b.stats = {
    totalNbTasks: tasks.length,
    status: count(tasks, (t) => t.status),
    types: count(tasks, (t) => t.type),
    indexUids: count(tasks, (t) => t.indexUid),
  };
  const details: Record<string, unknown> = {};
  for (const t of tasks) {
    for (const [k, v] of Object.entries(t.details ?? {})) {
      if (typeof v === 'number' && typeof details[k] === 'number') details[k] = (details[k] as number) + v;
      else if (!(k in details)) details[k] = v;
    }
  }
  b.details = details;
}

export function batchView(b: BatchRecord, tasks: () => TaskRecord[]): Record<string, unknown> {
  let stats = b.stats;
  if (!stats) {
    const live = { ...b };
    summarizeBatch(live, tasks());
    stats = live.stats;
  }
  return {
    uid: b.uid,
    progress: null,
    details: b.details,
    stats,
    duration: b.finishedAt !== null ? isoDuration(b.finishedAt - b.startedAt) : null,
    startedAt: rfc3339(b.startedAt),
    finishedAt: b.finishedAt !== null ? rfc3339(b.finishedAt) : null,
    batchStrategy: b.reason,
  };
}

/** The tasks a finished batch changed, as clients see them: its own, and those its cancelations canceled. */
export function batchTaskViews(queue: TaskQueue, b: BatchRecord): Record<string, unknown>[] {
  const own = new Set(b.taskUids);
  const out = b.taskUids.map((u) => queue.get(u)).filter((t): t is TaskRecord => !!t);
  if (out.some((t) => t.type === 'taskCancelation')) {
    for (const t of queue.tasks.values()) if (t.canceledBy !== null && own.has(t.canceledBy)) out.push(t);
  }
  return out.sort((a, c) => a.uid - c.uid).map(taskView);
}
