// An index's external document ids (the primary key values) stored by docid, in chunks of
// CHUNK_DOCIDS consecutive docids: one value per chunk rather than one key per document.
// Reading a million one-key-per-id entries back took 5-8 s at open (the store's per-entry
// cost); the same map read from about 250 chunks takes a fraction of a second. A batch
// rewrites only the chunks whose docids it adds or removes; new documents get new docids, so
// an import touches the last chunks only.
//
//   x\0<u32 chunk>   u32 count | per entry, by docid: u32 docid | u32 byte length | id (UTF-8)
//   xv               the chunks are the map (absent: an index stored before them, whose ids
//                    are one key each under e\0, converted at open)

import type { KvReader, WriteBatch } from '../../store/kv.js';
import { decodeUint, encodeUint, KeySpace } from '../../store/keys.js';
import { INDEXES } from './index-handle.js';
import { Yielder } from '../../util/yielder.js';
import { SplitMap } from '../../util/split-map.js';
import type { PendingIds } from './external-id-map.js';

export const CHUNK_DOCIDS = 4096;

export function chunkSpaceOf(indexId: number): KeySpace {
  return INDEXES.child(String(indexId)).child('x');
}

export function chunkMarkerKey(indexId: number): Buffer {
  return INDEXES.child(String(indexId)).key('xv');
}

/** The one-key-per-id layout of earlier versions. */
export function legacySpaceOf(indexId: number): KeySpace {
  return INDEXES.child(String(indexId)).child('e');
}

const chunkOf = (docid: number) => Math.floor(docid / CHUNK_DOCIDS);

function encodeChunk(entries: readonly (readonly [number, string])[]): Buffer {
  const bytes = entries.map(([, id]) => Buffer.from(id, 'utf8'));
  const out = Buffer.allocUnsafe(4 + entries.reduce((n, _, i) => n + 8 + bytes[i]!.length, 0));
  out.writeUInt32LE(entries.length, 0);
  let at = 4;
  entries.forEach(([docid], i) => {
    out.writeUInt32LE(docid, at);
    out.writeUInt32LE(bytes[i]!.length, at + 4);
    bytes[i]!.copy(out, at + 8);
    at += 8 + bytes[i]!.length;
  });
  return out;
}

function forEachEntry(b: Buffer, fn: (docid: number, id: string) => void): void {
  const count = b.readUInt32LE(0);
  let at = 4;
  for (let i = 0; i < count; i++) {
    const docid = b.readUInt32LE(at);
    const len = b.readUInt32LE(at + 4);
    fn(docid, b.toString('utf8', at + 8, at + 8 + len));
    at += 8 + len;
  }
}

/** Builds the map held by `chunks`, pausing after each (4,096 ids: about 3 ms). */
function* entriesOf(chunks: readonly Buffer[]): Generator<void, SplitMap<string, number>> {
  const ext = new SplitMap<string, number>();
  for (const b of chunks) {
    forEachEntry(b, (docid, id) => ext.set(id, docid));
    yield;
  }
  return ext;
}

/**
 * Reads the map of index `indexId`: its chunks now, the map built from them later
 * (external-id-map.ts). An index stored before chunks existed is read from its one-key-per-id
 * layout and converted: `convert` receives the write that does it.
 */
export async function readExternalIds(
  reader: KvReader,
  indexId: number,
): Promise<{ ext: SplitMap<string, number> | PendingIds; convert: ((wb: WriteBatch) => Promise<void>) | null }> {
  if (await reader.get(chunkMarkerKey(indexId))) {
    const chunks: Buffer[] = [];
    let count = 0;
    for await (const e of reader.scan({ prefix: chunkSpaceOf(indexId).prefix })) {
      chunks.push(e.value);
      count += e.value.readUInt32LE(0);
    }
    return { ext: { steps: entriesOf(chunks), count }, convert: null };
  }
  const ext = new SplitMap<string, number>();
  const legacy = legacySpaceOf(indexId);
  for await (const e of reader.scan({ prefix: legacy.prefix })) ext.set(legacy.strip(e.key).toString(), decodeUint(e.value, 0, 4));
  return {
    ext,
    // The whole map written as chunks, as a batch clearing the index and adding every id would.
    convert: async (wb) => {
      await writeExternalIds(reader, wb, indexId, ext, () => undefined, true);
      wb.delPrefix(legacy.prefix);
    },
  };
}

/**
 * Writes a batch's changes to the map: `changes` maps an external id to its docid after the
 * batch (null: removed), `before` gives its docid before the batch (undefined: none, and
 * always so after `cleared`). Reads the chunks it rewrites from `reader` (the state before
 * the batch).
 */
export async function writeExternalIds(
  reader: KvReader,
  wb: WriteBatch,
  indexId: number,
  changes: Iterable<[string, number | null]>,
  before: (id: string) => number | undefined,
  cleared: boolean,
): Promise<void> {
  const space = chunkSpaceOf(indexId);
  if (cleared) wb.delPrefix(space.prefix);
  const removed = new Set<number>();
  const added = new Map<number, [number, string][]>();
  const touched = new Set<number>();
  // A batch of 50,000 new ids takes a while: the thread serving searches gets turns.
  const turns = new Yielder();
  let seen = 0;
  for (const [id, docid] of changes) {
    if ((++seen & 1023) === 0) await turns.maybe();
    const old = cleared ? undefined : before(id);
    if (old === docid) continue;
    if (old !== undefined) {
      removed.add(old);
      touched.add(chunkOf(old));
    }
    if (docid !== null) {
      const c = chunkOf(docid);
      const list = added.get(c) ?? [];
      list.push([docid, id]);
      added.set(c, list);
      touched.add(c);
    }
  }
  const chunks = [...touched].sort((a, b) => a - b);
  const stored = cleared ? chunks.map(() => null) : await reader.getMany(chunks.map((c) => space.key(encodeUint(c, 4))));
  for (let i = 0; i < chunks.length; i++) {
    const c = chunks[i]!;
    const entries: [number, string][] = [];
    const b = stored[i];
    if (b) forEachEntry(b, (docid, id) => void (removed.has(docid) || entries.push([docid, id])));
    for (const e of added.get(c) ?? []) entries.push(e);
    const key = space.key(encodeUint(c, 4));
    if (entries.length === 0) wb.del(key);
    else wb.put(key, encodeChunk(entries.sort((x, y) => x[0] - y[0])));
    await turns.maybe();
  }
  wb.put(chunkMarkerKey(indexId), Buffer.from([1]));
}
