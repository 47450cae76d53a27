import type { KeySpace } from '../../store/keys.js';

/**
 * Key layout of the facet index under its key space. Postings are cut into chunks of 2^16
 * docids so that a batch rewrites only the chunks its documents fall in:
 *
 *   M                                  meta (field names in id order)
 *   A chunk                            docids of every document
 *   E|Z|Y fid chunk                    exists / null / empty docids of a field
 *   N fid chunk f64                    docids with that number
 *   O fid chunk normalized             spellings of a string value with their docids
 *   G docid                            `_geo` point (two f64)
 *   J docid                            `_geojson` value (JSON)
 */
export const CHUNK_BITS = 16;

export type PostingKind = 'E' | 'Z' | 'Y' | 'N' | 'O';

export function chunkOf(docid: number): number {
  return docid >>> CHUNK_BITS;
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** f64 whose big-endian bytes sort like the numbers (negative ones flipped). */
export function encodeF64(v: number): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeDoubleBE(v);
  if (b[0]! & 0x80) for (let i = 0; i < 8; i++) b[i] = ~b[i]! & 0xff;
  else b[0]! |= 0x80;
  return b;
}

export function decodeF64(b: Buffer, offset: number): number {
  const c = Buffer.from(b.subarray(offset, offset + 8));
  if (c[0]! & 0x80) c[0]! &= 0x7f;
  else for (let i = 0; i < 8; i++) c[i] = ~c[i]! & 0xff;
  return c.readDoubleBE(0);
}

export class FacetKeys {
  constructor(readonly space: KeySpace) {}

  get meta(): Buffer {
    return Buffer.concat([this.space.prefix, Buffer.from('M')]);
  }

  kindPrefix(kind: string): Buffer {
    return Buffer.concat([this.space.prefix, Buffer.from(kind)]);
  }

  all(chunk: number): Buffer {
    return Buffer.concat([this.kindPrefix('A'), u32(chunk)]);
  }

  posting(kind: PostingKind, fid: number, chunk: number, value?: number | string): Buffer {
    const parts = [this.kindPrefix(kind), u32(fid), u32(chunk)];
    if (kind === 'N') parts.push(encodeF64(value as number));
    else if (kind === 'O') parts.push(Buffer.from(value as string, 'utf8'));
    return Buffer.concat(parts);
  }

  /** Decodes a posting key's field id, chunk and value (past the kind byte). */
  parsePosting(key: Buffer): { kind: PostingKind; fid: number; chunk: number; value: number | string | null } {
    const at = this.space.prefix.length;
    const kind = String.fromCharCode(key[at]!) as PostingKind;
    const fid = key.readUInt32BE(at + 1);
    const chunk = key.readUInt32BE(at + 5);
    const rest = at + 9;
    const value = kind === 'N' ? decodeF64(key, rest) : kind === 'O' ? key.toString('utf8', rest) : null;
    return { kind, fid, chunk, value };
  }

  geo(docid: number): Buffer {
    return Buffer.concat([this.kindPrefix('G'), u32(docid)]);
  }

  geojson(docid: number): Buffer {
    return Buffer.concat([this.kindPrefix('J'), u32(docid)]);
  }

  docidOf(key: Buffer): number {
    return key.readUInt32BE(this.space.prefix.length + 1);
  }
}

export function encodeDocids(docids: ArrayLike<number>): Buffer {
  const b = Buffer.allocUnsafe(docids.length * 4);
  for (let i = 0; i < docids.length; i++) b.writeUInt32LE(docids[i]!, i * 4);
  return b;
}

export function decodeDocids(b: Buffer, offset = 0, count = (b.length - offset) >>> 2): Uint32Array {
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) out[i] = b.readUInt32LE(offset + i * 4);
  return out;
}

/** A string value's chunk: `[n] ([byteLen] utf8 [count] docids...)*` — one group per spelling. */
export function encodeSpellings(groups: [string, ArrayLike<number>][]): Buffer {
  const parts: Buffer[] = [u32(groups.length)];
  for (const [orig, docids] of groups) {
    const s = Buffer.from(orig, 'utf8');
    parts.push(u32(s.length), s, u32(docids.length), encodeDocids(docids));
  }
  return Buffer.concat(parts);
}

export function decodeSpellings(b: Buffer): [string, Uint32Array][] {
  const out: [string, Uint32Array][] = [];
  const n = b.readUInt32BE(0);
  let at = 4;
  for (let i = 0; i < n; i++) {
    const len = b.readUInt32BE(at);
    const orig = b.toString('utf8', at + 4, at + 4 + len);
    at += 4 + len;
    const count = b.readUInt32BE(at);
    out.push([orig, decodeDocids(b, at + 4, count)]);
    at += 4 + count * 4;
  }
  return out;
}

/** The slice of a sorted posting that falls in one chunk. */
export function chunkSlice(docids: Uint32Array, chunk: number): Uint32Array {
  const lo = chunk * (1 << CHUNK_BITS);
  const hi = lo + (1 << CHUNK_BITS);
  let a = 0;
  let b = docids.length;
  let l = 0;
  let h = docids.length;
  while (l < h) {
    const m = (l + h) >>> 1;
    if (docids[m]! < lo) l = m + 1;
    else h = m;
  }
  a = l;
  h = docids.length;
  while (l < h) {
    const m = (l + h) >>> 1;
    if (docids[m]! < hi) l = m + 1;
    else h = m;
  }
  b = l;
  return docids.subarray(a, b);
}
