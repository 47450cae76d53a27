// Checksummed blobs of flat arrays: how segments and the sorted dictionary are stored.
//
//   part 0:  "TRBL" | u32 blob version | u32 kind | u32 array count | u32 body bytes (low)
//            | u32 body bytes (high) | u32 CRC-32 of the body | u32 0 | body: u32 byte length of each array
//   part 1…: the rest of the body: each array padded to 4 bytes
//
// Integers are little-endian, the arrays' own byte order: arrays are copied from the parts
// into buffers of their own and used as they are, without decoding. A blob is written and
// read part by part, so that no copy of it as a whole is ever made. One whose marker,
// version, length or checksum does not match is refused with a CorruptStructureError.

import { endianness } from 'node:os';
import { crc32 } from 'node:zlib';

export const BLOB_VERSION = 1;
const MAGIC = 0x4c425254; // "TRBL" read as a little-endian u32
const HEADER = 32;

if (endianness() !== 'LE') throw new Error('the index format needs a little-endian machine');

/** A stored structure that cannot be read back as written: rebuild it, never serve it. */
export class CorruptStructureError extends Error {}

type Flat = Uint8Array | Uint32Array | Int32Array;

const pad4 = (n: number) => (n + 3) & ~3;

function bytesOf(a: Flat): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Writes a blob as parts of at most `partBytes`, one `put` at a time; part 0 last, once the checksum is known. */
export async function writeBlob(
  kind: number,
  arrays: readonly Flat[],
  partBytes: number,
  put: (part: number, bytes: Buffer) => Promise<void>,
): Promise<void> {
  const head = Buffer.alloc(HEADER + 4 * arrays.length);
  let body = 4 * arrays.length;
  arrays.forEach((a, i) => {
    head.writeUInt32LE(a.byteLength, HEADER + 4 * i);
    body += pad4(a.byteLength);
  });
  let crc = crc32(head.subarray(HEADER));
  let part = 1;
  let buf = Buffer.allocUnsafe(partBytes);
  let at = 0;
  const flush = async () => {
    if (at === 0) return;
    const out = buf.subarray(0, at);
    crc = crc32(out, crc);
    await put(part++, out);
    buf = Buffer.allocUnsafe(partBytes);
    at = 0;
  };
  for (const a of arrays) {
    const bytes = bytesOf(a);
    const padded = pad4(bytes.length);
    for (let from = 0; from < padded; ) {
      if (at === partBytes) await flush();
      const n = Math.min(partBytes - at, padded - from);
      const real = Math.max(0, Math.min(n, bytes.length - from));
      buf.set(bytes.subarray(from, from + real), at);
      buf.fill(0, at + real, at + n);
      at += n;
      from += n;
    }
  }
  await flush();
  head.writeUInt32LE(MAGIC, 0);
  head.writeUInt32LE(BLOB_VERSION, 4);
  head.writeUInt32LE(kind, 8);
  head.writeUInt32LE(arrays.length, 12);
  head.writeUInt32LE(body % 2 ** 32, 16);
  head.writeUInt32LE(Math.floor(body / 2 ** 32), 20);
  head.writeUInt32LE(crc, 24);
  await put(0, head);
}

/**
 * Reads a blob fed its parts in order: part 0 gives the table, then every byte goes to its
 * array (each in a 4-byte aligned buffer of its own). `finish` checks length and checksum.
 */
export class BlobReader {
  private arrays: Uint8Array[] = [];
  private padded: number[] = [];
  private index = 0;
  private offset = 0;
  private crc = 0;
  private body = 0;
  private expected = -1;
  private want = 0;
  private parts = 0;

  constructor(
    private readonly kind: number,
    private readonly what: string,
  ) {}

  private fail(why: string): never {
    throw new CorruptStructureError(`${this.what}: ${why}`);
  }

  add(part: number, bytes: Uint8Array): void {
    if (part !== this.parts++) this.fail(`part ${part} where ${this.parts - 1} was expected (torn or truncated)`);
    if (part === 0) return this.head(bytes);
    this.crc = crc32(bytes, this.crc);
    this.body += bytes.length;
    let at = 0;
    while (at < bytes.length) {
      if (this.index >= this.arrays.length) this.fail('more bytes than its table says');
      const room = this.padded[this.index]! - this.offset;
      const n = Math.min(room, bytes.length - at);
      const a = this.arrays[this.index]!;
      const real = Math.max(0, Math.min(n, a.length - this.offset));
      a.set(bytes.subarray(at, at + real), this.offset);
      at += n;
      this.offset += n;
      if (this.offset === this.padded[this.index]) {
        this.index++;
        this.offset = 0;
        while (this.index < this.arrays.length && this.padded[this.index] === 0) this.index++;
      }
    }
  }

  private head(b: Uint8Array): void {
    const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    if (b.length < HEADER || view.getUint32(0, true) !== MAGIC) this.fail('not a Trine blob');
    const version = view.getUint32(4, true);
    if (version !== BLOB_VERSION) this.fail(`blob format ${version}, expected ${BLOB_VERSION}`);
    if (view.getUint32(8, true) !== this.kind) this.fail('wrong kind of blob');
    const count = view.getUint32(12, true);
    if (b.length !== HEADER + 4 * count) this.fail('header of the wrong size (torn or truncated)');
    this.expected = view.getUint32(16, true) + view.getUint32(20, true) * 2 ** 32;
    this.want = view.getUint32(24, true);
    this.crc = crc32(b.subarray(HEADER));
    this.body = 4 * count;
    for (let i = 0; i < count; i++) {
      const len = view.getUint32(HEADER + 4 * i, true);
      this.arrays.push(new Uint8Array(new ArrayBuffer(pad4(len)), 0, len));
      this.padded.push(pad4(len));
    }
    while (this.index < count && this.padded[this.index] === 0) this.index++;
  }

  /** The arrays, once every part was added; throws when the blob is incomplete or damaged. */
  finish(): Uint8Array[] {
    if (this.parts === 0) this.fail('missing');
    if (this.body !== this.expected || this.index < this.arrays.length) {
      this.fail(`${this.body} bytes, its header says ${this.expected} (torn or truncated)`);
    }
    if (this.crc !== this.want) this.fail('checksum mismatch');
    return this.arrays;
  }
}

export function u32s(b: Uint8Array): Uint32Array {
  return new Uint32Array(b.buffer, b.byteOffset, b.byteLength >>> 2);
}
