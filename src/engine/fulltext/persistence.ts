// Key layout of an index's full-text structures under its key space (format 3,
// docs/storage.md):
//
//   m\0meta                    JSON { version, names: field names by id, words: word count,
//                              segments: the live segments' numbers, oldest first, nextSeq }
//   w\0<u32 base>              words base, base+1, ... joined by NUL (append-only chunks)
//   s\0<u32 seq><u32 part>     segment `seq`, a checksummed blob (blob-codec.ts) in parts
//   o\0<u32 part>              the sorted dictionary: word ids in dictionary order, same coding
//
// A segment is written under a number no live segment has, part by part, before the batch's
// atomic write; that write (meta, words, deletions) is what makes it live. Parts of a
// segment the meta does not name (a crash before that write) are removed at open.

import type { KeySpace } from '../../store/keys.js';
import { encodeUint } from '../../store/keys.js';
import type { KvReader, KvStore, WriteBatch } from '../../store/kv.js';
import { BlobReader, CorruptStructureError, u32s, writeBlob } from './blob-codec.js';
import type { ListArena } from './list-arena.js';
import type { Segment } from './segment.js';

export const FORMAT_VERSION = 3;
const WORDS_PER_CHUNK = 4096;
const PART_BYTES = 8 << 20;
const SEGMENT_BLOB = 1;
const DICTIONARY_BLOB = 2;
/** Segment parts asked of the store ahead of the one being copied. */
const PARTS_AHEAD = 2;

export interface Meta {
  version: number;
  names: string[];
  words: number;
  /** Live segments, oldest first. */
  segments: number[];
  /** The number the next new segment gets. */
  nextSeq: number;
}

export class IndexKeys {
  readonly meta: Buffer;
  readonly words: KeySpace;
  readonly segments: KeySpace;
  readonly dictionary: KeySpace;

  constructor(readonly space: KeySpace) {
    this.meta = space.child('m').key('meta');
    this.words = space.child('w');
    this.segments = space.child('s');
    this.dictionary = space.child('o');
  }

  wordChunk(base: number): Buffer {
    return this.words.key(encodeUint(base, 4));
  }

  segmentPart(seq: number, part: number): Buffer {
    return Buffer.concat([this.segments.prefix, encodeUint(seq, 4), encodeUint(part, 4)]);
  }

  segmentPrefix(seq: number): Buffer {
    return Buffer.concat([this.segments.prefix, encodeUint(seq, 4)]);
  }
}

export function putMeta(wb: WriteBatch, keys: IndexKeys, meta: Omit<Meta, 'version'>): void {
  wb.put(keys.meta, JSON.stringify({ version: FORMAT_VERSION, ...meta } satisfies Meta));
}

export function putWords(wb: WriteBatch, keys: IndexKeys, words: readonly string[], base: number): void {
  for (let i = 0; i < words.length; i += WORDS_PER_CHUNK) {
    wb.put(keys.wordChunk(base + i), words.slice(i, i + WORDS_PER_CHUNK).join('\0'));
  }
}

function arenaArrays(a: ListArena): Uint32Array[] {
  return [a.ids, a.offsets, a.ndocs, a.docs, a.fps];
}

/** Writes a segment part by part, each part in a write of its own (see the layout above). */
export async function storeSegment(store: KvStore, keys: IndexKeys, s: Segment): Promise<void> {
  await store.batch().delPrefix(keys.segmentPrefix(s.seq)).commit();
  const arrays = [s.docs, s.deleted, ...arenaArrays(s.words), ...(s.prefixes ? arenaArrays(s.prefixes) : []), s.recordOffsets, s.records];
  await writeBlob(SEGMENT_BLOB, arrays, PART_BYTES, (part, bytes) => store.batch().put(keys.segmentPart(s.seq, part), bytes).commit());
}

export function deleteSegment(wb: WriteBatch, keys: IndexKeys, seq: number): void {
  wb.delPrefix(keys.segmentPrefix(seq));
}

/** The dictionary order of the first `ids.length` words. */
export async function putDictionary(wb: WriteBatch, keys: IndexKeys, ids: Uint32Array): Promise<void> {
  wb.delPrefix(keys.dictionary.prefix);
  await writeBlob(DICTIONARY_BLOB, [ids], PART_BYTES, async (part, bytes) => void wb.put(keys.dictionary.key(encodeUint(part, 4)), Buffer.from(bytes)));
}

