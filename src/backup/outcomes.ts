import type { ErrorBody } from '../errors/api-error.js';
import { KeySpace } from '../store/keys.js';
import type { KvReader, WriteBatch } from '../store/kv.js';
import type { ConfigHandler } from '../tasks/state-machine.js';

/**
 * The outcome of each dump and snapshot task, decided through the log.
 *
 * Every node processes the same batches, and every node writes its own copy of a dump or
 * snapshot into its own directory; whether that write worked is local knowledge (a full disk,
 * a directory it may not write). A task must end the same way on every node, so each node,
 * once its copy is written (or has failed), proposes what happened; the first report applied
 * is recorded and becomes the task's outcome everywhere (usually the leader's: its proposal
 * needs no forwarding). On a single node this is simply that node's own result.
 */

export interface OutcomeOp {
  taskUid: number;
  /** Null when the reporting node wrote its copy. */
  error: ErrorBody | null;
  /** The node that reported, for the logs. */
  nodeId: string;
}

const OUTCOMES = new KeySpace('bo');

export class BackupOutcomes implements ConfigHandler {
  static readonly COMMAND = 'backupOutcome';
  private readonly decided = new Map<number, ErrorBody | null>();

  /** The recorded outcome of a task: null for success, undefined while none was reported. */
  get(taskUid: number): ErrorBody | null | undefined {
    return this.decided.get(taskUid);
  }

  apply(raw: unknown, _at: number, wb: WriteBatch): unknown {
    const op = raw as OutcomeOp;
    if (typeof op?.taskUid !== 'number') throw new Error('malformed backup outcome in the log');
    const known = this.decided.get(op.taskUid);
    if (known !== undefined) return known;
    const error = op.error ?? null;
    this.decided.set(op.taskUid, error);
    wb.put(OUTCOMES.key(op.taskUid), JSON.stringify({ error, nodeId: op.nodeId }));
    return error;
  }

  async load(reader: KvReader): Promise<void> {
    this.decided.clear();
    for await (const { key, value } of reader.scan({ prefix: OUTCOMES.prefix })) {
      const uid = Number(OUTCOMES.strip(key).readBigUInt64BE(0));
      this.decided.set(uid, (JSON.parse(value.toString()) as { error: ErrorBody | null }).error);
    }
  }
}
