import { describe, expect, it } from 'vitest';
import { decodeUint, encodeUint, KeySpace } from '../../src/store/keys.js';

// Keys are what the store sorts and scans by: their bytes are a format on disk.

describe('a key space', () => {
  const space = new KeySpace('doc', new KeySpace('ix'));

  it('lays a key out as its prefix, then its parts separated by a zero byte', () => {
    const key = space.key('movies', 7, Buffer.from([1, 2]), 'é');
    expect([...key]).toEqual([
      ...Buffer.from('ix\0doc\0'), ...Buffer.from('movies'), 0, ...encodeUint(7), 0, 1, 2, 0, ...Buffer.from('é', 'utf8'),
    ]);
    expect([...space.key()]).toEqual([...Buffer.from('ix\0doc\0')]);
    expect(decodeUint(space.strip(space.key(2 ** 53 - 1)))).toBe(2 ** 53 - 1);
  });

  it('stores an integer as 8 big-endian bytes', () => {
    expect([...encodeUint(2 ** 40 + 3)]).toEqual([0, 0, 1, 0, 0, 0, 0, 3]);
    expect([...encodeUint(2 ** 53 - 1)]).toEqual([0, 0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    expect([...encodeUint(258, 4)]).toEqual([0, 0, 1, 2]);
  });

  it('orders keys of numbers as the numbers, across 32 bits', () => {
    const ns = [0, 1, 255, 256, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 3, 2 ** 53 - 1];
    const keys = ns.map((n) => space.key('a', n));
    const sorted = [...keys].sort(Buffer.compare);
    expect(sorted.map((k) => decodeUint(k, k.length - 8))).toEqual(ns);
  });

  it('refuses a number part that is not a safe non-negative integer', () => {
    for (const n of [-1, 1.5, 2 ** 53, Number.NaN]) expect(() => space.key(n)).toThrow(RangeError);
  });

  it('gives a prefix that every key with those leading parts starts with, and no other', () => {
    const sub = space.sub('movies', 3);
    expect(space.key('movies', 3, 'x').subarray(0, sub.length).equals(sub)).toBe(true);
    expect(space.key('movies', 30).subarray(0, sub.length).equals(sub)).toBe(false);
  });
});
