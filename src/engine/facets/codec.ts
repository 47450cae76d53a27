import type { KeySpace } from '../../store/keys.js';

/**
 * Key layout of the facet index under its key space. Documents are grouped in chunks of
 * 2^12 docids; each field keeps one record per chunk and kind, holding every value's
 * documents of that chunk. A batch rewrites only the records of the chunks its documents
 * fall in, and opening an index reads a few hundred records instead of one per value.
 *
 *   M                     meta (field names in id order)
 *   A chunk               docids of every document
 *   E|Z|Y fid chunk       exists / null / empty docids of a field
 *   N fid chunk           numbers with their docids
 *   S fid chunk           normalized strings, each with its spellings and their docids
 *   G chunk               `_geo` points of the chunk's documents
 *   J docid               `_geojson` value (JSON)
 */
export const CHUNK_BITS = 12;
const CHUNK_SIZE = 1 << CHUNK_BITS;

export type SegmentKind = 'E' | 'Z' | 'Y' | 'N' | 'S';

export function chunkOf(docid: number): number {
  return Math.floor(docid / CHUNK_SIZE);
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

export class FacetKeys {
  constructor(readonly space: KeySpace) {}

  get meta(): Buffer {
    return this.kindPrefix('M');
  }

  kindPrefix(kind: string): Buffer {
    return Buffer.concat([this.space.prefix, Buffer.from(kind)]);
  }

  all(chunk: number): Buffer {
    return Buffer.concat([this.kindPrefix('A'), u32(chunk)]);
  }

  segment(kind: SegmentKind, fid: number, chunk: number): Buffer {
    return Buffer.concat([this.kindPrefix(kind), u32(fid), u32(chunk)]);
  }

  /** A field segment key's field id. */
  fieldOf(key: Buffer): number {
    return key.readUInt32BE(this.space.prefix.length + 1);
  }

  geo(chunk: number): Buffer {
    return Buffer.concat([this.kindPrefix('G'), u32(chunk)]);
  }

  geojson(docid: number): Buffer {
    return Buffer.concat([this.kindPrefix('J'), u32(docid)]);
  }

  docidOf(key: Buffer): number {
    return key.readUInt32BE(this.space.prefix.length + 1);
  }
}

/** Appends numbers, strings and docid lists to a growing buffer. */
export class Writer {
  private buf = Buffer.allocUnsafe(256);
  private at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const b = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(b, 0, 0, this.at);
    this.buf = b;
  }

  u32(n: number): this {
    this.room(4);
    this.buf.writeUInt32LE(n, this.at);
    this.at += 4;
    return this;
  }

  f64(n: number): this {
    this.room(8);
    this.buf.writeDoubleLE(n, this.at);
    this.at += 8;
    return this;
  }

  str(s: string): this {
    const len = Buffer.byteLength(s);
    this.u32(len);
    this.room(len);
    this.buf.write(s, this.at, 'utf8');
    this.at += len;
    return this;
  }

  docids(d: ArrayLike<number>): this {
    this.u32(d.length);
    this.room(d.length * 4);
    for (let i = 0; i < d.length; i++) this.buf.writeUInt32LE(d[i]!, this.at + i * 4);
    this.at += d.length * 4;
    return this;
  }

  done(): Buffer {
    return this.buf.subarray(0, this.at);
  }
}

export class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}

  get more(): boolean {
    return this.at < this.buf.length;
  }

  u32(): number {
    const n = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return n;
  }

  f64(): number {
    const n = this.buf.readDoubleLE(this.at);
    this.at += 8;
    return n;
  }

  str(): string {
    const len = this.u32();
    const s = this.buf.toString('utf8', this.at, this.at + len);
    this.at += len;
    return s;
  }

  docids(): Uint32Array {
    const n = this.u32();
    const out = new Uint32Array(n);
    for (let i = 0; i < n; i++) out[i] = this.buf.readUInt32LE(this.at + i * 4);
    this.at += n * 4;
    return out;
  }
}

export function encodeDocids(docids: ArrayLike<number>): Buffer {
  return new Writer().docids(docids).done();
}

export function decodeDocids(b: Buffer): Uint32Array {
  return new Reader(b).docids();
}

/** The slice of a sorted posting that falls in one chunk. */
export function chunkSlice(docids: Uint32Array, chunk: number): Uint32Array {
  const lo = chunk * CHUNK_SIZE;
  const hi = lo + CHUNK_SIZE;
  let l = 0;
  let h = docids.length;
  while (l < h) {
    const m = (l + h) >>> 1;
    if (docids[m]! < lo) l = m + 1;
    else h = m;
  }
  const a = l;
  h = docids.length;
  while (l < h) {
    const m = (l + h) >>> 1;
    if (docids[m]! < hi) l = m + 1;
    else h = m;
  }
  return docids.subarray(a, l);
}

/** Every chunk a sorted posting has documents in. */
export function chunksOfPosting(docids: Uint32Array): number[] {
  const out: number[] = [];
  let i = 0;
  while (i < docids.length) {
    const c = chunkOf(docids[i]!);
    out.push(c);
    i += chunkSlice(docids, c).length;
  }
  return out;
}
