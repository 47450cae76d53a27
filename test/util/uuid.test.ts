import { describe, expect, it } from 'vitest';
import { parseUuid, uuidv7 } from '../../src/util/uuid.js';

describe('uuidv7', () => {
  it('is a version 7, RFC 4122 variant UUID carrying its time', () => {
    const now = Date.UTC(2026, 10, 27, 3, 0, 0, 123);
    const u = uuidv7(now);
    expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(u.replace(/-/g, '').slice(0, 12), 16)).toBe(now);
    expect(parseUuid(u)).toEqual({ uuid: u });
  });

  it('stays distinct and ordered across many ids in the same millisecond (past one pool of random bytes)', () => {
    const now = Date.now();
    const ids = Array.from({ length: 2000 }, () => uuidv7(now));
    expect(new Set(ids).size).toBe(ids.length);
    // The 12-bit sequence after the time orders ids of one millisecond until it wraps.
    const seqs = ids.slice(0, 100).map((u) => parseInt(u.slice(15, 18), 16));
    for (let i = 1; i < seqs.length; i++) if (seqs[i - 1]! < 0xfff) expect(seqs[i]).toBe(seqs[i - 1]! + 1);
  });
});
