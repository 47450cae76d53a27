// What the index keeps about one document: its words with their field and position,
// the number of words of each field, and the raw values of the fields used to sort,
// deduplicate or filter. Records are stored varint-coded in the segment that holds the
// document (segment.ts) and decoded when a search asks for one.

import { MAX_DISTANCE, type Tokenizer } from '../tokenizer/index.js';
import type { Doc } from '../documents/primary-key.js';
import { forEachLeaf, type FieldNames, type FieldRules } from './field-table.js';
import type { WordStage } from './word-table.js';
import { touchInTurns, type Yielder } from '../../util/yielder.js';

/** A value kept for sorting, distinct and filters: numbers stay numbers, the rest is a string. */
export type FieldValue = number | string;

export interface DocRecord {
  /** Pairs [wordId, fp] where fp = fieldId << 16 | position, sorted by fp. */
  tokens: Uint32Array;
  /** fieldId << 16 | word count (capped at 0xffff), one per field that has words. */
  counts: Uint32Array;
  /** Leaf path → values, for the fields selected as value fields. */
  values: Record<string, FieldValue[]> | null;
}

export const MAX_POSITION = 0xffff;

/** Decides which leaf paths keep their values (sortable, distinct, filterable, custom rules). */
export type ValueFieldPredicate = (path: string) => boolean;

export interface ExtractContext {
  names: FieldNames;
  rules: FieldRules;
  tokenizer: Tokenizer;
  words: WordStage;
  keepValue: ValueFieldPredicate;
  /** Where the records' arrays are carved from (fewer, larger allocations). */
  slab?: Slab;
}

/**
 * Hands out small Uint32Arrays as views of large blocks: a full build makes one array
 * per document, and a few hundred thousand separate buffers weigh on the garbage
 * collector far more than a few large ones.
 */
export class Slab {
  private block = new Uint32Array(0);
  private at = 0;

  constructor(private readonly blockSize = 1 << 18) {}

