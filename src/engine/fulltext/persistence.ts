// Key layout of an index's search structures under its key space:
//
//   m\0meta            JSON { version, names: field names by id, words: word count }
//   w\0<u32 base>      words base, base+1, ... joined by NUL (append-only chunks)
//   r\0<u32 docid>     the document's record (doc-record.ts), varint-encoded
//
// Posting lists, prefix lists and the sorted dictionary are not stored: opening an
// index reads the words and records and rebuilds them, which is linear in the number
// of tokens and much cheaper than re-tokenizing documents.

import { encodeUint, type KeySpace } from '../../store/keys.js';
import type { KvReader, WriteBatch } from '../../store/kv.js';
import type { IndexSettings } from '../settings/settings.js';
import { decodeRecord, encodeRecord, Slab, type DocRecord } from './doc-record.js';
import { buildFromRecords, emptyState, type IndexState, type StagedState } from './index-state.js';
import type { Yielder } from './yielder.js';

const FORMAT_VERSION = 2;
const WORDS_PER_CHUNK = 4096;

interface Meta {
  version: number;
  names: string[];
  words: number;
}

export class IndexKeys {
  readonly meta: Buffer;
  readonly words: KeySpace;
  readonly records: KeySpace;

  constructor(readonly space: KeySpace) {
    this.meta = space.child('m').key('meta');
    this.words = space.child('w');
    this.records = space.child('r');
  }

  wordChunk(base: number): Buffer {
    return this.words.key(encodeUint(base, 4));
  }

  record(docid: number): Buffer {
    return this.records.key(encodeUint(docid, 4));
  }
}

function putMeta(wb: WriteBatch, keys: IndexKeys, state: IndexState): void {
  const meta: Meta = { version: FORMAT_VERSION, names: [...state.names.names], words: state.wordCount };
  wb.put(keys.meta, JSON.stringify(meta));
}

function putWords(wb: WriteBatch, keys: IndexKeys, words: readonly string[], base: number): void {
  for (let i = 0; i < words.length; i += WORDS_PER_CHUNK) {
    wb.put(keys.wordChunk(base + i), words.slice(i, i + WORDS_PER_CHUNK).join('\0'));
  }
}

/** Replaces everything stored for the index with `staged`. */
export function writeFull(wb: WriteBatch, keys: IndexKeys, staged: StagedState, newWords: readonly string[]): void {
  const state = staged.state;
  wb.delPrefix(keys.space.prefix);
  putMeta(wb, keys, state);
  putWords(wb, keys, newWords, 0);
  state.records.forEach((rec, docid) => {
    if (rec) wb.put(keys.record(docid), encodeRecord(rec));
  });
}

/** Stores the changes of one batch: the touched records, the new words, the meta. */
export function writeDelta(
  wb: WriteBatch,
  keys: IndexKeys,
  staged: StagedState,
  changed: Iterable<number>,
  newWords: readonly string[],
  wordBase: number,
): void {
  const state = staged.state;
  putMeta(wb, keys, state);
  if (newWords.length > 0) putWords(wb, keys, newWords, wordBase);
  for (const docid of changed) {
    const rec = state.records[docid];
    if (rec) wb.put(keys.record(docid), encodeRecord(rec));
    else wb.del(keys.record(docid));
  }
}

/** Opens the stored state, or an empty one for an index that has none yet. */
export async function loadState(
  reader: KvReader,
  keys: IndexKeys,
  settings: IndexSettings,
  yielder: Yielder,
): Promise<IndexState> {
  const metaBuf = await reader.get(keys.meta);
  if (!metaBuf) return emptyState(settings);
  const meta = JSON.parse(metaBuf.toString()) as Meta;
  if (meta.version !== FORMAT_VERSION) throw new Error(`unsupported search index format ${meta.version}`);
  const words: string[] = [];
  for await (const e of reader.scan({ prefix: keys.words.prefix })) {
    const base = keys.words.strip(e.key).readUInt32BE(0);
    if (base !== words.length) throw new Error(`word chunk at ${base}, expected ${words.length}`);
    for (const w of e.value.toString().split('\0')) words.push(w);
  }
  words.length = Math.min(words.length, meta.words);
  const records: (DocRecord | undefined)[] = [];
  const slab = new Slab();
  for await (const e of reader.scan({ prefix: keys.records.prefix })) {
    records[keys.records.strip(e.key).readUInt32BE(0)] = decodeRecord(e.value, slab);
    await yielder.maybe();
  }
  const staged = await buildFromRecords(settings, meta.names, words, records, yielder);
  staged.commitTables();
  return staged.state;
}
