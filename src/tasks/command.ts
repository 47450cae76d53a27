import type { TaskNetwork, TaskSpec } from './task.js';
import type { ResumeOutcome } from '../engine/apply/types.js';
import type { Authority } from '../util/request-context.js';
import { withHeadroom } from '../util/headroom.js';
import { Yielder } from '../util/yielder.js';

/** What goes into the replicated log. Applying the same commands in order gives the same state. */
export type Command =
  /**
   * `authority`: the API key the request was made with (absent for the master key, or for the
   * node's own tasks); the command is refused at apply when that key is gone.
   */
  | { kind: 'enqueue'; enqueuedAt: number; spec: TaskSpec; payload?: Buffer; authority?: Authority }
  /**
   * The next batch (none when `taskUids` is empty), and the leader's finish times of batches it
   * finished before: decided before any later batch runs, so filters on them agree everywhere.
   */
  | { kind: 'batch'; startedAt: number; taskUids: number[]; reason: string; finished?: [batchUid: number, finishedAt: number][] }
  /** A change to node-wide state that is not a task (API keys, experimental features): applied at once. */
  | { kind: 'config'; name: string; at: number; op: unknown; authority?: Authority }
  /** A task's place in the network, known once its write was sent on (or came from the leader). */
  | { kind: 'taskNetwork'; taskUid: number; network: TaskNetwork }
  /**
   * A batch that ends a task its first batch left processing, once the work outside the log
   * between them is done (documents moved to other instances), or gave up.
   */
  | { kind: 'resume'; taskUid: number; startedAt: number; outcome: ResumeOutcome }
  | { kind: 'noop' };

/** Payload bytes copied between two looks at the clock. */
const COPY_STEP = 1 << 20;

/**
 * Header JSON, then the raw payload bytes: documents are not re-encoded on their way through
 * the log. The payload is copied a MiB at a time, giving the event loop turns: an import's
 * batch of 12 MiB copied at once onto fresh memory held the thread 50-85 ms.
 */
export async function encodeCommand(cmd: Command, yielder: Yielder = new Yielder()): Promise<Buffer> {
  const { out, payload, at } = layout(cmd);
  if (!payload) return out;
  for (let i = 0; i < payload.length; i += COPY_STEP) {
    out.set(payload.subarray(i, Math.min(payload.length, i + COPY_STEP)), at + i);
    await yielder.maybe();
  }
  return out;
}

/** The command's buffer with its header written, and where its payload goes. */
function layout(cmd: Command): { out: Buffer; payload: Buffer | undefined; at: number } {
  const payload = cmd.kind === 'enqueue' ? cmd.payload : undefined;
  const header = Buffer.from(JSON.stringify(cmd.kind === 'enqueue' ? { ...cmd, payload: undefined } : cmd));
  // With room in front for the log's entry header (see util/headroom.ts).
  const out = withHeadroom(4 + header.length + (payload?.length ?? 0));
  out.writeUInt32BE(header.length, 0);
  header.copy(out, 4);
  return { out, payload, at: 4 + header.length };
}

export function decodeCommand(buf: Buffer | Uint8Array): Command {
  const b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.length === 0) return { kind: 'noop' };
  const n = b.readUInt32BE(0);
  const cmd = JSON.parse(b.subarray(4, 4 + n).toString()) as Command;
  if (cmd.kind === 'enqueue' && b.length > 4 + n) cmd.payload = b.subarray(4 + n);
  return cmd;
}
