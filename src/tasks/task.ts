import type { Network } from '../network/network.js';
import type { ErrorBody } from '../errors/api-error.js';
import { isoDuration, rfc3339 } from '../util/time.js';

/** Task types in the reference's order (the error message listing them uses it). */
export const TASK_TYPES = [
  'documentAdditionOrUpdate',
  'documentEdition',
  'documentDeletion',
  'settingsUpdate',
  'indexCreation',
  'indexDeletion',
  'indexUpdate',
  'indexSwap',
  'taskCancelation',
  'taskDeletion',
  'dumpCreation',
  'snapshotCreation',
  'export',
  'upgradeDatabase',
  'indexCompaction',
  'networkTopologyChange',
  'dsrUpdate',
  'dsrClear',
] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export const TASK_STATUSES = ['enqueued', 'processing', 'succeeded', 'failed', 'canceled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Types whose tasks belong to no index. */
export const INDEXLESS_TYPES: ReadonlySet<TaskType> = new Set<TaskType>([
  'indexSwap',
  'taskCancelation',
  'taskDeletion',
  'dumpCreation',
  'snapshotCreation',
  'export',
  'upgradeDatabase',
  'networkTopologyChange',
  'dsrUpdate',
  'dsrClear',
]);

/** What the engine needs to carry out a task, beyond its public details. Never shown to clients. */
export type TaskParams =
  /** `createIndex: false`: the requester may not create indexes, so a missing index fails the task. */
  | { op: 'documents'; method: 'replace' | 'update'; primaryKey: string | null; skipCreation?: boolean; createIndex?: false }
  | { op: 'deleteIds'; ids: string[] }
  | { op: 'deleteFilter'; filter: unknown }
  | { op: 'clear' }
  /** Runs `function` (Rhai) on the documents `filter` keeps (all without one), with `context` in scope. */
  | { op: 'edit'; function: string; filter: unknown; context: Record<string, unknown> | null }
  | { op: 'settings'; settings: Record<string, unknown>; createIndex?: false }
  | { op: 'createIndex'; primaryKey: string | null }
  | { op: 'updateIndex'; primaryKey: string | null | undefined; newUid: string | null }
  | { op: 'deleteIndex' }
  | { op: 'swap'; swaps: { indexes: [string, string]; rename: boolean }[] }
  /** `indexPatterns`: the requesting key's indexes; tasks of other indexes (or of none) are never matched. */
  | { op: 'cancel' | 'deleteTasks'; query: string; indexPatterns?: string[] }
  | { op: 'dump' }
  | { op: 'snapshot' }
  /** Creates or partly changes a dynamic search rule. */
  | { op: 'dsrUpdate'; uid: string; update: Record<string, unknown> }
  | { op: 'dsrDelete'; uid: string }
  | { op: 'dsrClear' }
  /** Puts a network in effect (decided, with its version, when the change was requested). */
  | { op: 'network'; network: Network };

/** A task as proposed to the log: everything decided before it is numbered. */
export interface TaskSpec {
  type: TaskType;
  indexUid: string | null;
  details: Record<string, unknown> | null;
  params: TaskParams;
  customMetadata?: string;
  /** Byte length of the attached payload (documents), 0 if none. */
  payloadBytes?: number;
}

export interface TaskRecord {
  uid: number;
  batchUid: number | null;
  indexUid: string | null;
  status: TaskStatus;
  type: TaskType;
  canceledBy: number | null;
  details: Record<string, unknown> | null;
  error: ErrorBody | null;
  enqueuedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  customMetadata?: string;
  params: TaskParams;
  /** Uids a cancelation or deletion task matched when it was registered. */
  matched?: number[];
  payloadBytes?: number;
}

/** The public task object, keys in the reference's order. */
export function taskView(t: TaskRecord): Record<string, unknown> {
  const v: Record<string, unknown> = {
    uid: t.uid,
    batchUid: t.batchUid,
    indexUid: t.indexUid,
    status: t.status,
    type: t.type,
    canceledBy: t.canceledBy,
  };
  if (t.details !== null) v['details'] = t.details;
  v['error'] = t.error;
  v['duration'] = t.startedAt !== null && t.finishedAt !== null ? isoDuration(t.finishedAt - t.startedAt) : null;
  v['enqueuedAt'] = rfc3339(t.enqueuedAt);
  v['startedAt'] = t.startedAt !== null ? rfc3339(t.startedAt) : null;
  v['finishedAt'] = t.finishedAt !== null ? rfc3339(t.finishedAt) : null;
  if (t.customMetadata !== undefined) v['customMetadata'] = t.customMetadata;
  return v;
}

/** The summary a write route answers with. */
export function taskSummary(t: TaskRecord): Record<string, unknown> {
  const v: Record<string, unknown> = {
    taskUid: t.uid,
    indexUid: t.indexUid,
    status: t.status,
    type: t.type,
    enqueuedAt: rfc3339(t.enqueuedAt),
  };
  if (t.customMetadata !== undefined) v['customMetadata'] = t.customMetadata;
  return v;
}

export function isFinished(s: TaskStatus): boolean {
  return s === 'succeeded' || s === 'failed' || s === 'canceled';
}
