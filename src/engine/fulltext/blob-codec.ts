// Checksummed blobs of flat arrays: how segments and the sorted dictionary are stored.
//
//   "TRBL" | u32 format version | u32 kind | u32 array count | u32 body bytes | u32 CRC-32 of the body
//   body:  u32 byte length of each array, then each array padded to 4 bytes
//
// Integers are little-endian, the arrays' own byte order: a blob is read back as views over
// one buffer, without decoding. A blob whose marker, version, length or checksum does not
// match is refused with a CorruptStructureError.

import { endianness } from 'node:os';
import { crc32 } from 'node:zlib';

export const BLOB_VERSION = 1;
const MAGIC = 0x4c425254; // "TRBL" read as a little-endian u32
const HEADER = 24;

if (endianness() !== 'LE') throw new Error('the index format needs a little-endian machine');

/** A stored structure that cannot be read back as written: rebuild it, never serve it. */
export class CorruptStructureError extends Error {}

type Flat = Uint8Array | Uint32Array | Int32Array;

const pad4 = (n: number) => (n + 3) & ~3;

export function encodeBlob(kind: number, arrays: readonly Flat[]): Buffer {
  const table = 4 * arrays.length;
  let body = table;
  for (const a of arrays) body += pad4(a.byteLength);
  const out = Buffer.alloc(HEADER + body);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(BLOB_VERSION, 4);
  out.writeUInt32LE(kind, 8);
  out.writeUInt32LE(arrays.length, 12);
  out.writeUInt32LE(body, 16);
  let at = HEADER + table;
  arrays.forEach((a, i) => {
    out.writeUInt32LE(a.byteLength, HEADER + 4 * i);
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
    at += pad4(a.byteLength);
  });
  out.writeUInt32LE(crc32(out.subarray(HEADER)), 20);
  return out;
}

/** Reassembles a blob stored in parts into one 4-byte aligned buffer. */
export function joinParts(parts: readonly Uint8Array[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(new ArrayBuffer(pad4(total)), 0, total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The arrays of a blob as byte views (4-byte aligned when `buf` is), after checking it whole. */
export function decodeBlob(buf: Uint8Array, kind: number, what: string): Uint8Array[] {
  if (buf.byteOffset % 4 !== 0) buf = joinParts([buf]);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (buf.length < HEADER || view.getUint32(0, true) !== MAGIC) throw new CorruptStructureError(`${what}: not a Trine blob`);
  const version = view.getUint32(4, true);
  if (version !== BLOB_VERSION) throw new CorruptStructureError(`${what}: blob format ${version}, expected ${BLOB_VERSION}`);
  if (view.getUint32(8, true) !== kind) throw new CorruptStructureError(`${what}: wrong kind of blob`);
  const count = view.getUint32(12, true);
  const body = view.getUint32(16, true);
  if (buf.length !== HEADER + body) throw new CorruptStructureError(`${what}: ${buf.length} bytes, its header says ${HEADER + body} (torn or truncated)`);
  if (crc32(buf.subarray(HEADER)) !== view.getUint32(20, true)) throw new CorruptStructureError(`${what}: checksum mismatch`);
  const out: Uint8Array[] = [];
  let at = HEADER + 4 * count;
  for (let i = 0; i < count; i++) {
    const len = view.getUint32(HEADER + 4 * i, true);
    if (at + len > buf.length) throw new CorruptStructureError(`${what}: array ${i} runs past the end`);
    out.push(buf.subarray(at, at + len));
    at += pad4(len);
  }
  return out;
}

export function u32s(b: Uint8Array): Uint32Array {
  return new Uint32Array(b.buffer, b.byteOffset, b.byteLength >>> 2);
}
