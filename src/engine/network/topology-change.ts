// A network topology change that moves documents. Its task runs in two batches: the first puts
// the new network in effect (writes from then on keep the documents of the new shards) and, when
// this instance holds documents that other remotes now own, leaves the task processing; the
// leader of this cluster then sends those documents to their new owners (`network/document-mover.ts`)
// outside the log, and once every owner has them, a second batch deletes here the documents this
// instance no longer owns and ends the task. Both batches are applied by every node of the
// cluster from the log, so all delete the same documents.

import type { Engine } from '../engine.js';
import type { BatchTask, ProcessedBatch, TaskOutcome } from '../apply/types.js';
import type { Network } from './network.js';
import { isSharded, ownedDocuments, shardOf } from './shards.js';

/** What the first batch leaves for the mover: the network the change replaced. */
export interface MoveContinuation {
  previous: Network;
}

/** The remotes that hold a document under `network`, or null when it does not shard (each instance keeps what it was sent). */
function ownersUnder(network: Network): ((id: string) => readonly string[]) | null {
  if (!isSharded(network)) return null;
  const names = Object.keys(network.shards).sort();
  return (id) => {
    const s = shardOf(names, id);
    return s === null ? [] : network.shards[s]!.remotes;
  };
}

/**
 * The remotes this instance sends a document it holds to when `previous` gives way to `next`:
 * those that own it under `next` and did not under `previous` (they have it already), itself
 * left out. Null when `next` does not shard.
 */
export function moveTargets(previous: Network, next: Network): ((id: string) => string[]) | null {
  const self = next.self;
  const now = ownersUnder(next);
  if (self === null || now === null) return null;
  const before = ownersUnder(previous);
  return (id) => {
    const had = before ? before(id) : [];
    return now(id).filter((r) => r !== self && !had.includes(r));
  };
}

// The reference's words for the task's states.
const FINISHED = 'Finished';
const EXPORTING = 'Exporting documents';

/** `deleteIds` deletes documents of one index by id, as a deletion task of the batch would. */
export async function processNetworkTask(
  engine: Engine,
  t: BatchTask,
  deleteIds: (indexUid: string, ids: string[]) => Promise<ProcessedBatch>,
): Promise<ProcessedBatch> {
  if (t.params.op !== 'network') throw new Error(`not a network task: ${t.params.op}`);
  const store = engine.network;
  if (t.resume) return endMove(engine, t, deleteIds);
  const previous = store.get();
  const next = t.params.network;
  const targets = moveTargets(previous, next);
  const owned = ownedDocuments(next);
  // The leader of the network ends its change only once every remote has ended its own (the
  // mover waits for their tasks), so that its task's end means the whole network has moved.
  let moves = next.self !== null && next.leader === next.self && [...Object.keys(previous.remotes), ...Object.keys(next.remotes)].some((r) => r !== next.self);
  if (!moves && (targets !== null || owned !== null)) {
    search: for (const h of engine.indexes.values()) {
      for (const id of h.ext.keys()) {
        if ((owned !== null && !owned(id)) || (targets !== null && targets(id).length > 0)) {
          moves = true;
          break search;
        }
      }
    }
  }
  const outcome: TaskOutcome = moves
    ? { status: 'processing', details: { movedDocuments: 0, message: EXPORTING }, error: null, continuation: { previous } satisfies MoveContinuation }
    : { status: 'succeeded', details: { movedDocuments: 0, message: FINISHED }, error: null };
  return {
    outcomes: new Map([[t.uid, outcome]]),
    write: (wb) => store.put(wb, next),
    publish: () => store.publish(next),
  };
}

/**
 * The second batch: deletes what the network in effect does not give this instance, once its
 * new owners hold it. When the sending failed, nothing is deleted, so nothing is lost.
 */
async function endMove(engine: Engine, t: BatchTask, deleteIds: (indexUid: string, ids: string[]) => Promise<ProcessedBatch>): Promise<ProcessedBatch> {
  const { sent, error } = t.resume!;
  if (!sent) {
    const failed = { ...error!, message: `The new network is in effect, but the documents it gives to other remotes could not be sent to them, so they stay on this instance: ${error!.message}` };
    return { outcomes: new Map([[t.uid, { status: 'failed', details: { movedDocuments: 0, message: FINISHED }, error: failed }]]), write() {}, publish() {} };
  }
  const owned = ownedDocuments(engine.network.get());
  const parts: ProcessedBatch[] = [];
  let moved = 0;
  if (owned !== null) {
    for (const h of engine.listIndexes()) {
      const ids: string[] = [];
      for (const id of h.ext.keys()) if (!owned(id)) ids.push(id);
      if (ids.length === 0) continue;
      const part = await deleteIds(h.uid, ids);
      const o = part.outcomes.get(t.uid);
      if (o?.status !== 'succeeded') throw new Error(`could not delete the moved documents of index \`${h.uid}\`: ${JSON.stringify(o?.error)}`);
      moved += Number(o.details?.['deletedDocuments'] ?? 0);
      parts.push(part);
    }
  }
  // This instance's part is done; the error, if any, is another remote's (its own change failed).
  const outcome: TaskOutcome =
    error === null
      ? { status: 'succeeded', details: { movedDocuments: moved, message: FINISHED }, error: null }
      : { status: 'failed', details: { movedDocuments: moved, message: FINISHED }, error: { ...error, message: `The documents of this instance were moved, but the network change did not complete everywhere: ${error.message}` } };
  return {
    outcomes: new Map([[t.uid, outcome]]),
    async write(wb) {
      for (const p of parts) await p.write(wb);
    },
    publish() {
      for (const p of parts) p.publish();
    },
  };
}
