// New documents are written ahead of a batch's atomic write, in writes of their own.
//
// RocksDB copies a write batch into its own form on the thread that hands it over: 50,000
// documents in one write held the serving thread 50-90 ms at 300,000 documents and 0.2-0.4 s
// at a million (profiles of the `scale` bench). A document that takes a docid the index never
// used cannot be seen before the atomic write that raises the index's `nextDocid` past it:
// the id map and the search structures name it only from then on, and every scan of the
// documents stops at `nextDocid`. A crash in between leaves documents at or above the stored
// `nextDocid`; they are removed when the index is opened, and a batch run again overwrites
// them anyway, since docids are handed out from `nextDocid` on.

import type { KeySpace } from '../../store/keys.js';
import type { KvReader, KvStore } from '../../store/kv.js';
import type { IndexHandle } from '../indexes/index-handle.js';
import { Yielder } from '../../util/yielder.js';

/** Documents per write: each costs the serving thread a few milliseconds. */
const PER_WRITE = 1024;

/** Writes `docids`' encoded documents, `PER_WRITE` at a time, giving the event loop turns. */
export async function writeDocumentsAhead(
  store: KvStore,
  handle: IndexHandle,
  docids: readonly number[],
  encoded: ReadonlyMap<number, string>,
): Promise<void> {
  const turns = new Yielder();
  for (let i = 0; i < docids.length; i += PER_WRITE) {
    const wb = store.batch();
    for (const docid of docids.slice(i, i + PER_WRITE)) wb.put(handle.docKey(docid), encoded.get(docid)!);
    await wb.commit();
    await turns.maybe();
  }
}

/** The bounds of the documents of key space `docs` once its index's meta says `nextDocid`. */
export function committedDocuments(docs: KeySpace, nextDocid: number): { prefix: Buffer; lt: Buffer } {
  return { prefix: docs.prefix, lt: docs.key(nextDocid) };
}

/** Removes documents written ahead of a batch that never committed (a crash between the two). */
export async function removeUncommittedDocuments(store: KvStore, handle: IndexHandle, nextDocid: number): Promise<boolean> {
  if (!(await hasUncommitted(store, handle, nextDocid))) return false;
  await store.batch().delRange(handle.docKey(nextDocid), handle.docs.end).commit();
  return true;
}

async function hasUncommitted(reader: KvReader, handle: IndexHandle, nextDocid: number): Promise<boolean> {
  for await (const _ of reader.scan({ gte: handle.docKey(nextDocid), lt: handle.docs.end, limit: 1, keysOnly: true })) return true;
  return false;
}
