import { describe, expect, it } from 'vitest';
import { sortInTurns } from '../../src/util/sort-in-turns.js';
import { Yielder } from '../../src/util/yielder.js';
import { rng } from '../helpers/rng.js';

describe('sortInTurns', () => {
  it('sorts like Array.prototype.sort, stably, at sizes around its runs', async () => {
    const r = rng(7);
    for (const n of [0, 1, 2, 4095, 4096, 4097, 8192, 12_289, 40_000]) {
      // Few distinct keys, so that stability is put to the test.
      const items = Array.from({ length: n }, (_, i) => ({ key: Math.floor(r() * 50), at: i }));
      const cmp = (a: { key: number }, b: { key: number }) => a.key - b.key;
      const got = await sortInTurns(items, cmp, new Yielder(0));
      expect(got).toEqual([...items].sort(cmp));
      expect(items.map((x) => x.at)).toEqual(Array.from({ length: n }, (_, i) => i)); // input untouched
    }
  });

  it('gives the event loop turns while it sorts', async () => {
    const items = Array.from({ length: 50_000 }, (_, i) => `w${(i * 7919) % 50_000}`);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const got = await sortInTurns(items, (a, b) => (a < b ? -1 : a > b ? 1 : 0), new Yielder(0));
    clearInterval(timer);
    expect(got).toEqual([...items].sort());
    expect(ticks).toBeGreaterThan(0);
  });
});
