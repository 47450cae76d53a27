import { randomFillSync } from 'node:crypto';

let lastMs = 0;
let seq = 0;

// Random bytes drawn 4 KiB at a time: one draw per id cost about 40 us, two ids per search.
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

function random16(): Buffer {
  if (poolAt + 16 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const b = Buffer.from(pool.subarray(poolAt, poolAt + 16));
  poolAt += 16;
  return b;
}

/** UUID version 7: time-ordered, as the reference uses for `requestUid`. */
export function uuidv7(now = Date.now()): string {
  const b = random16();
  if (now === lastMs) seq = (seq + 1) & 0xfff;
  else {
    lastMs = now;
    seq = b.readUInt16BE(6) & 0xfff;
  }
  b.writeUIntBE(now, 0, 6);
  b[6] = 0x70 | (seq >> 8);
  b[7] = seq & 0xff;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Parses a UUID the way the reference's `uuid` crate does (simple, hyphenated, braced or URN
 * form) and returns it hyphenated in lowercase; the error texts follow that crate's.
 */
export function parseUuid(s: string): { uuid: string } | { error: string } {
  let body = s;
  if (s.length === 45 && s.toLowerCase().startsWith('urn:uuid:')) body = s.slice(9);
  else if (s.length === 38 && s.startsWith('{') && s.endsWith('}')) body = s.slice(1, -1);
  if (body.length !== 32 && body.length !== 36) {
    return { error: `invalid length: expected length 32 for simple format, found ${s.length}` };
  }
  const offset = s.length - body.length - (s.startsWith('{') ? 1 : 0);
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (/[0-9a-fA-F]/.test(c) || (c === '-' && body.length === 36)) continue;
    return {
      error: `invalid character: expected an optional prefix of \`urn:uuid:\` followed by [0-9a-fA-F-], found \`${c}\` at ${offset + i + 1}`,
    };
  }
  if (body.length === 36) {
    const groups = body.split('-');
    if (groups.length !== 5) return { error: `invalid group count: expected 5, found ${groups.length}` };
    const lengths = [8, 4, 4, 4, 12];
    for (let g = 0; g < 5; g++) {
      if (groups[g]!.length !== lengths[g]) {
        return { error: `invalid group length in group ${g}: expected ${lengths[g]}, found ${groups[g]!.length}` };
      }
    }
  }
  const hex = body.replace(/-/g, '').toLowerCase();
  return { uuid: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}` };
}
