// Similarity arithmetic shared by the exact scan, the HNSW graph and the scores shown to
// clients. Vectors are compared by cosine; the store keeps unit-length copies so that a
// comparison is one dot product.

/** A unit-length copy (a zero vector stays zero: it is similar to nothing in particular). */
export function normalized(v: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(v);
  let n = 0;
  for (let i = 0; i < out.length; i++) n += out[i]! * out[i]!;
  if (n > 0) {
    const inv = 1 / Math.sqrt(n);
    for (let i = 0; i < out.length; i++) out[i]! *= inv;
  }
  return out;
}

/** Dot product of `a` and the `dims` floats of `data` starting at `off`; unrolled for the JIT. */
export function dotAt(a: Float32Array, data: Float32Array, off: number, dims: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < dims; i += 4) {
    s0 += a[i]! * data[off + i]!;
    s1 += a[i + 1]! * data[off + i + 1]!;
    s2 += a[i + 2]! * data[off + i + 2]!;
    s3 += a[i + 3]! * data[off + i + 3]!;
  }
  for (; i < dims; i++) s0 += a[i]! * data[off + i]!;
  return s0 + s1 + s2 + s3;
}

/**
 * The reference's similarity: one minus the cosine distance scaled to [0, 1], so 1 is the
 * same direction, 0.5 orthogonal and 0 opposite. Two unit vectors' dot product is their cosine.
 * The reference computes it in single precision, which is what its scores show.
 */
export function similarityOf(dot: number): number {
  const cos = Math.max(-1, Math.min(1, dot));
  return Math.fround(1 - (1 - cos) / 2);
}

/** Binary quantization: each dimension keeps only its sign, as -1 or 1. */
export function quantized(v: ArrayLike<number>): Float32Array {
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! > 0 ? 1 : -1;
  return out;
}

export interface Distribution {
  mean: number;
  sigma: number;
}

/**
 * The `distribution` setting: semantic scores packed around `mean` with spread `sigma` are
 * moved to a spread of 0.4 around 0.5, so that they compare with keyword scores; the result
 * stays in ]0, 1].
 */
export function shiftScore(score: number, d: Distribution | null | undefined): number {
  if (!d) return score;
  const factor = 0.4 / d.sigma;
  const offset = 0.5 - factor * d.mean;
  const shifted = Math.fround(factor * score + offset);
  if (shifted <= 0) return 1.1920929e-7;
  return Math.min(1, shifted);
}

/** Vector bytes as stored: float32 in the machine's order (little-endian on every supported platform). */
export function encodeFloats(v: Float32Array): Buffer {
  return Buffer.from(Float32Array.from(v).buffer);
}

export function decodeFloats(b: Buffer, offset = 0, count = (b.length - offset) / 4): Float32Array {
  const start = b.byteOffset + offset;
  // A copy: the buffer's memory may be shared or unaligned.
  return new Float32Array(b.buffer.slice(start, start + count * 4));
}

/** Quantized vectors take one bit a dimension on disk (set = positive). */
export function encodeBits(v: Float32Array): Buffer {
  const b = Buffer.alloc(Math.ceil(v.length / 8));
  for (let i = 0; i < v.length; i++) if (v[i]! > 0) b[i >> 3]! |= 1 << (i & 7);
  return b;
}

export function decodeBits(b: Buffer, offset: number, dims: number): Float32Array {
  const out = new Float32Array(dims);
  for (let i = 0; i < dims; i++) out[i] = (b[offset + (i >> 3)]! >> (i & 7)) & 1 ? 1 : -1;
  return out;
}
