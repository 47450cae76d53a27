import type { ErrorBody } from '../errors/api-error.js';
import type { IndexOperation } from '../engine/apply/types.js';
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

/**
 * What is needed to carry out a task, beyond its public details. Never shown to clients. Index
 * operations are the engine's; the others are the task layer's own.
 */
export type TaskParams =
  | IndexOperation
  /** `indexPatterns`: the requesting key's indexes; tasks of other indexes (or of none) are never matched. */
  | { op: 'cancel' | 'deleteTasks'; query: string; indexPatterns?: string[] }
  | { op: 'dump' }
  | { op: 'snapshot' };

/** Whether the engine carries these params out (the others are cancelations, task deletions, backups). */
export function isIndexOperation(p: TaskParams): p is IndexOperation {
  return p.op !== 'cancel' && p.op !== 'deleteTasks' && p.op !== 'dump' && p.op !== 'snapshot';
}

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

/** What a write sent on to other instances of the network became there, in the reference's shape. */
export type RemoteTaskView = { taskUid: number; error: null } | { error: ErrorBody };

/**
 * A task's place in the network: on the leader, the task each other remote made of the write
 * (or why it made none); on those remotes, the leader's task it came from.
 */
export type TaskNetwork =
  | { remoteTasks: Record<string, RemoteTaskView>; networkVersion: string }
  | { origin: { remoteName: string; taskUid: number; networkVersion: string } }
  /** Documents another instance sent here because a network topology change gave them to this one. */
  | { importFrom: { remoteName: string; indexName: string | null; documentCount: number }; networkChange: { remoteName: string; taskUid: number; networkVersion: string } };

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
  network?: TaskNetwork;
  params: TaskParams;
  /** Uids a cancelation or deletion task matched when it was registered. */
  matched?: number[];
  /** Internal: what a task left processing by its first batch needs in the batch that ends it. */
  continuation?: unknown;
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
  if (t.network !== undefined) v['network'] = t.network;
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
