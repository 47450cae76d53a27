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

/** Big-endian u32/u64-safe integer, so that byte order equals numeric order. */
export function encodeUint(n: number, bytes: 4 | 8 = 8): Buffer {
  const b = Buffer.alloc(bytes);
  if (bytes === 4) b.writeUInt32BE(n);
  else b.writeBigUInt64BE(BigInt(n));
  return b;
}

export function decodeUint(b: Buffer, offset = 0, bytes: 4 | 8 = 8): number {
  return bytes === 4 ? b.readUInt32BE(offset) : Number(b.readBigUInt64BE(offset));
}

type Part = string | number | Buffer;

function partToBuffer(p: Part): Buffer {
  if (typeof p === 'number') return encodeUint(p);
  if (typeof p === 'string') return Buffer.from(p, 'utf8');
  return p;
}

/** A named key space: `space.key('a', 1)` = tag 0 'a' 0 u64(1). String parts must not hold NUL. */
export class KeySpace {
  readonly prefix: Buffer;

  constructor(tag: string, parent?: KeySpace) {
    const own = Buffer.concat([Buffer.from(tag, 'utf8'), Buffer.from([SEP])]);
    this.prefix = parent ? Buffer.concat([parent.prefix, own]) : own;
  }

  key(...parts: Part[]): Buffer {
    const bufs: Buffer[] = [this.prefix];
    parts.forEach((p, i) => {
      bufs.push(partToBuffer(p));
      if (i < parts.length - 1) bufs.push(Buffer.from([SEP]));
    });
    return Buffer.concat(bufs);
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
