// A saved copy of an embedder's HNSW graph, so that a restart does not link every vector
// again (30 s to 2 min at 100,000 vectors of 384 dimensions, with slower vector searches
// meanwhile). The graph is derived data: the files are a cache beside the store, and
// anything in them that does not match what the store holds is ignored, never served.
//
// Two files per index and embedder, under `<db-path>/vector-graphs/`:
//   <name>.usearch   the graph in usearch's own format, keyed by slot number
//   <name>.slots     "TRVG" | u32 version | u32 header bytes | header (JSON) | i32 docid per
//                    slot (-1: killed) | u32 CRC-32 of each slot's unit vector | u32 CRC-32 of
//                    everything before it
// The header names what the graph was built for (the embedder's fingerprint, dimensions,
// quantization, the graph's parameters), its slot count, and the .usearch file's length
// and CRC-32. Written as temporary files, synced, then renamed, .usearch first: a crash
// between the renames leaves a .slots whose checksum of the graph file no longer matches.
//
// At open, a document's vectors go back to the slots the saved graph gave them when each
// still has the same CRC-32 as the vector saved there; the others are appended after them
// and linked in the background, as new vectors are.

import { createReadStream, mkdirSync } from 'node:fs';
import { open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { AnnParams } from './ann-graph.js';

const MAGIC = 0x47565254; // "TRVG" read as a little-endian u32
const VERSION = 1;

export const GRAPH_DIR = 'vector-graphs';

/** What a saved graph must have been built for to be used. */
export interface GraphIdentity {
  fingerprint: string;
  dims: number;
  quantized: boolean;
  params: AnnParams;
}

interface Header extends GraphIdentity {
  slots: number;
  graphBytes: number;
  graphCrc: number;
}

/** A saved graph found intact and built for the same embedder. */
export interface SavedGraph {
  /** Slot → docid when saved (-1: killed). */
  docOf: Int32Array;
  /** Slot → CRC-32 of the unit vector it held. */
  hashes: Uint32Array;
  /** The usearch file, checked against its CRC-32. */
  graphPath: string;
}

/** CRC-32 of a unit vector's bytes: whether a stored vector is still the one a slot held. */
export function vectorHash(unit: Float32Array): number {
  return crc32(new Uint8Array(unit.buffer, unit.byteOffset, unit.byteLength));
}

/** File name stem of one index's (by its key space) embedder. */
export function graphName(space: Buffer, embedder: string): string {
  return `${space.toString('hex')}-${Buffer.from(embedder, 'utf8').toString('hex')}`;
}

async function fileCrc(path: string): Promise<{ crc: number; bytes: number }> {
  let crc = 0;
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    crc = crc32(chunk as Buffer, crc);
    bytes += (chunk as Buffer).length;
  }
  return { crc, bytes };
}

async function writeSynced(path: string, data: Uint8Array): Promise<void> {
  const f = await open(path, 'w');
  try {
    await f.writeFile(data);
    await f.sync();
  } finally {
    await f.close();
  }
}

async function syncFile(path: string): Promise<void> {
  const f = await open(path, 'r+');
  try {
    await f.sync();
  } finally {
    await f.close();
  }
}

/**
 * Saves a graph over slots `[0, docOf.length)`: `writeGraph` writes the usearch file at once
 * (the graph as it is then, over those slots), `docOf` is of the same moment, and `hashes`
 * (of vectors, which never change in a slot) may be worked out afterwards. `stillWanted` is
 * asked last, before the files take their names: an index or embedder deleted (or a store
 * closed) while they were written leaves nothing behind.
 */