function decodeSegment(seq: number, reader: BlobReader): Segment {
  const raw = reader.finish();
  const a: (Uint32Array | Uint8Array)[] = raw.map((b, i) => (i === raw.length - 1 ? b : u32s(b)));
  if (a.length !== 9 && a.length !== 14) throw new CorruptStructureError(`segment ${seq}: ${a.length} arrays`);
  const arena = (at: number): ListArena => ({
    ids: a[at] as Uint32Array,
    offsets: a[at + 1] as Uint32Array,
    ndocs: a[at + 2] as Uint32Array,
    docs: a[at + 3] as Uint32Array,
    fps: a[at + 4] as Uint32Array,
  });
  const withPrefixes = a.length === 14;
  const s: Segment = {
    seq,
    docs: a[0] as Uint32Array,
    deleted: a[1] as Uint32Array,
    words: arena(2),
    prefixes: withPrefixes ? arena(7) : null,
    recordOffsets: a[a.length - 2] as Uint32Array,
    records: a[a.length - 1] as Uint8Array,
  };
  checkSegment(s);
  return s;
}

/** Sizes that must agree, so that a damaged segment cannot send a search out of bounds. */
function checkSegment(s: Segment): void {
  const bad = (what: string) => new CorruptStructureError(`segment ${s.seq}: ${what}`);
  for (const a of [s.words, s.prefixes]) {
    if (!a) continue;
    if (a.offsets.length !== a.ids.length + 1 || a.ndocs.length !== a.ids.length) throw bad('list table sizes');
    if (a.docs.length !== a.fps.length || a.offsets[a.ids.length] !== a.docs.length) throw bad('list arena sizes');
  }
  if (s.recordOffsets.length !== s.docs.length + 1 || s.recordOffsets[s.docs.length] !== s.records.length) throw bad('record sizes');
}

export interface Stored {
  meta: Meta;
  words: string[];
  /** Word ids in dictionary order, for the first `dictionary.length` words; null when not stored. */
  dictionary: Uint32Array | null;
  segments: Segment[];
  /** Numbers of segments stored but not live (left by a crash), to remove. */
  orphans: number[];
}

/** Reads what is stored; null for an index with nothing stored yet. Throws CorruptStructureError. */
export async function readStored(reader: KvReader, keys: IndexKeys): Promise<Stored | null> {
  const metaBuf = await reader.get(keys.meta);
  if (!metaBuf) return null;
  let meta: Meta;
  try {
    meta = JSON.parse(metaBuf.toString()) as Meta;
  } catch {
    throw new CorruptStructureError('full-text meta is not JSON');
  }
  if (meta.version !== FORMAT_VERSION) throw new CorruptStructureError(`full-text format ${meta.version}, expected ${FORMAT_VERSION}`);
  const words: string[] = [];
  for await (const e of reader.scan({ prefix: keys.words.prefix })) {
    const base = keys.words.strip(e.key).readUInt32BE(0);
    if (base !== words.length) throw new CorruptStructureError(`word chunk at ${base}, expected ${words.length}`);
    for (const w of e.value.toString().split('\0')) words.push(w);
  }
  if (words.length < meta.words) throw new CorruptStructureError(`${words.length} words stored, meta says ${meta.words}`);
  words.length = meta.words;
  if (!Array.isArray(meta.segments) || typeof meta.nextSeq !== 'number') throw new CorruptStructureError('full-text meta without its segments');
  let dictionary: Uint32Array | null = null;
  const dict = new BlobReader(DICTIONARY_BLOB, 'dictionary');
  let dictParts = 0;
  for await (const e of reader.scan({ prefix: keys.dictionary.prefix })) dict.add(dictParts++, e.value);
  if (dictParts > 0) {
    dictionary = u32s(dict.finish()[0]!);
    for (const id of dictionary) if (id >= words.length) throw new CorruptStructureError('dictionary names an unknown word');
  }
  const live = new Map<number, BlobReader>(meta.segments.map((seq) => [seq, new BlobReader(SEGMENT_BLOB, `segment ${seq}`)]));
  const orphans = new Set<number>();
  // The keys first, then the parts one by one with the next ones already asked for: the store
  // reads them (into memory of its own, most of the cost) while this thread copies one.
  const partKeys: Buffer[] = [];
  for await (const e of reader.scan({ prefix: keys.segments.prefix, keysOnly: true })) {
    const seq = keys.segments.strip(e.key).readUInt32BE(0);
    if (live.has(seq)) partKeys.push(e.key);
    else orphans.add(seq);
  }
  const pending: Promise<Buffer | null>[] = [];
  const ask = (i: number) => {
    if (i < partKeys.length && pending[i] === undefined) pending[i] = reader.get(partKeys[i]!);
  };
  for (let i = 0; i < partKeys.length; i++) {
    for (let j = i; j <= i + PARTS_AHEAD; j++) ask(j);
    const value = await pending[i]!;
    delete pending[i];
    const k = keys.segments.strip(partKeys[i]!);
    const seq = k.readUInt32BE(0);
    // Gone since the scan: the blob reports the missing part.
    if (value) live.get(seq)!.add(k.readUInt32BE(4), value);
  }
  const segments = meta.segments.map((seq) => decodeSegment(seq, live.get(seq)!));
  return { meta, words, dictionary, segments, orphans: [...orphans] };
}