  alloc(n: number): Uint32Array {
    if (this.at + n > this.block.length) {
      this.block = new Uint32Array(Math.max(this.blockSize, n));
      this.at = 0;
    }
    const v = this.block.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
}

// Per-call scratch space, reused: extraction is synchronous.
let toks: Uint32Array = new Uint32Array(1024);
let sortBuf: Uint32Array = new Uint32Array(1024);
let fidCount: Uint32Array = new Uint32Array(64);
let fidWords: Uint32Array = new Uint32Array(64);
let fidNext: Uint32Array = new Uint32Array(64);
const touchedFids: number[] = [];

function grow(a: Uint32Array, need: number): Uint32Array {
  if (need <= a.length) return a;
  const b = new Uint32Array(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}

/** Tokenizes a document into its record. */
export function extractRecord(doc: Doc, ctx: ExtractContext): DocRecord {
  let n = 0;
  let values: Record<string, FieldValue[]> | null = null;
  let sorted = true;
  let lastFp = -1;
  touchedFids.length = 0;

  forEachLeaf(doc, (path, value) => {
    const fid = ctx.names.add(path);
    if (ctx.keepValue(path)) {
      values ??= {};
      // Sorting, distinct and filters compare numbers as doubles, as the reference's facets do.
      (values[path] ??= []).push(typeof value === 'boolean' ? String(value) : typeof value === 'bigint' ? Number(value) : value);
    }
    if (!ctx.rules.isSearchable(fid)) return;
    if (fid >= fidCount.length) {
      fidCount = grow(fidCount, fid + 1);
      fidWords = grow(fidWords, fid + 1);
      fidNext = grow(fidNext, fid + 1);
    }
    if (!touchedFids.includes(fid)) touchedFids.push(fid);
    const text = typeof value === 'string' ? value : String(value);
    const base = fidNext[fid]!;
    const high = fid << 16;
    let last = -1;
    const locales = ctx.rules.localesOf(fid);
    ctx.tokenizer.forEachWord(
      text,
      (lemma, pos) => {
        const p = base + pos;
        if (p > MAX_POSITION) return;
        const fp = (high | p) >>> 0;
        if (fp < lastFp) sorted = false;
        lastFp = fp;
        if (n + 2 > toks.length) toks = grow(toks, n + 2);
        toks[n++] = ctx.words.idOf(lemma);
        toks[n++] = fp;
        fidCount[fid]!++;
        last = p;
      },
      locales ? { locales } : undefined,
    );
    // Successive values of one field are kept apart like sentences.
    if (last >= 0) fidNext[fid] = last + MAX_DISTANCE;
  });

  // A handful of fields: an insertion sort, without the work arrays Array.prototype.sort
  // allocates on every call (12% of what an import's records allocated).
  let withWords = 0;
  for (let i = 0; i < touchedFids.length; i++) {
    const f = touchedFids[i]!;
    if (fidCount[f]! > 0) withWords++;
    let j = i;
    for (; j > 0 && touchedFids[j - 1]! > f; j--) touchedFids[j] = touchedFids[j - 1]!;
    touchedFids[j] = f;
  }
  const counts = new Uint32Array(withWords);
  let c = 0;
  for (const f of touchedFids) {
    if (fidCount[f]! > 0) counts[c++] = ((f << 16) | Math.min(fidCount[f]!, 0xffff)) >>> 0;
  }
  let src: Uint32Array = toks;
  if (!sorted) {
    // Positions grow within each field: a stable counting sort by field id restores order.
    sortBuf = grow(sortBuf, n);
    let at = 0;
    for (const f of touchedFids) {
      fidWords[f] = at;
      at += fidCount[f]! * 2;
    }
    for (let i = 0; i < n; i += 2) {
      const f = toks[i + 1]! >>> 16;
      const k = fidWords[f]!;
      sortBuf[k] = toks[i]!;
      sortBuf[k + 1] = toks[i + 1]!;
      fidWords[f] = k + 2;
    }
    src = sortBuf;
  }
  const tokens = ctx.slab ? ctx.slab.alloc(n) : new Uint32Array(n);
  tokens.set(src.subarray(0, n));
  for (const f of touchedFids) {
    fidCount[f] = 0;
    fidNext[f] = 0;
  }
  return { tokens, counts, values };
}

// Binary layout: varints — the number of token pairs, the number of field counts, the
// field counts, then per token its word id and the difference of its fp from the
// previous one (fps are sorted) — followed by the values as UTF-8 JSON. About a quarter
// of the size of plain 32-bit words, which shortens both the batch write and the load.
/** Bytes being written, grown as needed. */
class Sink {
  constructor(public bytes: Uint8Array) {}

  room(at: number, need: number): void {
    if (this.bytes.length >= at + need) return;
    const grown = new Uint8Array((at + need) * 2);
    grown.set(this.bytes.subarray(0, at));
    this.bytes = grown;
  }

  put(v: number, at: number): number {
    const out = this.bytes;
    while (v >= 0x80) {
      out[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[at++] = v;
    return at;
  }
}

const utf8 = new TextEncoder();

/** Writes `rec` into `sink` from `at`; returns where it ends. */
function writeRecord(rec: DocRecord, sink: Sink, at: number): number {
  const values = rec.values ? JSON.stringify(rec.values) : null;
  sink.room(at, 10 * (2 + rec.counts.length + rec.tokens.length) + (values ? 3 * values.length : 0));
  at = sink.put(rec.tokens.length / 2, at);
  at = sink.put(rec.counts.length, at);
  for (let i = 0; i < rec.counts.length; i++) at = sink.put(rec.counts[i]!, at);
  let prev = 0;
  for (let i = 0; i < rec.tokens.length; i += 2) {
    at = sink.put(rec.tokens[i]!, at);
    const fp = rec.tokens[i + 1]!;
    at = sink.put(fp - prev, at);
    prev = fp;
  }
  if (values) at += utf8.encodeInto(values, sink.bytes.subarray(at)).written;
  return at;
}

/**
 * Records are written into pieces of this size, then laid end to end. Over glibc's largest
 * mmap threshold (32 MiB), so that each piece is mapped on its own, backed only where written,
 * and given back to the system when freed instead of fragmenting the heap.
 */
const PIECE = (32 << 20) + 4096;
/**
 * A piece holds this much per record left to write (grown if a record needs more), at least
 * PIECE_MIN: V8 counts a piece's whole size as external memory however little of it is
 * written, and a 32 MiB piece per single-document write set off a scavenge or a mark-compact
 * for each (18 ms of a 50 ms write on the longdocs dictionary).
 */
const PIECE_PER_RECORD = 1024;
const PIECE_MIN = 64 << 10;

/**
 * Records encoded one after another into one array, with where each starts: a segment's
 * records, without a Buffer per record (a batch has tens of thousands), giving the event loop
 * turns. They are written into pieces, then copied into one array of the exact size: growing
 * one array would copy it whole at once, into fresh memory that faults page by page.
 */
export async function encodeRecords(
  n: number,
  recordAt: (i: number) => DocRecord,
  yielder: Yielder,
): Promise<{ recordOffsets: Uint32Array; records: Uint8Array }> {
  const recordOffsets = new Uint32Array(n + 1);
  const pieces: Uint8Array[] = [];
  // Sized for the records left to write, up to PIECE.
  const piece = (left: number): Sink => new Sink(new Uint8Array(Math.min(PIECE, Math.max(PIECE_MIN, left * PIECE_PER_RECORD))));
  let sink = piece(n);
  let base = 0;
  let at = 0;
  for (let i = 0; i < n; i++) {
    const size = sink.bytes.length;
    if (size - at < size / 64) {
      pieces.push(sink.bytes.subarray(0, at));
      base += at;
      sink = piece(n - i);
      at = 0;
    }
    at = writeRecord(recordAt(i), sink, at);
    recordOffsets[i + 1] = base + at;
    if ((i & 255) === 255) await yielder.maybe();
  }
  pieces.push(sink.bytes.subarray(0, at));
  const records = new Uint8Array(base + at);
  await touchInTurns(records, yielder);
  let to = 0;
  for (const p of pieces) {
    records.set(p, to);
    to += p.length;
    await yielder.maybe();
  }
  return { recordOffsets, records };
}

/**
 * Reads the varints `put` writes, in order. Searches decode the record of every candidate
 * they rank closely (thousands per query), so values under 2^28 take 32-bit arithmetic and
 * only longer ones fall back to floats (fps reach 2^32).
 */
class VarintReader {
  at = 0;

  constructor(private readonly bytes: Uint8Array) {}

  next(): number {
    const bytes = this.bytes;
    let b = bytes[this.at++]!;
    if (b < 0x80) return b;
    let v = b & 0x7f;
    b = bytes[this.at++]!;
    if (b < 0x80) return v | (b << 7);
    v |= (b & 0x7f) << 7;
    b = bytes[this.at++]!;
    if (b < 0x80) return v | (b << 14);
    v |= (b & 0x7f) << 14;
    b = bytes[this.at++]!;
    if (b < 0x80) return v | (b << 21);
    v |= (b & 0x7f) << 21;
    for (let shift = 28; ; shift += 7) {
      b = bytes[this.at++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
    }
  }
}

/** Words of field `fid` in an encoded record, reading only its head. */
export function recordFieldCount(buf: Uint8Array, fid: number): number {
  const r = new VarintReader(buf);
  r.next();
  for (let n = r.next(); n > 0; n--) {
    const c = r.next();
    if (c >>> 16 === fid) return c & 0xffff;
  }
  return 0;
}

/**
 * The token pairs of an encoded record alone (word id, fp): what matching a query against a
 * document reads, without its field counts or its JSON values. `alloc` gives the array to
 * fill (a search's scratch), by default a new one.
 */
export function decodeTokens(bytes: Uint8Array, alloc?: (n: number) => Uint32Array): Uint32Array {
  const r = new VarintReader(bytes);
  const pairs = r.next();
  for (let n = r.next(); n > 0; n--) r.next();
  return readTokens(r, alloc ? alloc(pairs * 2) : new Uint32Array(pairs * 2));
}

/** Fills `tokens` with the token pairs that follow the field counts (fps are delta-coded). */
function readTokens(r: VarintReader, tokens: Uint32Array): Uint32Array {
  let prev = 0;
  for (let i = 0; i < tokens.length; i += 2) {
    tokens[i] = r.next();
    prev += r.next();
    tokens[i + 1] = prev;
  }
  return tokens;
}

/**
 * The kept values of an encoded record alone: its words are skipped without decoding (each
 * varint ends at a byte below 0x80), for the tables built from every document's values.
 */
export function decodeValues(bytes: Uint8Array): Record<string, FieldValue[]> | null {
  const r = new VarintReader(bytes);
  const pairs = r.next();
  let left = r.next() + 2 * pairs;
  let at = r.at;
  while (left > 0) if (bytes[at++]! < 0x80) left--;
  if (at >= bytes.length) return null;
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + at, bytes.length - at).toString()) as Record<string, FieldValue[]>;
}

export function decodeRecord(bytes: Uint8Array, slab?: Slab): DocRecord {
  const r = new VarintReader(bytes);
  const pairs = r.next();
  const nCounts = r.next();
  const counts = new Uint32Array(nCounts);
  for (let i = 0; i < nCounts; i++) counts[i] = r.next();
  const tokens = readTokens(r, slab ? slab.alloc(pairs * 2) : new Uint32Array(pairs * 2));
  const at = r.at;
  const rest = at < bytes.length ? Buffer.from(bytes.buffer, bytes.byteOffset + at, bytes.length - at).toString() : '';
  return { tokens, counts, values: rest ? (JSON.parse(rest) as Record<string, FieldValue[]>) : null };
}
