// What applying a batch takes and gives. The engine declares its own operations: the task
// layer wraps them with what only tasks have (cancelations, deletions of tasks, backups).

import type { ErrorBody } from '../../errors/api-error.js';
import type { WriteBatch } from '../../store/kv.js';
import type { Doc } from '../documents/primary-key.js';
import type { Network } from '../network/network.js';

/** One change an index operation makes, as the engine carries it out. */
export type IndexOperation =
  /** `createIndex: false`: the requester may not create indexes, so a missing index fails the operation. */
  /** `exactIntegers`: the payload holds integers past 2^53, read exactly (see document-json.ts). */
  | { op: 'documents'; method: 'replace' | 'update'; primaryKey: string | null; skipCreation?: boolean; createIndex?: false; exactIntegers?: true }
  | { op: 'deleteIds'; ids: string[] }
  | { op: 'deleteFilter'; filter: unknown }
  | { op: 'clear' }
  | { op: 'settings'; settings: Record<string, unknown>; createIndex?: false }
  | { op: 'createIndex'; primaryKey: string | null }
  | { op: 'updateIndex'; primaryKey: string | null | undefined; newUid: string | null }
  | { op: 'deleteIndex' }
  | { op: 'swap'; swaps: { indexes: [string, string]; rename: boolean }[] }
  /** Runs `function` (Rhai) on the documents `filter` keeps (all without one), with `context` in scope. */
  | { op: 'edit'; function: string; filter: unknown; context: Record<string, unknown> | null }
  /** Creates or partly changes a dynamic search rule. */
  | { op: 'dsrUpdate'; uid: string; update: Record<string, unknown> }
  | { op: 'dsrDelete'; uid: string }
  | { op: 'dsrClear' }
  /** Puts a network in effect (decided, with its version, when the change was requested). */
  | { op: 'network'; network: Network }
  /** Sends indexes to another instance (`POST /export`); the sending happens between the task's two batches. */
  | { op: 'export'; url: string; apiKey: string | null; payloadSize: number | null; indexes: Record<string, { filter: unknown; overrideSettings: boolean }> };

/**
 * How the work a task does outside the log between its two batches ended (see TaskOutcome).
 * For a network topology change, `sent` when the new owners of every document this instance
 * gives away hold them, `error` when anything failed (this instance's own sending, or the
 * change on another remote). For an export, `details` are the task's final details.
 */
export interface ResumeOutcome {
  sent: boolean;
  error: ErrorBody | null;
  details?: Record<string, unknown>;
}

/** An operation in a batch, with the task it comes from. */
export interface BatchTask {
  uid: number;
  type: string;
  indexUid: string | null;
  params: IndexOperation;
  details: Record<string, unknown> | null;
  /** Parsed documents of an addition or update. */
  documents?: Doc[];
  /** What the task's earlier batch left for the next (a task processed in two batches, see TaskOutcome). */
  continuation?: unknown;
  /** Set when this batch finishes a task an earlier batch left processing: how the work between them ended. */
  resume?: ResumeOutcome;
}

/**
 * `processing`: the task goes on after this batch (a network topology change moving documents
 * to other instances): it stays processing, with `continuation` kept for the batch that ends it.
 */
export interface TaskOutcome {
  status: 'succeeded' | 'failed' | 'processing';
  details: Record<string, unknown> | null;
  error: ErrorBody | null;
  continuation?: unknown;
}

export interface ProcessedBatch {
  outcomes: Map<number, TaskOutcome>;
  /** Puts every change of the batch into one write batch (giving the event loop turns). */
  write(wb: WriteBatch): void | Promise<void>;
  /** Makes the changes visible; call once the write batch is committed. */
  publish(): void;
}

/**
 * Thrown by a step that must stop before finishing its batch (the node is closing, or a
 * snapshot is about to replace the state): the batch stays pending and runs again later.
 */
export class BatchAborted extends Error {}