export async function saveGraph(
  dir: string,
  name: string,
  id: GraphIdentity,
  writeGraph: (path: string) => void,
  docOf: Int32Array,
  vectorHashes: () => Promise<Uint32Array>,
  stillWanted: () => Promise<boolean>,
): Promise<void> {
  // Nothing awaited before the graph is written: it must be the graph over `docOf`'s slots.
  mkdirSync(dir, { recursive: true });
  const base = join(dir, name);
  const graphTmp = `${base}.usearch.tmp`;
  const slotsTmp = `${base}.slots.tmp`;
  try {
    writeGraph(graphTmp);
    const hashes = await vectorHashes();
    await syncFile(graphTmp);
    const { crc, bytes } = await fileCrc(graphTmp);
    const header: Header = { ...id, slots: docOf.length, graphBytes: bytes, graphCrc: crc };
    const json = Buffer.from(JSON.stringify(header), 'utf8');
    const out = Buffer.alloc(12 + json.length + 8 * docOf.length + 4);
    out.writeUInt32LE(MAGIC, 0);
    out.writeUInt32LE(VERSION, 4);
    out.writeUInt32LE(json.length, 8);
    json.copy(out, 12);
    let at = 12 + json.length;
    for (let i = 0; i < docOf.length; i++, at += 4) out.writeInt32LE(docOf[i]!, at);
    for (let i = 0; i < hashes.length; i++, at += 4) out.writeUInt32LE(hashes[i]!, at);
    out.writeUInt32LE(crc32(out.subarray(0, at)), at);
    await writeSynced(slotsTmp, out);
    if (!(await stillWanted())) return;
    await rename(graphTmp, `${base}.usearch`);
    await rename(slotsTmp, `${base}.slots`);
  } finally {
    await rm(graphTmp, { force: true });
    await rm(slotsTmp, { force: true });
  }
}

function sameIdentity(a: GraphIdentity, b: GraphIdentity): boolean {
  return (
    a.fingerprint === b.fingerprint &&
    a.dims === b.dims &&
    a.quantized === b.quantized &&
    a.params.connectivity === b.params.connectivity &&
    a.params.expansionAdd === b.params.expansionAdd
  );
}

/** The saved graph of `name`, or null when there is none, it is damaged, or it was built for something else. */
export async function loadSavedGraph(dir: string, name: string, id: GraphIdentity): Promise<SavedGraph | null> {
  const base = join(dir, name);
  let b: Buffer;
  try {
    b = await readFile(`${base}.slots`);
  } catch {
    return null;
  }
  if (b.length < 16 || b.readUInt32LE(0) !== MAGIC || b.readUInt32LE(4) !== VERSION) return null;
  const end = b.length - 4;
  if (crc32(b.subarray(0, end)) !== b.readUInt32LE(end)) return null;
  const jsonLen = b.readUInt32LE(8);
  if (12 + jsonLen > end) return null;
  let header: Header;
  try {
    header = JSON.parse(b.toString('utf8', 12, 12 + jsonLen)) as Header;
  } catch {
    return null;
  }
  if (!sameIdentity(header, id) || 12 + jsonLen + 8 * header.slots !== end) return null;
  const graphPath = `${base}.usearch`;
  try {
    if ((await stat(graphPath)).size !== header.graphBytes) return null;
    const { crc } = await fileCrc(graphPath);
    if (crc !== header.graphCrc) return null;
  } catch {
    return null;
  }
  const docOf = new Int32Array(header.slots);
  const hashes = new Uint32Array(header.slots);
  let at = 12 + jsonLen;
  for (let i = 0; i < header.slots; i++, at += 4) docOf[i] = b.readInt32LE(at);
  for (let i = 0; i < header.slots; i++, at += 4) hashes[i] = b.readUInt32LE(at);
  return { docOf, hashes, graphPath };
}

/** The files in `dir`; none when it does not exist (no graph saved yet). */
async function filesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}

/** Bytes of the saved graphs in `dir` (none when it does not exist). */
export async function graphBytes(dir: string): Promise<number> {
  let total = 0;
  for (const f of await filesIn(dir)) {
    try {
      total += (await stat(join(dir, f))).size;
    } catch {
      // replaced or removed while listed
    }
  }
  return total;
}

/** Removes the saved graphs whose name `keep` refuses (indexes or embedders that are gone). */
export async function removeGraphs(dir: string, keep: (name: string) => boolean): Promise<void> {
  for (const f of await filesIn(dir)) {
    const stem = f.replace(/\.(usearch|slots)(\.tmp)?$/, '');
    if (f.endsWith('.tmp') || !keep(stem)) await rm(join(dir, f), { force: true });
  }
}
