import type { KvReader, KvStore, WriteBatch } from '../store/kv.js';
import { ApiError } from '../errors/api-error.js';
import type { Command } from './command.js';
import { matchesTask, parseTaskFilter, registrationFilter } from './task-filter.js';
import { anyPatternMatches } from '../engine/indexes/index-uid.js';
import { PAYLOADS, PENDING, type PendingBatch, TaskQueue } from './task-queue.js';
import type { TaskRecord } from './task.js';
import type { Authority } from '../util/request-context.js';

export type ApplyResult =
  | { kind: 'task'; task: TaskRecord }
  /** An enqueue whose authority was gone when the log reached it: no task was registered. */
  | { kind: 'refused'; error: ApiError }
  | { kind: 'batch'; batchUid: number | null }
  | { kind: 'config'; result: unknown }
  | { kind: 'none' };

/**
 * Node-wide state changed through the log without being a task (API keys, experimental
 * features). `apply` must be deterministic: same state and op, same result and writes.
 * It may throw an ApiError, which is returned to the proposer and changes nothing.
 */
export interface ConfigHandler {
  apply(op: unknown, at: number, wb: WriteBatch): unknown;
  /** Re-reads its state from the store (at start, after installing a snapshot). */
  load(reader: KvReader): Promise<void>;
}

/** Parses the raw query string a cancelation or deletion task was created with. */
export function queryFromOriginalFilter(query: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(query.replace(/^\?/, ''))) out[k] = v;
  return out;
}

/**
 * Applies committed log commands, in log order, to the task queue. Cheap and deterministic:
 * registering a task or deciding a batch; the work itself is the executor's. Every apply is
 * one atomic write that also records the applied log index.
 */
export class TaskStateMachine {
  private readonly handlers = new Map<string, ConfigHandler>();
  /**
   * Whether an API key still authorizes a command made at `at` (null), or the
   * refusal. A node checks the key when the request arrives, against what it has applied so
   * far: a node behind the others may still know a key whose deletion the cluster already
   * acknowledged. The log orders that deletion before the command, so checking again here
   * refuses the command on every node alike.
   */
  private authorize: ((authority: Authority, at: number) => ApiError | null) | null = null;

  constructor(
    private readonly store: KvStore,
    readonly queue: TaskQueue,
  ) {}

  register(name: string, handler: ConfigHandler): void {
    this.handlers.set(name, handler);
  }

  /** Sets the check of the API key commands carry (see `authorize`). */
  checkAuthority(fn: (authority: Authority, at: number) => ApiError | null): void {
    this.authorize = fn;
  }

  async loadHandlers(reader: KvReader): Promise<void> {
    for (const h of this.handlers.values()) await h.load(reader);
  }

