/**
 * Key spaces. Every key starts with a short space tag and a separator byte so that spaces
 * never interleave; all live in one column family because the binding cannot batch across
 * column families and every applied batch must be atomic.
 */

const SEP = 0x00;

export function prefixEnd(prefix: Buffer): Buffer {
  // The smallest key greater than every key starting with `prefix`.
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] !== 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
}

/** `n` as 8 big-endian bytes at `at`; the offset after them. */
function writeUint64(out: Buffer, n: number, at: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`An integer stored in 8 bytes must be from 0 to 2^53 - 1, not ${n}`);
  out.writeUInt32BE(Math.floor(n / 0x1_0000_0000), at);
  out.writeUInt32BE(n >>> 0, at + 4);
  return at + 8;
}

/** Big-endian u32/u64-safe integer, so that byte order equals numeric order. */
export function encodeUint(n: number, bytes: 4 | 8 = 8): Buffer {
  const b = Buffer.alloc(bytes);
  if (bytes === 4) b.writeUInt32BE(n);
  else writeUint64(b, n, 0);
  return b;
}

export function decodeUint(b: Buffer, offset = 0, bytes: 4 | 8 = 8): number {
  return bytes === 4 ? b.readUInt32BE(offset) : Number(b.readBigUInt64BE(offset));
}

type Part = string | number | Buffer;

/** A named key space: `space.key('a', 1)` = tag 0 'a' 0 u64(1). String parts must not hold NUL. */
export class KeySpace {
  readonly prefix: Buffer;

  constructor(tag: string, parent?: KeySpace) {
    const own = Buffer.concat([Buffer.from(tag, 'utf8'), Buffer.from([SEP])]);
    this.prefix = parent ? Buffer.concat([parent.prefix, own]) : own;
  }

  /**
   * One buffer, sized first and written in place: a search builds a key per hit it reads, and
   * building each from a buffer per part (an ArrayBuffer each, counted as external memory by
   * the collector) then concatenating them cost more than the read itself.
   */
  key(...parts: Part[]): Buffer {
    let n = this.prefix.length + Math.max(0, parts.length - 1);
    for (const p of parts) n += typeof p === 'number' ? 8 : typeof p === 'string' ? Buffer.byteLength(p, 'utf8') : p.length;
    const out = Buffer.allocUnsafe(n);
    let at = this.prefix.copy(out, 0);
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (typeof p === 'number') at = writeUint64(out, p, at);
      else if (typeof p === 'string') at += out.write(p, at, 'utf8');
      else at += p.copy(out, at);
      if (i < parts.length - 1) out[at++] = SEP;
    }
    return out;
  }

  /** Prefix of all keys whose leading parts are `parts` (trailing separator included). */
  sub(...parts: Part[]): Buffer {
    if (parts.length === 0) return this.prefix;
    return Buffer.concat([this.key(...parts), Buffer.from([SEP])]);
  }

  child(tag: string): KeySpace {
    return new KeySpace(tag, this);
  }

  /** The key with this space's prefix removed. */
  strip(key: Buffer): Buffer {
    return key.subarray(this.prefix.length);
  }

  get end(): Buffer {
    return prefixEnd(this.prefix);
  }
}
