// Reads the safetensors format: an 8-byte little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the raw data. Only float tensors are
// read, as float32.

import { open } from 'node:fs/promises';

export interface Tensor {
  shape: number[];
  data: Float32Array;
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

const WIDTH: Record<string, number> = { F32: 4, F16: 2, BF16: 2, F64: 8, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };

/** Reads the tensors of a safetensors file; throws on a truncated or inconsistent one. */
export function readSafetensors(buf: Buffer): Map<string, Tensor> {
  if (buf.length < 8) throw new Error('not a safetensors file: shorter than its 8-byte header length');
  const headerLen = Number(buf.readBigUInt64LE(0));
  if (8 + headerLen > buf.length) throw new Error(`not a safetensors file, or a truncated one: its header claims ${headerLen} bytes of ${buf.length - 8}`);
  const header = JSON.parse(buf.toString('utf8', 8, 8 + headerLen)) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const base = 8 + headerLen;
  const out = new Map<string, Tensor>();
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [start, end] = t.data_offsets;
    const width = WIDTH[t.dtype];
    const expected = t.shape.reduce((a, b) => a * b, 1) * (width ?? end - start);
    if (start > end || base + end > buf.length || (width !== undefined && end - start !== expected)) {
      throw new Error(`safetensors file truncated or corrupt: tensor \`${name}\` (${t.dtype} ${JSON.stringify(t.shape)}) should hold ${expected} bytes at ${start}..${end} of ${buf.length - base}`);
    }
    const bytes = buf.subarray(base + start, base + end);
    let data: Float32Array;
    if (t.dtype === 'F32') {
      // A view on the file's bytes where they are 4-byte aligned (they are in files the
      // usual writers make): no second copy of a model's weights. A copy otherwise.
      data =
        bytes.byteOffset % 4 === 0
          ? new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4)
          : new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    } else if (t.dtype === 'F16') {
      data = new Float32Array(bytes.length / 2);
      for (let i = 0; i < data.length; i++) data[i] = halfToFloat(bytes.readUInt16LE(i * 2));
    } else if (t.dtype === 'BF16') {
      data = new Float32Array(bytes.length / 2);
      const tmp = Buffer.alloc(4);
      for (let i = 0; i < data.length; i++) {
        tmp.writeUInt16LE(0, 0);
        tmp.writeUInt16LE(bytes.readUInt16LE(i * 2), 2);
        data[i] = tmp.readFloatLE(0);
      }
    } else continue;
    out.set(name, { shape: t.shape, data });
  }
  return out;
}

/** Writes float32 tensors as safetensors (used to build small models, e.g. in tests). */
export function writeSafetensors(tensors: Record<string, Tensor>): Buffer {
  const header: Record<string, unknown> = {};
  const parts: Buffer[] = [];
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    const b = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + b.length] };
    parts.push(b);
    offset += b.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  return Buffer.concat([len, Buffer.from(json), ...parts]);
}

/** Checks, from its header and size alone, that a safetensors file holds every tensor it declares. */
export async function checkSafetensorsFile(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const head = Buffer.alloc(8);
    await fh.read(head, 0, 8, 0);
    const headerLen = size >= 8 ? Number(head.readBigUInt64LE(0)) : Infinity;
    if (8 + headerLen > size || headerLen > 100 * 2 ** 20) throw new Error(`not a safetensors file, or a truncated one (${size} bytes)`);
    const header = Buffer.alloc(headerLen);
    await fh.read(header, 0, headerLen, 8);
    const tensors = JSON.parse(header.toString('utf8')) as Record<string, { data_offsets?: [number, number] }>;
    const end = Math.max(0, ...Object.values(tensors).map((t) => t.data_offsets?.[1] ?? 0));
    if (8 + headerLen + end !== size) throw new Error(`the file holds ${size} bytes where its header declares ${8 + headerLen + end}`);
  } finally {
    await fh.close();
  }
}
