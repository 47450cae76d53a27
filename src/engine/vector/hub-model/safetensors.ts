// Reads the safetensors format: an 8-byte little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the raw data. Only float tensors are
// read, as float32.

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

export function readSafetensors(buf: Buffer): Map<string, Tensor> {
  const headerLen = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.toString('utf8', 8, 8 + headerLen)) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const base = 8 + headerLen;
  const out = new Map<string, Tensor>();
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [start, end] = t.data_offsets;
    const bytes = buf.subarray(base + start, base + end);
    let data: Float32Array;
    if (t.dtype === 'F32') {
      data = new Float32Array(bytes.length / 4);
      for (let i = 0; i < data.length; i++) data[i] = bytes.readFloatLE(i * 4);
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
    const b = Buffer.alloc(t.data.length * 4);
    t.data.forEach((x, i) => b.writeFloatLE(x, i * 4));
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