  async apply(
    index: number,
    cmd: Command,
    opts: { sync: boolean; /** Adds the caller's own keys to the same atomic write. */ extra?: (wb: WriteBatch) => void },
  ): Promise<ApplyResult> {
    const q = this.queue;
    const wb = this.store.batch();
    let result: ApplyResult = { kind: 'none' };
    const refusal = (cmd.kind === 'enqueue' || cmd.kind === 'config') && cmd.authority !== undefined && this.authorize ? this.authorize(cmd.authority, cmd.kind === 'enqueue' ? cmd.enqueuedAt : cmd.at) : null;
    if (refusal !== null) {
      // Nothing of the command is applied; the entry still counts as applied.
      result = cmd.kind === 'config' ? { kind: 'config', result: refusal } : { kind: 'refused', error: refusal };
    } else if (cmd.kind === 'enqueue') {
      const spec = cmd.spec;
      const task: TaskRecord = {
        uid: q.nextTaskUid++,
        batchUid: null,
        indexUid: spec.indexUid,
        status: 'enqueued',
        type: spec.type,
        canceledBy: null,
        details: spec.details,
        error: null,
        enqueuedAt: cmd.enqueuedAt,
        startedAt: null,
        finishedAt: null,
        params: spec.params,
      };
      if (spec.customMetadata !== undefined) task.customMetadata = spec.customMetadata;
      if (spec.payloadBytes) task.payloadBytes = spec.payloadBytes;
      if (spec.params.op === 'cancel' || spec.params.op === 'deleteTasks') {
        // Candidates only: the executor checks the rest of the filter when the task runs.
        const filter = registrationFilter(parseTaskFilter(queryFromOriginalFilter(spec.params.query)));
        const cancel = spec.params.op === 'cancel';
        const matched: number[] = [];
        for (const t of q.tasks.values()) {
          if (!matchesTask(t, filter)) continue;
          const scope = spec.params.indexPatterns;
          if (scope && (t.indexUid === null || !anyPatternMatches(scope, t.indexUid))) continue;
          // A task the log has put in a batch may be processing or finished by now, depending on the node.
          if (cancel && t.batchUid !== null) continue;
          matched.push(t.uid);
        }
        matched.sort((a, b) => a - b);
        task.matched = matched;
        task.details = { ...task.details, matchedTasks: matched.length };
      }
      if (cmd.payload) wb.put(PAYLOADS.key(task.uid), cmd.payload);
      q.tasks.set(task.uid, task);
      q.unbatched.add(task.uid);
      q.writeTask(wb, task);
      result = { kind: 'task', task };
    } else if (cmd.kind === 'batch') {
      for (const [uid, at] of cmd.finished ?? []) q.decideFinish(uid, at, wb);
      const uids = cmd.taskUids.filter((u) => q.unbatched.has(u));
      if (uids.length > 0) {
        const pb: PendingBatch = { uid: q.nextBatchUid++, taskUids: uids, startedAt: cmd.startedAt, reason: cmd.reason, index };
        q.pending.push(pb);
        wb.put(PENDING.key(pb.uid), JSON.stringify(pb));
        for (const u of uids) {
          q.unbatched.delete(u);
          const t = q.tasks.get(u)!;
          t.batchUid = pb.uid;
          q.writeTask(wb, t);
        }
        result = { kind: 'batch', batchUid: pb.uid };
      } else result = { kind: 'batch', batchUid: null };
    } else if (cmd.kind === 'resume') {
      // Whether the task still waits for its end depends on batches this node may not have
      // processed yet: the executor decides that when it reaches this batch (a second resume of
      // the same task, from a new leader, finds nothing left to end), and gives the task its uid.
      const t = q.tasks.get(cmd.taskUid);
      if (t && (t.type === 'networkTopologyChange' || t.type === 'export')) {
        const pb: PendingBatch = { uid: q.nextBatchUid++, taskUids: [t.uid], startedAt: cmd.startedAt, reason: 'ends a task left processing by its first batch', index, resume: cmd.outcome };
        q.pending.push(pb);
        wb.put(PENDING.key(pb.uid), JSON.stringify(pb));
        result = { kind: 'batch', batchUid: pb.uid };
      } else result = { kind: 'batch', batchUid: null };
    } else if (cmd.kind === 'taskNetwork') {
      // A task deleted in the meantime keeps nothing.
      const t = q.tasks.get(cmd.taskUid);
      if (t) {
        t.network = cmd.network;
        q.writeTaskNetwork(wb, t.uid, cmd.network);
      }
    } else if (cmd.kind === 'config') {
      const handler = this.handlers.get(cmd.name);
      if (!handler) throw new Error(`no handler for config command \`${cmd.name}\``);
      try {
        result = { kind: 'config', result: handler.apply(cmd.op, cmd.at, wb) };
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        // A refused change is still a log entry: record the applied index and hand the error back.
        result = { kind: 'config', result: e };
      }
    }
    q.appliedIndex = index;
    q.writeCounters(wb);
    opts.extra?.(wb);
    await wb.commit({ sync: opts.sync });
    return result;
  }
}
